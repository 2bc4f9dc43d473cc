"""TFQ31x: QueueRunner, add_queue_runner, start_queue_runners — the threads that feed queues.

`sv.start_queue_runners(sess)` on a `tf.train.Supervisor` is the same start under another
name (the resolver maps the method to the start_queue_runners row, keeping the member).
"""
from compat._check import render
from compat._check.rules._common import codes_with_prefix, finding

CODES = codes_with_prefix("TFQ31")


def _message(site) -> str:
    text = site.written + (f"({site.call_args})" if site.arguments is not None else "")
    text += (f" [tf.train.Supervisor.{site.member}: starts the QUEUE_RUNNERS collection like "
             f"{render.api_spelling(site.row)}]")
    return text + " — " + render.COVERAGE_PHRASES[site.row.coverage]


def check(context):
    for site in context.sites:
        if site.row.code not in CODES:
            continue
        if not site.member:
            yield finding(context, site)
        elif site.member == site.row.name.rpartition(".")[2]:
            yield finding(context, site, _message(site))
