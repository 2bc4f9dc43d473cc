"""Graphs that mix the shim with code calling TensorFlow itself (tf_slim's data providers,
TF's own queues, readers and batching), compared with TF1 running the same program.

Where the shim cannot compile a part (its inputs come from a TF queue, a placeholder, a
variable), that part runs on TF's queue kernels and runner threads, as TF1 runs it
(`tf1_fallback`); TF's own ops reading a shim queue get a TF queue a runner fills; a shim
reader given a TF queue reads it with TF's reader. Single-threaded programs compare batch for
batch, bit for bit; programs with several reader or batching threads by their multisets.
"""
import os
import sys
import threading

import numpy as np
import pytest

from compat import harness
from conftest import run_stream, tf_real
from streams import assert_streams_equal

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "real_programs")
if PROGRAMS not in sys.path:
    sys.path.insert(0, PROGRAMS)

slim_input = pytest.importorskip("slim_input")  # needs tf_slim (the test extra has it)

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    return slim_input.write_data(str(tmp_path_factory.mktemp("slim")))


def _index(tf, value):
    return tf.parse_single_example(value, {"image/index": tf.FixedLenFeature([], tf.int64)})[
        "image/index"]


# --- one part TF's, one part the shim's ----------------------------------------------------

def shim_reader_on_a_tf_queue(paths):
    def build(tf):
        files = tf_real.compat.v1.train.string_input_producer(paths, num_epochs=1,
                                                              shuffle=False)
        _, value = tf.TFRecordReader().read(files)
        return tf.train.batch([_index(tf, value)], batch_size=6, allow_smaller_final_batch=True)
    return build


def tf_reader_on_a_shim_queue(paths):
    def build(tf):
        files = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
        _, value = tf_real.compat.v1.TFRecordReader().read(files)
        return tf.train.batch([_index(tf, value)], batch_size=6, allow_smaller_final_batch=True)
    return build


def tf_batch_over_shim_tensors(paths):
    def build(tf):
        files = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
        _, value = tf.TFRecordReader().read(files)
        return tf_real.compat.v1.train.batch([_index(tf, value)], batch_size=6,
                                             allow_smaller_final_batch=True)
    return build


def tf_queue_and_runner_over_shim_tensors(paths):
    """A hand-built TF queue and QueueRunner (as a library would build them) fed by the
    shim's reader, dequeued by the shim's batch."""
    def build(tf):
        files = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
        _, value = tf.TFRecordReader().read(files)
        queue = tf_real.compat.v1.FIFOQueue(16, [tf.int64], shapes=[[]])
        tf_real.compat.v1.train.add_queue_runner(tf_real.compat.v1.train.QueueRunner(
            queue, [queue.enqueue([_index(tf, value)])]))
        return tf.train.batch([queue.dequeue()], batch_size=6, allow_smaller_final_batch=True)
    return build


def slim_parallel_read(paths):
    def build(tf):
        import tf_slim as slim
        _, value = slim.parallel_reader.parallel_read(paths, tf.TFRecordReader, num_epochs=1,
                                                      num_readers=1, shuffle=False)
        return tf.train.batch([_index(tf, value)], batch_size=6, allow_smaller_final_batch=True)
    return build


def slim_prefetch_queue_over_a_shim_batch(paths):
    def build(tf):
        import tf_slim as slim
        files = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
        _, value = tf.TFRecordReader().read(files)
        # prefetch_queue's queue needs whole batches' shapes: 48 records, 8 batches of 6.
        batch = tf.train.batch([_index(tf, value)], batch_size=6)
        return slim.prefetch_queue.prefetch_queue([batch], capacity=2).dequeue()
    return build


MIXES = [shim_reader_on_a_tf_queue, tf_reader_on_a_shim_queue, tf_batch_over_shim_tensors,
         tf_queue_and_runner_over_shim_tensors, slim_parallel_read,
         slim_prefetch_queue_over_a_shim_batch]


@pytest.mark.parametrize("program", MIXES, ids=[program.__name__ for program in MIXES])
def test_every_mix_gives_tf1s_stream(program, paths, legacy, shim):
    build = program(paths)
    expected = run_stream(legacy, build)
    assert sum(len(batch) for batch in expected) == slim_input.SHARDS * slim_input.PER_SHARD
    assert_streams_equal(expected, run_stream(shim, build))


def test_batch_join_over_a_tf_queue_fed_from_python(legacy, shim):
    """A TF queue filled by the program's Python thread (facenet's pattern, with TF's own
    queue), dequeued by three preprocessing entries of one batch_join: TF1's batches, in
    some order."""
    def run(tf):
        with tf_real.Graph().as_default():
            values = tf_real.compat.v1.placeholder(tf.int64, [None])
            queue = tf_real.compat.v1.FIFOQueue(100, [tf.int64], shapes=[[]])
            enqueue, close = queue.enqueue_many([values]), queue.close()
            entries = [[queue.dequeue() * 10 + entry] for entry in range(3)]
            batch = tf.train.batch_join(entries, batch_size=4, allow_smaller_final_batch=True)
            got = []
            with tf.Session() as sess:
                coord = tf.train.Coordinator()
                threads = tf.train.start_queue_runners(sess, coord)

                def feed():
                    sess.run(enqueue, {values: np.arange(30)})
                    sess.run(close)
                feeder = threading.Thread(target=feed)
                feeder.start()
                try:
                    while True:
                        got.extend(int(value) // 10 for value in sess.run(batch))
                except tf_real.errors.OutOfRangeError:
                    pass
                feeder.join()
                coord.request_stop()
                coord.join(threads)
        return sorted(got)
    assert run(legacy) == list(range(30))
    assert run(shim) == run(legacy)


# --- tf_slim's data providers ----------------------------------------------------------------

def test_slim_classifier_input_one_thread_is_tf1s_bit_for_bit(paths):
    def build(tf):
        return slim_input.classifier_input(tf, paths, num_readers=1, shuffle=False, threads=1)
    report = harness.compare(build, mode="exact", max_batches=None)
    assert report.legacy.batches == 8, report.explain()
    assert report.equivalent, report.explain()


def _records(batches):
    """Every row of every batch (dicts of batched components), as sorted (index, row) pairs
    with the row's components as bytes: the multiset of records, whatever their order."""
    rows = []
    for batch in batches:
        for position, index in enumerate(batch["index"]):
            rows.append((int(index), tuple((key, np.asarray(value[position]).tobytes())
                                           for key, value in sorted(batch.items()))))
    return sorted(rows)


def test_slim_classifier_training_input_gives_tf1s_records(paths, legacy, shim):
    """Four readers, four batching threads, a prefetch queue: TF1's order depends on its
    threads; the same number of batches, each of 6, and the same records (each decoded
    image with its label)."""
    def build(tf):
        return slim_input.classifier_input(tf, paths)
    expected, got = run_stream(legacy, build), run_stream(shim, build)
    assert [len(batch["index"]) for batch in got] == [len(batch["index"]) for batch in expected]
    assert len(expected) == 8
    assert _records(got) == _records(expected)


def test_slim_ocr_provider_gives_tf1s_records(paths, legacy, shim):
    def build(tf):
        return slim_input.ocr_input(tf, paths)
    expected, got = run_stream(legacy, build), run_stream(shim, build)
    assert [len(batch["index"]) for batch in got] == [len(batch["index"]) for batch in expected]
    assert len(expected) == 12
    assert _records(got) == _records(expected)
