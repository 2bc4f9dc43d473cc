"""A legacy pipeline's stream as a TF1 program reads it: every fetch until OutOfRangeError."""
import tensorflow as tf_real


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
