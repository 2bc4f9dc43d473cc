"""Pipeline configurations as plain data, and ``build_pipeline`` turning one into ``build(tf)``.

The hypothesis strategies in ``compat.harness.strategies`` draw ``PipelineConfig`` values;
``build_pipeline(config, data_dir)`` writes the config's input files into ``data_dir`` and
returns a legacy pipeline function that uses only the ``tf`` module it is given, so it runs
under real ``tensorflow.compat.v1`` and under ``compat.v1`` alike.

Every element is unique within an epoch (record contents and reader keys name the file and
record), so multisets, windows and displacements are meaningful.
"""
from __future__ import annotations

import gzip
import os
from dataclasses import asdict, dataclass

PRODUCERS = ("string", "range", "slice", "input")
FILE_KINDS = ("tfrecord", "tfrecord_gzip", "text", "fixed_length")
BATCHERS = ("batch", "shuffle_batch", "maybe_batch", "maybe_shuffle_batch", "batch_join",
            "shuffle_batch_join")
FIXED_RECORD_BYTES = 8


@dataclass(frozen=True)
class PipelineConfig:
    """One legacy input pipeline, as data.

    producer:        "string" (filenames -> reader), "range", "slice" or "input" (in memory)
    file_kind:       reader input for the string producer: "tfrecord", "tfrecord_gzip", "text"
                     (``TextLineReader(skip_header_lines=header_lines)``), "fixed_length"
                     (``FixedLengthRecordReader`` with header/footer bytes)
    records_per_file: record count of each file (string producer) or the number of in-memory
                     elements (``records_per_file[0]`` for range/slice/input)
    header_lines:    text files start with this many header lines (skipped by the reader)
    header_bytes, footer_bytes: fixed-length files' header and footer sizes
    read_up_to:      0 reads one record per step; n > 0 uses ``read_up_to(n)`` (readers) or
                     ``dequeue_up_to(n)`` (range/input producers), so ``enqueue_many=True``
    shuffle_producer, producer_seed, num_epochs, producer_capacity: producer arguments
    batcher:         one of BATCHERS (``tf.train.<batcher>``)
    batch_size, capacity, min_after_dequeue, num_threads, allow_smaller_final_batch,
    dynamic_pad, batch_seed: batching arguments (min_after_dequeue/seed only for shuffles,
                     dynamic_pad only for the non-shuffling ones)
    keep_modulo:     maybe_* keep elements whose running index % keep_modulo != 0
                     (0: keep all)
    join_readers:    number of parallel readers for *_join (each its own reader op)
    graph_seed:      ``tf.set_random_seed`` inside build (None: unseeded)
    """

    producer: str = "range"
    file_kind: str = "tfrecord"
    records_per_file: tuple = (10,)
    header_lines: int = 0
    header_bytes: int = 0
    footer_bytes: int = 0
    read_up_to: int = 0
    shuffle_producer: bool = False
    producer_seed: int | None = None
    num_epochs: int = 1
    producer_capacity: int = 32
    batcher: str = "batch"
    batch_size: int = 3
    capacity: int = 32
    min_after_dequeue: int = 0
    num_threads: int = 1
    allow_smaller_final_batch: bool = False
    dynamic_pad: bool = False
    batch_seed: int | None = None
    keep_modulo: int = 0
    join_readers: int = 1
    graph_seed: int | None = None

    @property
    def enqueue_many(self) -> bool:
        return self.read_up_to > 0

    @property
    def shuffles(self) -> bool:
        return "shuffle" in self.batcher

    @property
    def joins(self) -> bool:
        return self.batcher.endswith("_join")

    @property
    def total_records(self) -> int:
        if self.producer == "string":
            return sum(self.records_per_file)
        return self.records_per_file[0]

    def to_json(self) -> dict:
        data = asdict(self)
        data["records_per_file"] = list(self.records_per_file)
        return data

    def validate(self) -> "PipelineConfig":
        """Raise ValueError for combinations TF1 itself rejects (so strategies avoid them)."""
        if self.producer not in PRODUCERS or self.batcher not in BATCHERS:
            raise ValueError(f"unknown producer/batcher: {self.producer}/{self.batcher}")
        if self.shuffles and self.capacity <= self.min_after_dequeue:
            raise ValueError("shuffle capacity must exceed min_after_dequeue")
        if self.shuffles and self.dynamic_pad:
            raise ValueError("dynamic_pad is not an argument of shuffle_batch")
        if self.dynamic_pad and self.enqueue_many:
            raise ValueError("dynamic_pad with enqueue_many is not generated")
        if self.joins and self.num_threads != 1:
            raise ValueError("*_join takes join_readers, not num_threads")
        return self


