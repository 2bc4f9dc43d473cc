"""TFQ10x: input producers (string/slice/range/input_producer, limit_epochs,
match_filenames_once) — the head of every queue pipeline."""
from compat._check.rules._common import codes_with_prefix, table_findings

CODES = codes_with_prefix("TFQ10")


def check(context):
    yield from table_findings(context, CODES)
