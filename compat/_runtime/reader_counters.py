"""A reader's `num_records_produced` / `num_work_units_completed`, kept by its pipeline.

Each counter is a resource variable found by a unique shared name, so the ops inside the
tf.data functions and the ops user code runs refer to the same per-session variable without
the pipeline capturing it (one-shot iterators cannot capture state). The stream zeroes both
counters when it starts, adds each chunk of records as it reads it, and counts a work unit
when its file is exhausted. Like TF1's, the values run ahead of what the consumer has
dequeued: a reader reads ahead into its buffers (here, by up to one chunk).
"""
from __future__ import annotations

import itertools

import tensorflow as tf

# Records counted per update: one variable update per chunk keeps the per-record cost of
# counting small.
COUNT_CHUNK = 256
_ids = itertools.count()


class ReaderCounters:
    def __init__(self, reader_name: str):
        prefix = f"compat_reader_{next(_ids)}_{reader_name}"
        self._records = f"{prefix}_records"
        self._work_units = f"{prefix}_work_units"

    @staticmethod
    def _handle(shared_name):
        return tf.raw_ops.VarHandleOp(dtype=tf.int64, shape=[], shared_name=shared_name)

    def _add(self, shared_name, amount):
        return tf.raw_ops.AssignAddVariableOp(resource=self._handle(shared_name),
                                              value=tf.cast(amount, tf.int64))

    def value(self, which: str, name=None):
        """The counter's current value in this session (0 before the stream starts)."""
        handle = self._handle(self._records if which == "records" else self._work_units)
        return tf.cond(tf.raw_ops.VarIsInitializedOp(resource=handle),
                       lambda: tf.raw_ops.ReadVariableOp(resource=handle, dtype=tf.int64),
                       lambda: tf.constant(0, tf.int64), name=name)

    def zero(self):
        zero = tf.constant(0, tf.int64)
        return [tf.raw_ops.AssignVariableOp(resource=self._handle(shared_name), value=zero)
                for shared_name in (self._records, self._work_units)]

    def counted_stream(self, work_units: tf.data.Dataset, records_of,
                       chunk_size: int = COUNT_CHUNK) -> tf.data.Dataset:
        """`work_units.flat_map(records_of)`, counting as it reads.

        The records are counted `chunk_size` elements at a time; an element holds one record
        (`read`) or a batch of them (`read_up_to`, whose batches differ in size and so are
        counted one at a time: chunk_size=1).
        """
        def counted(unit):
            def add_records(*chunk):
                with tf.control_dependencies([self._add(self._records, tf.size(chunk[0]))]):
                    return tuple(tf.identity(part) for part in chunk)

            records = records_of(unit)
            chunks = records.batch(chunk_size).map(add_records).unbatch()
            return chunks.concatenate(_effect_only(lambda: [self._add(self._work_units, 1)],
                                                   records))

        stream = work_units.flat_map(counted)
        return _effect_only(self.zero, stream).concatenate(stream)


def _effect_only(effect, like: tf.data.Dataset) -> tf.data.Dataset:
    """A dataset with `like`'s element structure that runs `effect()` once, yields nothing.

    The structure comes from `like.element_spec`, not from `like` itself: a second use of
    `like` in the graph makes tf.data's optimizer fail to fuse its map and batch nodes.
    """
    def placeholder_of(spec):
        return tf.zeros([0 if size is None else size for size in spec.shape.as_list()],
                        spec.dtype)

    def run(_):
        with tf.control_dependencies(effect()):
            return tf.constant(False)
    return (tf.data.Dataset.from_tensors(0).filter(run)
            .map(lambda _: tf.nest.map_structure(placeholder_of, like.element_spec)))
