"""Single-threaded pipelines without a shuffle queue: the shim gives TF1's batches bit for bit.

Configurations are drawn by hypothesis; each one is a legacy pipeline function run under
`tensorflow.compat.v1` and under `compat.v1`.
"""
import gzip

import numpy as np
import pytest
from hypothesis import given, strategies as st

from conftest import run_stream
from streams import assert_streams_equal

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(600)]

seeds = st.one_of(st.none(), st.integers(0, 2**31 - 1))


@st.composite
def producer_configs(draw):
    shuffle = draw(st.booleans())
    return dict(
        kind=draw(st.sampled_from(["string", "range", "slice", "input"])),
        size=draw(st.integers(1, 9)),
        num_epochs=draw(st.integers(1, 3)),
        shuffle=shuffle,
        # Without any seed TF1's own order is random; exactness needs one when shuffling.
        graph_seed=draw(st.integers(0, 1000)) if shuffle else draw(st.one_of(st.none(), st.integers(0, 1000))),
        op_seed=draw(seeds),
        random_ops_before=draw(st.integers(0, 2)),
        capacity=draw(st.integers(1, 40)),
    )


def producer_pipeline(config):
    def build(tf):
        for _ in range(config["random_ops_before"]):
            tf.random_uniform([])  # advances the graph's op-seed counter before the producer
        common = dict(num_epochs=config["num_epochs"], shuffle=config["shuffle"],
                      seed=config["op_seed"], capacity=config["capacity"])
        n = config["size"]
        if config["kind"] == "string":
            return tf.train.string_input_producer([f"file{i}" for i in range(n)], **common).dequeue()
        if config["kind"] == "range":
            return tf.train.range_input_producer(n, **common).dequeue()
        if config["kind"] == "slice":
            return tf.train.slice_input_producer(
                [tf.range(n) * 10, tf.constant([[float(i)] * 2 for i in range(n)])], **common)
        return tf.train.input_producer(tf.reshape(tf.range(n * 2), [n, 2]), **common).dequeue()
    return build


@given(config=producer_configs())
def test_producers_are_seed_exact(config, legacy, shim):
    build = producer_pipeline(config)
    assert_streams_equal(run_stream(legacy, build, graph_seed=config["graph_seed"]),
                         run_stream(shim, build, graph_seed=config["graph_seed"]))


@st.composite
def batch_configs(draw):
    return dict(
        size=draw(st.integers(1, 25)),
        num_epochs=draw(st.integers(1, 3)),
        shuffle_producer=draw(st.booleans()),
        batch_size=draw(st.integers(1, 7)),
        allow_smaller_final_batch=draw(st.booleans()),
        enqueue_many=draw(st.sampled_from([0, 1, 3])),  # 0: no; k: producer dequeues k rows
        dynamic_pad=draw(st.booleans()),
        keep=draw(st.sampled_from(["none", "scalar", "vector"])),
        as_dict=draw(st.booleans()),
        single=draw(st.booleans()),
        sparse=draw(st.booleans()),
        capacity=draw(st.integers(1, 50)),
        graph_seed=draw(st.integers(0, 1000)),
    )


def batch_pipeline(config):
    def build(tf):
        producer = tf.train.range_input_producer(
            config["size"], num_epochs=config["num_epochs"], shuffle=config["shuffle_producer"])
        many = config["enqueue_many"]
        index = producer.dequeue_many(many) if many else producer.dequeue()
        if config["dynamic_pad"] and not many:
            value = tf.fill([index % 4], tf.cast(index, tf.float32))  # ragged: padded per batch
        else:
            value = tf.cast(index, tf.float32) * 0.5
        tensors = [value] if config["single"] else [value, tf.strings.as_string(index)]
        # TF1 cannot build maybe_batch of a SparseTensor with a tensor keep_input (its
        # smart_cond hands an Identity to the sparse map); the shim can, but TF1 is the oracle.
        if config["sparse"] and not config["dynamic_pad"] and not many and config["keep"] == "none":
            tensors.append(tf.SparseTensor(indices=[[0]], values=[index], dense_shape=[2]))
        if config["as_dict"]:
            tensors = {f"component_{i}": t for i, t in enumerate(tensors)}
        common = dict(batch_size=config["batch_size"], capacity=config["capacity"],
                      enqueue_many=bool(many), dynamic_pad=config["dynamic_pad"] and not many,
                      allow_smaller_final_batch=config["allow_smaller_final_batch"])
        keep = config["keep"]
        if keep == "vector" and many:
            return tf.train.maybe_batch(tensors, keep_input=tf.equal(index % 3, 0), **common)
        if keep != "none":
            return tf.train.maybe_batch(tensors, keep_input=tf.reduce_all(tf.equal(index % 2, 0)),
                                        **common)
        return tf.train.batch(tensors, **common)
    return build


