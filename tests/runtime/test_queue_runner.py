"""QueueRunner and start_queue_runners: TF1 API, faults, subclassing, eager callables."""
import threading
import time
import traceback

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
import tensorflow.compat.v1 as legacy_tf  # noqa: E402

import compat.v1 as shim_tf  # noqa: E402

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(60)]

SIDES = pytest.mark.parametrize("tf", [legacy_tf, shim_tf], ids=["legacy", "shim"])


def runner_threads_alive():
    return [t.name for t in threading.enumerate()
            if t.name.startswith("QueueRunnerThread") and t.is_alive()]


def fed_queue(tf, capacity=2, threads=4):
    """A queue whose enqueue reads a variable, so both TF1 and the shim run runner threads."""
    counter = tf.Variable(0, dtype=tf.int32)
    queue = tf.FIFOQueue(capacity, [tf.int32], shapes=[[]])
    enqueue = queue.enqueue([tf.assign_add(counter, 1)])
    runner = tf.train.QueueRunner(queue, [enqueue] * threads)
    tf.train.add_queue_runner(runner)
    return queue, runner


# --- faults -----------------------------------------------------------------------------------

def unfed_placeholder_pipeline(tf):
    value = tf.placeholder(tf.float32, [])
    queue = tf.FIFOQueue(4, [tf.float32], shapes=[[]])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue([value])]))
    return queue.dequeue()


@SIDES
def test_an_enqueue_thread_error_is_reraised_by_coord_join(tf):
    with tf_real.Graph().as_default():
        element = unfed_placeholder_pipeline(tf)
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            assert coord.wait_for_stop(20), "the runner's error must stop the coordinator"
            with pytest.raises(tf_real.errors.OutOfRangeError):
                sess.run(element)  # the cancel op closed the queue: the consumer ends
            with pytest.raises(tf_real.errors.InvalidArgumentError, match="placeholder") as caught:
                coord.join(threads, stop_grace_period_secs=10)
    frames = [frame.name for frame in traceback.extract_tb(caught.value.__traceback__)]
    assert "_run" in frames, "the runner thread's traceback must survive"
    assert not runner_threads_alive()


def failing_compiled_pipeline(tf):
    index = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    checked = tf.debugging.check_numerics(tf.math.log(tf.cast(index, tf.float32) - 3.0), "bad")
    queue = tf.FIFOQueue(4, [tf.float32], shapes=[[]])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue([checked])]))
    return queue.dequeue()


def user_training_loop(tf, build):
    """The TF1 tutorial loop; returns the steps run, raises what the user would see."""
    steps = 0
    with tf_real.Graph().as_default():
        element = build(tf)
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            try:
                while not coord.should_stop():
                    sess.run(element)
                    steps += 1
            except tf_real.errors.OutOfRangeError:
                pass
            finally:
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=10)
    return steps


@SIDES
def test_an_error_in_a_compiled_stage_reaches_the_user_with_the_tf1_type(tf):
    # TF1 re-raises it at coord.join; the compiled shim raises it at the sess.run that needs
    # the element. Either way the user's loop ends with InvalidArgumentError.
    with pytest.raises(tf_real.errors.InvalidArgumentError, match="bad"):
        user_training_loop(tf, failing_compiled_pipeline)
    assert not runner_threads_alive()


@SIDES
def test_stop_while_enqueue_threads_are_blocked_on_a_full_queue(tf):
    with tf_real.Graph().as_default():
        queue, _ = fed_queue(tf, capacity=2, threads=4)
        size = queue.size()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            assert len(threads) == 5
            deadline = time.monotonic() + 20
            while sess.run(size) < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.1)  # let all four enqueue threads block on the full queue
            started = time.monotonic()
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)
            assert time.monotonic() - started < 5
            assert not any(thread.is_alive() for thread in threads)
    assert not runner_threads_alive()


