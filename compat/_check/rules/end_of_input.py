"""TFQ401: `except OutOfRangeError` loops, the TF1 way to notice the end of the input.

Only the `except` clause is a site, and only when its try body runs the pipeline: a
`sess.run(...)` / `mon_sess.run(...)` / `tensor.eval()` / `iterator.get_next()` / dequeue, a
call of a function of the same file that does, or a tensor the file batched or dequeued.
Raising or constructing the error elsewhere, or catching it around checkpoint lookups, is
not how a pipeline's consumer ends, and flagging it would bury the loops that matter.
"""
from compat._check.rules._common import codes_with_prefix, finding, table_sites

CODES = codes_with_prefix("TFQ401")


def check(context):
    for site in table_sites(context, CODES):
        if site.in_except:
            yield finding(context, site)
