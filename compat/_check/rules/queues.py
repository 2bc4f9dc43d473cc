"""TFQ30x: queue classes (FIFO, RandomShuffle, PaddingFIFO, Priority, QueueBase.from_list)."""
from compat._check.rules._common import codes_with_prefix, table_findings

CODES = codes_with_prefix("TFQ30")


def check(context):
    yield from table_findings(context, CODES)
