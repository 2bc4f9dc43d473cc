"""Repeated Session runs of a shim graph are prepared once: TF1's values, types and errors.

The programs here feed a queue from Python, the TF1 tutorial way (a placeholder per
component, `sess.run(enqueue, feed_dict)` once per example), and fetch from it in every
structure TF1 code passes to `Session.run`. Each runs once under TF1 and once under the shim,
where the second run of the same fetches and feed keys is prepared and later ones skip
what `Session.run` repeats (`session_runs`): results, their types and dtypes, and the
errors must not change.
"""
import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from conftest import tf_real

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(600)]


def fed_queue(tf):
    """A feeder's graph: placeholders, a FIFOQueue, its enqueue, dequeue and close."""
    features = tf.placeholder(tf.float32, [None, 3], name="features")
    label = tf.placeholder(tf.int64, [], name="label")
    caption = tf.placeholder(tf.string, [], name="caption")
    queue = tf.FIFOQueue(64, [tf.float32, tf.int64, tf.string], shapes=[[3], [], []])
    count = tf.shape(features)[0]
    enqueue = queue.enqueue_many([features, tf.fill([count], label), tf.fill([count], caption)])
    example = queue.dequeue()
    return dict(features=features, label=label, caption=caption, enqueue=enqueue,
                example=example, pair=queue.dequeue_many(2), size=queue.size(),
                close=queue.close(), total=tf.reduce_sum(features, name="total"))


def fetch_structures(graph):
    """The fetch structures TF1 code passes to `Session.run`, by name."""
    return {
        "tensor": lambda: graph["total"],
        "operation": lambda: graph["enqueue"],
        "list": lambda: [graph["size"], graph["total"]],
        "tuple": lambda: (graph["total"], graph["enqueue"]),
        "list as tuple": lambda: (graph["size"], graph["total"]),
        "dict": lambda: {"size": graph["size"], "total": graph["total"]},
        "dequeue": lambda: graph["example"],
        "nested": lambda: [graph["example"], graph["total"]],
    }


def feed_values(kind, step):
    rows = [[step, step + 0.5, -step]] * (1 + step % 2)
    values = {"numpy": np.asarray(rows, np.float32), "list": rows,
              "float64": np.asarray(rows, np.float64)}
    return values[kind], step, f"caption {step}" if step % 2 else b"bytes %d" % step


def run_steps(tf, steps):
    """Run `steps` ((fetch structure, feed kind) pairs) and return every result or error."""
    outcomes = []
    with tf_real.Graph().as_default():
        graph = fed_queue(tf)
        fetches = fetch_structures(graph)
        with tf.Session() as sess:
            for step, (structure, kind) in enumerate(steps):
                features, label, caption = feed_values(kind, step)
                feeds = {graph["features"]: features, graph["label"]: label,
                         graph["caption"]: caption}
                if structure in ("dequeue", "nested") and sess.run(graph["size"]) == 0:
                    sess.run(graph["enqueue"], feeds)
                outcomes.append(outcome(lambda: sess.run(fetches[structure](), feeds)))
            sess.run(graph["close"])
            while True:
                outcomes.append(outcome(lambda: sess.run(graph["example"])))
                if isinstance(outcomes[-1], tuple) and outcomes[-1][0] == "error":
                    break
            made = prepared_runs(sess)
    return outcomes, made


def outcome(run):
    """What a run returned, or its error as (type, message's first line, op name)."""
    try:
        return run()
    except Exception as error:  # noqa: BLE001 - compared with TF1's
        op = getattr(error, "op", None)
        return ("error", type(error).__name__, str(error).split("\n")[0],
                None if op is None else op.name)


def prepared_runs(sess):
    from compat._runtime import session_runs
    return session_runs.prepared_runs(sess)


def assert_same(expected, got, where="result"):
    assert type(got) is type(expected), (where, expected, got)
    if isinstance(expected, dict):
        assert list(got) == list(expected), where
        for name in expected:
            assert_same(expected[name], got[name], f"{where}[{name!r}]")
    elif isinstance(expected, (list, tuple)):
        assert len(got) == len(expected), (where, expected, got)
        for index, (want, have) in enumerate(zip(expected, got)):
            assert_same(want, have, f"{where}[{index}]")
    elif isinstance(expected, np.ndarray):
        assert got.dtype == expected.dtype and got.shape == expected.shape, (where, got)
        np.testing.assert_array_equal(got, expected, err_msg=where)
    else:
        assert got == expected, (where, expected, got)


@settings(max_examples=12, deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from(
    ["tensor", "operation", "list", "tuple", "list as tuple", "dict", "dequeue", "nested"]),
    st.sampled_from(["numpy", "list", "float64"])), min_size=1, max_size=12))
