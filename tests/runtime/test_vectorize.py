"""The batch computation runs the user's per-element ops once per batch, on the whole batch.

Stream equality with TF1 is tested elsewhere (test_pipelines_exact, the harness example);
this checks the compiled graph, so that a change which silently falls back to per-element
computation, or computes the parse twice, fails here instead of only in the benchmark.
"""
import os
import sys

import pytest

from conftest import run_stream
from streams import assert_streams_equal

EXAMPLES = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "examples")


def _mnist_example():
    sys.path.insert(0, EXAMPLES)
    try:
        import mnist_queue_pipeline as example
    finally:
        sys.path.remove(EXAMPLES)
    return example


def _batch_map_function(graph_def):
    """The function of the batch stage's ParallelMapDatasetV2 (the batched computation)."""
    functions = {function.signature.name: function for function in graph_def.library.function}
    for function in functions.values():
        for node in function.node_def:
            if node.op == "ParallelMapDatasetV2" and "shuffle_batch" in node.name:
                return functions, functions[node.attr["f"].func.name]
    raise AssertionError("no batched map function in the compiled pipeline")


def _live_nodes(function):
    """The nodes the function's results depend on (tracing leaves dead ones, which TF prunes)."""
    nodes = {node.name: node for node in function.node_def}
    live = set()
    pending = [value.split(":")[0] for value in function.ret.values()]
    while pending:
        name = pending.pop().lstrip("^").split(":")[0]
        if name in live or name not in nodes:
            continue
        live.add(name)
        pending.extend(nodes[name].input)
    return [nodes[name] for name in live]


def _op_counts(function, functions, follow_else=False):
    """Op types run by `function`, following calls and the taken branch of conditionals."""
    counts = {}
    for node in _live_nodes(function):
        counts[node.op] = counts.get(node.op, 0) + 1
        if node.op in functions:  # a call of a function of the library
            for op, count in _op_counts(functions[node.op], functions, follow_else).items():
                counts[op] = counts.get(op, 0) + count
        if node.op in ("If", "StatelessIf"):
            branch = "else_branch" if follow_else else "then_branch"
            for op, count in _op_counts(functions[node.attr[branch].func.name],
                                        functions, follow_else).items():
                counts[op] = counts.get(op, 0) + count
    return counts


@pytest.mark.timeout(300)
def test_mnist_example_parses_and_decodes_each_batch_once(shim, tmp_path):
    import tensorflow as real_tf

    example = _mnist_example()
    path = str(tmp_path / "mnist.tfrecord")
    example.write_mnist_like_tfrecord(path, 300)
    graph = real_tf.Graph()
    with graph.as_default():
        example.build(shim, path, num_epochs=1, batch_size=32)
    functions, batch_map = _batch_map_function(graph.as_graph_def())

    counts = _op_counts(batch_map, functions)
    assert counts.get("ParseExampleV2") == 1
    assert counts.get("DecodeRaw") == 1
    # Its pixels keep the record's length up to the batch's [784]: a batch of records of
    # differing lengths holds one TF1's enqueue rejects, so no per-element path is built.
    assert not {"If", "StatelessIf", "MapDataset"} & set(counts)


def _records_of_two_lengths(tf, pixels_of):
    records = [bytes(range(i, i + 16)) for i in range(10)] + [bytes(12)] + [bytes(16)] * 5
    record = tf.train.string_input_producer(records, num_epochs=1, shuffle=False).dequeue()
    return tf.train.batch([pixels_of(tf, tf.decode_raw(record, tf.uint8))], batch_size=4)


def test_records_of_another_length_fail_as_in_tf1(legacy, shim):
    """The MNIST pattern (decode, cast, scale, declared length) on a record of another
    length: TF1's enqueue rejects its element; the shim's batched decode rejects its batch."""
    import tensorflow as real_tf

    def build(tf):
        def pixels_of(tf, decoded):
            pixels = tf.cast(decoded, tf.float32) / 255. - 0.5
            pixels.set_shape([16])
            return pixels
        return _records_of_two_lengths(tf, pixels_of)

    for tf in (legacy, shim):
        with pytest.raises(real_tf.errors.InvalidArgumentError):
            run_stream(tf, build)


