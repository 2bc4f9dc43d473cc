"""Shim queues: constructor signatures, compile rules, blocking semantics, eager use."""
import inspect
import os
import threading
import time

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
import tensorflow.compat.v1 as legacy_tf  # noqa: E402

import compat.v1 as shim_tf  # noqa: E402
from compat._runtime import queues  # noqa: E402

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(60)]

SIDES = pytest.mark.parametrize("tf", [legacy_tf, shim_tf], ids=["legacy", "shim"])


@pytest.mark.parametrize("name", ["FIFOQueue", "RandomShuffleQueue", "PaddingFIFOQueue",
                                  "PriorityQueue", "QueueBase"])
def test_constructor_signatures_are_tf1s(name):
    ours = inspect.signature(getattr(queues, name).__init__)
    theirs = inspect.signature(getattr(legacy_tf.queue, name).__init__)
    assert ours == theirs


def test_queue_properties_match_tf1():
    for tf in (legacy_tf, shim_tf):
        with tf_real.Graph().as_default():
            queue = tf.PaddingFIFOQueue(5, [tf.int32, tf.string], shapes=[[None], []],
                                        names=["ids", "text"], name="my_queue")
            assert queue.name == "my_queue"
            assert queue.names == ["ids", "text"]
            assert queue.dtypes == [tf.int32, tf.string]
            assert [s.as_list() for s in queue.shapes] == [[None], []]
            assert queue.queue_ref.op.type == "PaddingFIFOQueueV2"
            with pytest.raises(ValueError, match="shapes must be provided"):
                tf.PaddingFIFOQueue(5, [tf.int32], shapes=None)
            with pytest.raises(ValueError):
                tf.FIFOQueue(5, [tf.int32], shapes=[[1], [2]])


@SIDES
def test_enqueue_checks_dtypes_and_shapes_at_graph_time(tf):
    with tf_real.Graph().as_default():
        queue = tf.FIFOQueue(5, [tf.int32], shapes=[[2]])
        with pytest.raises(ValueError):
            queue.enqueue([tf.constant([1, 2, 3])])
        with pytest.raises((TypeError, ValueError)):
            queue.enqueue([tf.constant([1.5, 2.5])])


@SIDES
def test_dequeue_many_blocked_on_an_open_queue_loses_nothing_when_closed(tf):
    with tf_real.Graph().as_default():
        value = tf.placeholder(tf.int32, [None])
        queue = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
        fill = queue.enqueue_many([value])
        take_five = queue.dequeue_many(5)
        rest = queue.dequeue_up_to(5)
        close = queue.close()
        outcome = []
        with tf.Session() as sess:
            sess.run(fill, {value: [1, 2]})

            def consumer():
                try:
                    sess.run(take_five)
                except tf_real.errors.OutOfRangeError as error:
                    outcome.append(type(error))

            thread = threading.Thread(target=consumer)
            thread.start()
            time.sleep(0.2)
            assert thread.is_alive(), "dequeue_many(5) must wait on an open queue"
            sess.run(close)
            thread.join(10)
            assert outcome == [tf_real.errors.OutOfRangeError]
            assert sess.run(rest).tolist() == [1, 2]
            with pytest.raises(tf_real.errors.OutOfRangeError):
                sess.run(rest)


@SIDES
def test_enqueue_blocks_when_full_until_a_dequeue(tf):
    with tf_real.Graph().as_default():
        value = tf.placeholder(tf.int32, [])
        queue = tf.FIFOQueue(1, [tf.int32], shapes=[[]])
        enqueue = queue.enqueue([value])
        dequeue = queue.dequeue()
        with tf.Session() as sess:
            sess.run(enqueue, {value: 1})
            thread = threading.Thread(target=sess.run, args=(enqueue, {value: 2}))
            thread.start()
            time.sleep(0.2)
            assert thread.is_alive()
            assert sess.run(dequeue) == 1
            thread.join(10)
            assert not thread.is_alive()
            assert sess.run(dequeue) == 2


# --- compile rules ------------------------------------------------------------------------------

def test_pure_ops_without_a_runner_are_enqueued_by_hand():
    # The "Learning TensorFlow" pattern: constants/random values enqueued with sess.run.
    with tf_real.Graph().as_default():
        queue = shim_tf.FIFOQueue(10, [shim_tf.float32], shapes=[[]])
        enqueue = queue.enqueue([shim_tf.random_normal([])])
        taken = queue.dequeue_many(3)
        with shim_tf.Session() as sess:
            for _ in range(4):
                sess.run(enqueue)
            assert sess.run(queue.size()) == 4
            assert sess.run(taken).shape == (3,)
            assert sess.run(queue.size()) == 1
        assert not queue.compiled


def test_pure_ops_with_a_runner_compile_to_an_endless_stream():
    with tf_real.Graph().as_default():
        queue = shim_tf.FIFOQueue(10, [shim_tf.int32], shapes=[[]])
        enqueue = queue.enqueue([shim_tf.constant(7)])
        shim_tf.train.add_queue_runner(shim_tf.train.QueueRunner(queue, [enqueue] * 2))
        taken = queue.dequeue_many(3)
        with shim_tf.Session() as sess:
            assert shim_tf.train.start_queue_runners(sess) == []
            for _ in range(3):
                assert sess.run(taken).tolist() == [7, 7, 7]
        assert queue.compiled


