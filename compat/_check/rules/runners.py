"""TFQ31x: QueueRunner, add_queue_runner, start_queue_runners — the threads that feed queues."""
from compat._check.rules._common import codes_with_prefix, table_findings

CODES = codes_with_prefix("TFQ31")


def check(context):
    yield from table_findings(context, CODES)