# ----------------------------------------------------------------------------- files


def _record_text(file_index: int, record_index: int) -> str:
    return f"f{file_index:02d}r{record_index:03d}"


def write_files(config: PipelineConfig, data_dir) -> list:
    """Write the config's input files; returns their paths (sorted, as the producer sees them)."""
    os.makedirs(data_dir, exist_ok=True)
    paths = []
    for f, count in enumerate(config.records_per_file):
        records = [_record_text(f, r) for r in range(count)]
        kind = config.file_kind
        path = os.path.join(str(data_dir), f"part-{f:02d}.{kind}")
        if kind in ("tfrecord", "tfrecord_gzip"):
            data = b"".join(_tfrecord_frame(r.encode()) for r in records)
            if kind == "tfrecord_gzip":
                data = gzip.compress(data)
            _write(path, data)
        elif kind == "text":
            lines = [f"header line {h}" for h in range(config.header_lines)] + records
            _write(path, ("\n".join(lines) + ("\n" if lines else "")).encode())
        elif kind == "fixed_length":
            body = b"".join(r.encode().ljust(FIXED_RECORD_BYTES, b".") for r in records)
            _write(path, b"H" * config.header_bytes + body + b"F" * config.footer_bytes)
        else:
            raise ValueError(f"unknown file kind {kind!r}")
        paths.append(path)
    return paths


def _write(path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)


def _masked_crc32c(data: bytes) -> int:
    crc = _crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def _tfrecord_frame(payload: bytes) -> bytes:
    """One TFRecord: length, masked CRC of length, data, masked CRC of data (no TF needed)."""
    length = len(payload).to_bytes(8, "little")
    return (length + _masked_crc32c(length).to_bytes(4, "little") + payload
            + _masked_crc32c(payload).to_bytes(4, "little"))


# ----------------------------------------------------------------------------- build(tf)


def build_pipeline(config: PipelineConfig, data_dir):
    """Write the files and return ``build(tf)`` for ``config`` (fetches a dict of batches)."""
    config.validate()
    paths = write_files(config, data_dir) if config.producer == "string" else []

    def build(tf):
        if config.graph_seed is not None:
            tf.set_random_seed(config.graph_seed)
        sources = [_source(tf, config, paths, reader_index)
                   for reader_index in range(config.join_readers if config.joins else 1)]
        return _batch(tf, config, sources)

    build.__qualname__ = build.__name__ = f"build_{config.producer}_{config.batcher}"
    build.config = config
    return build


def _producer_args(config):
    return dict(num_epochs=config.num_epochs, shuffle=config.shuffle_producer,
                seed=config.producer_seed, capacity=config.producer_capacity)


def _source(tf, config, paths, reader_index):
    """One element (or, with read_up_to, one batch of elements) as a dict of tensors."""
    n = config.total_records
    if config.producer == "string":
        queue = _shared_filename_queue(tf, config, paths)
        reader = _reader(tf, config)
        if config.read_up_to:
            key, value = reader.read_up_to(queue, config.read_up_to)
        else:
            key, value = reader.read(queue)
        record = {"key": key, "value": value}
    elif config.producer == "range":
        queue = _shared_queue(tf, "range", lambda: tf.train.range_input_producer(
            n, **_producer_args(config)))
        index = queue.dequeue_up_to(config.read_up_to) if config.read_up_to else queue.dequeue()
        record = {"index": index, "value": tf.as_string(index * 7)}
    elif config.producer == "input":
        rows = [[i, i * 3] for i in range(n)]
        queue = _shared_queue(tf, "input", lambda: tf.train.input_producer(
            tf.constant(rows, tf.int64), element_shape=[2], **_producer_args(config)))
        row = queue.dequeue_up_to(config.read_up_to) if config.read_up_to else queue.dequeue()
        record = {"index": row[..., 0], "value": row[..., 1]}
    else:  # slice: no queue to dequeue from, slices are elements
        ids = tf.constant(list(range(n)), tf.int32)
        names = tf.constant([f"name{i}" for i in range(n)])
        index, name = _shared_queue(tf, "slice", lambda: tf.train.slice_input_producer(
            [ids, names], **_producer_args(config)))
        record = {"index": index, "value": name}
        if config.read_up_to:  # slices come one at a time: make a batch of one
            record = {k: tf.expand_dims(v, 0) for k, v in record.items()}
    if config.dynamic_pad:
        length = tf.strings.length(tf.as_string(record["value"])) % 4
        record["padded"] = tf.range(length)
    return record


