"""Hand-built queue pipelines run under `tensorflow.compat.v1` (the oracle) and `compat.v1`.

Each pattern is one function `build(tf)` run twice, each time in its own graph, session and
Coordinator with `start_queue_runners`, until OutOfRangeError. Where TF1 runs one enqueue
thread the streams must be equal batch for batch; where TF1 runs several threads (its order
then depends on timing) they must hold the same elements, none lost and none duplicated.
"""
from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
import tensorflow.compat.v1 as legacy_tf  # noqa: E402

import compat.v1 as shim_tf  # noqa: E402

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(60)]

SIDES = pytest.mark.parametrize("tf", [legacy_tf, shim_tf], ids=["legacy", "shim"])


@dataclass
class Pipeline:
    """What a pattern's `build(tf)` returns.

    fetch: fetched each step until OutOfRangeError.
    drain: fetched after that, until OutOfRangeError (e.g. `dequeue_up_to` for the tail).
    feeders: user threads `fn(sess, coord)` started next to the queue runners.
    feed: feed_dict for every step.
    queues: the queues built, for assertions about compilation.
    """

    fetch: object
    drain: object = None
    feeders: list = field(default_factory=list)
    feed: dict | None = None
    queues: list = field(default_factory=list)


@dataclass
class Run:
    values: list
    drained: list
    runner_threads: list
    queues: list


def run(tf, build: Callable, max_steps=2000, graph_seed=None) -> Run:
    with tf_real.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        pipeline = build(tf)
        values, drained = [], []
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            feeders = [threading.Thread(target=feeder, args=(sess, coord), daemon=True)
                       for feeder in pipeline.feeders]
            for feeder in feeders:
                feeder.start()
            try:
                for _ in range(max_steps):
                    values.append(sess.run(pipeline.fetch, feed_dict=pipeline.feed))
            except tf_real.errors.OutOfRangeError:
                pass
            if pipeline.drain is not None:
                try:
                    for _ in range(max_steps):
                        drained.append(sess.run(pipeline.drain, feed_dict=pipeline.feed))
                except tf_real.errors.OutOfRangeError:
                    pass
            coord.request_stop()
            coord.join(threads + feeders, stop_grace_period_secs=10)
        assert_no_runner_thread_alive()
    return Run(values, drained, threads, pipeline.queues)


def assert_no_runner_thread_alive():
    alive = [t.name for t in threading.enumerate() if t.name.startswith("QueueRunnerThread")]
    assert not alive, f"runner threads still alive after coord.join: {alive}"


def both(build, **kwargs):
    return run(legacy_tf, build, **kwargs), run(shim_tf, build, **kwargs)


def rows(batches, component=None):
    """The elements of a list of batches (one row per element), as hashable tuples."""
    out = []
    for batch in batches:
        parts = batch if isinstance(batch, (list, tuple)) else [batch]
        if component is not None:
            parts = [parts[component]]
        for row in zip(*parts):
            out.append(tuple(np.asarray(part).tobytes() + str(np.asarray(part).shape).encode()
                             for part in row))
    return out


def assert_exact(legacy, shim):
    assert len(shim) == len(legacy), f"shim gave {len(shim)} results, TF1 {len(legacy)}"
    for index, (want, got) in enumerate(zip(legacy, shim)):
        want_leaves = want if isinstance(want, (list, tuple)) else [want]
        got_leaves = got if isinstance(got, (list, tuple)) else [got]
        assert len(got_leaves) == len(want_leaves)
        for want_leaf, got_leaf in zip(want_leaves, got_leaves):
            assert np.asarray(got_leaf).dtype == np.asarray(want_leaf).dtype
            np.testing.assert_array_equal(got_leaf, want_leaf, err_msg=f"result {index}")


def assert_same_elements(legacy_rows, shim_rows):
    assert len(set(legacy_rows)) == len(legacy_rows), "TF1 itself duplicated an element"
    assert len(set(shim_rows)) == len(shim_rows), "the shim duplicated an element"
    missing = Counter(legacy_rows) - Counter(shim_rows)
    extra = Counter(shim_rows) - Counter(legacy_rows)
    assert not missing and not extra, f"lost {len(missing)} elements, gained {len(extra)}"


