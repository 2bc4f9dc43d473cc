"""TFQ32x: Coordinator and LooperThread, which exist to stop the runner threads."""
from compat._check.rules._common import codes_with_prefix, table_findings

CODES = codes_with_prefix("TFQ32")


def check(context):
    yield from table_findings(context, CODES)