_GRAPH_LOCAL = "_compat_harness_pipeline_cache"


def _graph_cache(tf):
    graph = tf.get_default_graph()
    cache = getattr(graph, _GRAPH_LOCAL, None)
    if cache is None:
        cache = {}
        setattr(graph, _GRAPH_LOCAL, cache)
    return cache


def _shared_queue(tf, name, make):
    """One producer per graph, shared by every *_join reader (as in TF1 programs)."""
    cache = _graph_cache(tf)
    if name not in cache:
        cache[name] = make()
    return cache[name]


def _shared_filename_queue(tf, config, paths):
    return _shared_queue(tf, "filenames", lambda: tf.train.string_input_producer(
        paths, **_producer_args(config)))


def _reader(tf, config):
    kind = config.file_kind
    if kind == "tfrecord":
        return tf.TFRecordReader()
    if kind == "tfrecord_gzip":
        options = tf.python_io.TFRecordOptions(tf.python_io.TFRecordCompressionType.GZIP)
        return tf.TFRecordReader(options=options)
    if kind == "text":
        return tf.TextLineReader(skip_header_lines=config.header_lines or None)
    return tf.FixedLengthRecordReader(FIXED_RECORD_BYTES, header_bytes=config.header_bytes,
                                      footer_bytes=config.footer_bytes)


def _keep(tf, config, record):
    """keep_input for maybe_*: drop elements whose index/record number % keep_modulo == 0."""
    if "index" in record:
        number = tf.cast(record["index"], tf.int64)
    else:
        number = tf.strings.to_number(tf.strings.substr(record["value"], 4, 3), tf.int64)
    if config.keep_modulo:
        return tf.not_equal(number % config.keep_modulo, 0)
    return tf.ones_like(number, tf.bool) if config.enqueue_many else tf.constant(True)


def _batch(tf, config, sources):
    train = tf.train
    common = dict(batch_size=config.batch_size, capacity=config.capacity,
                  enqueue_many=config.enqueue_many,
                  allow_smaller_final_batch=config.allow_smaller_final_batch)
    shuffle = dict(min_after_dequeue=config.min_after_dequeue, seed=config.batch_seed)
    single = sources[0]
    b = config.batcher
    if b == "batch":
        return train.batch(single, num_threads=config.num_threads,
                           dynamic_pad=config.dynamic_pad, **common)
    if b == "shuffle_batch":
        return train.shuffle_batch(single, num_threads=config.num_threads, **common, **shuffle)
    if b == "maybe_batch":
        return train.maybe_batch(single, _keep(tf, config, single),
                                 num_threads=config.num_threads,
                                 dynamic_pad=config.dynamic_pad, **common)
    if b == "maybe_shuffle_batch":
        return train.maybe_shuffle_batch(single, keep_input=_keep(tf, config, single),
                                         num_threads=config.num_threads, **common, **shuffle)
    if b == "batch_join":
        return train.batch_join(sources, dynamic_pad=config.dynamic_pad, **common)
    return train.shuffle_batch_join(sources, **common, **shuffle)


def config_from_json(data: dict) -> PipelineConfig:
    data = dict(data)
    data["records_per_file"] = tuple(data.get("records_per_file", (10,)))
    return PipelineConfig(**data).validate()


__all__ = ["PipelineConfig", "build_pipeline", "write_files", "config_from_json", "PRODUCERS",
           "FILE_KINDS", "BATCHERS"]
