"""The classic TF1 MNIST queue pipeline ("Learning TensorFlow", ch. 8), unchanged but for the import.

    string_input_producer -> TFRecordReader.read -> parse_single_example -> decode_raw
    -> shuffle_batch, driven by Coordinator + start_queue_runners, a softmax regression
    trained until OutOfRangeError.

Run it:  python examples/mnist_queue_pipeline.py            (under compat.v1, the shim)
         python examples/mnist_queue_pipeline.py --legacy   (under tensorflow.compat.v1)

The data is MNIST-shaped and synthetic (written once to a temporary TFRecord file), so the
example needs no download. `build(tf)` is the pipeline alone, for the regression harness:
    python -m compat.harness examples/mnist_queue_pipeline.py:build
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

DEFAULT_RECORDS = 10_000
DEFAULT_EPOCHS = 10


def write_mnist_like_tfrecord(path, num_records=DEFAULT_RECORDS, seed=0):
    """Write `num_records` 28x28 uint8 images with labels, MNIST's TFRecord layout."""
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, size=num_records)
    # Each digit gets a distinct bright band, so the model has something to learn.
    images = rng.integers(0, 64, size=(num_records, 784), dtype=np.uint8)
    for label in range(10):
        images[labels == label, label * 78:(label + 1) * 78] += 160
    tmp_path = f"{path}.tmp{os.getpid()}"
    with tf.io.TFRecordWriter(tmp_path) as writer:
        for image, label in zip(images, labels):
            example = tf.train.Example(features=tf.train.Features(feature={
                "image_raw": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image.tobytes()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)])),
            }))
            writer.write(example.SerializeToString())
    os.replace(tmp_path, path)
    return path


def default_data_file(num_records=DEFAULT_RECORDS):
    path = os.path.join(tempfile.gettempdir(), f"compat_example_mnist_{num_records}.tfrecord")
    if not os.path.exists(path):
        write_mnist_like_tfrecord(path, num_records)
    return path


def build(tf, path=None, num_epochs=DEFAULT_EPOCHS, batch_size=128):
    """The legacy input pipeline; returns (images, labels) batches."""
    path = path or default_data_file()
    queue = tf.train.string_input_producer([path], num_epochs=num_epochs)
    _, serialized = tf.TFRecordReader().read(queue)
    features = tf.parse_single_example(serialized, features={
        "image_raw": tf.FixedLenFeature([], tf.string),
        "label": tf.FixedLenFeature([], tf.int64)})
    image = tf.cast(tf.decode_raw(features["image_raw"], tf.uint8), tf.float32) / 255. - 0.5
    image.set_shape([784])
    label = tf.cast(features["label"], tf.int32)
    images, labels = tf.train.shuffle_batch([image, label], batch_size=batch_size,
                                            capacity=2000, min_after_dequeue=1000)
    return images, labels


def train(tf, path=None, num_epochs=DEFAULT_EPOCHS):
    """Softmax regression on the pipeline; returns (records, seconds, final loss)."""
    with tf.Graph().as_default():
        images, labels = build(tf, path, num_epochs)
        weights = tf.Variable(tf.zeros([784, 10]))
        bias = tf.Variable(tf.zeros([10]))
        logits = tf.matmul(images, weights) + bias
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        batch_size = tf.shape(labels)[0]

        records, loss_value = 0, float("nan")
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            start = time.perf_counter()
            try:
                while not coord.should_stop():
                    _, loss_value, size = sess.run([train_op, loss, batch_size])
                    records += size
            except tf.errors.OutOfRangeError:
                pass
            finally:
                coord.request_stop()
            coord.join(threads)
            seconds = time.perf_counter() - start
    return records, seconds, loss_value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--legacy", action="store_true",
                        help="run under tensorflow.compat.v1 queues instead of the shim")
    parser.add_argument("--epochs", type=int, default=DEFAULT_EPOCHS)
    args = parser.parse_args(argv)
    if args.legacy:
        import tensorflow.compat.v1 as tf
    else:
        import compat.v1 as tf
    tf.disable_v2_behavior()
    records, seconds, loss = train(tf, num_epochs=args.epochs)
    side = "tensorflow.compat.v1 (legacy queues)" if args.legacy else "compat.v1 (tf.data)"
    print(f"{side}: trained on {records} records in {seconds:.2f} s "
          f"({records / seconds:,.0f} records/s), final loss {loss:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
