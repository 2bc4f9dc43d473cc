"""TF1 readers (`tf.TFRecordReader`, `tf.TextLineReader`, ...) as pipeline stages.

`reader.read(queue)` is a stage whose elements are `(key, value)` pairs: the queue's work
units (filenames), each expanded by the matching `record_sources` function, which gives
TF1's exact keys, values and errors. Constructors keep TF1's signatures and defaults.
"""
from __future__ import annotations

import os

import numpy as np
import tensorflow as tf

from compat._runtime import (dataset_functions, datasets, plan, record_sources,
                             streamed_files, written_reads)
from compat._runtime.reader_counters import ReaderCounters


def _work_units(queue, api):
    new_consumer = getattr(queue, "new_consumer", None)
    if new_consumer is None:
        raise TypeError(
            f"{api}: `queue` must be a queue (a producer such as "
            f"tf.train.string_input_producer, a compat.v1 queue, or a TF queue); got {queue!r}.")
    return new_consumer()


def _is_tf_queue(queue) -> bool:
    """Whether `queue` is one of TensorFlow's own queues (built by code that calls TensorFlow
    itself, as tf_slim does), not a compat.v1 one."""
    return getattr(queue, "new_consumer", None) is None and hasattr(queue, "queue_ref")


# What a reader's read and read_up_to give: (key, value) and (keys, values).
_STRING = tf.TensorSpec([], tf.string)
_STRINGS = tf.TensorSpec([None], tf.string)

# Files a TFRecord reader opens with one reader op when only values are read.
_FILES_PER_READER = 64
# At most this many known files are looked at to choose how to read them.
_MOST_FILES_LOOKED_AT = 1000


def _all_known_within(queue, limit) -> bool:
    """Whether every file name `queue` gives is known now (a producer of a constant list of
    names) and names a local file of at most `limit` bytes, or none (its read fails as
    TF1's does). Only a choice of how to read: a file that grows before it is read is still
    read exactly, holding more memory."""
    known = getattr(queue, "known_rows", None)
    rows = None if known is None else known()
    if rows is None:
        return False
    rows = np.asarray(rows).reshape(-1)
    if rows.size > _MOST_FILES_LOOKED_AT:
        return False
    for row in rows:
        path = row.decode("utf-8", "surrogateescape") if isinstance(row, bytes) else str(row)
        if "://" in path:
            return False
        try:
            if os.stat(path).st_size > limit:
                return False
        except OSError:
            continue
    return True


def read_each_file_alone(graph) -> None:
    """Make the readers of `graph` shardable by file, as TF's FILE sharding (the tf.data
    service's, tf.distribute's auto-sharding) expects: every file is read by a function of
    its own applied to the stream of file names (`flat_map`), where a group of files read at
    once would be one element to shard; and the function holds a reader dataset of its file,
    by which the sharder recognizes a file reader, even where the records are read from the
    file's contents (text lines, whole files). That dataset is never iterated: creating one
    opens nothing."""
    graph._compat_each_file_alone = True  # pylint: disable=protected-access


def _reads_each_file_alone(graph) -> bool:
    return getattr(graph, "_compat_each_file_alone", False)


