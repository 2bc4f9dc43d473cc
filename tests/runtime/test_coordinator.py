"""The TF1 Coordinator and LooperThread API, under `tensorflow.compat.v1` and `compat.v1`."""
import threading
import time
import traceback

import pytest

tf_real = pytest.importorskip("tensorflow")
import tensorflow.compat.v1 as legacy_tf  # noqa: E402

import compat.v1 as shim_tf  # noqa: E402

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(60)]

SIDES = pytest.mark.parametrize("tf", [legacy_tf, shim_tf], ids=["legacy", "shim"])


def _fail_in_thread(coord):
    with coord.stop_on_exception():
        raise_deep_error()


def raise_deep_error():
    raise ValueError("broken record 17")


@SIDES
def test_join_reraises_the_requested_exception_with_its_type_and_traceback(tf):
    coord = tf.train.Coordinator()
    thread = threading.Thread(target=_fail_in_thread, args=(coord,))
    coord.register_thread(thread)
    thread.start()
    assert coord.wait_for_stop(10)
    assert coord.should_stop()
    with pytest.raises(ValueError, match="broken record 17") as caught:
        coord.join()
    frames = [frame.name for frame in traceback.extract_tb(caught.value.__traceback__)]
    assert "raise_deep_error" in frames, "the original traceback must survive"
    assert coord.joined


@SIDES
def test_out_of_range_counts_as_a_clean_stop(tf):
    coord = tf.train.Coordinator()
    coord.request_stop(tf.errors.OutOfRangeError(None, None, "end of input"))
    assert coord.should_stop()
    coord.join([])  # does not raise
    coord.raise_requested_exception()


@SIDES
def test_first_exception_wins_and_raise_requested_exception_raises_it(tf):
    coord = tf.train.Coordinator()
    try:
        raise KeyError("first")
    except KeyError as error:
        coord.request_stop(error)
    coord.request_stop(TypeError("second"))
    with pytest.raises(KeyError):
        coord.raise_requested_exception()


@SIDES
def test_clear_stop_allows_a_restart(tf):
    coord = tf.train.Coordinator()
    coord.request_stop()
    assert coord.should_stop()
    coord.join([])
    coord.clear_stop()
    assert not coord.should_stop() and not coord.joined
    assert not coord.wait_for_stop(0.01)


@SIDES
def test_join_with_a_thread_that_ignores_the_stop(tf):
    coord = tf.train.Coordinator()
    release = threading.Event()
    stubborn = threading.Thread(target=release.wait, args=(20,), daemon=True)
    stubborn.start()
    coord.request_stop()
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="Coordinator stopped with threads still running"):
        coord.join([stubborn], stop_grace_period_secs=0.3)
    assert time.monotonic() - started < 5
    coord.clear_stop()
    coord.request_stop()
    coord.join([stubborn], stop_grace_period_secs=0.1, ignore_live_threads=True)
    release.set()
    stubborn.join(5)


@SIDES
def test_join_waits_for_registered_and_listed_threads(tf):
    coord = tf.train.Coordinator()
    done = []

    def worker(index):
        while not coord.should_stop():
            time.sleep(0.005)
        done.append(index)

    registered = threading.Thread(target=worker, args=(0,))
    listed = threading.Thread(target=worker, args=(1,))
    coord.register_thread(registered)
    registered.start()
    listed.start()
    coord.request_stop()
    coord.join([listed], stop_grace_period_secs=10)
    assert sorted(done) == [0, 1]


@SIDES
def test_stop_on_exception_does_not_swallow_clean_exit(tf):
    coord = tf.train.Coordinator()
    with coord.stop_on_exception():
        pass
    assert not coord.should_stop()
    with coord.stop_on_exception():
        raise tf.errors.OutOfRangeError(None, None, "done")
    assert coord.should_stop()
    coord.join([])


@SIDES
def test_looper_thread_runs_target_until_stop(tf):
    coord = tf.train.Coordinator()
    calls = []
    looper = tf.train.LooperThread.loop(coord, 0.01, target=calls.append, args=("tick",))
    deadline = time.monotonic() + 10
    while len(calls) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    coord.request_stop()
    coord.join([looper], stop_grace_period_secs=10)
    assert len(calls) >= 3 and set(calls) == {"tick"}
    assert not looper.is_alive()


def test_shim_names_are_tensorflow_classes():
    assert shim_tf.train.Coordinator is legacy_tf.train.Coordinator
    assert shim_tf.train.LooperThread is legacy_tf.train.LooperThread
