"""Several threads feeding one queue: a `*_join`'s entries, a QueueRunner's enqueue ops.

TF1's queue takes whichever element is enqueued first, so a thread that waits (a slow
decode, a py_func waiting on I/O) does not hold back the others: batches keep coming from
the threads that have elements. Each test holds one thread in a py_func until the first
batch has come (or failed to come), then lets it go and reads to the end, under both
libraries: the first batch and everything delivered must be TF1's.
"""
import collections
import threading

import numpy as np
import pytest

from conftest import tf_real

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(300)]

_WAIT_S = 20


def _run_with_one_thread_held(tf, build):
    """(first batch or None if none came while one thread was held, everything delivered)."""
    release = threading.Event()

    def held(tensor):
        def wait_then_pass(value):
            release.wait(60)
            return value
        out = tf.py_func(wait_then_pass, [tensor], tensor.dtype, stateful=True)
        out.set_shape(tensor.shape)
        return out

    with tf_real.Graph().as_default():
        batch = build(tf, held)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            first = []
            fetcher = threading.Thread(target=lambda: first.append(sess.run(batch)))
            fetcher.start()
            fetcher.join(_WAIT_S)
            came_while_held = bool(first)
            release.set()
            fetcher.join(60)
            delivered = [value for values in first for value in np.ravel(values).tolist()]
            try:
                while True:
                    delivered.extend(np.ravel(sess.run(batch)).tolist())
            except tf_real.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return (first[0].tolist() if came_while_held else None), delivered


def _assert_like_tf1(legacy, shim, build):
    legacy_first, legacy_delivered = _run_with_one_thread_held(legacy, build)
    shim_first, shim_delivered = _run_with_one_thread_held(shim, build)
    assert legacy_first is not None, "TF1 itself gave no batch while one thread was held"
    assert shim_first == legacy_first
    assert collections.Counter(shim_delivered) == collections.Counter(legacy_delivered)


def test_a_held_join_entry_does_not_hold_back_the_others(legacy, shim):
    def build(tf, held):
        slow = tf.train.range_input_producer(6, num_epochs=1, shuffle=False).dequeue()
        fast = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue() + 100
        return tf.train.batch_join([[held(slow)], [fast]], batch_size=4,
                                   allow_smaller_final_batch=True)

    _assert_like_tf1(legacy, shim, build)


def test_a_held_enqueue_op_does_not_hold_back_the_queue_runners_others(legacy, shim):
    def build(tf, held):
        slow = tf.train.range_input_producer(6, num_epochs=1, shuffle=False).dequeue()
        fast = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue() + 100
        queue = tf.FIFOQueue(32, [tf.int32], shapes=[[]])
        runner = tf.train.QueueRunner(queue, [queue.enqueue([held(slow)]),
                                              queue.enqueue([fast])])
        tf.train.add_queue_runner(runner)
        return tf.train.batch([queue.dequeue()], batch_size=4, allow_smaller_final_batch=True)

    _assert_like_tf1(legacy, shim, build)


def _producer(tf, count, offset=0):
    return tf.train.range_input_producer(count, num_epochs=1, shuffle=False).dequeue() + offset


def _runner_fed_queue(tf, value):
    queue = tf.FIFOQueue(8, [tf.int32], shapes=[[]])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue([value])]))
    return queue


def test_a_held_queue_upstream_does_not_hold_back_a_join_of_dequeues(legacy, shim):
    """The entries compute nothing: each is a dequeue of a queue whose enqueue holds."""
    def build(tf, held):
        slow = _runner_fed_queue(tf, held(_producer(tf, 6))).dequeue()
        fast = _runner_fed_queue(tf, _producer(tf, 10, 100)).dequeue()
        return tf.train.batch_join([[slow], [fast]], batch_size=4,
                                   allow_smaller_final_batch=True)

    _assert_like_tf1(legacy, shim, build)


def test_a_held_queue_upstream_does_not_hold_back_a_queue_runners_other_enqueue(legacy, shim):
    def build(tf, held):
        slow = _runner_fed_queue(tf, held(_producer(tf, 6))).dequeue()
        fast = _runner_fed_queue(tf, _producer(tf, 10, 100)).dequeue()
        queue = tf.FIFOQueue(32, [tf.int32], shapes=[[]])
        tf.train.add_queue_runner(tf.train.QueueRunner(
            queue, [queue.enqueue([slow]), queue.enqueue([fast])]))
        return tf.train.batch([queue.dequeue()], batch_size=4, allow_smaller_final_batch=True)

    _assert_like_tf1(legacy, shim, build)


def _join_of_fed_queues(tf):
    """One feeder fills queue A (capacity 2) and closes it, then fills B; TF1's join threads
    drain A as it is fed, where a turn over A and B would wait on B with the feeder blocked
    on a full A."""
    with tf_real.Graph().as_default():
        value = tf.placeholder(tf.int32, [])
        first, second = (tf.FIFOQueue(2, [tf.int32], shapes=[[]]) for _ in range(2))
        batch = tf.train.batch_join([[first.dequeue()], [second.dequeue()]], batch_size=4,
                                    allow_smaller_final_batch=True)
        feeds = [(queue.enqueue([value]), queue.close(), offset)
                 for queue, offset in ((first, 0), (second, 100))]
        cancels = [queue.close(cancel_pending_enqueues=True) for queue in (first, second)]
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)

            def feed():
                for enqueue, close, offset in feeds:
                    for index in range(10):
                        sess.run(enqueue, {value: index + offset})
                    sess.run(close)

            feeder = threading.Thread(target=feed, daemon=True)
            feeder.start()
            delivered, ended = [], []

            def consume():
                try:
                    while True:
                        delivered.extend(sess.run(batch).tolist())
                except tf_real.errors.OutOfRangeError:
                    ended.append(True)

            consumer = threading.Thread(target=consume, daemon=True)
            consumer.start()
            consumer.join(_WAIT_S)
            finished = bool(ended)
            if not finished:  # unblock the Session's threads before closing it
                sess.run(cancels)
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return finished, sorted(delivered)


def test_a_join_of_queues_fed_one_after_the_other_drains_each_as_it_is_fed(legacy, shim):
    legacy_finished, legacy_delivered = _join_of_fed_queues(legacy)
    shim_finished, shim_delivered = _join_of_fed_queues(shim)
    assert legacy_finished, "TF1 itself did not reach the end of the input"
    assert shim_finished, f"the shim stopped after {len(shim_delivered)} elements"
    assert shim_delivered == legacy_delivered
