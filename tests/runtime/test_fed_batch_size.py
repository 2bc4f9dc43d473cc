"""A batch size fed on every run (`tf.train.batch(..., batch_size=<placeholder>)`): TF1's answers.

Trainers that vary the batch (FaceNet feeds it each step, evaluation loops feed the size of the
last batch) give `tf.train.batch` an int32 placeholder. TF1's batch queue then answers each
`dequeue_many(size)` from its kernel: an empty batch for 0, InvalidArgumentError for a
negative size, OutOfRangeError when the queue is closed with fewer elements than asked, and
those elements stay for a smaller size later (or come as a smaller batch when
`allow_smaller_final_batch`). Every program here runs once under TF1 and once under the shim,
each run's outcome compared: values bit for bit (one runner thread: TF1 is deterministic),
error types and the kernel's message.
"""
import threading
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, strategies as st

from conftest import tf_real

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(600)]


def outcome_of(run):
    """A run's values, or its error: (type name, the kernel's message line for a size below
    0). The message of a dequeue that found too few elements depends on thread timing in TF1
    (how many it took before its queue closed), so only its type is compared."""
    try:
        return ("values", run())
    except tf_real.errors.OpError as error:
        if not isinstance(error, tf_real.errors.InvalidArgumentError):
            return (type(error).__name__, "")
        lines = [line for line in error.message.splitlines() if "requested" in line]
        return (type(error).__name__, lines[0].strip() if lines else error.message)


def assert_outcomes_equal(expected, got):
    assert [kind for kind, _ in got] == [kind for kind, _ in expected]
    for (kind, want), (_, have) in zip(expected, got):
        if kind != "values":
            assert have == want
            continue
        assert len(have) == len(want)
        for want_part, have_part in zip(want, have):
            assert have_part.dtype == want_part.dtype
            np.testing.assert_array_equal(have_part, want_part)


def sized_batches(tf, sizes, records, allow_smaller, dynamic_pad, sparse=False, keep_odd=False):
    """A producer's indices, a row each (ragged when padded), batched at each fed size
    (`keep_odd`: by `maybe_batch`, keeping the odd indices)."""
    with tf_real.Graph().as_default():
        index = tf.train.range_input_producer(records, num_epochs=1, shuffle=False).dequeue()
        row = tf.range(index % 3 + 1) if dynamic_pad else tf.fill([2], index * 10)
        tensors = [index, row]
        if sparse:
            tensors.append(tf.SparseTensor(indices=[[0]], values=[index], dense_shape=[4]))
        batch_size = tf.placeholder(tf.int32, [], name="batch_size")
        options = dict(dynamic_pad=dynamic_pad, allow_smaller_final_batch=allow_smaller)
        if keep_odd:
            batch = tf.train.maybe_batch(tensors, tf.equal(index % 2, 1), batch_size, **options)
        else:
            batch = tf.train.batch(tensors, batch_size, **options)
        if sparse:
            batch = batch[:2] + [tf.sparse.to_dense(batch[2])]
        outcomes = []
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            for size in sizes:
                outcomes.append(outcome_of(lambda: sess.run(batch, {batch_size: size})))
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return outcomes


@given(sizes=st.lists(st.integers(-2, 9), min_size=1, max_size=9),
       records=st.integers(0, 20), allow_smaller=st.booleans(), dynamic_pad=st.booleans(),
       keep_odd=st.booleans())
def test_each_fed_size_gets_tf1s_answer(legacy, shim, sizes, records, allow_smaller,
                                        dynamic_pad, keep_odd):
    options = dict(allow_smaller=allow_smaller, dynamic_pad=dynamic_pad, keep_odd=keep_odd)
    expected = sized_batches(legacy, sizes, records, **options)
    assert_outcomes_equal(expected, sized_batches(shim, sizes, records, **options))


