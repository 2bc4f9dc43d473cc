"""The user's per-element functions, optimized once as the Session optimizes them
(`compat/_runtime/prepared_functions.py`), give TF1's values.

Every function is prepared here (`_MIN_NODES` set to 0), so that the float families of
`test_float_exactness` run through prepared functions; the Session's own options are the
ones the pass uses; a computation built again after its function was prepared calls it; a
first run from a thread with no default graph prepares into the Session's graph.
"""
import threading

import numpy as np
import pytest
import tensorflow as tf_real

from conftest import run_stream
from streams import assert_streams_equal
from test_float_exactness import FAMILIES, _pipeline

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(300)]

PIXELS = np.random.RandomState(11).uniform(0, 255, size=(12, 6, 5, 3)).astype(np.float32)


@pytest.fixture
def every_function_prepared(monkeypatch):
    from compat._runtime import prepared_functions
    monkeypatch.setattr(prepared_functions, "_MIN_NODES", 0)


def _prepared_bodies(graph):
    """The graph's prepared functions as they are in its library: {name: FunctionDef}."""
    names = getattr(graph, "_compat_prepared_functions", set())
    return {function.signature.name: function
            for function in graph.as_graph_def().library.function
            if function.signature.name in names}


def _divided(tf, num_epochs=1):
    """A per-element computation whose last bits depend on grappler: a division by a constant
    is a multiplication by its reciprocal once grappler has folded constants."""
    index = tf.train.range_input_producer(12, shuffle=False, num_epochs=num_epochs).dequeue()
    image = tf.gather(tf.constant(PIXELS), index)
    image = image + tf.floor(tf.random_uniform([], seed=5) * 0.0)  # kept per element
    return tf.train.batch([image / 3.0, (image - 127.0) / 58.5], batch_size=4)


@pytest.mark.parametrize("per_element", [False, True], ids=["batched", "per_element"])
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_prepared_functions_give_tf1s_bits(family, per_element, legacy, shim, tf_behavior,
                                           every_function_prepared):
    build = _pipeline(family, per_element)
    graph = tf_real.Graph()
    assert_streams_equal(run_stream(legacy, build), run_stream(shim, build, graph=graph))
    prepared = _prepared_bodies(graph)
    if family == "control_flow" and tf_behavior == "tf2":
        assert not prepared  # v2 conds and loops call functions: left to the Session
    else:
        assert prepared
        assert all(body.attr["_tf_data_function"].b for body in prepared.values())


def test_the_pass_is_the_sessions(legacy, shim, every_function_prepared):
    graph = tf_real.Graph()
    assert_streams_equal(run_stream(legacy, _divided), run_stream(shim, _divided, graph=graph))
    (body,) = _prepared_bodies(graph).values()
    ops = {node.op for node in body.node_def}
    assert "RealDiv" not in ops and "Mul" in ops


def test_the_sessions_own_options_are_used(legacy, shim, every_function_prepared):
    from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2
    config = config_pb2.ConfigProto()
    config.graph_options.rewrite_options.constant_folding = (
        rewriter_config_pb2.RewriterConfig.OFF)
    graph = tf_real.Graph()
    expected = run_stream(legacy, _divided, config=config)
    assert_streams_equal(expected, run_stream(shim, _divided, graph=graph, config=config))
    (body,) = _prepared_bodies(graph).values()
    assert "RealDiv" in {node.op for node in body.node_def}
    # The options matter here: with them on, TF1's values are others.
    default = run_stream(legacy, _divided)
    assert any(not np.array_equal(a, b) for got, want in zip(expected, default)
               for a, b in zip(got, want))


def test_a_computation_built_again_keeps_its_prepared_function(legacy, shim,
                                                               every_function_prepared):
    def stream(tf, graph):
        with graph.as_default():
            first = _divided(tf)
            values = []
            with tf.Session() as sess:
                sess.run(tf.local_variables_initializer())
                coord = tf.train.Coordinator()
                threads = tf.train.start_queue_runners(sess=sess, coord=coord)
                values.append(sess.run(first))
                # The same computation, built after the first run, read for 5 batches.
                second = _divided(tf, num_epochs=None)
                threads += tf.train.start_queue_runners(sess=sess, coord=coord)
                values += [sess.run(second) for _ in range(5)]
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=10)
        return values

    graph = tf_real.Graph()
    assert_streams_equal(stream(legacy, tf_real.Graph()), stream(shim, graph))
    assert _prepared_bodies(graph)


def test_small_functions_are_left_to_the_session(shim):
    graph = tf_real.Graph()
    run_stream(shim, _divided, graph=graph)
    assert not _prepared_bodies(graph)


def test_a_first_run_from_a_thread_of_its_own_prepares_the_graphs_function(
        legacy, shim, every_function_prepared):
    """A feeder or runner thread has no default graph (in TF2 graph mode it executes
    eagerly): the function it prepares still goes into the Session's graph."""
    def stream(tf, graph):
        with graph.as_default():
            batch = _divided(tf, num_epochs=None)
            sess = tf.Session()
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        values = []
        reader = threading.Thread(target=lambda: values.extend(sess.run(batch) for _ in range(3)))
        reader.start()
        reader.join()
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
        sess.close()
        return values

    graph = tf_real.Graph()
    expected = stream(legacy, tf_real.Graph())
    assert len(expected) == 3
    assert_streams_equal(expected, stream(shim, graph))
    assert _prepared_bodies(graph)


def test_a_pass_not_done_in_time_leaves_the_function_to_the_session(
        legacy, shim, every_function_prepared, monkeypatch):
    from compat._runtime import prepared_functions
    released = threading.Event()
    optimized = prepared_functions._optimized  # pylint: disable=protected-access

    def stalled(*args):
        released.wait(30)
        return optimized(*args)

    monkeypatch.setattr(prepared_functions, "_optimized", stalled)
    monkeypatch.setattr(prepared_functions, "_PASS_TIMEOUT_S", 0.05)
    graph = tf_real.Graph()
    try:
        assert_streams_equal(run_stream(legacy, _divided),
                             run_stream(shim, _divided, graph=graph))
    finally:
        released.set()
    assert not _prepared_bodies(graph)