def test_dequeue_before_any_enqueue_stays_fed():
    with tf_real.Graph().as_default():
        queue = shim_tf.FIFOQueue(10, [shim_tf.int32], shapes=[[]])
        dequeue = queue.dequeue()
        index = shim_tf.train.range_input_producer(3, num_epochs=1, shuffle=False).dequeue()
        shim_tf.train.add_queue_runner(shim_tf.train.QueueRunner(queue, [queue.enqueue([index])]))
        with shim_tf.Session() as sess:
            coord = shim_tf.train.Coordinator()
            threads = shim_tf.train.start_queue_runners(sess, coord)
            assert len(threads) == 2
            got = []
            try:
                while True:
                    got.append(int(sess.run(dequeue)))
            except tf_real.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
        assert got == [0, 1, 2] and not queue.compiled


def test_enqueue_op_created_after_the_queue_compiled_is_refused():
    with tf_real.Graph().as_default():
        index = shim_tf.train.range_input_producer(3, shuffle=False).dequeue()
        queue = shim_tf.FIFOQueue(10, [shim_tf.int32], shapes=[[]])
        queue.enqueue([index])
        queue.dequeue()
        with pytest.raises(ValueError, match="before its first dequeue"):
            queue.enqueue([index + 1])


@pytest.mark.parametrize("tf", [tf_real.compat.v1, shim_tf], ids=["tf1", "shim"])
def test_dequeue_ops_of_one_queue_share_its_elements(tf):
    with tf_real.Graph().as_default():
        index = tf.train.range_input_producer(6, num_epochs=1, shuffle=False).dequeue()
        queue = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
        tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue([index])]))
        many, up_to = queue.dequeue_many(2), queue.dequeue_up_to(3)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            delivered = list(sess.run(many))
            try:
                while True:
                    delivered.extend(sess.run(up_to))
            except tf_real.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    assert sorted(delivered) == list(range(6))


def test_from_list_after_compilation_is_refused():
    with tf_real.Graph().as_default():
        index = shim_tf.train.range_input_producer(3, shuffle=False).dequeue()
        queue = shim_tf.FIFOQueue(10, [shim_tf.int32], shapes=[[]])
        queue.enqueue([index])
        queue.dequeue()
        with pytest.raises(ValueError, match="from_list"):
            shim_tf.QueueBase.from_list(0, [queue])


def test_reader_reads_a_compiled_filename_queue(tmp_path):
    paths = []
    for shard in range(2):
        path = str(tmp_path / f"shard{shard}.txt")
        with open(path, "w") as handle:
            handle.write("".join(f"line {shard}-{i}\n" for i in range(3)))
        paths.append(path)

    def build(tf):
        filenames = tf.FIFOQueue(4, [tf.string], shapes=[[]])
        name = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False).dequeue()
        tf.train.add_queue_runner(tf.train.QueueRunner(filenames, [filenames.enqueue([name])]))
        _, line = tf.TextLineReader().read(filenames)
        return line

    results = []
    for tf in (legacy_tf, shim_tf):
        with tf_real.Graph().as_default():
            line = build(tf)
            with tf.Session() as sess:
                sess.run(tf.local_variables_initializer())
                coord = tf.train.Coordinator()
                threads = tf.train.start_queue_runners(sess, coord)
                got = []
                try:
                    while True:
                        got.append(sess.run(line))
                except tf_real.errors.OutOfRangeError:
                    pass
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=10)
        results.append(got)
    assert results[1] == results[0] and len(results[0]) == 6


def test_reader_reads_a_filename_queue_filled_by_hand(tmp_path):
    # The TF1 pattern: enqueue the filenames once with sess.run, close the queue, read.
    paths = []
    for shard in range(3):
        path = str(tmp_path / f"part{shard}.txt")
        with open(path, "w") as handle:
            handle.write("".join(f"{shard}:{i}\n" for i in range(2)))
        paths.append(path)
    results = []
    for tf in (legacy_tf, shim_tf):
        with tf_real.Graph().as_default():
            names = tf.placeholder(tf.string, [None])
            filenames = tf.FIFOQueue(10, [tf.string], shapes=[[]])
            load = filenames.enqueue_many([names])
            close = filenames.close()
            _, line = tf.TextLineReader().read(filenames)
            with tf.Session() as sess:
                sess.run(load, {names: paths})
                sess.run(close)
                got = []
                try:
                    while True:
                        got.append(sess.run(line))
                except tf_real.errors.OutOfRangeError:
                    pass
        results.append(got)
    assert results[1] == results[0] == [b"0:0", b"0:1", b"1:0", b"1:1", b"2:0", b"2:1"]


