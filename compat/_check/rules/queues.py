"""TFQ30x: queue classes (FIFO, RandomShuffle, PaddingFIFO, Priority, QueueBase.from_list).

The advice follows the queue's role (see compat/_check/queue_roles.py): only a queue that
threads fill is an input pipeline's buffer. One fed from Python through placeholders gets the
from_generator shape; one used as model state is not an input pipeline at all.
"""
from dataclasses import replace

from compat import _api_table as table
from compat._check import queue_roles, render
from compat._check.rules._common import codes_with_prefix, finding, table_sites

CODES = codes_with_prefix("TFQ30")


def _with_role(context, site, found):
    role = queue_roles.role(context.tree, site.line, site.written.rpartition(".")[2])
    if role == queue_roles.PYTHON_FED:
        return replace(found, tf_data=queue_roles.generator_advice(site.arguments),
                       message=found.message.replace(
                           " — ", " — fed from Python (enqueue of placeholders run by "
                           "sess.run), not a prefetch buffer; ", 1))
    if role == queue_roles.STATE:
        text = render.message(site).rpartition(" — ")[0]
        return replace(found, coverage=table.NOT_PIPELINE, tf_data=queue_roles.STATE_ADVICE,
                       message=text + " — a state buffer in model code (enqueued and dequeued "
                                      "in the same function, no QueueRunner): "
                       + render.COVERAGE_PHRASES[table.NOT_PIPELINE])
    return found


def check(context):
    for site in table_sites(context, CODES):
        yield _with_role(context, site, finding(context, site))
