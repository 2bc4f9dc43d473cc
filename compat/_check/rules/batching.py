"""TFQ2xx: batch, shuffle_batch, their *_join and maybe_* variants."""
from compat._check.rules._common import codes_with_prefix, table_findings

CODES = codes_with_prefix("TFQ2")


def check(context):
    yield from table_findings(context, CODES)
