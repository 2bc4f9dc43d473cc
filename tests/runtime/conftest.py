"""Fixtures for the runtime tests: run one legacy pipeline function under a given `tf`.

Every semantic test runs the same function twice, with `tensorflow.compat.v1` (the oracle)
and with `compat.v1` (the shim), each in its own graph and session.
"""
import pytest

tf_real = pytest.importorskip("tensorflow")


@pytest.fixture(scope="session")
def legacy():
    import tensorflow.compat.v1 as tf_v1
    return tf_v1


@pytest.fixture(scope="session")
def shim():
    import compat.v1 as tf_shim
    return tf_shim


def run_stream(tf, build, max_steps=10_000, graph_seed=None, initialize_tables=False):
    """Fetch `build(tf)`'s tensors until OutOfRangeError; return the list of fetched values.

    Errors other than OutOfRangeError propagate, so tests can compare error types.
    initialize_tables: also run `tables_initializer()` first (before the queue runners).
    """
    with tf_real.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        fetches = build(tf)
        values = []
        with tf.Session() as sess:
            initializers = [tf.global_variables_initializer(), tf.local_variables_initializer()]
            if initialize_tables:
                initializers.append(tf.tables_initializer())
            sess.run(initializers)
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            try:
                for _ in range(max_steps):
                    values.append(sess.run(fetches))
            except tf_real.errors.OutOfRangeError:
                pass
            finally:
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=10)
    return values


def build_error(tf, build):
    """The exception `build(tf)` raises while building the graph, or None."""
    with tf_real.Graph().as_default():
        try:
            build(tf)
        except Exception as error:  # noqa: BLE001 - the type is what the tests compare
            return error
    return None


@pytest.fixture(autouse=True)
def _under_each_tf_behavior(tf_behavior):
    """Every test here runs after `disable_v2_behavior()` and in TF2 graph mode."""
    return tf_behavior
