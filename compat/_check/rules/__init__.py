"""The rules, one per file. Each has CODES and `check(context)` yielding frozen Findings."""
from compat._check.rules import (batching, contrib_helpers, coordination, end_of_input,
                                 implicit_runners, producers, queues, readers, runners,
                                 sync_replicas, tf2_blockers)

RULES = (producers, readers, batching, queues, runners, coordination, end_of_input,
         implicit_runners, contrib_helpers, sync_replicas, tf2_blockers)


def all_codes() -> frozenset:
    return frozenset().union(*(rule.CODES for rule in RULES))
