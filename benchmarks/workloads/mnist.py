"""MNIST: the demo's pipeline, `examples/mnist_queue_pipeline.build`, unchanged.

    string_input_producer -> TFRecordReader -> parse_single_example -> decode_raw
    -> cast/scale -> shuffle_batch(128, capacity 2000, min_after_dequeue 1000)

tf.data: sequential TFRecord reads, shuffle(2000), batch, then one vectorized
`parse_example` + decode per batch, prefetch(1).
"""
from __future__ import annotations

import dataclasses
import os
import sys

from . import data_field

NAME = "mnist"
DESCRIPTION = "TFRecord of 784-byte images + label, parse_single_example, shuffle_batch(128)"
UNIT = "images"

_EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "examples")


@dataclasses.dataclass
class Params:
    records: int = data_field(10_000)
    epochs: int = 60
    batch_size: int = 128
    batches: int = 600  # measured after the first batch (the input ends later)


def _example():
    if _EXAMPLES not in sys.path:
        sys.path.insert(0, _EXAMPLES)
    import mnist_queue_pipeline
    return mnist_queue_pipeline


def _migrated_call(function, tf, path, params):
    return function(tf, path, num_epochs=params.epochs, batch_size=params.batch_size)


# The pipeline compat-migrate rewrites for the "migrated" variant: the example's own build.
MIGRATE = (os.path.join(_EXAMPLES, "mnist_queue_pipeline.py"), "build", _migrated_call)


def _path(data_dir):
    return os.path.join(data_dir, "mnist.tfrecord")


def prepare(params, data_dir):
    _example().write_mnist_like_tfrecord(_path(data_dir), params.records)


def load(params, data_dir):
    return _path(data_dir)


def build(tf, path, params):
    return _example().build(tf, path, num_epochs=params.epochs, batch_size=params.batch_size)


def tf_data(tf, path, params):
    def parse(serialized):
        features = tf.io.parse_example(serialized, {
            "image_raw": tf.io.FixedLenFeature([], tf.string),
            "label": tf.io.FixedLenFeature([], tf.int64)})
        images = tf.cast(tf.io.decode_raw(features["image_raw"], tf.uint8), tf.float32)
        return tf.reshape(images, [-1, 784]) / 255. - 0.5, tf.cast(features["label"], tf.int32)

    return (tf.data.TFRecordDataset(path).repeat(params.epochs).shuffle(2000)
            .batch(params.batch_size, drop_remainder=True).map(parse).prefetch(1))
