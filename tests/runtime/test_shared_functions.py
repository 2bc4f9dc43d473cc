"""Copies of one per-element computation, built once per thread as TF1 input code builds
them, share one lifted function where that computes what TF1 computes
(`compat/_runtime/shared_functions.py`), and keep one each where it would not.

Copies whose ops call functions of their own (v2 control flow: a `tf.cond` in TF2 graph
mode) are not compared, and keep one function each."""
from collections import Counter

import numpy as np
import pytest

from conftest import run_stream

THREADS = 3
PER_THREAD = 4


def threads_of_one_augmentation(seed=None, scales=(1.0,) * THREADS, graph_seed=None,
                                flip_with="cond"):
    """A preprocessing thread per input, each the same ops under names of its own: a random
    flip (through a `tf.cond`, or a `tf.where`) and a division by a constant, into a
    `batch_join`. Each thread reads a queue of its own, so which thread computes which
    element does not depend on timing."""
    def build(tf):
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        per_thread = []
        for scale in scales:
            index = tf.train.range_input_producer(PER_THREAD, num_epochs=1,
                                                  shuffle=False).dequeue()
            value = tf.cast(index, tf.float32) * scale
            draw = tf.random_uniform([], seed=seed)
            if flip_with == "cond":
                flipped = tf.cond(draw < 0.5, lambda value=value: -value,
                                  lambda value=value: value)
            else:
                flipped = tf.where(draw < 0.5, -value, value)
            per_thread.append([index, flipped / 3.0, draw])
        return tf.train.batch_join(per_thread, 2, allow_smaller_final_batch=True)
    return build


def _rows(batches):
    return Counter((int(index), float(flipped).hex(), float(draw).hex())
                   for indices, flips, draws in batches
                   for index, flipped, draw in zip(indices, flips, draws))


def _magnitudes(stream):
    return Counter((int(index), float(abs(flipped)).hex())
                   for indices, flips, _ in stream for index, flipped in zip(indices, flips))


def _lifted_functions(build, shim, op_type="RandomUniform", initialize_tables=False):
    """The batches the shim gives, and how many lifted functions holding an `op_type` op
    its graph holds."""
    import tensorflow as real_tf
    graph = real_tf.Graph()
    batches = run_stream(shim, build, graph=graph, initialize_tables=initialize_tables)
    library = graph.as_graph_def().library.function
    made = [function for function in library if function.signature.name.startswith("function_")
            and any(node.op == op_type for node in function.node_def)]
    return batches, len(made)


def _shared(flip_with, tf_behavior) -> bool:
    return flip_with == "where" or tf_behavior == "tf1"


@pytest.mark.parametrize("flip_with", ["cond", "where"])
def test_unseeded_copies_share_one_function(flip_with, tf_behavior, shim, legacy):
    """Draws without a seed come from kernels TF seeds at random: one shared function
    gives draws of the same law. What does not depend on the draws is TF1's."""
    build = threads_of_one_augmentation(flip_with=flip_with)
    batches, functions = _lifted_functions(build, shim)
    assert functions == (1 if _shared(flip_with, tf_behavior) else THREADS)
    expected = run_stream(legacy, build)

    assert _magnitudes(batches) == _magnitudes(expected)
    assert sum(len(indices) for indices, _, _ in batches) == THREADS * PER_THREAD
    draws = [float(draw) for _, _, drawn in batches for draw in drawn]
    assert len(set(draws)) == len(draws) and all(0.0 <= draw < 1.0 for draw in draws)
    for indices, flips, drawn in batches:  # each row is one element's own computation
        for index, flipped, draw in zip(indices, flips, drawn):
            assert (flipped < 0) == (draw < 0.5 and index > 0)


@pytest.mark.parametrize("flip_with", ["cond", "where"])
@pytest.mark.parametrize("seed, graph_seed", [(5, None), (None, 11), (5, 11)])
def test_seeded_copies_keep_a_function_each(seed, graph_seed, flip_with, shim, legacy):
    """A seeded draw's kernel gives each copy its own stream in TF1 (with an op seed alone,
    the same stream in each copy): each copy keeps its own function, and the rows are
    TF1's bit for bit."""
    build = threads_of_one_augmentation(seed=seed, graph_seed=graph_seed, flip_with=flip_with)
    batches, functions = _lifted_functions(build, shim)
    assert functions == THREADS
    assert _rows(batches) == _rows(run_stream(legacy, build))


