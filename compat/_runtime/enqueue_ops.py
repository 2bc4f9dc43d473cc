"""The enqueue ops of one shim queue: what a compiled queue's element stream is made of.

Each enqueue op becomes a lifted map over the stages its values read (an op listed k times in
a QueueRunner is a k-way parallel map, as k runner threads run it at once), and distinct
enqueue ops are interleaved as they compute (`datasets.interleaved`).
"""
from __future__ import annotations

import tensorflow as tf

from compat._runtime import datasets, element_source, lifting, plan


class Enqueue:
    """One enqueue op created through a shim queue, and the values it enqueues."""

    def __init__(self, op: tf.Operation, many: bool):
        self.op = op
        self.many = many
        # The op's inputs after the queue handle are the values already converted to the
        # queue's dtypes and checked against its shapes by TF's own enqueue code.
        self.values = list(op.inputs[1:])

    @property
    def consumer_key(self):
        """The key this op reads its stages under (see `plan.add_consumer`)."""
        return ("enqueue", self.op.name)


class EnqueueOps:
    """The enqueue ops created through one queue, and the runner threads a QueueRunner
    gives each."""

    def __init__(self, queue_name: str):
        self._queue_name = queue_name
        self._ops: list[Enqueue] = []
        self._runner_threads: dict = {}  # enqueue op name -> threads a QueueRunner gives it

    def __bool__(self):
        return bool(self._ops)

    def names(self) -> str:
        return ", ".join(enqueue.op.name for enqueue in self._ops)

    def record(self, op: tf.Operation, many: bool) -> None:
        self._ops.append(Enqueue(op, many))

    def note_queue_runner(self, enqueue_ops) -> None:
        """These ops are run by runner threads (one per listing)."""
        counts = {}
        for op in enqueue_ops:
            if isinstance(op, tf.Operation):
                counts[op.name] = counts.get(op.name, 0) + 1
        for op_name, count in counts.items():
            self._runner_threads[op_name] = max(self._runner_threads.get(op_name, 0), count)

    def includes(self, op) -> bool:
        return isinstance(op, tf.Operation) and any(enqueue.op is op for enqueue in self._ops)

    def not_compilable_reason(self) -> str:
        """Why these ops cannot become the queue's stream ("" when they can)."""
        for enqueue in self._ops:
            try:
                lifted = lifting.lift(enqueue.values, plan.stage_of,
                                      f"{self._queue_name} enqueue")
            except lifting.LiftError as error:
                return str(error)
            if not lifted.sources and enqueue.op.name not in self._runner_threads:
                # Pure ops (constants, random ops) with no runner: the user runs the enqueue
                # op by hand, as many times as they like. Only a runner repeats it forever.
                return (f"enqueue op {enqueue.op.name!r} reads no pipeline stage and no "
                        "QueueRunner drives it")
        return ""

    def enqueued_shapes(self, queue_shapes) -> list:
        """Each component's shape as the enqueue ops give it (the most specific shape all
        their values have: [3] and [2] give [None]), merged with the queue's."""
        shapes = []
        for index, declared in enumerate(queue_shapes):
            given = [self._element_shape(enqueue.values[index], enqueue.many)
                     for enqueue in self._ops]
            shapes.append(declared.merge_with(given[0].most_specific_common_supertype(given[1:]))
                          if given else declared)
        return shapes

    @staticmethod
    def _element_shape(value, many: bool) -> tf.TensorShape:
        if not many:
            return value.shape
        return value.shape[1:] if value.shape.rank else tf.TensorShape(None)

    def add_consumers(self) -> None:
        """Count every op as a reader of its stages; all at once, before building any."""
        for enqueue in self._ops:
            element_source.add_consumers(enqueue.values, f"{self._queue_name} enqueue",
                                         enqueue.consumer_key)

    def elements(self, queue_shapes, in_turn: bool) -> tf.data.Dataset:
        """The enqueued elements (tuples of components); built in the current graph.
        in_turn: `reads_only()`, as found when the queue compiled."""
        streams = []
        seen = set()
        for enqueue in self._ops:
            if enqueue.op.name in seen:
                continue
            seen.add(enqueue.op.name)
            threads = self._runner_threads.get(enqueue.op.name, 1)
            streams.append(self._stream(enqueue, queue_shapes, threads))
        # Each runner thread runs its own enqueue op.
        return datasets.interleaved(streams, in_turn)

    def reads_only(self) -> bool:
        """Whether every op enqueues values straight from reads (see `plan.Stage.reads_only`)."""
        return all(element_source.reads_only(enqueue.values, self._queue_name)
                   for enqueue in self._ops)

    def _stream(self, enqueue: Enqueue, queue_shapes, threads: int) -> tf.data.Dataset:
        source = element_source.element_source(
            enqueue.values, f"{self._queue_name} enqueue op {enqueue.op.name!r}",
            enqueue.consumer_key)
        shapes = [tf.TensorShape([None]).concatenate(shape) if enqueue.many else shape
                  for shape in queue_shapes]

        def with_shapes(values):
            # TF1's enqueue kernel checks each value against the queue's shapes at run time.
            return tuple(tf.ensure_shape(value, shape) if shape.rank is not None else value
                         for value, shape in zip(values, shapes))

        # k runner threads run k enqueues at once: TF1's order is then timing-dependent, and
        # input order is one of its orders.
        dataset = source.computed(finish=with_shapes, parallelism=threads)
        if enqueue.many:
            dataset = datasets.unbatched(dataset)
        return dataset