def test_repeated_runs_return_what_tf1s_return(steps, legacy, shim):
    expected, _ = run_steps(legacy, steps)
    got, _ = run_steps(shim, steps)
    assert_same(expected, got)


def test_runs_repeated_by_a_training_loop_are_prepared(legacy, shim):
    """The loop of a TF1 program: the same fetches and feeds, step after step."""
    steps = [("list", "numpy"), ("tensor", "list"), ("operation", "numpy"), ("dict", "numpy"),
             ("list as tuple", "numpy")] * 4
    expected, made_by_tf1 = run_steps(legacy, steps)
    got, made = run_steps(shim, steps)
    assert_same(expected, got)
    assert made_by_tf1 == 0 and made >= 5  # the one signature not made is the nested list


@pytest.mark.parametrize("bad_feed", ["shape", "int_overflow", "tensor", "string_for_float",
                                      "unknown_key"])
def test_a_bad_feed_after_good_runs_raises_tf1s_error(bad_feed, legacy, shim):
    def run(tf):
        with tf_real.Graph().as_default():
            graph = fed_queue(tf)
            with tf.Session() as sess:
                def feeds(changes=()):
                    values = {graph["features"]: np.ones([1, 3], np.float32),
                              graph["label"]: 1, graph["caption"]: "good"}
                    values.update(changes)
                    return values
                good = [sess.run([graph["total"], graph["enqueue"]], feeds()) for _ in range(3)]
                bad = {
                    "shape": lambda: feeds({graph["features"]: np.ones([2, 4])}),
                    "int_overflow": lambda: feeds({graph["label"]: 2 ** 70}),
                    "tensor": lambda: feeds({graph["label"]: tf.constant(3, tf.int64)}),
                    "string_for_float": lambda: feeds({graph["features"]: [["a", "b", "c"]]}),
                    "unknown_key": lambda: {**feeds(), "no such tensor:0": 1},
                }[bad_feed]()
                error = outcome(lambda: sess.run([graph["total"], graph["enqueue"]], bad))
                after = sess.run([graph["total"], graph["enqueue"]], feeds())
                return good, error[:3], after, sess.run(graph["size"]), prepared_runs(sess)

    *expected, _ = run(legacy)
    *got, made = run(shim)
    assert_same(expected, got)
    assert expected[1][0] == "error"
    assert made == 1


def test_a_feeder_thread_and_a_blocked_consumer_deliver_every_example_in_order(legacy, shim):
    """The feeder's enqueue and the consumer's dequeue_many block on each other: each run
    must let the other thread go on while it waits (as TF1's runs do)."""
    examples = np.arange(600, dtype=np.float32).reshape(200, 3)

    def run(tf):
        with tf_real.Graph().as_default():
            graph = fed_queue(tf)
            with tf.Session() as sess:
                def feed():
                    for index, row in enumerate(examples):
                        sess.run(graph["enqueue"], {graph["features"]: row[None],
                                                    graph["label"]: index,
                                                    graph["caption"]: str(index)})
                    sess.run(graph["close"])
                feeder = threading.Thread(target=feed, daemon=True)
                feeder.start()
                batches = []
                while True:
                    value = outcome(lambda: sess.run(graph["pair"]))
                    batches.append(value)
                    if isinstance(value, tuple) and value[0] == "error":
                        break
                feeder.join(timeout=60)
                assert not feeder.is_alive()
                return batches, prepared_runs(sess)

    expected, _ = run(legacy)
    got, made = run(shim)
    assert_same(expected, got)
    assert len(got) == 101 and made == 2


def test_ops_added_between_runs_run_as_in_tf1(legacy, shim):
    """A graph that grows after its runs: the old fetches and the new both keep TF1's values."""
    def run(tf):
        with tf_real.Graph().as_default():
            graph = fed_queue(tf)
            feeds = {graph["features"]: np.ones([2, 3], np.float32), graph["label"]: 3,
                     graph["caption"]: "x"}
            values = []
            with tf.Session() as sess:
                for round_ in range(3):
                    for _ in range(3):
                        values.append(sess.run([graph["total"], graph["enqueue"]], feeds))
                        values.append(sess.run(graph["size"]))
                    graph[f"more {round_}"] = graph["total"] * (round_ + 2.0)
                    for _ in range(3):
                        values.append(sess.run([graph[f"more {round_}"], graph["size"]], feeds))
                values.append(sess.run(graph["pair"]))
        return values

    assert_same(run(legacy), run(shim))