def test_copies_that_differ_keep_a_function_each(shim, legacy):
    """Copies that differ in an attribute (here a constant), otherwise shareable, are other
    computations: a function each, and TF1's values."""
    build = threads_of_one_augmentation(scales=(1.0, 2.0, 4.0), flip_with="where")
    batches, functions = _lifted_functions(build, shim)
    assert functions == THREADS
    assert _magnitudes(batches) == _magnitudes(run_stream(legacy, build))


def test_copies_reading_one_table_share_a_function(tf_behavior, shim, legacy):
    """A lookup table found by name and an assertion keep no state in their kernels: the
    copies share one function, and the values are TF1's. (`tf.Assert` guards its op with a
    `tf.cond`, which calls functions in TF2 graph mode: a function each there.)"""
    def build(tf):
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant([0, 1, 2, 3], tf.int64),
                                                tf.constant([10, 20, 30, 40], tf.int64)), -1)
        per_thread = []
        for _ in range(THREADS):
            index = tf.cast(tf.train.range_input_producer(PER_THREAD + 1, num_epochs=1,
                                                          shuffle=False).dequeue(), tf.int64)
            checked = tf.Assert(index >= 0, [index])
            with tf.control_dependencies([checked]):
                per_thread.append([index, table.lookup(index) * 3])
        return tf.train.batch_join(per_thread, 2, allow_smaller_final_batch=True)

    batches, functions = _lifted_functions(build, shim, op_type="LookupTableFindV2",
                                           initialize_tables=True)
    assert functions == (1 if _shared("cond", tf_behavior) else THREADS)

    def rows(stream):
        return Counter((int(index), int(value)) for indices, values in stream
                       for index, value in zip(indices, values))
    assert rows(batches) == rows(run_stream(legacy, build, initialize_tables=True))


def test_shared_function_serves_copies_in_other_traces(shim):
    """The copies are traced in tf.data functions of their own; the shared function is
    made once for the user's graph and called from each (the rows are each element's)."""
    build = threads_of_one_augmentation(scales=(1.0,) * 5, flip_with="where")
    batches, functions = _lifted_functions(build, shim)
    assert functions == 1
    indices = sorted(int(index) for batch in batches for index in batch[0])
    assert indices == sorted(list(range(PER_THREAD)) * 5)
    flips = np.concatenate([batch[1] for batch in batches])
    assert np.all(np.isin(np.abs(flips) * 3.0, np.arange(PER_THREAD, dtype=np.float32)))


def test_copies_holding_large_constants_keep_a_function_each(shim, legacy):
    """A computation is compared with later copies through a copy of its GraphDef, not kept
    for one holding a large constant (an embedded lookup array): those keep a function each,
    as before, and give TF1's values."""
    table = np.arange(300_000, dtype=np.float32) * 0.5  # 1.2 MB

    def build(tf):
        per_thread = []
        for _ in range(THREADS):
            index = tf.train.range_input_producer(PER_THREAD, num_epochs=1,
                                                  shuffle=False).dequeue()
            per_thread.append([tf.gather(tf.constant(table), index * 1000 + 7)])
        return tf.train.batch_join(per_thread, 2, allow_smaller_final_batch=True)

    batches, functions = _lifted_functions(build, shim, op_type="GatherV2")
    assert functions == THREADS

    def values(stream):
        return sorted(float(value) for batch in stream for value in batch)
    assert values(batches) == values(run_stream(legacy, build))


@pytest.mark.parametrize("make, free", [
    (lambda tf, x: tf.random_uniform([]), True),
    (lambda tf, x: tf.random_uniform([], seed=3), False),
    (lambda tf, x: tf.image.sample_distorted_bounding_box(
        tf.shape(x[0]), tf.zeros([1, 0, 4]), min_object_covered=0.1)[0], True),
    # Draws its pooling pattern once per kernel when unseeded and deterministic.
    (lambda tf, x: tf.nn.fractional_max_pool(x, [1.0, 1.4, 1.4, 1.0],
                                             deterministic=True)[0], False),
    (lambda tf, x: tf.Assert(tf.reduce_all(x >= 0), [x]), True),
    (lambda tf, x: tf.Print(x, [x], first_n=2), False),
    (lambda tf, x: tf.py_func(lambda v: v, [x], tf.float32), False),
    (lambda tf, x: tf.image.flip_left_right(x[0]), True),
])
def test_which_kernels_keep_no_state(make, free, shim):
    """`kernel_state_free` as the sharing rule reads it, op by op."""
    import tensorflow as real_tf
    from compat._runtime import lifting, shared_functions

    with real_tf.Graph().as_default():
        made = make(shim, shim.zeros([1, 5, 5, 3]))
        op = made if isinstance(made, real_tf.Operation) else made.op
        assert shared_functions.kernel_state_free(
            op, lifting.ORDER_FREE_TABLE_OPS) is free