# --- 1. hand-built stages fed by a QueueRunner ----------------------------------------------

def fifo_four_threads(tf):
    index = tf.train.range_input_producer(100, num_epochs=1, shuffle=False).dequeue()
    image = tf.reshape(tf.cast(tf.range(4) + index * 4, tf.float32), [2, 2])
    label = tf.cast(index, tf.int32)
    queue = tf.FIFOQueue(capacity=10, dtypes=[tf.float32, tf.int32], shapes=[[2, 2], []])
    enqueue = queue.enqueue([image, label])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue] * 4))
    images, labels = queue.dequeue_up_to(8)
    return Pipeline([images, labels], queues=[queue])


def test_fifo_queue_with_four_enqueue_threads_holds_the_same_elements():
    legacy, shim = both(fifo_four_threads)
    assert [len(batch[1]) for batch in shim.values] == [8] * 12 + [4]
    assert [len(batch[1]) for batch in legacy.values] == [8] * 12 + [4]
    assert_same_elements(rows(legacy.values), rows(shim.values))
    assert shim.queues[0].compiled and shim.runner_threads == []


def fifo_one_thread(tf):
    index = tf.train.range_input_producer(23, num_epochs=2, shuffle=False).dequeue()
    queue = tf.queue.FIFOQueue(5, [tf.int64, tf.string], shapes=[[], []])
    enqueue = queue.enqueue([tf.cast(index, tf.int64) * 3, tf.strings.as_string(index)])
    tf.train.queue_runner.add_queue_runner(tf.train.queue_runner.QueueRunner(queue, [enqueue]))
    return Pipeline(queue.dequeue_up_to(4), queues=[queue])


def test_fifo_queue_with_one_enqueue_thread_is_exact():
    legacy, shim = both(fifo_one_thread)
    assert_exact(legacy.values, shim.values)
    assert [len(batch[0]) for batch in shim.values][-2:] == [4, 2]  # 46 = 11 * 4 + 2
    assert shim.queues[0].compiled


def dequeue_shapes(tf, declared):
    """Static shapes of a runner-fed queue's dequeues, with and without declared shapes, and
    with a second queue dequeued by two consumers (a shared stream)."""
    with legacy_tf.Graph().as_default():
        index = tf.train.range_input_producer(10, shuffle=False).dequeue()
        pair = [tf.fill([2], index), tf.strings.as_string(index)]
        queue = tf.FIFOQueue(8, [tf.int32, tf.string], shapes=[[2], []] if declared else None)
        tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue(pair)]))
        shared = tf.FIFOQueue(8, [tf.int32], shapes=[[2]] if declared else None)
        tf.train.add_queue_runner(tf.train.QueueRunner(shared, [shared.enqueue([pair[0]])]))
        dequeued = [queue.dequeue(), shared.dequeue(), shared.dequeue()]
        if declared:  # TF1 batches only what has declared shapes
            dequeued += [queue.dequeue_many(3), queue.dequeue_up_to(3)]
        return [[(t.shape.as_list() if t.shape.rank is not None else None, t.dtype)
                 for t in (group if isinstance(group, (list, tuple)) else [group])]
                for group in dequeued]


@pytest.mark.parametrize("declared", [True, False])
def test_dequeues_have_the_shapes_of_what_is_enqueued(declared):
    """TF1's static shapes where the queue declares them; where it does not (TF1: unknown),
    the enqueued values' (never one TF1's contradicts)."""
    shim, legacy = dequeue_shapes(shim_tf, declared), dequeue_shapes(legacy_tf, declared)
    if declared:
        assert shim == legacy
    else:
        assert [[dtype for _, dtype in group] for group in shim] == \
            [[dtype for _, dtype in group] for group in legacy]
        assert shim == [[([2], legacy_tf.int32), ([], legacy_tf.string)],
                        [([2], legacy_tf.int32)], [([2], legacy_tf.int32)]]