def test_a_fed_tensor_that_is_fetched_returns_the_fed_value(legacy, shim):
    def run(tf):
        with tf_real.Graph().as_default():
            graph = fed_queue(tf)
            with tf.Session() as sess:
                feeds = {graph["features"]: [[1, 2, 3]], graph["label"]: 5, graph["caption"]: "c"}
                return [sess.run([graph["features"], graph["total"], graph["label"]],
                                 feeds) for _ in range(4)]

    assert_same(run(legacy), run(shim))


def test_each_session_of_a_graph_runs_its_own_steps(legacy, shim):
    """Two Sessions of one graph, one after the other and the second closed in the middle."""
    def run(tf):
        with tf_real.Graph().as_default():
            graph = fed_queue(tf)
            feeds = {graph["features"]: [[1, 2, 3]], graph["label"]: 5, graph["caption"]: "c"}
            values = []
            for _ in range(2):
                sess = tf.Session()
                for _ in range(3):
                    values.append(sess.run([graph["enqueue"], graph["total"]], feeds))
                    values.append(sess.run(graph["size"]))
                sess.close()
                values.append(outcome(lambda: sess.run([graph["enqueue"], graph["total"]],
                                                       feeds)))
        return values

    expected, got = run(legacy), run(shim)
    assert_same(expected, got)
    assert expected[6][0] == "error"


def test_a_feeder_reusing_one_buffer_queues_each_value_as_fed(legacy, shim):
    """A feeder that fills one numpy buffer per example: each enqueue keeps what was fed."""
    def run(tf):
        with tf_real.Graph().as_default():
            example = tf.placeholder(tf.float32, [4])
            queue = tf.FIFOQueue(10, [tf.float32], shapes=[[4]])
            enqueue, dequeue = queue.enqueue([example]), queue.dequeue()
            buffers = {"float32": np.zeros(4, np.float32), "float64": np.zeros(4, np.float64)}
            with tf.Session() as sess:
                for step in range(8):
                    fed = buffers["float64" if step % 4 == 3 else "float32"]
                    fed[:] = step
                    sess.run(enqueue, {example: fed})
                for fed in buffers.values():
                    fed[:] = 99
                return [sess.run(dequeue) for _ in range(8)]

    assert_same(run(legacy), run(shim))


def test_empty_fetches_run_nothing_as_in_tf1(legacy, shim):
    """`sess.run(tf.get_collection(tf.GraphKeys.UPDATE_OPS), feeds)` with nothing collected."""
    def run(tf):
        with tf_real.Graph().as_default():
            graph = fed_queue(tf)
            feeds = {graph["features"]: [[1, 2, 3]]}
            with tf.Session() as sess:
                return [outcome(lambda: sess.run(fetches, feeds))
                        for fetches in ([], {}, (), [], {}, (), [], {}, ())]

    assert_same(run(legacy), run(shim))


def test_a_fetched_dict_changed_after_its_runs(legacy, shim):
    def run(tf):
        with tf_real.Graph().as_default():
            graph = fed_queue(tf)
            feeds = {graph["features"]: [[1, 2, 3]]}
            with tf.Session() as sess:
                names = {"total": graph["total"], "twice": graph["total"] * 2}
                values = [sess.run(names, feeds) for _ in range(3)]
                twice = names.pop("twice")
                values.append(sess.run({"total": graph["total"], "twice": twice}, feeds))
                values.append(sess.run(names, feeds))
                # Equal names of other types name other results.
                for name in (1, True, 1.0, 1, True):
                    values.append(sess.run({name: graph["total"]}, feeds))
                    values[-1] = [(type(key).__name__, key, value)
                                  for key, value in values[-1].items()]
        return values

    assert_same(run(legacy), run(shim))


@pytest.mark.parametrize("change", ["prevent_feeding", "prevent_fetching", "set_shape"])
def test_what_the_graph_refuses_after_runs_is_refused_as_in_tf1(change, legacy, shim):
    """Changes that add no op to the graph still change what a run may feed and fetch."""
    def run(tf):
        with tf_real.Graph().as_default() as g:
            graph = fed_queue(tf)
            fetches = [graph["total"], graph["size"]]
            feeds = {graph["features"]: np.ones([2, 3], np.float32)}
            with tf.Session() as sess:
                values = [sess.run(fetches, feeds) for _ in range(3)]
                if change == "prevent_feeding":
                    g.prevent_feeding(graph["features"])
                elif change == "prevent_fetching":
                    g.prevent_fetching(graph["total"].op)
                else:
                    graph["features"].set_shape([1, 3])
                values.append(outcome(lambda: sess.run(fetches, feeds))[:3])
        return values

    expected, got = run(legacy), run(shim)
    assert_same(expected, got)
    assert expected[-1][0] == "error"


