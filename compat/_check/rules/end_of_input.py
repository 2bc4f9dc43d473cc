"""TFQ401: `except OutOfRangeError` loops, the TF1 way to notice the end of the input."""
from compat._check.rules._common import codes_with_prefix, table_findings

CODES = codes_with_prefix("TFQ401")


def check(context):
    yield from table_findings(context, CODES)
