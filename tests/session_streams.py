"""Legacy pipelines read as a TF1 program reads them: each fetch until OutOfRangeError."""
import numpy as np
import tensorflow as tf_real


def run_stream(tf, build, max_steps=10_000, graph_seed=None, initialize_tables=False,
               graph=None, config=None):
    """Fetch `build(tf)`'s tensors until OutOfRangeError; return the list of fetched values.

    Errors other than OutOfRangeError propagate, so tests can compare error types.
    initialize_tables: also run `tables_initializer()` first (before the queue runners).
    graph: the graph to build in (a new one by default), for tests that inspect it after.
    config: the Session's ConfigProto.
    """
    with (graph if graph is not None else tf_real.Graph()).as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        fetches = build(tf)
        values = []
        with tf.Session(config=config) as sess:
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


def stream_until_error(tf, build):
    """The values fetched before the pipeline failed, and the error (None when it ended):
    raised by a run, or by the queue runners at `coord.join`, where TF1 reports a reader's."""
    values, at_run, at_join = stream_and_error_points(tf, build)
    if isinstance(at_run, tf_real.errors.OutOfRangeError):
        at_run = None
    return values, at_run or at_join


def stream_and_error_points(tf, build):
    """The values fetched until a run raised, the error that run raised (OutOfRangeError
    included), and the error `coord.join` raised (None where none did)."""
    values, at_run, at_join = [], None, None
    with tf_real.Graph().as_default():
        fetches = build(tf)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            try:
                while True:
                    values.append(sess.run(fetches))
            except tf_real.errors.OpError as raised:
                at_run = raised
            coord.request_stop()
            try:
                coord.join(threads, stop_grace_period_secs=10)
            except tf_real.errors.OpError as raised:
                at_join = raised
    return values, at_run, at_join


def drain_consumers(tf, build, max_steps=500):
    """Fetch each of `build(tf)`'s consumers in turn until all have ended; return, per
    consumer, the values it delivered (flattened)."""
    with tf_real.Graph().as_default():
        consumers = build(tf)
        delivered = [[] for _ in consumers]
        ended = [False] * len(consumers)
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            try:
                for _ in range(max_steps):
                    if all(ended):
                        break
                    for index, fetch in enumerate(consumers):
                        if ended[index]:
                            continue
                        try:
                            delivered[index].extend(np.asarray(sess.run(fetch)).ravel().tolist())
                        except tf_real.errors.OutOfRangeError:
                            ended[index] = True
            finally:
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=10)
    return delivered
