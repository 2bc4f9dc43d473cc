"""A producer over a computed input (`epoch_maps`): the map computing its epochs is written
as tf.data's trace writes it. Each program is run three times: with TF1's queues, with the
shim, and with the shim made to trace the map; the streams are equal, and so are the
written and traced functions and map ops."""
import re

import numpy as np
import pytest

from written_functions import (canonical, functions_named, graph_text, on_devices, run_in_graph,
                               written_then_traced)

_WRITTEN = re.compile(r"\bcompat_epochs_[0-9a-f]{16}\b")
_TRACED = re.compile(r"\b__inference_Dataset_map_(?:compute|lambda)_\d+\b")


@pytest.fixture(autouse=True)
def computed_every_epoch(monkeypatch):
    """Several programs here compute their input from constants alone, which the shim would
    compute once (`test_evaluated_producers`): here the map under test computes it."""
    from compat._runtime import producers

    monkeypatch.setattr(producers, "_evaluated", lambda *args: None)


def _canonical(text: str) -> str:
    return canonical(text, _WRITTEN, _TRACED, "EPOCH_MAP")


def ptb_windows(tf):
    """The RNN tutorial's `ptb_producer`: an epoch size computed from the data, checked by
    an assertion, and each step's window sliced by the index dequeued."""
    raw = tf.convert_to_tensor(np.arange(230, dtype=np.int32) % 17, name="raw_data")
    batch_size, num_steps = 4, 5
    batch_len = tf.size(raw) // batch_size
    data = tf.reshape(raw[0: batch_size * batch_len], [batch_size, batch_len])
    epoch_size = (batch_len - 1) // num_steps
    assertion = tf.assert_positive(epoch_size, message="epoch_size == 0")
    with tf.control_dependencies([assertion]):
        epoch_size = tf.identity(epoch_size, name="epoch_size")
    i = tf.train.range_input_producer(epoch_size, num_epochs=2, shuffle=False).dequeue()
    x = tf.strided_slice(data, [0, i * num_steps], [batch_size, (i + 1) * num_steps])
    return i, x


def ptb_shuffled(tf):
    epoch_size = tf.constant(23) // 4
    return tf.train.range_input_producer(epoch_size, num_epochs=3, seed=5).dequeue()


def epochs_chosen_by_a_flag(tf):
    """A smaller epoch in a debug run, chosen by a flag that may be fed: a cond (v1 under
    `disable_v2_behavior()`; v2 in TF2 graph mode, whose functions keep the map traced)."""
    debug = tf.placeholder_with_default(False, [], name="debug")
    limit = tf.cond(debug, lambda: tf.constant(2), lambda: tf.constant(6))
    return tf.train.range_input_producer(limit, num_epochs=2, shuffle=False).dequeue()


def images_and_labels(tf):
    """A list of images and labels in memory, sliced one example at a time."""
    images = tf.constant(np.arange(24, dtype=np.float32).reshape(6, 4))
    labels = tf.constant([3, 1, 4, 1, 5, 9])
    return tf.train.slice_input_producer([images, labels], num_epochs=2, shuffle=False)


def images_and_labels_shuffled(tf):
    images = tf.constant(np.arange(24, dtype=np.float32).reshape(6, 4))
    labels = tf.constant([3, 1, 4, 1, 5, 9])
    return tf.train.slice_input_producer([images, labels], num_epochs=3, seed=11)


def best_classes(tf):
    """Each row's best class under a fixed linear model: a matmul, whose floats are computed
    element by element as TF1's Session computes them (multi-device functions)."""
    features = tf.constant(np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(6, 4))
    weights = tf.constant(np.linspace(0.5, -0.7, 12, dtype=np.float32).reshape(4, 3))
    return tf.train.input_producer(tf.argmax(tf.matmul(features, weights), 1), num_epochs=2,
                                   shuffle=False).dequeue()


