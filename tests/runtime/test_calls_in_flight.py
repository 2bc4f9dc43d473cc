"""How many per-element calls the shim runs at once, against the threads TF1 ran them on.

TF1 computes a batch call's elements on its `num_threads` runner threads. The shim runs as
many calls at once where the computation keeps state (a py_func, say), none at once where
TF1 had one thread (the draws then go to the elements in TF1's order), and more where the
only state is random draws and TF1 had several threads: each element then gets whichever
draws its thread takes first, so more calls at once change nothing TF1 fixes. Either way
the elements, and how they are batched, are TF1's.
"""
import collections

import numpy as np
import pytest

from conftest import run_stream, tf_real

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(300)]

_COUNT, _EPOCHS, _BATCH = 24, 2, 4
# Where each parallel map takes its num_parallel_calls, counted from its last input.
_CALLS_INPUT = {"ParallelMapDatasetV2": -1, "MapAndBatchDataset": -2}


def _pipeline(threads, with_py_func):
    def build(tf):
        number = tf.train.range_input_producer(_COUNT, num_epochs=_EPOCHS,
                                               shuffle=False).dequeue()
        noise = tf.random_uniform([], seed=7)
        if with_py_func:
            noise = tf.py_func(lambda value: value, [noise], tf.float32, stateful=True)
            noise.set_shape([])
        return tf.train.batch([number, noise], batch_size=_BATCH, num_threads=threads)
    return build


def _calls_at_once(graph):
    """num_parallel_calls of each parallel map in the graph's functions (a plain map has
    none)."""
    found = []
    for function in graph.as_graph_def().library.function:
        constants = {node.name: node for node in function.node_def if node.op == "Const"}
        for node in function.node_def:
            if node.op in _CALLS_INPUT:
                calls = constants[node.input[_CALLS_INPUT[node.op]].split(":")[0]]
                found.append(int(tf_real.make_ndarray(calls.attr["value"].tensor)))
    return found


@pytest.mark.parametrize("threads, with_py_func", [(1, False), (3, False), (3, True)],
                         ids=["draws-one-thread", "draws-three-threads", "py-func-three-threads"])
def test_calls_at_once_follow_tf1s_threads_unless_the_only_state_is_draws(
        threads, with_py_func, legacy, shim):
    from compat._runtime import element_source

    build = _pipeline(threads, with_py_func)
    expected = run_stream(legacy, build)
    graph = tf_real.Graph()
    actual = run_stream(shim, build, graph=graph)

    assert [len(numbers) for numbers, _ in actual] == [len(numbers) for numbers, _ in expected]
    numbers = collections.Counter(int(n) for batch, _ in actual for n in batch)
    assert numbers == collections.Counter(int(n) for batch, _ in expected for n in batch)
    assert numbers == collections.Counter({n: _EPOCHS for n in range(_COUNT)})
    noise = np.concatenate([values for _, values in actual])
    assert ((noise >= 0) & (noise < 1)).all() and len(set(noise.tolist())) == len(noise)
    if threads == 1:  # one thread: the draws in TF1's order, element for element
        assert [n.tolist() for n, _ in actual] == [n.tolist() for n, _ in expected]
        np.testing.assert_array_equal(noise, np.concatenate([v for _, v in expected]))

    calls = _calls_at_once(graph)
    if threads == 1:
        assert set(calls) <= {1}, calls  # a plain map, or a map-and-batch of one call
    elif with_py_func:
        assert calls == [threads]
    else:
        assert calls == [max(threads, element_source._CALLS_WITH_DRAWS)]  # pylint: disable=protected-access
        assert calls[0] > threads
