"""TFQ41x: tf.contrib input helpers (slim.queues, prefetch_queue, bucketing, sampling,
slim data providers). tf.contrib is gone in TF2, so these always need manual work. The
standalone `tf_slim` package is read as tf.contrib.slim (tf_slim.queues.QueueRunners,
tf_slim.data.prefetch_queue, tf_slim.data.parallel_reader.parallel_read)."""
from compat._check.rules._common import codes_with_prefix, table_findings

CODES = codes_with_prefix("TFQ41")


def check(context):
    yield from table_findings(context, CODES)