def batch_of_undeclared_dequeues(tf):
    """A queue without declared shapes (TF1's dequeue has unknown rank) batched with
    `shapes` given: TF1 infers nothing then, and checks the values against `shapes`."""
    index = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    queue = tf.FIFOQueue(8, [tf.int32, tf.string])
    tf.train.add_queue_runner(tf.train.QueueRunner(
        queue, [queue.enqueue([tf.fill([2], index), tf.strings.as_string(index)])]))
    return Pipeline(tf.train.batch(queue.dequeue(), 3, shapes=[[2], []],
                                   allow_smaller_final_batch=True), queues=[queue])


def test_batch_with_shapes_takes_a_dequeue_of_unknown_rank():
    legacy, shim = both(batch_of_undeclared_dequeues)
    assert len(legacy.values) == 4
    assert_exact(legacy.values, shim.values)


def fifo_dequeue_many_drops_the_tail(tf):
    index = tf.train.range_input_producer(23, num_epochs=1, shuffle=False).dequeue()
    queue = tf.FIFOQueue(5, [tf.int32], shapes=[[]])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue([index])]))
    return Pipeline(queue.dequeue_many(4), queues=[queue])


def test_dequeue_many_ends_with_out_of_range_before_a_short_batch():
    legacy, shim = both(fifo_dequeue_many_drops_the_tail)
    assert_exact(legacy.values, shim.values)
    assert len(shim.values) == 5 and shim.queues[0].compiled


def fifo_dequeue_one_at_a_time(tf):
    index = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    queue = tf.FIFOQueue(3, [tf.int32], shapes=[[]], names=["index"])
    enqueue = queue.enqueue({"index": index * 2})
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue]))
    element = queue.dequeue()
    return Pipeline(element["index"], queues=[queue])


def test_named_queue_dequeue_returns_a_dict_and_is_exact():
    legacy, shim = both(fifo_dequeue_one_at_a_time)
    assert_exact(legacy.values, shim.values)
    assert [int(v) for v in shim.values] == list(range(0, 20, 2))


def fifo_enqueue_many(tf):
    index = tf.train.range_input_producer(7, num_epochs=3, shuffle=False).dequeue()
    rows_ = tf.stack([index * 10 + offset for offset in range(3)])
    queue = tf.FIFOQueue(4, [tf.int32], shapes=[[]])
    enqueue = queue.enqueue_many([rows_])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue]))
    return Pipeline(queue.dequeue_up_to(5), queues=[queue])


def test_enqueue_many_splits_rows_exactly():
    legacy, shim = both(fifo_enqueue_many)
    assert_exact(legacy.values, shim.values)
    assert shim.queues[0].compiled


def padding_queue(tf):
    length = tf.train.range_input_producer(9, num_epochs=2, shuffle=False).dequeue()
    sequence = tf.range(length) + 1
    queue = tf.PaddingFIFOQueue(6, [tf.int32, tf.int32], shapes=[[None], []])
    enqueue = queue.enqueue([sequence, length])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue]))
    return Pipeline(queue.dequeue_up_to(4), queues=[queue])


def test_padding_fifo_queue_pads_batches_exactly():
    legacy, shim = both(padding_queue)
    assert_exact(legacy.values, shim.values)
    assert shim.queues[0].compiled


def shuffle_queue(tf):
    index = tf.train.range_input_producer(200, num_epochs=1, shuffle=False).dequeue()
    queue = tf.RandomShuffleQueue(capacity=30, min_after_dequeue=10, dtypes=[tf.int32],
                                  shapes=[[]], seed=7)
    enqueue = queue.enqueue([index])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue] * 2))
    return Pipeline(queue.dequeue_up_to(16), queues=[queue])


