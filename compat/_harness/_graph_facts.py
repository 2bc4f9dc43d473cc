"""What a built legacy graph says about the guarantees TF1 gives for its pipeline
(``PipelineFacts``): which levels apply and how much reordering the window level must allow.

TensorFlow is imported inside functions only: ``compat.harness`` must import without it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

_QUEUE_TYPES = {"FIFOQueueV2", "FIFOQueue", "RandomShuffleQueueV2", "RandomShuffleQueue",
                "PaddingFIFOQueueV2", "PaddingFIFOQueue", "PriorityQueueV2", "PriorityQueue"}
_BATCH_DEQUEUE_TYPES = {"QueueDequeueManyV2", "QueueDequeueUpToV2", "QueueDequeueMany",
                        "QueueDequeueUpTo"}
_DEQUEUE_TYPES = _BATCH_DEQUEUE_TYPES | {"QueueDequeueV2", "QueueDequeue"}
_SEEDED_RANDOM_PREFIXES = ("Random", "TruncatedNormal", "Multinomial", "StatelessRandom")


@dataclass(frozen=True)
class ShuffleQueue:
    name: str
    capacity: int
    min_after_dequeue: int
    enqueue_threads: int


@dataclass(frozen=True)
class PipelineFacts:
    """What the legacy graph tells about the guarantees TF1 gives for this pipeline.

    batched:            the fetched tensors come from ``dequeue_many``/``dequeue_up_to``
                        (None when no queue dequeue feeds them)
    shuffle_queues:     every ``RandomShuffleQueue`` (``shuffle_batch*`` or hand-built)
    max_enqueue_threads: most enqueue ops of any QueueRunner (``num_threads``, ``*_join`` lists)
    joins:              some QueueRunner has several *distinct* enqueue ops (``*_join``)
    padded:             a ``PaddingFIFOQueue`` (``dynamic_pad=True``) is involved
    unseeded_shuffles:  ``RandomShuffle`` ops without seeds (producers with ``shuffle=True``
                        and no graph/op seed): their order differs from run to run
    unseeded_random_ops: other stateful random ops without seeds (data augmentation)
    window_capacity:    sum of the shuffle queues' capacities (the ``window`` bound)
    window_slack:       extra reordering allowed by parallel enqueue threads
    drops_remainder:    the output is a ``dequeue_many`` (``allow_smaller_final_batch=False``):
                        elements left over at the end are dropped
    """

    batched: bool | None = None
    shuffle_queues: tuple = ()
    max_enqueue_threads: int = 0
    joins: bool = False
    padded: bool = False
    unseeded_shuffles: tuple = ()
    unseeded_random_ops: tuple = ()
    window_capacity: int = 0
    window_slack: int = 0
    queue_count: int = 0
    drops_remainder: bool = False

    @property
    def deterministic(self) -> bool:
        """TF1 produces the same stream every run: the ``exact`` level applies."""
        return not self.shuffle_queues and self.max_enqueue_threads <= 1 and not self.joins \
            and not self.unseeded_shuffles

    @property
    def epochs_separable(self) -> bool:
        """Elements of one epoch are never mixed with another's (no queue mixes them)."""
        return not self.shuffle_queues and self.max_enqueue_threads <= 1 and not self.joins

    def to_json(self) -> dict:
        return {
            "batched": self.batched,
            "shuffle_queues": [dataclasses.asdict(q) for q in self.shuffle_queues],
            "max_enqueue_threads": self.max_enqueue_threads,
            "joins": self.joins,
            "padded": self.padded,
            "unseeded_shuffles": list(self.unseeded_shuffles),
            "unseeded_random_ops": list(self.unseeded_random_ops),
            "window_capacity": self.window_capacity,
            "window_slack": self.window_slack,
            "queue_count": self.queue_count,
            "drops_remainder": self.drops_remainder,
        }

    @classmethod
    def from_json(cls, data: dict) -> "PipelineFacts":
        data = dict(data)
        data["shuffle_queues"] = tuple(ShuffleQueue(**q) for q in data.get("shuffle_queues", ()))
        data["unseeded_shuffles"] = tuple(data.get("unseeded_shuffles", ()))
        data["unseeded_random_ops"] = tuple(data.get("unseeded_random_ops", ()))
        return cls(**data)


def _attr(op, name, default=0):
    try:
        return op.get_attr(name)
    except (ValueError, TypeError):
        return default


