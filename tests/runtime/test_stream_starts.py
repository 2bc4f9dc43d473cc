"""The stream of a batch of fed size is made by its queue runner (`stream_starts`).

TF1's batch adds a QueueRunner whose thread prepares the per-element ops; the shim's batch of
fed size adds a `Starter`, whose run makes the batch's input stream, so that the batch's own
runs, under any fetch, never prepare the stream's functions again. The batches stay TF1's
under several fetch signatures; a read waits, in the graph, for a started runner, and names
the fix where no runner started (TF1 waits for ever there).
"""
import threading

import numpy as np
import pytest

from conftest import tf_real

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(300)]

SIZES = [3, 2, 4, 1]


def _fed_batch(tf, records=12):
    index = tf.train.range_input_producer(records, num_epochs=1, shuffle=False).dequeue()
    size = tf.placeholder(tf.int32, [], name="batch_size")
    batch = tf.train.batch([index, tf.fill([2], index * 10)], size,
                           allow_smaller_final_batch=True)
    return size, batch


def _batches_under_two_signatures(tf):
    """Batches at SIZES, each other run fetching the batch's mean too (a new signature)."""
    with tf_real.Graph().as_default():
        size, batch = _fed_batch(tf)
        mean = tf.reduce_mean(tf.cast(batch[1], tf.float32))
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            got = []
            for step, value in enumerate(SIZES):
                fetches = batch if step % 2 == 0 else [batch, mean]
                got.append(sess.run(fetches, {size: value}))
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return got


def test_batches_under_two_fetch_signatures_are_tf1s(legacy, shim):
    expected = _batches_under_two_signatures(legacy)
    got = _batches_under_two_signatures(shim)
    assert len(got) == len(expected) == len(SIZES)
    for want, have in zip(expected, got):
        np.testing.assert_equal(have, want)


def test_the_read_depends_on_the_owner_only_written_out(shim):
    with tf_real.Graph().as_default() as graph:
        _fed_batch(shim)
        starts = graph._compat_stream_starts  # pylint: disable=protected-access
        (read, owner), = starts.reads.items()
        assert owner not in {op.name for op in graph.get_operation_by_name(read).control_inputs}
        written = {node.name: node for node in graph.as_graph_def().node}
        assert "^" + owner in written[read].input
        runners = graph.get_collection(tf_real.compat.v1.GraphKeys.QUEUE_RUNNERS)
        assert starts.starters[0] in runners


def test_a_read_before_the_runners_start_names_the_fix(shim):
    with tf_real.Graph().as_default():
        size, batch = _fed_batch(shim)
        with shim.Session() as sess:
            sess.run(shim.local_variables_initializer())
            with pytest.raises(tf_real.errors.FailedPreconditionError,
                               match="start_queue_runners") as raised:
                sess.run(batch, {size: 2})
            assert "TF1's batch would wait here for ever" in raised.value.message
            coord = shim.train.Coordinator()
            threads = shim.train.start_queue_runners(sess=sess, coord=coord)
            assert [int(value) for value in sess.run(batch, {size: 2})[0]] == [0, 1]
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)


def test_a_runner_stopped_before_it_ran_says_so(shim):
    with tf_real.Graph().as_default():
        size, batch = _fed_batch(shim)
        with shim.Session() as sess:
            sess.run(shim.local_variables_initializer())
            coord = shim.train.Coordinator()
            coord.request_stop()
            threads = shim.train.start_queue_runners(sess=sess, coord=coord)
            coord.join(threads, stop_grace_period_secs=10)
            with pytest.raises(tf_real.errors.FailedPreconditionError, match="was stopped"):
                sess.run(batch, {size: 2})


def _read_in_thread(sess, batch, size):
    outcome = {}

    def read():
        try:
            outcome["values"] = sess.run(batch, {size: 2})
        except tf_real.errors.OpError as error:
            outcome["error"] = error
    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread, outcome


def test_a_read_waits_for_a_runner_started_later(legacy, shim):
    with tf_real.Graph().as_default():
        size, batch = _fed_batch(legacy)
        with legacy.Session() as sess:
            sess.run(legacy.local_variables_initializer())
            coord = legacy.train.Coordinator()
            threads = legacy.train.start_queue_runners(sess=sess, coord=coord)
            expected = sess.run(batch, {size: 2})
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    with tf_real.Graph().as_default():
        size, batch = _fed_batch(shim)
        with shim.Session() as sess:
            sess.run(shim.local_variables_initializer())
            coord = shim.train.Coordinator()
            threads = shim.train.start_queue_runners(sess=sess, coord=coord, start=False)
            assert any(thread.name.endswith("start_stream") for thread in threads)
            reader, outcome = _read_in_thread(sess, batch, size)
            reader.join(1.0)
            assert reader.is_alive() and not outcome  # held until the runner runs
            for thread in threads:
                thread.start()
            reader.join(60)
            assert not reader.is_alive() and "error" not in outcome
            np.testing.assert_equal(outcome["values"], expected)
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)


def test_a_waiting_read_ends_when_its_session_closes(shim):
    with tf_real.Graph().as_default():
        size, batch = _fed_batch(shim)
        sess = shim.Session()
        sess.run(shim.local_variables_initializer())
        threads = shim.train.start_queue_runners(sess=sess, start=False)
        reader, outcome = _read_in_thread(sess, batch, size)
        reader.join(1.0)
        assert reader.is_alive() and not outcome
        sess.close()
        reader.join(60)
        assert not reader.is_alive()
        assert isinstance(outcome.get("error"), tf_real.errors.CancelledError)
        assert not any(thread.is_alive() for thread in threads)