@SIDES
def test_python_feeders_blocked_on_a_full_queue_are_cancelled_by_close(tf):
    with tf_real.Graph().as_default():
        value = tf.placeholder(tf.int32, [])
        queue = tf.FIFOQueue(1, [tf.int32], shapes=[[]])
        enqueue = queue.enqueue([value])
        cancel = queue.close(cancel_pending_enqueues=True)
        errors = []
        with tf.Session() as sess:
            coord = tf.train.Coordinator()

            def feeder():
                try:
                    while not coord.should_stop():
                        sess.run(enqueue, {value: 1})
                except tf_real.errors.CancelledError as error:
                    errors.append(type(error))

            feeders = [threading.Thread(target=feeder) for _ in range(4)]
            for thread in feeders:
                coord.register_thread(thread)
                thread.start()
            time.sleep(0.2)
            started = time.monotonic()
            coord.request_stop()
            sess.run(cancel)
            coord.join(stop_grace_period_secs=5)
            assert time.monotonic() - started < 5
    assert errors == [tf_real.errors.CancelledError] * 4


@SIDES
def test_last_runner_thread_to_see_out_of_range_closes_the_queue(tf):
    with tf_real.Graph().as_default():
        fill = tf.placeholder(tf.int32, [None])
        source = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
        load = source.enqueue_many([fill])
        close_source = source.close()
        target = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
        scale = tf.Variable(10)  # a variable keeps the target a thread-fed queue in the shim
        runner = tf.train.QueueRunner(target, [target.enqueue([source.dequeue() * scale])] * 3)
        closed = target.is_closed()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(load, {fill: [1, 2, 3, 4, 5]})
            sess.run(close_source)
            threads = runner.create_threads(sess, start=True)
            for thread in threads:
                thread.join(20)
            assert sess.run(closed)
            got = sorted(sess.run(target.dequeue_up_to(10)).tolist())
    assert got == [10, 20, 30, 40, 50]
    assert runner.exceptions_raised == []


# --- API ---------------------------------------------------------------------------------------

@SIDES
def test_create_threads_returns_nothing_for_a_session_it_already_runs_in(tf):
    with tf_real.Graph().as_default():
        queue, runner = fed_queue(tf, capacity=2, threads=2)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            coord = tf.train.Coordinator()
            threads = runner.create_threads(sess, coord=coord, daemon=True, start=True)
            assert len(threads) == 3 and all(thread.daemon for thread in threads)
            assert runner.create_threads(sess, coord=coord, start=True) == []
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    assert not runner_threads_alive()


@SIDES
def test_runner_properties_and_validation(tf):
    with tf_real.Graph().as_default():
        queue, runner = fed_queue(tf, threads=2)
        assert runner.queue is queue
        assert runner.name == queue.name
        assert len(runner.enqueue_ops) == 2
        assert runner.queue_closed_exception_types == (tf_real.errors.OutOfRangeError,)
        assert isinstance(runner.close_op, tf_real.Operation)
        assert isinstance(runner.cancel_op, tf_real.Operation)
        assert runner.cancel_op.get_attr("cancel_pending_enqueues")
        assert runner.exceptions_raised == []
        with pytest.raises(ValueError, match="Must provide queue and enqueue_ops"):
            tf.train.QueueRunner(queue, [])
        with pytest.raises(TypeError, match="queue_closed_exception_types"):
            tf.train.QueueRunner(queue, runner.enqueue_ops, queue_closed_exception_types=(KeyError,))
        custom = tf.train.QueueRunner(
            queue, runner.enqueue_ops,
            queue_closed_exception_types=(tf_real.errors.OutOfRangeError,
                                          tf_real.errors.CancelledError))
        assert custom.queue_closed_exception_types[1] is tf_real.errors.CancelledError


@SIDES
def test_to_proto_and_from_proto_round_trip(tf):
    with tf_real.Graph().as_default():
        queue, runner = fed_queue(tf, threads=2)
        proto = runner.to_proto()
        assert proto.queue_name == queue.name
        assert list(proto.enqueue_op_name) == [op.name for op in runner.enqueue_ops]
        restored = tf.train.QueueRunner.from_proto(proto)
        assert [op.name for op in restored.enqueue_ops] == list(proto.enqueue_op_name)
        assert restored.close_op.name == runner.close_op.name
        assert restored.cancel_op.name == runner.cancel_op.name
        # The meta graph export goes through the registered proto functions.
        meta = tf.train.export_meta_graph()
        assert tf.GraphKeys.QUEUE_RUNNERS in meta.collection_def