def test_reader_refuses_a_from_list_queue_with_the_fix():
    with tf_real.Graph().as_default():
        queues_ = [shim_tf.FIFOQueue(4, [shim_tf.string], shapes=[[]]) for _ in range(2)]
        selected = shim_tf.QueueBase.from_list(0, queues_)
        with pytest.raises(TypeError, match="own reader"):
            shim_tf.TFRecordReader().read(selected)


# --- eager and as_dataset -------------------------------------------------------------------------

@pytest.mark.eager
def test_eager_queue_behaves_like_tf_queue():
    queue = shim_tf.queue.RandomShuffleQueue(8, 2, [shim_tf.int32], shapes=[[]], seed=1)
    queue.enqueue_many([np.arange(6, dtype=np.int32)])
    assert int(queue.size()) == 6
    first = queue.dequeue_many(4).numpy().tolist()
    queue.close()
    with pytest.raises(tf_real.errors.CancelledError):
        queue.enqueue([1])
    rest = queue.dequeue_up_to(4).numpy().tolist()
    assert sorted(first + rest) == list(range(6))
    with pytest.raises(tf_real.errors.OutOfRangeError):
        queue.dequeue()


@pytest.mark.eager
def test_eager_as_dataset_ends_when_the_queue_is_closed_and_drained():
    queue = shim_tf.FIFOQueue(10, [shim_tf.float32, shim_tf.int32], shapes=[[2], []],
                              names=["x", "y"])
    queue.enqueue_many({"x": np.arange(10, dtype=np.float32).reshape(5, 2),
                        "y": np.arange(5, dtype=np.int32)})
    queue.close()
    elements = list(queue.as_dataset())
    assert [int(e["y"]) for e in elements] == [0, 1, 2, 3, 4]
    assert elements[2]["x"].numpy().tolist() == [4.0, 5.0]
    assert int(queue.size()) == 0


@pytest.mark.eager
def test_eager_as_dataset_dequeues_only_on_demand():
    queue = shim_tf.FIFOQueue(10, [shim_tf.int32], shapes=[[]])
    queue.enqueue_many([np.arange(5, dtype=np.int32)])
    iterator = iter(queue.as_dataset())
    assert int(next(iterator)) == 0
    assert int(queue.size()) == 4  # no prefetch took elements from the queue


@pytest.mark.eager
def test_keras_fit_on_a_queue_fed_by_an_eager_runner():
    keras = pytest.importorskip("keras")
    queue = shim_tf.FIFOQueue(16, [shim_tf.float32, shim_tf.float32], shapes=[[3], [1]])
    rng = np.random.default_rng(0)
    features = rng.normal(size=(64, 3)).astype(np.float32)
    labels = features.sum(axis=1, keepdims=True)
    rows = iter(range(64))
    lock = threading.Lock()

    def enqueue_next():
        with lock:
            row = next(rows, None)
        if row is None:
            raise tf_real.errors.OutOfRangeError(None, None, "all rows fed")
        queue.enqueue([features[row], labels[row]])

    coord = shim_tf.train.Coordinator()
    runner = shim_tf.train.QueueRunner(queue, [enqueue_next])
    threads = runner.create_threads(None, coord=coord, start=True)
    model = keras.Sequential([keras.Input([3]), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(queue.as_dataset().batch(8), epochs=1, verbose=0)
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=10)
    assert len(history.history["loss"]) == 1
    assert int(queue.size()) == 0


def test_graph_as_dataset_of_a_compiled_queue_is_its_stream():
    with tf_real.Graph().as_default():
        index = shim_tf.train.range_input_producer(4, num_epochs=1, shuffle=False).dequeue()
        queue = shim_tf.FIFOQueue(10, [shim_tf.int32], shapes=[[]])
        shim_tf.train.add_queue_runner(shim_tf.train.QueueRunner(queue, [queue.enqueue([index])]))
        dataset = queue.as_dataset()
        assert queue.compiled
        batch = shim_tf.data.make_one_shot_iterator(dataset.batch(10)).get_next()
        with shim_tf.Session() as sess:
            assert sess.run(batch).tolist() == [0, 1, 2, 3]


def test_graph_as_dataset_of_a_fed_queue_reads_the_queue():
    with tf_real.Graph().as_default():
        value = shim_tf.placeholder(shim_tf.int32, [None])
        queue = shim_tf.FIFOQueue(10, [shim_tf.int32], shapes=[[]])
        fill = queue.enqueue_many([value])
        close = queue.close()
        iterator = shim_tf.data.make_one_shot_iterator(queue.as_dataset().batch(2))
        batch = iterator.get_next()
        with shim_tf.Session() as sess:
            sess.run(fill, {value: [5, 6, 7]})
            sess.run(close)
            assert sess.run(batch).tolist() == [5, 6]
            assert sess.run(batch).tolist() == [7]
            with pytest.raises(tf_real.errors.OutOfRangeError):
                sess.run(batch)


def test_examples_use_the_shim_import():
    root = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
    for name in ("python_feeder.py", "hand_built_stages.py"):
        with open(os.path.join(root, name)) as handle:
            assert "import compat.v1 as tf" in handle.read()