def inspect_graph(graph, fetch_tensors, queue_runners) -> PipelineFacts:
    ops = graph.get_operations()
    queues = {op.name: op for op in ops if op.type in _QUEUE_TYPES}
    threads_by_queue = {}
    joins = False
    slack = 0
    for runner in queue_runners:
        queue = getattr(runner, "queue", None)
        queue_op = getattr(queue, "op", None) if queue is not None else None
        queue_name = queue_op.name if queue_op is not None else getattr(queue, "name", "")
        enqueue_ops = list(getattr(runner, "enqueue_ops", []) or [])
        threads_by_queue[queue_name] = threads_by_queue.get(queue_name, 0) + len(enqueue_ops)
        if len({id(op) for op in enqueue_ops}) > 1:
            joins = True
        for op in enqueue_ops[1:]:
            slack += _in_flight(op, queue_op)
    shuffle_queues = tuple(
        ShuffleQueue(name, int(_attr(op, "capacity", -1)), int(_attr(op, "min_after_dequeue")),
                     threads_by_queue.get(name, 0))
        for name, op in sorted(queues.items()) if op.type.startswith("RandomShuffleQueue"))
    unseeded_shuffles = tuple(op.name for op in ops if op.type == "RandomShuffle"
                              and not _attr(op, "seed") and not _attr(op, "seed2")
                              and not _single_item(op))
    unseeded_random = tuple(op.name for op in ops if op.type != "RandomShuffle"
                            and op.type not in _QUEUE_TYPES
                            and op.type.startswith(_SEEDED_RANDOM_PREFIXES)
                            and not op.type.startswith("StatelessRandom")
                            and "seed" in [a.name for a in op.op_def.attr]
                            and not _attr(op, "seed") and not _attr(op, "seed2"))
    dequeue = _upstream_dequeue(fetch_tensors)
    batched = None if dequeue is None else dequeue.type in _BATCH_DEQUEUE_TYPES
    padded = any(op.type.startswith("PaddingFIFOQueue") for op in queues.values())
    capacity = sum(max(q.capacity, 0) for q in shuffle_queues)
    return PipelineFacts(
        batched=batched, shuffle_queues=shuffle_queues,
        max_enqueue_threads=max(threads_by_queue.values(), default=0), joins=joins,
        padded=padded, unseeded_shuffles=unseeded_shuffles, unseeded_random_ops=unseeded_random,
        window_capacity=capacity, window_slack=slack, queue_count=len(queues),
        drops_remainder=dequeue is not None and "DequeueMany" in dequeue.type)


def _single_item(shuffle_op) -> bool:
    """Shuffling one filename (the usual single-file producer) cannot change the order."""
    try:
        dim = shuffle_op.inputs[0].shape[0]
    except (IndexError, ValueError, TypeError):
        return False
    return dim is not None and int(dim) <= 1


_SINGLE_READS = {"QueueDequeueV2", "QueueDequeue", "ReaderReadV2", "ReaderRead"}
_MANY_READS = {"QueueDequeueUpToV2", "QueueDequeueManyV2", "QueueDequeueUpTo",
               "QueueDequeueMany", "ReaderReadUpToV2", "ReaderReadUpTo"}
UNKNOWN_IN_FLIGHT = 10**6


def _in_flight(enqueue_op, queue_op) -> int:
    """Elements one extra enqueue thread can hold back (and so reorder) at a time: what one run
    of its enqueue op pulls from upstream (1 for ``read``/``dequeue``, n for ``read_up_to(n)``
    or ``dequeue_up_to(n)``, whatever ``keep_input`` masking happens in between)."""
    if enqueue_op is None or not hasattr(enqueue_op, "type"):
        return 1
    if "EnqueueMany" not in enqueue_op.type:
        return 1
    read = _first_upstream([t.op for t in enqueue_op.inputs[1:]],
                           lambda op: op.type in _SINGLE_READS or op.type in _MANY_READS)
    if read is not None:
        if read.type in _SINGLE_READS:
            return 1
        count = _constant(read.inputs[-1])
        return count if count is not None else UNKNOWN_IN_FLIGHT
    try:
        dim = enqueue_op.inputs[1].shape[0]
        if dim is not None:
            return int(dim)
    except (IndexError, ValueError, TypeError):
        pass
    return UNKNOWN_IN_FLIGHT


def _constant(tensor):
    try:
        from tensorflow.python.framework import tensor_util
        value = tensor_util.constant_value(tensor)
    except Exception:  # noqa: BLE001 - not a constant we can read
        return None
    return None if value is None else int(value)


def _upstream_dequeue(fetch_tensors):
    """The nearest queue dequeue op feeding the fetched tensors (breadth first)."""
    return _first_upstream([t.op for t in fetch_tensors if hasattr(t, "op")],
                           lambda op: op.type in _DEQUEUE_TYPES)


def _first_upstream(start_ops, matches):
    """Breadth first from `start_ops` through op inputs: the nearest op that `matches`."""
    seen, frontier = set(), list(start_ops)
    while frontier:
        next_frontier = []
        for op in frontier:
            if op.name in seen:
                continue
            seen.add(op.name)
            if matches(op):
                return op
            next_frontier.extend(t.op for t in op.inputs)
        frontier = next_frontier
    return None