@pytest.mark.parametrize("allow_smaller", [False, True])
def test_elements_a_batch_could_not_take_stay_for_a_smaller_one(legacy, shim, allow_smaller):
    """7 elements: 4, then 5 fails (or takes the last 3), then 2 takes what is left."""
    sizes = [4, 5, 2, 1, 0, -1, 1]
    expected = sized_batches(legacy, sizes, 7, allow_smaller, False)
    # The premise: TF1 refuses the 5 unless allowed, and the 2 then finds its elements.
    assert expected[1][0] == ("values" if allow_smaller else "OutOfRangeError")
    assert allow_smaller or expected[2][1][0].tolist() == [4, 5]
    assert_outcomes_equal(expected, sized_batches(shim, sizes, 7, allow_smaller, False))


def test_sparse_components_take_the_per_run_path(legacy, shim):
    """A sparse component cannot sit in a staging queue; sizes 1 and up are TF1's still."""
    sizes = [3, 1, 4, 2]
    expected = sized_batches(legacy, sizes, 10, True, False, sparse=True)
    assert_outcomes_equal(expected, sized_batches(shim, sizes, 10, True, False, sparse=True))


def test_the_batch_is_named_and_shaped_as_tf1s(legacy, shim):
    def build(tf):
        with tf_real.Graph().as_default():
            value = tf.train.range_input_producer(5, shuffle=False).dequeue()
            batch = tf.train.batch([value, tf.fill([3], value)],
                                   tf.placeholder(tf.int32, []), name="examples")
            return [(t.name, t.shape.as_list(), t.dtype) for t in batch]

    assert build(shim) == build(legacy)


def run_from_threads(tf, threads=4, records=300, sizes=(5, 2, 7, 4, 3)):
    """Several trainer threads run one batch of fed size until the input ends."""
    with tf_real.Graph().as_default():
        value = tf.train.range_input_producer(records, num_epochs=1, shuffle=False).dequeue()
        batch_size = tf.placeholder(tf.int32, [])
        batch = tf.train.batch([value, tf.cast(value, tf.float32) / 4.0], batch_size,
                               allow_smaller_final_batch=True)
        batches, errors = [], []
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            runners = tf.train.start_queue_runners(sess=sess, coord=coord)

            def trainer(offset):
                step = offset
                try:
                    while True:
                        size = sizes[step % len(sizes)]
                        batches.append((size, sess.run(batch, {batch_size: size})))
                        step += 1
                except tf_real.errors.OutOfRangeError:
                    pass
                except Exception as error:  # noqa: BLE001 - reported below
                    errors.append(error)

            workers = [threading.Thread(target=trainer, args=(i,)) for i in range(threads)]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join(60)
            assert not any(worker.is_alive() for worker in workers), "a trainer thread hung"
            coord.request_stop()
            coord.join(runners, stop_grace_period_secs=10)
    assert not errors, errors
    return batches


def test_trainer_threads_take_whole_batches_and_every_element_once(legacy, shim):
    for tf in (legacy, shim):
        batches = run_from_threads(tf)
        values = Counter(int(v) for _, (indices, _) in batches for v in indices)
        assert values == Counter(range(300))
        # Every batch is as big as asked but the last one, and its two components agree.
        short = [(size, len(indices)) for size, (indices, _) in batches if len(indices) != size]
        assert len(short) <= 1
        for _, (indices, quarters) in batches:
            np.testing.assert_array_equal(quarters, indices.astype(np.float32) / 4.0)


def shuffled_from_a_feeder(tf, fed, batch_size=2, min_after_dequeue=3):
    """Python feeds min_after_dequeue + batch_size examples, then takes one shuffled batch:
    TF1's RandomShuffleQueue hands it out (it holds min_after_dequeue + n), whatever the
    capacity; a run that waited for more would hang the feed-then-train loop."""
    with tf_real.Graph().as_default():
        example = tf.placeholder(tf.int32, [])
        queue = tf.FIFOQueue(100, [tf.int32], shapes=[[]])
        enqueue = queue.enqueue([example])
        size = tf.placeholder(tf.int32, []) if fed else batch_size
        batch = tf.train.shuffle_batch([queue.dequeue()], size, capacity=20,
                                       min_after_dequeue=min_after_dequeue, seed=1)
        options = tf_real.compat.v1.RunOptions(timeout_in_ms=20_000)
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            for value in range(min_after_dequeue + batch_size):
                sess.run(enqueue, {example: value})
            taken = sess.run(batch, {size: batch_size} if fed else None, options=options)
            coord.request_stop()
            sess.run(queue.close(cancel_pending_enqueues=True))
            coord.join(threads, stop_grace_period_secs=10)
    return taken