def test_threads_running_one_fetch_prepare_it_once(shim):
    """Eight threads of one Session repeat the same run: each gets its values, and the run
    is prepared once (not once per thread that counted it)."""
    with tf_real.Graph().as_default():
        graph = fed_queue(shim)
        feeds = {graph["features"]: [[1, 2, 3]], graph["label"]: 1, graph["caption"]: "c"}
        with shim.Session() as sess:
            sess.run(graph["size"])  # a dequeue in the graph: the shim plans it
            results, errors = [], []

            def repeat():
                try:
                    for _ in range(50):
                        results.append(sess.run([graph["total"], graph["enqueue"]], feeds))
                        sess.run(graph["example"])
                except Exception as error:  # noqa: BLE001 - reported below
                    errors.append(error)
            threads = [threading.Thread(target=repeat) for _ in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=120)
            assert not errors
            assert len(results) == 400
            assert all(value[0] == 6.0 and value[1] is None for value in results)
            assert prepared_runs(sess) == 2  # the step and the dequeue (the size ran once)


def test_fetched_session_handles_stay_handles(legacy, shim):
    """`get_session_handle` fetches: each run returns a handle whose value is the tensor's."""
    def run(tf):
        with tf_real.Graph().as_default():
            graph = fed_queue(tf)
            handle = tf.get_session_handle(graph["total"])
            feeds = {graph["features"]: [[1, 2, 3]]}
            with tf.Session() as sess:
                fetched = [sess.run([handle, graph["total"]], feeds) for _ in range(4)]
                return [(type(got).__name__, got.eval(), total) for got, total in fetched]

    assert_same(run(legacy), run(shim))


def test_a_feed_conversion_unlike_tfs_own_is_not_used():
    """The prepared runs convert fed values with a faster form of TF's own conversion only
    where it gives TF's results, down to whether the array is copied."""
    from compat._runtime import session_runs

    def copying(value, dtype):
        return np.array(value, dtype=dtype)

    def not_copying(value, dtype):
        return np.asarray(value, dtype=dtype)

    def to_float64(value, dtype):
        return np.asarray(value, dtype=np.float64)

    assert session_runs._checked(not_copying, copying) is copying
    assert session_runs._checked(to_float64, copying) is copying
    assert session_runs._checked(copying, copying) is copying
    fast = session_runs._feed_array_function()
    probe = np.arange(3, dtype=np.float32)
    from tensorflow.python.client import session as tf_session
    own = getattr(tf_session, "numpy_compat", None)
    expected = np.asarray(probe, np.float32) if own is None else own.np_asarray(probe, np.float32)
    assert np.shares_memory(fast(probe, np.float32), probe) == np.shares_memory(expected, probe)


def test_run_options_and_metadata_act_as_in_tf1(legacy, shim):
    """A timeout in the run options still ends a run that waits on an empty queue, and a
    traced run still fills its metadata, also once the run is prepared."""
    def run(tf):
        with tf_real.Graph().as_default():
            graph = fed_queue(tf)
            feeds = {graph["features"]: [[1, 2, 3]], graph["label"]: 4, graph["caption"]: "c"}
            timeout = tf.RunOptions(timeout_in_ms=200)
            trace = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
            seen = []
            with tf.Session() as sess:
                for _ in range(3):
                    seen.append(sess.run([graph["total"], graph["enqueue"]], feeds,
                                         options=timeout))
                    seen.append(sess.run(graph["example"], options=timeout))
                    metadata = tf.RunMetadata()
                    seen.append(sess.run(graph["total"], feeds, options=trace,
                                         run_metadata=metadata))
                    seen.append(len(metadata.step_stats.dev_stats) > 0)
                for _ in range(2):
                    seen.append(outcome(lambda: sess.run(graph["example"], options=timeout))[:2])
                return seen, prepared_runs(sess)

    (expected, _), (got, made) = run(legacy), run(shim)
    assert_same(expected, got)
    assert expected[-1] == ("error", "DeadlineExceededError") and expected[3] is True
    assert made == 3


def test_a_monitored_session_runs_as_in_tf1(legacy, shim):
    """MonitoredSession passes run options and metadata to every run of its Session."""
    def run(tf):
        with tf_real.Graph().as_default():
            graph = fed_queue(tf)
            feeds = {graph["features"]: [[1, 2, 3]], graph["label"]: 4, graph["caption"]: "c"}
            with tf.train.MonitoredSession() as sess:
                steps = [sess.run(graph["enqueue"], feeds) for _ in range(4)]
                steps += [sess.run(graph["example"]) for _ in range(4)]
                steps.append(sess.run({"total": graph["total"]}, feeds))
                return steps

    assert_same(run(legacy), run(shim))
