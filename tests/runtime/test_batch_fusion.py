"""The shim's pipelines in the form tf.data's static rewrites would give them, built directly.

The rewrite pass runs when an iterator is made and delays the first batch; the shim turns it
off and builds what the rewrites that pay would build: a map followed by a batch as one
map-and-batch (`batch_fusion`), batches copied in parallel, and no identity map (a reader's
records enqueued as read). The batches themselves are checked against TF1 in
test_per_element_batches.py and wherever a pipeline batches per-element work.
"""
import numpy as np
import pytest

from conftest import run_stream, tf_real
from test_per_element_batches import byte_pictures, write_records

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(600)]


def _library_nodes(graph):
    """The nodes of the functions in `graph`'s library (where the shim's pipelines live)."""
    return [node for function in graph.as_graph_def().library.function
            for node in function.node_def]


def _shim_stream(shim, build, max_batches=10_000):
    """(the graph, the batches fetched until the input ends or `max_batches` are in)."""
    graph = tf_real.Graph()
    return graph, run_stream(shim, build, max_steps=max_batches, graph=graph)


def test_a_batch_over_per_element_work_is_one_map_and_batch(tmp_path, shim):
    """What the rewrites would have built, built directly; the rewrite pass and autotuning
    (nothing for it to tune, and its model costs every element) left off."""
    path = write_records(tmp_path, 7)
    # The random flip keeps the work per element (whole batches draw differently).
    build = byte_pictures(path, 3, random_flip=True, num_threads=2,
                          allow_smaller_final_batch=True)
    graph, (first,) = _shim_stream(shim, build, max_batches=1)
    assert len(first[1]) == 3
    ops = {node.op for node in _library_nodes(graph)}
    assert "MapAndBatchDataset" in ops, sorted(op for op in ops if op.endswith("Dataset"))
    options = [node for node in _library_nodes(graph) if node.op == "OptionsDataset"]
    assert options, "the shim's pipeline sets its options"
    for node in options:
        serialized = node.attr["serialized_options"].s
        parsed = tf_real.data.Options()._to_proto().__class__.FromString(serialized)  # pylint: disable=protected-access
        assert parsed.optimization_options.apply_default_optimizations is False
        assert not parsed.optimization_options.map_and_batch_fusion
        assert parsed.autotune_options.enabled is False


def test_a_plain_batch_copies_its_elements_in_parallel(shim):
    """A batch of elements computed whole or not at all (a producer's): parallel copies, as
    tf.data's parallel_batch rewrite made them."""
    def build(tf):
        numbers = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
        return tf.train.batch([numbers], batch_size=4, allow_smaller_final_batch=True)

    graph, (first,) = _shim_stream(shim, build, max_batches=1)
    assert first.tolist() == [0, 1, 2, 3]
    assert {node.attr["parallel_copy"].b for node in _library_nodes(graph)
            if node.op == "BatchDatasetV2"} == {True}


def _identity_maps(graph):
    """The map functions in `graph`'s library that give each element as it is."""
    library = {function.signature.name: function
               for function in graph.as_graph_def().library.function}
    maps = [node.attr["f"].func.name for node in _library_nodes(graph)
            if node.op in ("MapDataset", "ParallelMapDatasetV2")]
    return [name for name in maps
            if all(node.op == "Identity" for node in library[name].node_def)]


def _records_read_by_two_readers(paths):
    """Two readers of one file queue enqueue their records as read into a FIFOQueue (the
    Inception input's examples queue, in small); a batch of what is dequeued."""
    def build(tf):
        files = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
        examples = tf.FIFOQueue(capacity=16, dtypes=[tf.string])
        enqueues = [examples.enqueue([tf.TFRecordReader().read(files)[1]]) for _ in range(2)]
        tf.train.add_queue_runner(tf.train.QueueRunner(examples, enqueues))
        example = examples.dequeue()
        example.set_shape([])
        return tf.train.batch([example], batch_size=3, allow_smaller_final_batch=True)
    return build


def test_records_enqueued_as_read_take_no_map(tmp_path, legacy, shim):
    paths = []
    for shard in range(2):
        path = str(tmp_path / f"shard-{shard}.tfrecord")
        with tf_real.io.TFRecordWriter(path) as writer:
            for index in range(5):
                writer.write(f"shard {shard} record {index}".encode())
        paths.append(path)
    build = _records_read_by_two_readers(paths)
    expected = run_stream(legacy, build)
    graph, got = _shim_stream(shim, build)
    assert sorted(np.concatenate(got).tolist()) == sorted(np.concatenate(expected).tolist())
    assert not _identity_maps(graph)