def test_random_shuffle_queue_keeps_elements_and_the_capacity_window():
    legacy, shim = both(shuffle_queue)
    assert len(shim.values) == len(legacy.values) == 13
    assert_same_elements(rows(legacy.values), rows(shim.values))
    outputs = np.concatenate([np.asarray(batch) for batch in shim.values])
    # The j-th output is one of the first j + capacity inputs (input k has value k).
    assert all(value < position + 30 for position, value in enumerate(outputs))
    assert list(outputs) != sorted(outputs), "the shim did not shuffle"
    assert shim.queues[0].compiled


def test_seeded_random_shuffle_queue_is_reproducible_under_the_shim():
    first, second = run(shim_tf, shuffle_queue), run(shim_tf, shuffle_queue)
    assert_exact(first.values, second.values)


def two_enqueue_ops(tf):
    evens = tf.train.range_input_producer(20, num_epochs=1, shuffle=False).dequeue() * 2
    odds = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue() * 2 + 1
    queue = tf.FIFOQueue(8, [tf.int32], shapes=[[]])
    enqueues = [queue.enqueue([evens]), queue.enqueue([odds])]
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, enqueues))
    return Pipeline(queue.dequeue_up_to(3), queues=[queue])


def test_distinct_enqueue_ops_are_interleaved_without_loss():
    legacy, shim = both(two_enqueue_ops)
    assert_same_elements(rows(legacy.values), rows(shim.values))
    assert len(rows(shim.values)) == 30
    assert len(shim.values) == len(legacy.values) == 10


def three_stage_chain(tf):
    index = tf.train.range_input_producer(60, num_epochs=2, shuffle=False).dequeue()
    first = tf.FIFOQueue(10, [tf.int32, tf.float32], shapes=[[], [3]])
    enqueue_first = first.enqueue([index, tf.cast(tf.fill([3], index), tf.float32)])
    tf.train.add_queue_runner(tf.train.QueueRunner(first, [enqueue_first] * 2))
    number, vector = first.dequeue()
    second = tf.RandomShuffleQueue(20, 5, [tf.int32, tf.float32], shapes=[[], [3]], seed=3)
    enqueue_second = second.enqueue([number + 1000, vector * 2.0])
    tf.train.add_queue_runner(tf.train.QueueRunner(second, [enqueue_second] * 3))
    number, vector = second.dequeue()
    third = tf.FIFOQueue(10, [tf.int32, tf.float32], shapes=[[], []])
    enqueue_third = third.enqueue([number, tf.reduce_sum(vector)])
    tf.train.add_queue_runner(tf.train.QueueRunner(third, [enqueue_third]))
    return Pipeline(third.dequeue_up_to(7), queues=[first, second, third])


def test_three_stage_chain_compiles_to_one_pipeline_with_the_same_elements():
    legacy, shim = both(three_stage_chain)
    assert len(shim.values) == len(legacy.values) == 18
    legacy_rows = rows(legacy.values, component=0)
    shim_rows = rows(shim.values, component=0)
    # Each index appears once per epoch; the elements (index, sum) pair up the same way.
    assert Counter(shim_rows) == Counter(legacy_rows) and len(shim_rows) == 120
    assert Counter(rows(shim.values)) == Counter(rows(legacy.values))
    assert all(queue.compiled for queue in shim.queues)
    assert shim.runner_threads == []


def priority_queue(tf):
    index = tf.train.range_input_producer(30, num_epochs=1, shuffle=False).dequeue()
    queue = tf.PriorityQueue(50, [tf.string], shapes=[[]])
    enqueue = queue.enqueue([tf.cast((index * 7) % 30, tf.int64), tf.strings.as_string(index)])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue]))
    priority, text = queue.dequeue_many(5)
    return Pipeline([priority, text], drain=queue.dequeue_up_to(5), queues=[queue])


def test_priority_queue_runs_on_a_runner_thread_with_the_same_elements():
    legacy, shim = both(priority_queue)
    assert_same_elements(rows(legacy.values + legacy.drained), rows(shim.values + shim.drained))
    assert len(shim.runner_threads) == 2  # the enqueue thread and the close-on-stop thread
    assert not shim.queues[0].compiled


