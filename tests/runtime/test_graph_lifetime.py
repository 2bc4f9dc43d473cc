"""Graphs holding shim pipelines are freed when the user drops them, as TF1's are."""
import gc
import resource
import weakref

import numpy as np
import pytest

from conftest import tf_real

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(600)]

PIPELINES = 50


def _build_and_run(tf, path):
    graph = tf_real.Graph()
    with graph.as_default():
        files = tf.train.string_input_producer([path], num_epochs=2, shuffle=True, seed=1)
        _, value = tf.TFRecordReader().read(files)
        image = tf.image.random_flip_left_right(
            tf.reshape(tf.decode_raw(value, tf.uint8), [4, 4, 1]), seed=2)
        # Two consumers of one stream: the plan then keeps a shared stream as well.
        first = tf.train.shuffle_batch([image], batch_size=8, capacity=64, min_after_dequeue=16)
        second = tf.train.batch([image], batch_size=tf.placeholder_with_default(4, []))
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            sess.run([first, second])
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return weakref.ref(graph)


def _peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.extended
def test_pipelines_built_in_a_loop_free_their_graphs(shim, tmp_path):
    path = str(tmp_path / "images.tfrecord")
    with tf_real.io.TFRecordWriter(path) as writer:
        for index in range(64):
            writer.write(np.full(16, index, np.uint8).tobytes())

    graphs = [_build_and_run(shim, path) for _ in range(5)]  # warm-up: caches, kernels
    gc.collect()
    rss_after_warm_up = _peak_rss_mb()
    graphs += [_build_and_run(shim, path) for _ in range(PIPELINES)]
    gc.collect()
    alive = sum(graph() is not None for graph in graphs)
    assert alive == 0, f"{alive} of {len(graphs)} graphs are still alive after gc"
    growth = _peak_rss_mb() - rss_after_warm_up
    # Each kept graph held ~5 MB here before graphs were freed; 50 stay well under 100 MB.
    assert growth < 100, f"peak RSS grew by {growth:.0f} MB over {PIPELINES} pipelines"


def _reader_pipeline(tf, path):
    files = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
    key, value = tf.TFRecordReader().read(files)
    return key, value


def _all_records(tf, fetches, graph):
    records = []
    with graph.as_default(), tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        try:
            while True:
                records.append(sess.run(fetches))
        except tf_real.errors.OutOfRangeError:
            pass
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
    return records


def test_a_graph_written_out_before_it_runs_holds_its_pipelines(legacy, shim, tmp_path):
    """A reader's stage is traced when its graph is first used; writing the graph out
    (export_meta_graph, as_graph_def) is such a use, so the exported graph runs elsewhere."""
    path = str(tmp_path / "records.tfrecord")
    with tf_real.io.TFRecordWriter(path) as writer:
        for index in range(5):
            writer.write(b"record-%d" % index)

    def exported_and_run(tf):
        with tf_real.Graph().as_default():
            key, value = _reader_pipeline(tf, path)
            meta_graph = tf.train.export_meta_graph()
            names = [key.name, value.name]
        imported = tf_real.Graph()
        with imported.as_default():
            tf_real.compat.v1.train.import_meta_graph(meta_graph)
        return _all_records(tf, [imported.get_tensor_by_name(name) for name in names],
                            imported)

    expected = exported_and_run(legacy)
    assert len(expected) == 5
    assert exported_and_run(shim) == expected
