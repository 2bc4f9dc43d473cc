"""A Keras model trained on an unchanged TF1 queue-based input function, via compat.to_dataset.

    legacy_input(tf, paths): string_input_producer -> TFRecordReader.read
    -> parse_single_example -> decode_raw -> shuffle_batch, as a TF1 program wrote it
    (it takes the `tf` module, so the very same function still runs under
    tensorflow.compat.v1 with a Session and queue runners)

    compat.to_dataset(legacy_input, paths) -> a tf.data.Dataset of (features, labels)
    batches -> keras Model.fit / evaluate, eagerly: no Session, no Coordinator, no threads.

As TF1 training loops did, the input repeats (num_epochs=None) and training runs for a number
of steps: Keras' `steps_per_epoch` plays the loop's step count. (With a finite `num_epochs`,
each Keras epoch would iterate the dataset anew, from the beginning, as a new Session does.)

Run it:  python examples/keras_legacy_input.py [--epochs N] [--steps-per-epoch N]

The data are small and synthetic (a few TFRecord shards written to a temporary directory), so
the example needs no download and runs in seconds.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile

import numpy as np

NUM_FEATURES = 32
NUM_CLASSES = 4
NUM_FILES = 3
RECORDS_PER_FILE = 200
BATCH_SIZE = 32
DEFAULT_EPOCHS = 3
DEFAULT_STEPS_PER_EPOCH = 20
EVAL_STEPS = 10


def write_tfrecords(directory, num_files=NUM_FILES, per_file=RECORDS_PER_FILE, seed=0):
    """TFRecord shards of tf.train.Example(features_raw: NUM_FEATURES bytes, label: int64).

    Each class lights up its own band of features, so the model has something to learn."""
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    band = NUM_FEATURES // NUM_CLASSES
    paths = []
    for shard in range(num_files):
        path = os.path.join(directory, f"train-{shard:05d}-of-{num_files:05d}.tfrecord")
        labels = rng.integers(0, NUM_CLASSES, size=per_file)
        features = rng.integers(0, 96, size=(per_file, NUM_FEATURES), dtype=np.uint8)
        for label in range(NUM_CLASSES):
            features[labels == label, label * band:(label + 1) * band] += 128
        with tf.io.TFRecordWriter(path) as writer:
            for row, label in zip(features, labels):
                example = tf.train.Example(features=tf.train.Features(feature={
                    "features_raw": tf.train.Feature(
                        bytes_list=tf.train.BytesList(value=[row.tobytes()])),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)])),
                }))
                writer.write(example.SerializeToString())
        paths.append(path)
    return paths


# --- the legacy input function, unchanged TF1 code -------------------------------------------

def legacy_input(tf, filenames, batch_size=BATCH_SIZE, num_epochs=None):
    """TF1 input: returns (features, labels) batches from queues, for a Session to run."""
    filename_queue = tf.train.string_input_producer(filenames, num_epochs=num_epochs)
    reader = tf.TFRecordReader()
    _, serialized_example = reader.read(filename_queue)
    parsed = tf.parse_single_example(serialized_example, features={
        "features_raw": tf.FixedLenFeature([], tf.string),
        "label": tf.FixedLenFeature([], tf.int64),
    })
    features = tf.decode_raw(parsed["features_raw"], tf.uint8)
    features.set_shape([NUM_FEATURES])
    features = tf.cast(features, tf.float32) / 255.0
    label = tf.cast(parsed["label"], tf.int32)
    features_batch, label_batch = tf.train.shuffle_batch(
        [features, label], batch_size=batch_size, capacity=500, min_after_dequeue=200)
    return features_batch, label_batch


# --- TF2: the legacy function as a tf.data.Dataset, for Keras ---------------------------------

def train(paths, epochs=DEFAULT_EPOCHS, steps_per_epoch=DEFAULT_STEPS_PER_EPOCH, seed=0):
    """Fit a small classifier on `legacy_input`; returns (loss per epoch, accuracy)."""
    import keras

    import compat

    # graph_seed: as tf.set_random_seed before the legacy code, so the run is reproducible.
    dataset = compat.to_dataset(legacy_input, paths, graph_seed=seed)

    keras.utils.set_random_seed(seed)
    model = keras.Sequential([
        keras.Input(shape=(NUM_FEATURES,)),
        keras.layers.Dense(16, activation="relu"),
        keras.layers.Dense(NUM_CLASSES),
    ])
    model.compile(optimizer=keras.optimizers.Adam(0.01),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    # shuffle=False: the legacy input shuffles (shuffle_batch); Keras cannot shuffle a dataset.
    history = model.fit(dataset, epochs=epochs, steps_per_epoch=steps_per_epoch,
                        shuffle=False, verbose=0)
    _, accuracy = model.evaluate(dataset, steps=EVAL_STEPS, verbose=0)
    return history.history["loss"], accuracy


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=DEFAULT_EPOCHS)
    parser.add_argument("--steps-per-epoch", type=int, default=DEFAULT_STEPS_PER_EPOCH)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="compat_keras_example_") as directory:
        paths = write_tfrecords(directory)
        losses, accuracy = train(paths, args.epochs, args.steps_per_epoch)
    print(f"keras on the legacy input (compat.to_dataset): "
          f"{args.epochs * args.steps_per_epoch} steps, loss {losses[0]:.4f} after the first "
          f"epoch, final loss {losses[-1]:.4f}, accuracy {accuracy:.3f}")
    return 0 if math.isfinite(losses[-1]) else 1


if __name__ == "__main__":
    sys.exit(main())