def test_records_of_another_length_cut_to_one_length_are_tf1s(legacy, shim):
    """A slice makes every record's pixels one length: TF1 takes the batch of differing
    records, so the shim computes that batch element by element."""
    def build(tf):
        def pixels_of(tf, decoded):
            head = decoded[:8]
            head.set_shape([8])
            return tf.cast(head, tf.float32) * 2.0
        return _records_of_two_lengths(tf, pixels_of)

    assert_streams_equal(run_stream(legacy, build), run_stream(shim, build))


def test_decode_raw_of_a_decode_raw_result_batches_like_tf1(legacy, shim):
    """The second decode_raw's input exists only after the first ran: with records of
    differing lengths the first cannot run batched, so the shim computes per element."""
    records = [b"\x05a", b"\x78cd", b"\x07", b"\x0cxyz", b"\x64"]

    def build(tf):
        record = tf.train.string_input_producer(records, num_epochs=2, shuffle=False).dequeue()
        first_byte = tf.decode_raw(record, tf.uint8)[0]
        digits = tf.decode_raw(tf.as_string(first_byte), tf.uint8)
        return tf.train.batch([tf.reduce_sum(tf.cast(digits, tf.int32)), first_byte],
                              batch_size=2, allow_smaller_final_batch=True)

    assert_streams_equal(run_stream(legacy, build), run_stream(shim, build))


def test_scaled_decode_raw_is_bit_exact_batched(legacy, shim):
    """Batched, the constants of a per-element formula must stay constants: TF rewrites a
    division by a constant (the classic `/ 255.`), and TF1 gets that rounding."""
    records = [bytes((7 * i + j) % 256 for j in range(16)) for i in range(40)]

    def build(tf):
        record = tf.train.string_input_producer(records, num_epochs=1, shuffle=False).dequeue()
        pixels = tf.cast(tf.decode_raw(record, tf.uint8), tf.float32) / 255. - 0.5
        pixels.set_shape([16])
        return tf.train.batch([pixels, tf.strings.length(record)], batch_size=8)

    assert_streams_equal(run_stream(legacy, build), run_stream(shim, build))


def test_decode_raw_of_a_constant_beside_per_element_values_is_exact(legacy, shim):
    def build(tf):
        index = tf.train.range_input_producer(12, num_epochs=1, shuffle=False).dequeue()
        table = tf.reshape(tf.cast(tf.decode_raw(tf.constant(b"\x01\x02\x03\x04"), tf.uint8),
                                   tf.int32), [4])
        return tf.train.batch([table * index], batch_size=5, allow_smaller_final_batch=True)

    assert_streams_equal(run_stream(legacy, build), run_stream(shim, build))


@pytest.mark.timeout(300)
def test_mnist_example_is_equivalent_to_tf1_under_the_harness(tmp_path):
    """What `python -m compat.harness examples/mnist_queue_pipeline.py:build` checks, on a
    smaller file: shuffle_batch of parsed, decoded, scaled images, bit for bit per element."""
    import functools

    from compat import harness

    example = _mnist_example()
    path = str(tmp_path / "mnist.tfrecord")
    example.write_mnist_like_tfrecord(path, 1500)
    report = harness.compare(functools.partial(example.build, path=path, num_epochs=2),
                             mode="auto", max_batches=None)
    assert report.equivalent, report.explain()


def test_a_reshape_with_an_inferred_dimension_keeps_the_per_element_path(legacy, shim):
    """A static shape from set_shape is not checked when the graph runs: a reshape to
    [2, -1] takes records of 4 and 6 bytes alike in TF1, so batches of both are TF1's."""
    records = [bytes([100, 1, 2, 102]), bytes([122, 3, 118, 4, 5, 6])] * 3

    def build(tf):
        record = tf.train.string_input_producer(records, num_epochs=1, shuffle=False).dequeue()
        decoded = tf.decode_raw(record, tf.uint8)
        decoded.set_shape([4])
        return tf.train.batch([tf.reduce_max(tf.reshape(decoded, [2, -1]), axis=1)],
                              batch_size=2)

    assert_streams_equal(run_stream(legacy, build), run_stream(shim, build))