@given(config=batch_configs())
def test_batch_family_is_bit_exact(config, legacy, shim):
    build = batch_pipeline(config)
    assert_streams_equal(run_stream(legacy, build, graph_seed=config["graph_seed"]),
                         run_stream(shim, build, graph_seed=config["graph_seed"]))


# ----------------------------------------------------------------------------- readers

def _write_tfrecords(path, records, compression):
    import tensorflow as tf
    options = tf.io.TFRecordOptions(compression_type=compression)
    with tf.io.TFRecordWriter(str(path), options) as writer:
        for record in records:
            writer.write(record)


def _example(tf, index, length):
    return tf.train.Example(features=tf.train.Features(feature={
        "index": tf.train.Feature(int64_list=tf.train.Int64List(value=[index])),
        "tokens": tf.train.Feature(int64_list=tf.train.Int64List(value=list(range(length)))),
        "raw": tf.train.Feature(bytes_list=tf.train.BytesList(value=[bytes([index % 256]) * 4])),
    })).SerializeToString()


@st.composite
def reader_configs(draw):
    return dict(
        kind=draw(st.sampled_from(["tfrecord", "gzip", "text", "fixed"])),
        files=draw(st.lists(st.integers(0, 6), min_size=1, max_size=3)),  # records per file
        num_epochs=draw(st.integers(1, 2)),
        shuffle_files=draw(st.booleans()),
        batch_size=draw(st.integers(1, 5)),
        allow_smaller_final_batch=draw(st.booleans()),
        header_lines=draw(st.integers(0, 2)),
        graph_seed=draw(st.integers(0, 1000)),
        # Without the keys the shim reads the values alone (TFRecord, text, fixed-length):
        # same batches.
        with_keys=draw(st.booleans()),
    )


def write_files(config, directory):
    import tensorflow as tf
    paths = []
    for file_index, count in enumerate(config["files"]):
        path = directory / f"part-{file_index}.{config['kind']}"
        first = file_index * 100
        if config["kind"] in ("tfrecord", "gzip"):
            records = [_example(tf, first + i, i % 4) for i in range(count)]
            _write_tfrecords(path, records, "GZIP" if config["kind"] == "gzip" else "")
        elif config["kind"] == "text":
            header = "".join(f"# header {h}\n" for h in range(config["header_lines"]))
            path.write_text(header + "".join(f"{first + i},{i * 0.25}\n" for i in range(count)))
        else:
            body = b"".join(np.array([first + i, i], "<i4").tobytes() for i in range(count))
            path.write_bytes(b"HEAD" + body + b"FOOT!")
        paths.append(str(path))
    return paths


def reader_pipeline(config, paths):
    def build(tf):
        queue = tf.train.string_input_producer(paths, num_epochs=config["num_epochs"],
                                               shuffle=config["shuffle_files"])
        kind = config["kind"]
        if kind in ("tfrecord", "gzip"):
            options = tf.python_io.TFRecordOptions(
                tf.python_io.TFRecordCompressionType.GZIP) if kind == "gzip" else None
            key, serialized = tf.TFRecordReader(options=options).read(queue)
            features = tf.parse_single_example(serialized, {
                "index": tf.FixedLenFeature([], tf.int64),
                "tokens": tf.VarLenFeature(tf.int64),
                "raw": tf.FixedLenFeature([], tf.string)})
            return tf.train.batch(
                [key] * config["with_keys"]
                + [features["index"], features["tokens"], features["raw"]],
                batch_size=config["batch_size"],
                allow_smaller_final_batch=config["allow_smaller_final_batch"])
        if kind == "text":
            key, line = tf.TextLineReader(skip_header_lines=config["header_lines"]).read(queue)
            index, fraction = tf.decode_csv(line, record_defaults=[[0], [0.0]])
            return tf.train.batch([key] * config["with_keys"] + [index, fraction],
                                  batch_size=config["batch_size"],
                                  allow_smaller_final_batch=config["allow_smaller_final_batch"])
        key, record = tf.FixedLengthRecordReader(record_bytes=8, header_bytes=4,
                                                 footer_bytes=5).read(queue)
        values = tf.decode_raw(record, tf.int32)
        values.set_shape([2])
        return tf.train.batch([key] * config["with_keys"] + [values],
                              batch_size=config["batch_size"],
                              allow_smaller_final_batch=config["allow_smaller_final_batch"])
    return build


