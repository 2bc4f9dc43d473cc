"""TFQ421: SyncReplicasOptimizer and its chief queue runner.

The chief queue runner is a real QueueRunner, so a naive search flags it as an input
pipeline; it synchronises gradient tokens instead, and must be left alone.
"""
from compat._check import render
from compat._check.rules._common import codes_with_prefix, finding

CODES = codes_with_prefix("TFQ421")
_CHIEF_MEMBERS = ("get_chief_queue_runner", "get_init_tokens_op", "make_session_run_hook")


def check(context):
    for site in context.sites:
        if site.row.code not in CODES:
            continue
        if not site.member:
            yield finding(context, site)
        elif site.member in _CHIEF_MEMBERS:
            what = ("chief queue runner" if site.member == "get_chief_queue_runner"
                    else site.member + "()")
            yield finding(context, site,
                          f"{site.written}(): SyncReplicasOptimizer's {what} — "
                          + render.COVERAGE_PHRASES[site.row.coverage])