@SIDES
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_exceptions_raised_without_a_coordinator(tf):
    # Without a Coordinator TF1 records the error and re-raises it in the runner thread.
    with tf_real.Graph().as_default():
        value = tf.placeholder(tf.float32, [])
        queue = tf.FIFOQueue(4, [tf.float32], shapes=[[]])
        runner = tf.train.QueueRunner(queue, [queue.enqueue([value])])
        with tf.Session() as sess:
            threads = runner.create_threads(sess, start=True)
            for thread in threads:
                thread.join(20)
    assert len(runner.exceptions_raised) == 1
    assert isinstance(runner.exceptions_raised[0], tf_real.errors.InvalidArgumentError)


@SIDES
def test_start_queue_runners_arguments(tf):
    with tf_real.Graph().as_default():
        fed_queue(tf, threads=1)
        with pytest.raises(ValueError, match="No default session"):
            tf.train.start_queue_runners()
        with pytest.raises(TypeError, match="sess must be a `tf.Session`"):
            tf.train.start_queue_runners(sess=object())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            coord = tf.train.Coordinator()
            with sess.as_default():
                threads = tf.train.start_queue_runners(coord=coord, daemon=False, start=False)
            assert len(threads) == 2 and not any(t.is_alive() for t in threads)
            assert not any(thread.daemon for thread in threads)
            for thread in threads:
                thread.start()
            other = tf.train.start_queue_runners(sess, coord, collection="no_such_collection")
            assert other == []
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)


def test_compiled_queue_runner_starts_no_thread():
    with tf_real.Graph().as_default():
        index = shim_tf.train.range_input_producer(5, num_epochs=1, shuffle=False).dequeue()
        queue = shim_tf.FIFOQueue(4, [shim_tf.int32], shapes=[[]])
        runner = shim_tf.train.QueueRunner(queue, [queue.enqueue([index])] * 3)
        shim_tf.train.add_queue_runner(runner)
        batch = queue.dequeue_up_to(2)
        with shim_tf.Session() as sess:
            coord = shim_tf.train.Coordinator()
            assert shim_tf.train.start_queue_runners(sess, coord) == []
            got = [sess.run(batch).tolist() for _ in range(3)]
            with pytest.raises(tf_real.errors.OutOfRangeError):
                sess.run(batch)
            coord.request_stop()
            coord.join([])
    assert sorted(sum(got, [])) == [0, 1, 2, 3, 4]
    assert isinstance(runner, legacy_tf.train.QueueRunner)


# --- subclassing (TF Estimator's feeding runner) -----------------------------------------------

def feeding_runner_class(tf):
    """TF Estimator's `_FeedingQueueRunner`, reduced: overrides `_run` and `create_threads`
    and relies on the base class's private attributes, as the original does."""

    class FeedingQueueRunner(tf.train.QueueRunner):
        def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                     feed_fns=None, queue_closed_exception_types=None):
            super().__init__(queue, enqueue_ops, close_op, cancel_op,
                             queue_closed_exception_types=queue_closed_exception_types)
            self._feed_fns = feed_fns

        def _run(self, sess, enqueue_op, feed_fn, coord=None):
            if coord:
                coord.register_thread(threading.current_thread())
            decremented = False
            try:
                while True:
                    if coord and coord.should_stop():
                        break
                    try:
                        sess.run(enqueue_op, feed_dict=feed_fn())
                    except (tf_real.errors.OutOfRangeError, tf_real.errors.CancelledError):
                        with self._lock:
                            self._runs_per_session[sess] -= 1
                            decremented = True
                            if self._runs_per_session[sess] == 0:
                                try:
                                    sess.run(self._close_op)
                                except Exception:  # noqa: BLE001
                                    pass
                        return
            except Exception as error:  # noqa: BLE001
                if coord:
                    coord.request_stop(error)
                else:
                    with self._lock:
                        self._exceptions_raised.append(error)
                    raise
            finally:
                if not decremented:
                    with self._lock:
                        self._runs_per_session[sess] -= 1

        def create_threads(self, sess, coord=None, daemon=False, start=False):
            with self._lock:
                if self._runs_per_session.get(sess, 0) > 0:
                    return []
                self._runs_per_session[sess] = len(self._enqueue_ops)
                self._exceptions_raised = []
            threads = [threading.Thread(target=self._run, args=(sess, op, fn, coord))
                       for op, fn in zip(self._enqueue_ops, self._feed_fns)]
            if coord:
                threads.append(threading.Thread(target=self._close_on_stop,
                                                args=(sess, self._cancel_op, coord)))
            for thread in threads:
                thread.daemon = daemon
                if start:
                    thread.start()
            return threads

    return FeedingQueueRunner