def long_row_sums(tf):
    """Sums of long rows, whose last bits follow how many threads add them (the pipeline
    keeps TF1's intra-op threads)."""
    return tf.train.input_producer(tf.reduce_sum(tf.ones([4, 40000]), 1), num_epochs=2,
                                   shuffle=False).dequeue()


PROGRAMS = {program.__name__: program for program in (
    ptb_windows, ptb_shuffled, epochs_chosen_by_a_flag, images_and_labels,
    images_and_labels_shuffled, best_classes, long_row_sums)}


def _library(graph) -> tuple:
    """The graph's nodes, its functions (sorted) and versions, as canonical text; its map
    ops; and how many epoch maps were written."""
    graph_def = graph.as_graph_def()
    whole = graph_text(graph_def, _canonical)
    maps = [_canonical(str(node)) for node in graph_def.node
            if node.op in ("MapDataset", "ParallelMapDatasetV2")]
    written = functions_named(graph_def, _WRITTEN)
    return whole, maps, written


@pytest.mark.parametrize("one_device", [True, False], ids=["one_device", "multi_device"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_written_epoch_maps_are_traced_maps(name, one_device, legacy, shim, tf_behavior,
                                            monkeypatch):
    from compat._runtime import epoch_maps

    _, (written_graph, written_maps, written), (traced_graph, _, traced) = \
        written_then_traced(legacy, shim, PROGRAMS[name], on_devices(PROGRAMS[name], one_device),
                            monkeypatch, (epoch_maps, "written_epochs"), _library)
    v2_cond = name == "epochs_chosen_by_a_flag" and tf_behavior == "tf2"
    assert written == (0 if v2_cond else 1)
    assert traced == 0
    if v2_cond:  # traced both times (its branch functions are named anew in each graph)
        return
    assert written_graph == traced_graph
    assert written_maps
    per_element = name == "best_classes"  # its floats are made as TF1 makes them
    epoch_map = [text for text in written_graph
                 if text.startswith('signature {\n  name: "EPOCH_MAP"')]
    assert len(epoch_map) == 1
    assert ("experimental_ints_on_device" in epoch_map[0]) == (one_device and not per_element)


def test_matched_files_are_produced_as_tf1_produces_them(tmp_path, legacy, shim, tf_behavior,
                                                         monkeypatch):
    """`string_input_producer(match_filenames_once(pattern))`, the usual way to read every
    shard of a folder: the file list is computed (MatchingFiles), so its epochs are mapped.
    TF's own `string_input_producer` refuses a tensor in TF2 graph mode (it tests its truth);
    there the written map is compared with the traced one."""
    from compat._runtime import epoch_maps

    for index in range(5):
        (tmp_path / f"shard-{index}.txt").write_text(f"line {index}\n")

    def program(tf):
        files = tf.train.match_filenames_once(str(tmp_path / "shard-*.txt"))
        queue = tf.train.string_input_producer(files, num_epochs=2, seed=7)
        return tf.TextLineReader().read(queue)

    written_stream, written_graph = run_in_graph(shim, program)
    assert _library(written_graph)[2] == 1
    monkeypatch.setattr(epoch_maps, "written_epochs", lambda *args, **kwargs: None)
    traced_stream, graph = run_in_graph(shim, program)
    assert _library(graph)[2] == 0
    np.testing.assert_equal(written_stream, traced_stream)
    assert len(written_stream) == 10
    written_graph, traced_graph = (_library(graph)[0] for graph in (written_graph, graph))
    assert written_graph == traced_graph
    if tf_behavior == "tf1":
        np.testing.assert_equal(written_stream, run_in_graph(legacy, program)[0])


@pytest.mark.parametrize("scope", ["device_name", "device_function", "colocation"])
def test_epoch_maps_under_device_scopes_are_traced_where_the_trace_takes_them_in(
        scope, shim, monkeypatch):
    """A trace takes a device function's devices and a colocation into its nodes, which a
    written map would not: a producer's epochs built under either are traced; under a device
    given by name, which the trace does not take in, they are written, and equal the trace."""
    import tensorflow as real_tf
    from compat._runtime import epoch_maps, producers

    epochs_of = producers._epochs  # pylint: disable=protected-access

    def under_scope(*args, **kwargs):
        elements = epochs_of(*args, **kwargs)

        def built():
            graph = real_tf.compat.v1.get_default_graph()
            anchor = real_tf.constant(0, name="anchor")
            context = {"device_name": lambda: graph.device("/device:CPU:0"),
                       "device_function": lambda: graph.device(lambda op: "/device:CPU:0"),
                       "colocation": lambda: graph.colocate_with(anchor)}[scope]
            with context():
                return elements()
        return built

    monkeypatch.setattr(producers, "_epochs", under_scope)
    written_stream, graph = run_in_graph(shim, ptb_shuffled)
    written_graph, _, written = _library(graph)
    assert written == (1 if scope == "device_name" else 0)
    monkeypatch.setattr(epoch_maps, "written_epochs", lambda *args, **kwargs: None)
    traced_stream, graph = run_in_graph(shim, ptb_shuffled)
    np.testing.assert_equal(written_stream, traced_stream)
    if scope == "device_name":
        assert written_graph == _library(graph)[0]


_SHUFFLE_WRITTEN = re.compile(r"\bcompat_shuffle_[0-9a-f]{16}\b")
_SHUFFLE_TRACED = re.compile(r"\b__inference_Dataset_map_lambda_\d+\b")


def shuffled_file_names(tf):
    """The usual input of a file reader: a list of shard names, shuffled every epoch."""
    names = [f"shard-{index:03d}-of-007" for index in range(7)]
    return tf.train.string_input_producer(names, num_epochs=3, seed=13).dequeue()


def shuffled_range(tf):
    """Indices of a constant range, shuffled under the graph seed alone."""
    return tf.train.range_input_producer(9, num_epochs=2).dequeue()


def shuffled_rows(tf):
    """Rows of a constant matrix (its rows are shuffled whole)."""
    rows = tf.constant(np.arange(20, dtype=np.float32).reshape(5, 4))
    return tf.train.input_producer(rows, num_epochs=2, seed=2).dequeue()


SHUFFLED_CONSTANTS = {program.__name__: program for program in (
    shuffled_file_names, shuffled_range, shuffled_rows)}


def _shuffle_maps(graph) -> tuple:
    """The graph as canonical text (the shuffle map's function named SHUFFLE_MAP), and how
    many shuffle maps were written."""
    graph_def = graph.as_graph_def()
    canonical = lambda text: _canonical(  # noqa: E731
        _SHUFFLE_TRACED.sub("SHUFFLE_MAP", _SHUFFLE_WRITTEN.sub("SHUFFLE_MAP", text)))
    whole = graph_text(graph_def, canonical)
    written = functions_named(graph_def, _SHUFFLE_WRITTEN)
    return whole, written


@pytest.mark.parametrize("one_device", [True, False], ids=["one_device", "multi_device"])
@pytest.mark.parametrize("name", list(SHUFFLED_CONSTANTS))
def test_written_shuffles_of_constant_inputs_are_traced_shuffles(name, one_device, legacy, shim,
                                                                 tf_behavior, monkeypatch):
    """A producer of a constant input shuffles its rows in a written map
    (`epoch_maps.written_shuffles`): the same graph as with the map traced, and TF1's order."""
    from compat._runtime import epoch_maps

    build = SHUFFLED_CONSTANTS[name]
    expected, (written_graph, written), (traced_graph, traced) = written_then_traced(
        legacy, shim, build, on_devices(build, one_device), monkeypatch,
        (epoch_maps, "written_shuffles"), _shuffle_maps)
    assert written == 1
    assert traced == 0
    assert len(expected) > 1
    assert written_graph == traced_graph
    shuffle_map = [text for text in written_graph
                   if text.startswith('signature {\n  name: "SHUFFLE_MAP"')]
    assert len(shuffle_map) == 1
    assert ("experimental_ints_on_device" in shuffle_map[0]) == one_device