@given(config=reader_configs())
def test_reader_pipelines_are_bit_exact(config, legacy, shim, tmp_path_factory):
    paths = write_files(config, tmp_path_factory.mktemp("data"))
    build = reader_pipeline(config, paths)
    assert_streams_equal(run_stream(legacy, build, graph_seed=config["graph_seed"]),
                         run_stream(shim, build, graph_seed=config["graph_seed"]))


def test_whole_file_and_identity_readers_are_bit_exact(tmp_path, legacy, shim):
    paths = []
    for i in range(3):
        path = tmp_path / f"blob{i}.bin"
        path.write_bytes(gzip.compress(bytes(range(i * 7))))
        paths.append(str(path))

    def build(tf):
        files = tf.train.string_input_producer(paths, num_epochs=2, seed=5)
        name, contents = tf.WholeFileReader().read(files)
        units = tf.train.string_input_producer(["unit-a", "unit-b"], num_epochs=1, shuffle=False)
        unit_key, unit_value = tf.IdentityReader().read(units)
        return [name, contents, tf.strings.length(contents)], [unit_key, unit_value]

    def whole_files(tf):
        return tf.train.batch(build(tf)[0], batch_size=2, allow_smaller_final_batch=True)

    def identity(tf):
        return build(tf)[1]

    for pipeline in (whole_files, identity):
        assert_streams_equal(run_stream(legacy, pipeline, graph_seed=3),
                             run_stream(shim, pipeline, graph_seed=3))


def decoded_records(lengths, split_words):
    """decode_raw of records of the given lengths, cut to a uniform size before batching."""
    def build(tf):
        queue = tf.train.string_input_producer(
            [("x" * length + "-" + str(i)).encode() for i, length in enumerate(lengths)],
            num_epochs=2, shuffle=False)
        record = queue.dequeue()
        head = tf.reshape(tf.decode_raw(record, tf.uint8)[:2], [2])
        tail = tf.reshape(tf.cast(tf.decode_raw(record, tf.uint8), tf.int32)[-1:], [1])
        tensors = [head, tail * 2,
                   tf.strings.length(record)]
        if split_words:
            tensors.append(tf.size(tf.strings.split([record], "x").values))
        return tf.train.batch(tensors, batch_size=3, allow_smaller_final_batch=True)
    return build


@pytest.mark.parametrize("lengths", [[2, 3, 4, 5, 6, 7, 8], [4] * 7, [4, 4, 4, 9, 9, 9, 1]],
                         ids=["all-different", "uniform", "uniform-per-batch"])
@pytest.mark.parametrize("split_words", [False, True])
def test_varying_intermediate_shapes_batch_like_tf1(lengths, split_words, legacy, shim):
    """Per-element values whose length varies, made uniform before batching: batches whose
    raw lengths differ must still come out as TF1's (the shim may compute whole batches)."""
    build = decoded_records(lengths, split_words)
    assert_streams_equal(run_stream(legacy, build), run_stream(shim, build))


@pytest.mark.parametrize("module", ["train", "io"])
def test_match_filenames_once_feeds_a_producer_like_tf1(tmp_path, module, legacy, shim):
    for i in range(3):
        (tmp_path / f"part-{i}.txt").write_text(f"{i}a\n{i}b\n")
    (tmp_path / "other.csv").write_text("not matched\n")

    def build(tf):
        files = getattr(tf, module).match_filenames_once(str(tmp_path / "part-*.txt"))
        key, line = tf.TextLineReader().read(
            tf.train.string_input_producer(files, num_epochs=2, seed=4))
        return tf.train.batch([key, line], batch_size=2, allow_smaller_final_batch=True)

    # TF1 programs ran with reference variables (tf.disable_v2_behavior() still selects
    # them); TF1's string_input_producer cannot take a resource variable's truth value.
    legacy.disable_resource_variables()
    try:
        expected = run_stream(legacy, build, graph_seed=1)
    finally:
        legacy.enable_resource_variables()
    assert_streams_equal(expected, run_stream(shim, build, graph_seed=1))