class ReaderBase:
    """Base of the shim's readers; a subclass says how one work unit becomes records.

    A subclass whose `_records` accepts ``with_keys=False`` (values alone, cheaper) sets
    `_reads_values_alone`; a pipeline that never reads the keys then gets only the values.
    """

    _reads_values_alone = False

    def __init__(self, reader_ref, supports_serialize=False):
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize
        self._name = type(self).__name__
        self._counters = ReaderCounters(self._name)
        # Counting costs per-file work; a reader counts once its counters are asked for.
        self._counting = False
        self._graph = None
        # queue id -> whether its files are read whole (see `_records_for`)
        self._reads_whole = {}
        self._tf1 = None  # TF's reader, for TF queues (see `_tf1_reader`)

    def _records_of(self, work_units, records_of):
        """`work_units.flat_map(records_of)`, counted when the counters are in use."""
        if self._counting:
            return self._counters.counted_stream(work_units, records_of)
        if _reads_each_file_alone(self._graph):
            def records_of_file(unit):
                tf.data.TFRecordDataset(unit)  # see read_each_file_alone
                return records_of(unit, None)
            return work_units.flat_map(records_of_file)
        if self._record_of_unit is not None and records_of == self._records:
            return work_units.map(self._record_of_unit)  # a dataset per unit costs ~20 us
        return work_units.flat_map(lambda unit: records_of(unit, None))

    # For a reader giving exactly one (key, value) per work unit: that pair, from the unit.
    _record_of_unit = None
    # For a reader that can read the values of a vector of work units with one dataset.
    _values_of_units = None

    def _written_values(self, work_units, queue):
        """`_records_of` the units' values alone (uncounted), with the function reading a
        unit written rather than traced (`written_reads`); None where it is traced."""
        return None

    def _whole_file_limit(self):
        """For a reader that can read a file whole or stream it (`streamed_files`): the
        largest file it reads whole when all its files are known to be that small; None
        for the others."""
        return None

    def _records_for(self, queue):
        """`self._records`, reading whole files where all of `queue`'s are known to allow it
        (decided when the pipeline is traced, as close to the reads as the graph gets)."""
        limit = self._whole_file_limit()
        if limit is None:
            return self._records

        def records(unit, count_records, **kwargs):
            whole = self._reads_whole.get(id(queue))
            if whole is None:
                whole = self._reads_whole[id(queue)] = _all_known_within(queue, limit)
            return self._records(unit, count_records, whole_files=whole, **kwargs)
        return records

    def _values_key(self):
        """What `_values_of_units` depends on besides the units, when nothing else: its
        function is then traced once per graph and key (`dataset_functions.reusable`)."""
        return None

    def _count(self):
        """Start counting: pipelines built before now are traced again, counting."""
        if not self._counting:
            self._counting = True
            if self._graph is not None:
                plan.retrace(self._graph)

    def _records(self, work_unit, count_records) -> tf.data.Dataset:
        raise NotImplementedError(
            f"{type(self).__name__} must define _records(work_unit, count_records) returning "
            "a tf.data Dataset of (key, value) scalar string pairs, calling "
            "count_records(n) as it reads n records")

    @property
    def reader_ref(self):
        return self._reader_ref

    @property
    def supports_serialize(self):
        return self._supports_serialize

    def _tf1_arguments(self) -> dict:
        """The arguments of TF's reader of this kind, configured as this one."""
        return {}

    def _tf1_reader(self):
        """TF's reader of this kind and configuration, which reads a TF queue (see
        `tf1_fallback`): made once, so that its counters count every read of it."""
        if self._tf1 is None:
            self._tf1 = getattr(tf.compat.v1, type(self).__name__)(
                name=self._name, **self._tf1_arguments())
        return self._tf1

    def read(self, queue, name=None):
        if _is_tf_queue(queue):
            return self._tf1_reader().read(queue, name=name)
        work_units = _work_units(queue, f"{self._name}.read")
        self._graph = tf.compat.v1.get_default_graph()
        records_of = self._records_for(queue)

        def records():
            return self._records_of(work_units(), records_of)

        def values_alone(components):
            if components != (1,) or not self._reads_values_alone:
                return None
            units = work_units()
            if not self._counting and not _reads_each_file_alone(self._graph):
                if self._values_of_units is not None:
                    # One reader op per group of files: a dataset per small file costs more
                    # than its records (a group's files are read in order, errors where TF1
                    # has them).
                    values_of_units, key = self._values_of_units, self._values_key()
                    if key is not None:
                        values_of_units = dataset_functions.reusable(values_of_units, key)
                    return units.batch(_FILES_PER_READER).flat_map(values_of_units)
                written = self._written_values(units, queue)
                if written is not None:
                    return written
            return self._records_of(
                units, lambda unit, count_records: records_of(
                    unit, count_records, with_keys=False))

        def unit_map(components):
            # Only where the value is read: a read whose contents go unused is pruned, and a
            # missing file would then go unnoticed (TF1's reader fails on it).
            if (self._record_of_unit is None or 1 not in components or self._counting
                    or _reads_each_file_alone(self._graph)):
                return None
            return work_units(), self._record_of_unit

        key, value = plan.register(records, name or "ReaderReadV2", part_factory=values_alone,
                                   element_spec=(_STRING, _STRING), unit_map=unit_map,
                                   reads_only=getattr(queue, "reads_only", False))
        return key, value

    def read_up_to(self, queue, num_records, name=None):
        if _is_tf_queue(queue):
            return self._tf1_reader().read_up_to(queue, num_records, name=name)
        work_units = _work_units(queue, f"{self._name}.read_up_to")
        self._graph = tf.compat.v1.get_default_graph()
        records_of = self._records_for(queue)

        def records_up_to():
            return self._records_of(
                work_units(),
                lambda unit, count_records: record_sources.records_up_to(
                    records_of(unit, count_records), num_records))

        keys, values = plan.register(records_up_to, name or "ReaderReadUpToV2",
                                     element_spec=(_STRINGS, _STRINGS),
                                     reads_only=getattr(queue, "reads_only", False))
        return keys, values

    def num_records_produced(self, name=None):
        if self._tf1 is not None:
            return self._tf1.num_records_produced(name=name)
        self._count()
        return self._counters.value("records", name)

    def num_work_units_completed(self, name=None):
        if self._tf1 is not None:
            return self._tf1.num_work_units_completed(name=name)
        self._count()
        return self._counters.value("work_units", name)

    def reset(self, name=None):
        if self._tf1 is not None:
            return self._tf1.reset(name=name)
        self._count()
        # A Session starts every stage afresh; within one, the stream is not restarted, but
        # the counters a user watches go back to zero as TF1's do.
        with tf.control_dependencies(self._counters.zero()):
            return tf.no_op(name=name or "ReaderResetV2")

    def serialize_state(self, name=None):
        return self._unsupported_state("serialize_state", name)

    def restore_state(self, state, name=None):
        del state
        return self._unsupported_state("restore_state", name)

    def _unsupported_state(self, method, name):
        raise NotImplementedError(
            f"{self._name}.{method}: compat.v1 readers run inside one tf.data pipeline, whose "
            "position cannot be saved or restored through the reader. Save the model, not the "
            "reader, or keep this reader on tensorflow.compat.v1.")