@SIDES
def test_estimator_style_subclass_feeds_from_python(tf):
    with tf_real.Graph().as_default():
        value = tf.placeholder(tf.int64, [None])
        queue = tf.FIFOQueue(8, [tf.int64], shapes=[[]])
        enqueue = queue.enqueue_many([value])
        lock = threading.Lock()
        chunks = iter(np.arange(40, dtype=np.int64).reshape(10, 4))

        def feed_fn():
            with lock:
                chunk = next(chunks, None)
            if chunk is None:
                raise tf_real.errors.OutOfRangeError(None, None, "fed everything")
            return {value: chunk}

        runner = feeding_runner_class(tf)(queue, [enqueue] * 2, feed_fns=[feed_fn] * 2)
        tf.train.add_queue_runner(runner)
        batch = queue.dequeue_up_to(6)
        got = []
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            try:
                while True:
                    got.extend(sess.run(batch).tolist())
            except tf_real.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    assert sorted(got) == list(range(40))


@SIDES
def test_subclass_whose_run_raises_reaches_coord_join(tf):
    class BrokenRunner(tf.train.QueueRunner):
        def _run(self, sess, enqueue_op, coord=None):
            try:
                raise LookupError("feeder lost its input")
            except LookupError as error:
                coord.request_stop(error)

    with tf_real.Graph().as_default():
        queue, _ = fed_queue(tf, threads=1)
        runner = BrokenRunner(queue, [queue.enqueue([1])])
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = runner.create_threads(sess, coord=coord, start=True)
            with pytest.raises(LookupError, match="lost its input"):
                coord.join(threads, stop_grace_period_secs=10)


# --- eager ---------------------------------------------------------------------------------------

@pytest.mark.eager
def test_eager_queue_runner_runs_callables_until_out_of_range():
    assert tf_real.executing_eagerly()
    queue = shim_tf.FIFOQueue(4, [shim_tf.int32], shapes=[[]])
    lock = threading.Lock()
    source = iter(range(30))

    def enqueue_next():
        with lock:
            item = next(source, None)
        if item is None:
            raise tf_real.errors.OutOfRangeError(None, None, "source exhausted")
        queue.enqueue(item)

    runner = shim_tf.train.QueueRunner(queue, [enqueue_next] * 3)
    shim_tf.train.add_queue_runner(runner, collection="eager_test_runners")
    coord = shim_tf.train.Coordinator()
    threads = shim_tf.train.start_queue_runners(coord=coord, collection="eager_test_runners")
    assert len(threads) == 4
    got = []
    try:
        while True:
            got.append(int(queue.dequeue()))
    except tf_real.errors.OutOfRangeError:
        pass
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=10)
    assert sorted(got) == list(range(30))
    assert bool(queue.is_closed())
    assert not runner_threads_alive()


@pytest.mark.eager
def test_eager_queue_runner_refuses_values_as_enqueue_ops():
    queue = shim_tf.FIFOQueue(4, [shim_tf.int32], shapes=[[]])
    with pytest.raises(TypeError, match="callables"):
        shim_tf.train.QueueRunner(queue, [queue.enqueue(1)])


def test_module_paths_resolve_to_the_shim():
    from compat._runtime import queue_runner, queues
    assert shim_tf.train.queue_runner.QueueRunner is queue_runner.QueueRunner
    assert shim_tf.train.queue_runner.add_queue_runner is queue_runner.add_queue_runner
    assert shim_tf.train.queue_runner.start_queue_runners is queue_runner.start_queue_runners
    assert shim_tf.train.QueueRunner is queue_runner.QueueRunner
    for name in ("FIFOQueue", "RandomShuffleQueue", "PaddingFIFOQueue", "PriorityQueue",
                 "QueueBase"):
        assert getattr(shim_tf.queue, name) is getattr(queues, name)
        assert getattr(shim_tf, name) is getattr(queues, name)
    for name in ("RandomShuffleQueue", "PaddingFIFOQueue", "PriorityQueue", "QueueBase"):
        assert getattr(shim_tf.io, name) is getattr(queues, name)
    assert issubclass(queues.FIFOQueue, legacy_tf.queue.FIFOQueue)
    assert issubclass(queues.FIFOQueue, legacy_tf.queue.QueueBase)
