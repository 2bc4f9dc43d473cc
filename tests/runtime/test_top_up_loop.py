"""The top-up loop of a fed-size batch, written as NodeDefs (`top_up_loop`), against the loop
`tf.while_loop` builds for it.

Each batch program is built twice with the shim, once writing the loop and once building it
with `tf.while_loop`; the two GraphDefs must be equal node for node (random resource names
and function hashes aside), and their batches equal. Where the build is not plain (a device
scope, a colocation, the caller's control dependencies) the loop is built by
`tf.while_loop` and still runs. The streams themselves are compared with TF1's in
`test_fed_batch_size` and `test_real_programs` (FaceNet).
"""
import re

import numpy as np
import pytest

from conftest import tf_real

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(600)]

# Per-graph random names: shared resources' uuids, function names made from them, and the
# names of traced functions (a process-wide counter).
_RANDOM_NAMES = re.compile(
    r"compat_(queue|stream)_[0-9a-f]{32}|compat_pull_[0-9a-f]{16}|__inference_[A-Za-z_]*_[0-9]+"
    r"|(make_shared_iterator|failing_factory|make_dataset)[A-Za-z_]*_[A-Za-z0-9_-]{11}")


def _fed_size_batch(tf, components, dynamic_pad, allow_smaller):
    """A fed queue's elements computed and batched at a fed size, as FaceNet's input does."""
    values = {"float": (tf.float32, [3]), "int": (tf.int32, []), "string": (tf.string, []),
              "ragged": (tf.int64, [None])}
    dtypes = [values[kind][0] for kind in components]
    shapes = [values[kind][1] for kind in components]
    fed = [tf.placeholder(dtype, [None] + shape) for dtype, shape in zip(dtypes, shapes)]
    queue = tf.PaddingFIFOQueue(50, dtypes, shapes) if dynamic_pad else tf.FIFOQueue(
        50, dtypes, shapes=[shape if None not in shape else [2] for shape in shapes])
    enqueue = queue.enqueue_many(fed)
    element = queue.dequeue()
    element = [element] if len(components) == 1 else element
    element = [part * 2 if part.dtype in (tf.float32, tf.int32) else part for part in element]
    size = tf.placeholder(tf.int32, [], name="batch_size")
    batch = tf.train.batch(element, batch_size=size, dynamic_pad=dynamic_pad,
                           allow_smaller_final_batch=allow_smaller, capacity=40)
    return fed, enqueue, queue.close(), size, batch if isinstance(batch, list) else [batch]


def _feeds(components, dynamic_pad, count=7):
    rows = {"float": lambda i: np.full([3], i, np.float32), "int": lambda i: np.int32(i),
            "string": lambda i: f"s{i}".encode(),
            "ragged": lambda i: np.arange(i % 3 + 1 if dynamic_pad else 2, dtype=np.int64)}
    feeds = []
    for kind in components:
        values = [rows[kind](index) for index in range(count)]
        if kind == "ragged" and dynamic_pad:
            width = max(len(value) for value in values)
            values = [np.pad(value, (0, width - len(value))) for value in values]
        feeds.append(np.stack(values) if kind != "string" else np.array(values, dtype=object))
    return feeds


def _built(shim, monkeypatch, write, build):
    from compat._runtime import top_up_loop
    if not write:
        monkeypatch.setattr(top_up_loop, "writable", lambda graph: False)
    graph = tf_real.Graph()
    with graph.as_default():
        made = build(shim)
    monkeypatch.undo()
    return graph, made


def _normalized(graph) -> tuple:
    graph_def = graph.as_graph_def()
    nodes = {node.name: _RANDOM_NAMES.sub("~", str(node)) for node in graph_def.node}
    return nodes, str(graph_def.versions)


def _loop_ops(graph):
    return [op for op in graph.get_operations() if "/top_up/" in op.name]


