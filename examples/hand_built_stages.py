"""Hand-built TF1 queue stages (reader -> FIFOQueue x4 threads -> RandomShuffleQueue ->
dequeue_many), unchanged but for the import.

    string_input_producer -> TextLineReader.read -> decode_csv
    -> FIFOQueue filled by QueueRunner([enqueue] * 4)
    -> RandomShuffleQueue(capacity, min_after_dequeue, seed) filled by QueueRunner([enqueue] * 2)
    -> dequeue_many(batch_size), logistic regression trained until OutOfRangeError.

Under the shim every stage compiles into one tf.data pipeline: the four enqueue threads become
a 4-way parallel map, the RandomShuffleQueue a shuffle buffer, dequeue_many a batch, and
`start_queue_runners` starts no thread.

Run it:  python examples/hand_built_stages.py            (under compat.v1, the shim)
         python examples/hand_built_stages.py --legacy   (under tensorflow.compat.v1)

The data is a few small generated CSV files. `build(tf)` is the pipeline alone, for the
regression harness:  python -m compat.harness examples/hand_built_stages.py:build
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

NUM_FILES = 4
ROWS_PER_FILE = 500
DEFAULT_EPOCHS = 3


def write_csv_files(directory, num_files=NUM_FILES, rows_per_file=ROWS_PER_FILE, seed=0):
    """CSV files with a header and rows `x0,x1,label`, label = x0 + x1 > 1."""
    rng = np.random.default_rng(seed)
    os.makedirs(directory, exist_ok=True)
    paths = []
    for index in range(num_files):
        path = os.path.join(directory, f"points-{index}.csv")
        points = rng.random((rows_per_file, 2))
        labels = (points.sum(axis=1) > 1.0).astype(int)
        with open(f"{path}.tmp{os.getpid()}", "w") as handle:
            handle.write("x0,x1,label\n")
            for (x0, x1), label in zip(points, labels):
                handle.write(f"{x0:.6f},{x1:.6f},{label}\n")
        os.replace(f"{path}.tmp{os.getpid()}", path)
        paths.append(path)
    return paths


def default_data_files():
    directory = os.path.join(tempfile.gettempdir(), "compat_example_hand_built_stages")
    paths = [os.path.join(directory, f"points-{index}.csv") for index in range(NUM_FILES)]
    if not all(os.path.exists(path) for path in paths):
        paths = write_csv_files(directory)
    return paths


def build(tf, paths=None, num_epochs=DEFAULT_EPOCHS, batch_size=32):
    """The hand-built pipeline; returns (features, labels) batches."""
    paths = paths or default_data_files()
    filenames = tf.train.string_input_producer(paths, num_epochs=num_epochs, shuffle=False)
    _, line = tf.TextLineReader(skip_header_lines=1).read(filenames)
    x0, x1, label = tf.decode_csv(line, record_defaults=[[0.0], [0.0], [0]])
    point = tf.stack([x0, x1]) * 2.0 - 1.0

    examples = tf.FIFOQueue(capacity=100, dtypes=[tf.float32, tf.int32], shapes=[[2], []])
    enqueue = examples.enqueue([point, label])
    tf.train.add_queue_runner(tf.train.QueueRunner(examples, [enqueue] * 4))

    point, label = examples.dequeue()
    shuffled = tf.RandomShuffleQueue(capacity=200, min_after_dequeue=50,
                                     dtypes=[tf.float32, tf.int32], shapes=[[2], []], seed=42)
    tf.train.add_queue_runner(
        tf.train.QueueRunner(shuffled, [shuffled.enqueue([point, label])] * 2))
    features, labels = shuffled.dequeue_many(batch_size)
    return features, labels


def train(tf, paths=None, num_epochs=DEFAULT_EPOCHS):
    """Logistic regression on the pipeline; returns (records, threads started, seconds, accuracy)."""
    with tf.Graph().as_default():
        features, labels = build(tf, paths, num_epochs)
        weights = tf.Variable(tf.zeros([2, 1]))
        bias = tf.Variable(tf.zeros([1]))
        logits = tf.squeeze(tf.matmul(features, weights) + bias, axis=1)
        targets = tf.cast(labels, tf.float32)
        loss = tf.reduce_mean(
            tf.nn.sigmoid_cross_entropy_with_logits(labels=targets, logits=logits))
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.cast(logits > 0, tf.float32), targets),
                                          tf.float32))
        train_op = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
        batch_size = tf.shape(labels)[0]

        records, accuracy_value = 0, float("nan")
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            start = time.perf_counter()
            try:
                while not coord.should_stop():
                    _, accuracy_value, size = sess.run([train_op, accuracy, batch_size])
                    records += size
            except tf.errors.OutOfRangeError:
                pass
            finally:
                coord.request_stop()
            coord.join(threads)
            seconds = time.perf_counter() - start
    return records, len(threads), seconds, accuracy_value


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
    records, threads, seconds, accuracy = train(tf, num_epochs=args.epochs)
    side = "tensorflow.compat.v1 (legacy queues)" if args.legacy else "compat.v1 (tf.data)"
    print(f"{side}: {records} records through 3 hand-built stages in {seconds:.2f} s "
          f"with {threads} runner threads; last batch accuracy {accuracy:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
