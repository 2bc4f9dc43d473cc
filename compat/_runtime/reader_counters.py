"""A reader's `num_records_produced` / `num_work_units_completed`, kept by its pipeline.

Each counter is a resource variable found by a unique shared name, so the ops inside the
tf.data functions and the ops user code runs refer to the same per-session variable without
the pipeline capturing it (one-shot iterators cannot capture state). The stream zeroes both
counters when it starts, the record source adds records a batch at a time as it reads them,
and a work unit counts when its file is exhausted. Like TF1's, the values run ahead of what
the consumer has dequeued: a reader reads ahead (here, by up to one chunk of 1,024
records, or a whole file where the source reads whole files).
"""
from __future__ import annotations

import itertools

import tensorflow as tf

from compat._runtime.record_sources import effect_only

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

    def count_records(self, amount):
        """Ops adding `amount` records; record sources call it as they read."""
        return [self._add(self._records, amount)]

    def counted_stream(self, work_units: tf.data.Dataset, records_of) -> tf.data.Dataset:
        """`work_units.flat_map(records_of)`, counting as it reads.

        `records_of(unit, count_records)` counts its records itself, a batch at a time where
        it reads them (see `record_sources`); this adds a work unit as each is exhausted and
        zeroes both counters as the stream starts.
        """
        def counted(unit):
            records = records_of(unit, self.count_records)
            unit_done = effect_only(lambda: [self._add(self._work_units, 1)],
                                    records.element_spec)
            return records.concatenate(unit_done)

        stream = work_units.flat_map(counted)
        return effect_only(self.zero, stream.element_spec).concatenate(stream)