def _batches(shim, graph, made, components, dynamic_pad, sizes=(3, 0, 2, 5)):
    fed, enqueue, close, size, batch = made
    with graph.as_default(), shim.Session() as sess:
        sess.run([shim.global_variables_initializer(), shim.local_variables_initializer()])
        shim.train.start_queue_runners(sess=sess)
        sess.run(enqueue, dict(zip(fed, _feeds(components, dynamic_pad))))
        sess.run(close)
        outcomes = []
        for value in sizes:
            try:
                outcomes.append(sess.run(batch, {size: value}))
            except tf_real.errors.OutOfRangeError:
                outcomes.append("OutOfRange")
        return outcomes


CASES = [
    (("float", "int"), False, False),
    (("float", "int"), False, True),
    (("int",), False, True),
    (("string", "float", "int"), False, False),
    (("ragged", "int"), True, True),
    (("ragged",), True, False),
]


@pytest.mark.parametrize("components,dynamic_pad,allow_smaller", CASES)
def test_written_loop_is_the_while_loop(shim, monkeypatch, components, dynamic_pad,
                                        allow_smaller):
    def build(tf):
        return _fed_size_batch(tf, components, dynamic_pad, allow_smaller)

    written_graph, written = _built(shim, monkeypatch, True, build)
    built_graph, built = _built(shim, monkeypatch, False, build)
    loop = _loop_ops(written_graph)
    assert len(loop) == 39
    # Written: no Python control-flow context; built: tf.while_loop's.
    assert all(op._control_flow_context is None for op in loop)  # pylint: disable=protected-access
    assert all(op._control_flow_context is not None for op in _loop_ops(built_graph))  # pylint: disable=protected-access
    assert _normalized(written_graph) == _normalized(built_graph)

    got = _batches(shim, written_graph, written, components, dynamic_pad)
    want = _batches(shim, built_graph, built, components, dynamic_pad)
    assert len(got) == len(want)
    for have, expected in zip(got, want):
        if isinstance(expected, str):
            assert have == expected
            continue
        for have_part, want_part in zip(have, expected):
            assert have_part.dtype == want_part.dtype
            np.testing.assert_array_equal(have_part, want_part)


def test_two_batches_in_one_scope_get_loops_of_their_own(shim):
    graph = tf_real.Graph()
    with graph.as_default(), shim.name_scope("input"):
        first = _fed_size_batch(shim, ("float", "int"), False, True)
        second = _fed_size_batch(shim, ("float", "int"), False, True)
    exits = sorted(op.name for op in graph.get_operations() if op.type == "Exit")
    assert len(exits) == 4 and len({name.rsplit("/", 1)[0] for name in exits}) == 2
    for made in (first, second):
        outcomes = _batches(shim, graph, made, ("float", "int"), False, sizes=(4, 4))
        np.testing.assert_array_equal(outcomes[0][1], [0, 2, 4, 6])
        np.testing.assert_array_equal(outcomes[1][1], [8, 10, 12])


@pytest.mark.parametrize("scope", ["device", "colocation", "control_dependencies"])
def test_a_scope_the_nodedefs_do_not_repeat_keeps_the_while_loop(shim, scope):
    graph = tf_real.Graph()
    with graph.as_default():
        anchor = shim.constant(0, name="anchor")
        context = {"device": lambda: shim.device("/cpu:0"),
                   "colocation": lambda: shim.colocate_with(anchor),
                   "control_dependencies": lambda: shim.control_dependencies([anchor])}[scope]
        with context():
            made = _fed_size_batch(shim, ("float", "int"), False, True)
    loop = _loop_ops(graph)
    assert loop and all(op._control_flow_context is not None for op in loop)  # pylint: disable=protected-access
    if scope == "device":
        assert all(op.device == "/device:CPU:0" for op in loop)
    outcomes = _batches(shim, graph, made, ("float", "int"), False, sizes=(5, 5))
    np.testing.assert_array_equal(outcomes[0][1], [0, 2, 4, 6, 8])
    np.testing.assert_array_equal(outcomes[1][1], [10, 12])