def from_list_switch(tf):
    queues = []
    for offset in (0, 1000):
        index = tf.train.range_input_producer(50, shuffle=False).dequeue() + offset
        queue = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
        tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue([index])]))
        queues.append(queue)
    choice = tf.placeholder_with_default(tf.constant(0), [])
    selected = tf.QueueBase.from_list(choice, queues)
    batch = selected.dequeue_many(4)
    return Pipeline(batch, queues=queues + [choice])


def test_from_list_switches_between_queues_at_run_time():
    for tf in (legacy_tf, shim_tf):
        with tf_real.Graph().as_default():
            pipeline = from_list_switch(tf)
            choice = pipeline.queues[-1]
            with tf.Session() as sess:
                coord = tf.train.Coordinator()
                threads = tf.train.start_queue_runners(sess, coord)
                train = [sess.run(pipeline.fetch).tolist() for _ in range(3)]
                valid = [sess.run(pipeline.fetch, {choice: 1}).tolist() for _ in range(2)]
                train += [sess.run(pipeline.fetch, {choice: 0}).tolist()]
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=10)
        assert train == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]], tf
        assert valid == [[1000, 1001, 1002, 1003], [1004, 1005, 1006, 1007]], tf
    assert_no_runner_thread_alive()


# --- 2. Python threads feeding a queue through placeholders ----------------------------------

FEEDER_THREADS = 4
SEQUENCES_PER_FEEDER = 25


def python_feeder(tf):
    features = tf.placeholder(tf.float32, [None, 3])
    ident = tf.placeholder(tf.int32, [])
    queue = tf.PaddingFIFOQueue(8, [tf.float32, tf.int32], shapes=[[None, 3], []])
    enqueue = queue.enqueue([features, ident])
    close = queue.close()
    finished = []
    lock = threading.Lock()

    def feeder(worker):
        def feed(sess, coord):
            with coord.stop_on_exception():
                for item in range(SEQUENCES_PER_FEEDER):
                    if coord.should_stop():
                        return
                    number = worker * SEQUENCES_PER_FEEDER + item
                    values = np.full([1 + number % 5, 3], number + 1, np.float32)
                    sess.run(enqueue, feed_dict={features: values, ident: number})
                with lock:
                    finished.append(worker)
                    if len(finished) == FEEDER_THREADS:
                        sess.run(close)
        return feed

    batch = queue.dequeue_many(16)
    return Pipeline(batch, drain=queue.dequeue_up_to(16),
                    feeders=[feeder(worker) for worker in range(FEEDER_THREADS)],
                    queues=[queue])


def unpadded(batches):
    out = []
    for values, idents in batches:
        for value, ident in zip(values, idents):
            length = 1 + int(ident) % 5
            assert np.all(value[length:] == 0), "padding must be zeros"
            assert np.all(value[:length] == ident + 1)
            out.append(int(ident))
    return out


def test_four_python_feeder_threads_through_placeholders():
    legacy, shim = both(python_feeder)
    total = FEEDER_THREADS * SEQUENCES_PER_FEEDER
    assert len(shim.values) == len(legacy.values) == total // 16
    legacy_ids = unpadded(legacy.values + legacy.drained)
    shim_ids = unpadded(shim.values + shim.drained)
    assert sorted(shim_ids) == sorted(legacy_ids) == list(range(total))
    assert [len(batch[1]) for batch in shim.drained] == [total % 16]
    assert not shim.queues[0].compiled


def variable_fed_queue(tf):
    # Values read from a variable cannot move into tf.data: the queue stays a TF queue fed by
    # runner threads, which read the upstream stage themselves.
    scale = tf.Variable(3, dtype=tf.int32)
    index = tf.train.range_input_producer(12, num_epochs=1, shuffle=False).dequeue()
    queue = tf.FIFOQueue(4, [tf.int32], shapes=[[]])
    enqueue = queue.enqueue([index * scale])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue]))
    return Pipeline(queue.dequeue_many(5), drain=queue.dequeue_up_to(5), queues=[queue])


