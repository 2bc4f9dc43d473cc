"""Every consumer pattern TF1 allows: each element goes to exactly one consumer.

Several batch calls on one reader's output, several dequeue ops on one queue (one per
preprocessing thread), and a batch size fed per run. Which consumer gets which element
depends on thread timing in TF1, so streams are compared by what TF1 guarantees: every
element exactly once over all consumers; where one consumer reads alone, bit for bit.
"""
import collections
import threading

import numpy as np
import pytest

from conftest import run_stream, tf_real
from session_streams import drain_consumers
from streams import assert_streams_equal

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(300)]

RECORDS = 40


def _write_records(path, count=RECORDS):
    with tf_real.io.TFRecordWriter(str(path)) as writer:
        for index in range(count):
            writer.write(b"record-%03d" % index)
    return str(path)


def _every_element_once(delivered):
    everything = [value for values in delivered for value in values]
    return collections.Counter(everything)


def _assert_split_like_tf1(legacy_delivered, shim_delivered):
    expected = _every_element_once(legacy_delivered)
    got = _every_element_once(shim_delivered)
    assert max(expected.values()) == 1, "TF1 itself delivered an element twice"
    assert got == expected, (f"shim delivered {sum(got.values())} elements "
                             f"({len(got)} distinct), TF1 {sum(expected.values())}")


def test_two_batch_calls_on_one_reader_split_its_records(legacy, shim, tmp_path):
    path = _write_records(tmp_path / "data.tfrecord")

    def build(tf):
        files = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
        _, value = tf.TFRecordReader().read(files)
        first = tf.train.batch([value], batch_size=3, allow_smaller_final_batch=True)
        second = tf.train.batch([tf.strings.upper(value)], batch_size=4,
                                allow_smaller_final_batch=True)
        return [first, second]

    normalise = lambda delivered: [[value.lower() for value in values] for values in delivered]
    _assert_split_like_tf1(normalise(drain_consumers(legacy, build)), normalise(drain_consumers(shim, build)))


def test_preprocessing_threads_dequeuing_one_queue_share_its_elements(legacy, shim):
    def build(tf):
        index = tf.train.range_input_producer(RECORDS, num_epochs=2, shuffle=False).dequeue()
        queue = tf.FIFOQueue(16, [tf.int32], shapes=[[]])
        tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue([index])] * 2))
        processed = [[queue.dequeue() * 10 + thread] for thread in range(4)]
        batch = tf.train.batch_join(processed, batch_size=5, allow_smaller_final_batch=True)
        return [batch // 10]

    legacy_delivered, shim_delivered = drain_consumers(legacy, build), drain_consumers(shim, build)
    assert sorted(shim_delivered[0]) == sorted(legacy_delivered[0])
    assert collections.Counter(shim_delivered[0]) == collections.Counter(
        list(range(RECORDS)) * 2)


def test_readers_of_one_filename_queue_share_its_files(legacy, shim, tmp_path):
    paths = [_write_records(tmp_path / f"part-{i}.tfrecord", 5) for i in range(6)]

    def build(tf):
        files = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
        keys = [tf.TFRecordReader().read(files)[0] for _ in range(3)]
        return [tf.train.batch_join([[key] for key in keys], batch_size=4,
                                    allow_smaller_final_batch=True)]

    _assert_split_like_tf1(drain_consumers(legacy, build), drain_consumers(shim, build))


def test_second_consumer_added_after_the_first_compiled(legacy, shim):
    def build(tf):
        value = tf.train.range_input_producer(RECORDS, num_epochs=1, shuffle=False).dequeue()
        first = tf.train.batch([value], batch_size=2, allow_smaller_final_batch=True)
        tf.train.batch([value * 0], batch_size=1)  # built, never run
        third = tf.train.batch([value + 1000], batch_size=3, allow_smaller_final_batch=True)
        return [first, third - 1000]

    legacy_delivered, shim_delivered = drain_consumers(legacy, build), drain_consumers(shim, build)
    # The unfetched consumer holds up to its capacity in TF1 (and a few in the shim).
    for delivered in (legacy_delivered, shim_delivered):
        assert max(_every_element_once(delivered).values()) == 1
    assert set(_every_element_once(shim_delivered)) <= set(range(RECORDS))


def test_direct_fetch_of_a_consumed_stage_is_refused_not_duplicated(shim):
    with tf_real.Graph().as_default():
        value = shim.train.range_input_producer(8, num_epochs=1, shuffle=False).dequeue()
        batch = shim.train.batch([value], batch_size=2)
        with shim.Session() as sess:
            sess.run(shim.local_variables_initializer())
            assert sess.run(batch).tolist() == [0, 1]
            with pytest.raises(tf_real.errors.InvalidArgumentError,
                               match="consumed by another pipeline stage"):
                sess.run(value)


@pytest.mark.parametrize("batch_size", ["int", "int32_constant", "numpy_int64"])
def test_batch_size_known_at_construction_is_exact(legacy, shim, batch_size):
    def build(tf):
        value = tf.train.range_input_producer(11, num_epochs=2, shuffle=False).dequeue()
        size = {"int": 3, "int32_constant": tf.constant(3),
                "numpy_int64": np.int64(3)}[batch_size]
        return tf.train.batch([value], size, allow_smaller_final_batch=True)

    assert_streams_equal(run_stream(legacy, build), run_stream(shim, build))


def _batches_of_a_fed_queue(tf, values=30, batch_size=4):
    """A feeder thread fills a FIFOQueue one run at a time while the main thread takes
    batches of it, in a Session with ONE inter-op thread: a batch that held the Session's
    thread while waiting for elements would keep the enqueue from ever running."""
    with tf_real.Graph().as_default():
        value = tf.placeholder(tf.int64, [])
        queue = tf.FIFOQueue(8, [tf.int64], shapes=[[]])
        enqueue, close = queue.enqueue([value]), queue.close()
        batch = tf.train.batch([queue.dequeue()], batch_size=batch_size,
                               allow_smaller_final_batch=True)
        config = tf.ConfigProto(inter_op_parallelism_threads=1)
        with tf.Session(config=config) as sess:
            coord = tf.train.Coordinator()
            runners = tf.train.start_queue_runners(sess=sess, coord=coord)

            def feed():
                for index in range(values):
                    sess.run(enqueue, {value: index})
                sess.run(close)
            feeder = threading.Thread(target=feed, daemon=True)
            feeder.start()
            batches = []
            try:
                while True:
                    batches.append(sess.run(batch).tolist())
            except tf.errors.OutOfRangeError:
                pass
            feeder.join()
            coord.request_stop()
            coord.join(runners)
    return batches


@pytest.mark.timeout(120)
def test_batches_of_a_fed_queue_leave_the_session_thread_to_the_feeder(legacy, shim):
    expected = _batches_of_a_fed_queue(legacy)
    assert sum(len(batch) for batch in expected) == 30
    assert _batches_of_a_fed_queue(shim) == expected
