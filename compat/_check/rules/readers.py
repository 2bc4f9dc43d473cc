"""TFQ11x: reader classes that pull filenames from a queue (TFRecordReader & co)."""
from compat._check.rules._common import codes_with_prefix, table_findings

CODES = codes_with_prefix("TFQ11")


def check(context):
    yield from table_findings(context, CODES)