def test_unliftable_enqueue_falls_back_to_a_runner_thread_exactly():
    legacy, shim = both(variable_fed_queue)
    assert_exact(legacy.values, shim.values)
    assert_exact(legacy.drained, shim.drained)
    assert not shim.queues[0].compiled and len(shim.runner_threads) == 2


def shim_queue_feeding_a_batch(tf):
    index = tf.train.range_input_producer(17, num_epochs=1, shuffle=False).dequeue()
    queue = tf.FIFOQueue(5, [tf.int32], shapes=[[]])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue([index + 1])]))
    batch = tf.train.batch([queue.dequeue() * 2], batch_size=4, allow_smaller_final_batch=True)
    return Pipeline(batch, queues=[queue])


def test_compiled_queue_feeds_tf_train_batch():
    legacy, shim = both(shim_queue_feeding_a_batch)
    assert_exact(legacy.values, shim.values)


def fed_queue_into_batch(tf):
    value = tf.placeholder(tf.int32, [])
    queue = tf.FIFOQueue(4, [tf.int32], shapes=[[]])
    enqueue = queue.enqueue([value])
    close = queue.close()

    def feed(sess, coord):
        with coord.stop_on_exception():
            for item in range(11):
                sess.run(enqueue, {value: item})
            sess.run(close)

    batch = tf.train.batch([queue.dequeue() * 10], batch_size=3,
                           allow_smaller_final_batch=True)
    return Pipeline(batch, feeders=[feed], queues=[queue])


def test_python_fed_queue_feeds_a_compiled_batch():
    # The fed queue stays a TF queue; tf.train.batch downstream reads it through tf.data.
    legacy, shim = both(fed_queue_into_batch)
    assert_exact(legacy.values, shim.values)
    assert [len(batch) for batch in shim.values] == [3, 3, 3, 2]
    assert not shim.queues[0].compiled


def enqueue_ops_of_different_lengths(tf):
    """Vectors of length 3 and 2 into one queue that declares no shapes (TF1 allows it)."""
    long = tf.fill([3], tf.train.range_input_producer(3, num_epochs=1, shuffle=False).dequeue())
    short = tf.fill([2], 10 + tf.train.range_input_producer(3, num_epochs=1,
                                                            shuffle=False).dequeue())
    queue = tf.FIFOQueue(8, [tf.int32])
    tf.train.add_queue_runner(tf.train.QueueRunner(
        queue, [queue.enqueue([long]), queue.enqueue([short])]))
    return Pipeline(queue.dequeue(), queues=[queue])


def test_enqueue_ops_of_different_lengths_fill_one_queue_without_shapes():
    legacy, shim = both(enqueue_ops_of_different_lengths)
    assert_same_elements([tuple(np.asarray(value).tolist()) for value in legacy.values],
                         [tuple(np.asarray(value).tolist()) for value in shim.values])


def join_padding_entries_of_different_lengths(tf):
    """dynamic_pad over entries of shape [None] then [3]: TF1 keeps the first entry's shape."""
    index = tf.train.range_input_producer(4, num_epochs=1, shuffle=False).dequeue()
    varying = tf.fill([index + 1], index + 1)
    fixed = tf.fill([3], 10 + tf.train.range_input_producer(4, num_epochs=1,
                                                            shuffle=False).dequeue())
    return Pipeline(tf.train.batch_join([[varying], [fixed]], batch_size=3, dynamic_pad=True,
                                        allow_smaller_final_batch=True))


def test_a_padding_join_keeps_the_first_entrys_shape():
    legacy, shim = both(join_padding_entries_of_different_lengths)

    def unpadded(run_):
        # Which entry fills which batch depends on thread timing, and with it the padding.
        return [tuple(value for value in row if value) for batch in run_.values
                for row in np.asarray(batch).tolist()]

    assert_same_elements(unpadded(legacy), unpadded(shim))
