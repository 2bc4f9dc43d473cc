"""`Session.close()` from another thread cancels a run blocked on the pipeline at once, as
TF1's close cancels a blocked dequeue (the watchdog pattern), and close itself returns.

Each program runs under TF1's queues and under the shim: a training-loop thread blocks in
`sess.run(batch)`, a watchdog closes the Session, and the blocked run must end with TF1's
error type within a second of the close.
"""
import threading
import time

import numpy as np
import pytest

from conftest import tf_real

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(120)]

# The blocked run must end this soon after close() returns (TF1: at once).
_PROMPT_S = 1.0


def _slow_elements(seconds):
    def build(tf):
        def slow(index):
            time.sleep(seconds)
            return index
        index = tf.train.range_input_producer(100, shuffle=False).dequeue()
        value = tf.py_func(slow, [index], tf.int32, stateful=True)
        value.set_shape([])
        return tf.train.batch([value], batch_size=2)
    return build


def _starved_feeder(tf):
    """A queue fed from Python whose feeder stops after 3 elements (the batch needs 4)."""
    values = tf.placeholder(tf.float32, [None])
    queue = tf.FIFOQueue(16, [tf.float32], shapes=[[]])
    enqueue = queue.enqueue_many([values])
    batch = tf.train.batch([queue.dequeue()], batch_size=4)

    def feed(sess):
        sess.run(enqueue, {values: np.arange(3, dtype=np.float32)})
    return batch, feed


def _blocked_run_then_close(tf, build, feeder=False):
    """(the error the blocked run ended with, seconds from close() returning to the run
    ending, seconds close() took)."""
    with tf_real.Graph().as_default():
        if feeder:
            fetch, feed = build(tf)
        else:
            fetch, feed = build(tf), None
        sess = tf.Session()
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        if feed is not None:
            feed(sess)
        outcome = {}

        def training_loop():
            try:
                sess.run(fetch)
                outcome["error"] = None
            except Exception as error:  # noqa: BLE001 - the type is what the test compares
                outcome["error"] = error
            outcome["ended"] = time.monotonic()

        loop = threading.Thread(target=training_loop, daemon=True)
        loop.start()
        time.sleep(0.5)
        assert loop.is_alive(), "the run did not block"
        began = time.monotonic()
        sess.close()
        closed = time.monotonic()
        loop.join(60)
        coord.request_stop()
        assert "ended" in outcome, "the blocked run never ended"
        return outcome["error"], outcome["ended"] - closed, closed - began


@pytest.mark.parametrize("build", [_slow_elements(3.0)], ids=["slow_py_func"])
def test_close_cancels_a_run_waiting_for_a_slow_element(legacy, shim, build):
    expected, expected_latency, _ = _blocked_run_then_close(legacy, build)
    assert isinstance(expected, tf_real.errors.CancelledError)
    assert expected_latency < _PROMPT_S  # TF1's: at once
    error, latency, close_took = _blocked_run_then_close(shim, build)
    assert type(error) is type(expected), error
    assert latency < _PROMPT_S and close_took < _PROMPT_S


def test_close_cancels_a_run_waiting_on_a_starved_python_feeder(legacy, shim):
    expected, expected_latency, _ = _blocked_run_then_close(legacy, _starved_feeder,
                                                            feeder=True)
    assert isinstance(expected, tf_real.errors.CancelledError)
    error, latency, close_took = _blocked_run_then_close(shim, _starved_feeder, feeder=True)
    assert type(error) is type(expected), error
    assert latency < _PROMPT_S and close_took < _PROMPT_S


def test_close_returns_and_cancels_with_an_element_that_never_comes(shim):
    """A py_func that never returns: TF1's close would wait for it forever (not run here);
    the shim's close returns and the run ends with TF1's CancelledError."""
    release = threading.Event()

    def build(tf):
        def stuck(index):
            release.wait(60)
            return index
        index = tf.train.range_input_producer(10, shuffle=False).dequeue()
        value = tf.py_func(stuck, [index], tf.int32, stateful=True)
        value.set_shape([])
        return tf.train.batch([value], batch_size=2)

    try:
        error, latency, close_took = _blocked_run_then_close(shim, build)
    finally:
        release.set()  # let the abandoned py_func return before the process ends
    assert isinstance(error, tf_real.errors.CancelledError)
    assert latency < _PROMPT_S and close_took < _PROMPT_S