class TFRecordReader(ReaderBase):
    _reads_values_alone = True

    def __init__(self, name=None, options=None):
        super().__init__(None)
        self._options = options
        self._compression_type = record_sources.compression_type_of(options)
        self._name = name or "TFRecordReader"

    def _tf1_arguments(self):
        return {"options": self._options}

    def _records(self, work_unit, count_records, with_keys=True):
        return record_sources.tfrecord_records(work_unit, self._compression_type,
                                               count_records=count_records, with_keys=with_keys)

    def _values_of_units(self, filenames):
        return datasets.tfrecords(filenames, self._compression_type)

    def _values_key(self):
        return type(self), self._compression_type  # a subclass is a kind of its own


class TextLineReader(ReaderBase):
    _reads_values_alone = True

    def __init__(self, skip_header_lines=None, name=None):
        super().__init__(None)
        self._skip_header_lines = skip_header_lines or 0
        self._name = name or "TextLineReader"

    def _tf1_arguments(self):
        return {"skip_header_lines": self._skip_header_lines}

    def _whole_file_limit(self):
        return streamed_files.WHOLE_FILE_BYTES

    def _records(self, work_unit, count_records, with_keys=True, whole_files=False):
        return record_sources.text_line_records(work_unit, self._skip_header_lines,
                                                count_records=count_records, with_keys=with_keys,
                                                streamed=not whole_files)


class FixedLengthRecordReader(ReaderBase):
    _reads_values_alone = True

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None):
        super().__init__(None)
        self._layout = dict(record_bytes=record_bytes, header_bytes=header_bytes or 0,
                            footer_bytes=footer_bytes or 0, hop_bytes=hop_bytes or 0,
                            encoding=encoding or "")
        self._name = name or "FixedLengthRecordReader"

    def _tf1_arguments(self):
        return dict(self._layout)

    def _whole_file_limit(self):
        if self._layout["encoding"]:
            return None  # how large it is decompressed is only known once read
        if self._layout["hop_bytes"] in (0, self._layout["record_bytes"]):
            return record_sources.LARGEST_SIZED_WHOLE
        return streamed_files.WHOLE_FILE_BYTES

    def _written_values(self, work_units, queue):
        if not _all_known_within(queue, record_sources.LARGEST_SIZED_WHOLE):
            return None
        return written_reads.fixed_length_values(work_units, **self._layout)

    def _records(self, work_unit, count_records, with_keys=True, whole_files=False):
        return record_sources.fixed_length_records(work_unit, **self._layout,
                                                   count_records=count_records,
                                                   with_keys=with_keys,
                                                   streamed=not whole_files)


def read_whole_file(filename):
    """A whole-file reader's record of one file (its unit): (file name, contents)."""
    return filename, tf.io.read_file(filename)


class WholeFileReader(ReaderBase):
    def __init__(self, name=None):
        super().__init__(None)
        self._name = name or "WholeFileReader"

    _record_of_unit = staticmethod(read_whole_file)

    def _records(self, work_unit, count_records):
        return record_sources.whole_file_records(work_unit, count_records=count_records)


class IdentityReader(ReaderBase):
    def __init__(self, name=None):
        super().__init__(None)
        self._name = name or "IdentityReader"

    def _records(self, work_unit, count_records):
        return record_sources.identity_records(work_unit, count_records=count_records)


class LMDBReader(ReaderBase):
    def __init__(self, name=None, options=None):
        del options  # TF1 ignores it too
        super().__init__(None)
        self._name = name or "LMDBReader"

    def _records(self, work_unit, count_records):
        return record_sources.lmdb_records(work_unit, count_records=count_records)