@pytest.mark.parametrize("fed", [True, False])
def test_a_shuffled_batch_comes_once_min_after_dequeue_plus_its_size_are_in(legacy, shim, fed):
    for tf in (legacy, shim):
        taken = shuffled_from_a_feeder(tf, fed)
        assert len(taken) == 2 and set(taken.tolist()) <= set(range(5))


def _fed_batch_graph(tf, records=7):
    value = tf.train.range_input_producer(records, num_epochs=1, shuffle=False).dequeue()
    batch_size = tf.placeholder(tf.int32, [], name="batch_size")
    batch = tf.train.batch([value, tf.fill([2], value * 10)], batch_size,
                           allow_smaller_final_batch=True, name="examples")
    return batch_size, batch


def test_the_staging_loop_is_ops_of_the_graph_not_functions(legacy, shim):
    """The loop that tops up the staging queue runs in the Session's executor as it is (v1
    Enter/Exit, Switch/Merge), under either TF behaviour: a While and its If would be
    functions for the first run to make, lower and optimize. Its batches are TF1's."""
    def first_batches(tf):
        with tf_real.Graph().as_default() as graph:
            batch_size, batch = _fed_batch_graph(tf)
            with tf.Session() as sess:
                sess.run(tf_real.compat.v1.local_variables_initializer())
                coord = tf.train.Coordinator()
                threads = tf.train.start_queue_runners(sess=sess, coord=coord)
                outcomes = [outcome_of(lambda: sess.run(batch, {batch_size: 3}))]
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=10)
        return outcomes, graph

    expected, _ = first_batches(legacy)
    got, graph = first_batches(shim)
    assert_outcomes_equal(expected, got)
    op_types = {op.type for op in graph.get_operations()}
    library = graph.as_graph_def().library.function
    assert {"Enter", "Exit", "LoopCond", "Switch", "Merge"} <= op_types
    assert not {"While", "StatelessWhile", "If", "StatelessIf"} & op_types
    assert not [function.signature.name for function in library
                if {"While", "If", "QueueEnqueueV2", "QueueCloseV2"}
                & {node.op for node in function.node_def}]


def test_a_graph_with_a_fed_batch_written_out_runs_elsewhere(legacy, shim):
    """export_meta_graph / import_meta_graph, as a trainer's checkpoints carry the graph: the
    imported graph takes batches of fed sizes as TF1's does."""
    sizes = [3, 0, 2, 5, 1]

    def exported_and_run(tf):
        with tf_real.Graph().as_default():
            batch_size, batch = _fed_batch_graph(tf)
            meta_graph = tf.train.export_meta_graph()
            names = [batch_size.name] + [tensor.name for tensor in batch]
        imported = tf_real.Graph()
        with imported.as_default():
            tf_real.compat.v1.train.import_meta_graph(meta_graph)
            batch_size, *batch = [imported.get_tensor_by_name(name) for name in names]
            outcomes = []
            with tf_real.compat.v1.Session() as sess:
                sess.run(tf_real.compat.v1.local_variables_initializer())
                coord = tf_real.compat.v1.train.Coordinator()
                threads = tf_real.compat.v1.train.start_queue_runners(sess=sess, coord=coord)
                for size in sizes:
                    outcomes.append(outcome_of(lambda: sess.run(batch, {batch_size: size})))
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=10)
        return outcomes

    expected = exported_and_run(legacy)
    assert [kind for kind, _ in expected] == ["values"] * 4 + ["OutOfRangeError"]
    assert_outcomes_equal(expected, exported_and_run(shim))
