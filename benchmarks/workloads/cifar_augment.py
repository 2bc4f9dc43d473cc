"""CIFAR-10 distorted inputs (the TF1 CIFAR-10 tutorial's input module, in outline).

    string_input_producer(files) -> FixedLengthRecordReader(1 + 32*32*3) -> decode_raw
    -> label byte + depth-major image -> HWC float -> random_crop 24x24
    -> random_flip_left_right -> random_brightness(63) -> random_contrast(0.2, 1.8)
    -> per_image_standardization -> shuffle_batch(128, num_threads=4)

tf.data (`tf_data_vectorized=True`, the default): sequential fixed-length reads, shuffle the
raw records (cheap strings, before any work), batch, then ONE map over the whole batch that
draws each image's own crop offsets, flip, brightness delta and contrast factor (the same
distributions, per image) and standardizes per image; prefetch(1). With
`tf_data_vectorized=False`: the per-image ops of the legacy program in a `map` before
batching (`tf_data_parallel_calls` of them at once).
"""
from __future__ import annotations

import dataclasses
import os

import numpy as np

from . import data_field

NAME = "cifar_augment"
DESCRIPTION = ("fixed-length records, decode_raw, crop/flip/brightness/contrast/"
               "standardization, shuffle_batch(128, num_threads=4)")
UNIT = "images"

HEIGHT = WIDTH = 32
DEPTH = 3
RECORD_BYTES = 1 + HEIGHT * WIDTH * DEPTH
CROP = 24


@dataclasses.dataclass
class Params:
    files: int = data_field(5)
    records_per_file: int = data_field(1_000)
    epochs: int = 20
    batch_size: int = 128
    num_threads: int = 4
    min_after_dequeue: int = 1_000
    batches: int = 120
    tf_data_vectorized: bool = True
    tf_data_parallel_calls: int = 1   # only for tf_data_vectorized=False


def _paths(params, data_dir):
    return [os.path.join(data_dir, f"data_batch_{index}.bin")
            for index in range(1, params.files + 1)]


def prepare(params, data_dir):
    rng = np.random.default_rng(0)
    for path in _paths(params, data_dir):
        labels = rng.integers(0, 10, size=params.records_per_file, dtype=np.uint8)
        planes = rng.integers(0, 200, size=(params.records_per_file, DEPTH, HEIGHT, WIDTH),
                              dtype=np.uint8)
        planes[:, 0] += (labels * 5)[:, None, None]
        records = np.concatenate([labels[:, None], planes.reshape(len(labels), -1)], axis=1)
        with open(path, "wb") as out:
            out.write(records.astype(np.uint8).tobytes())


def load(params, data_dir):
    return _paths(params, data_dir)


def build(tf, paths, params):
    filename_queue = tf.train.string_input_producer(paths, num_epochs=params.epochs)
    reader = tf.FixedLengthRecordReader(record_bytes=RECORD_BYTES)
    _, value = reader.read(filename_queue)
    record_bytes = tf.decode_raw(value, tf.uint8)
    label = tf.cast(tf.strided_slice(record_bytes, [0], [1]), tf.int32)
    planes = tf.reshape(tf.strided_slice(record_bytes, [1], [RECORD_BYTES]),
                        [DEPTH, HEIGHT, WIDTH])
    image = tf.cast(tf.transpose(planes, [1, 2, 0]), tf.float32)
    image = tf.random_crop(image, [CROP, CROP, DEPTH])
    image = tf.image.random_flip_left_right(image)
    image = tf.image.random_brightness(image, max_delta=63)
    image = tf.image.random_contrast(image, lower=0.2, upper=1.8)
    image = tf.image.per_image_standardization(image)
    image.set_shape([CROP, CROP, DEPTH])
    label.set_shape([1])
    images, labels = tf.train.shuffle_batch(
        [image, label], batch_size=params.batch_size, num_threads=params.num_threads,
        capacity=params.min_after_dequeue + 3 * params.batch_size,
        min_after_dequeue=params.min_after_dequeue)
    return images, tf.reshape(labels, [params.batch_size])


def _augment_batch(tf, records):
    raw = tf.io.decode_raw(records, tf.uint8)                       # [n, RECORD_BYTES]
    labels = tf.cast(raw[:, 0], tf.int32)
    images = tf.transpose(tf.reshape(raw[:, 1:], [-1, DEPTH, HEIGHT, WIDTH]), [0, 2, 3, 1])
    images = tf.cast(images, tf.float32)
    n = tf.shape(images)[0]
    span = tf.range(CROP)
    rows = tf.random.uniform([n, 1], 0, HEIGHT - CROP + 1, tf.int32) + span
    cols = tf.random.uniform([n, 1], 0, WIDTH - CROP + 1, tf.int32) + span
    images = tf.gather(images, rows, axis=1, batch_dims=1)          # [n, 24, 32, 3]
    images = tf.gather(images, cols, axis=2, batch_dims=1)          # [n, 24, 24, 3]
    flip = tf.random.uniform([n, 1, 1, 1]) < 0.5
    images = tf.where(flip, tf.reverse(images, [2]), images)
    images = images + tf.random.uniform([n, 1, 1, 1], -63., 63.)
    mean = tf.reduce_mean(images, axis=[1, 2], keepdims=True)
    images = (images - mean) * tf.random.uniform([n, 1, 1, 1], 0.2, 1.8) + mean
    return tf.image.per_image_standardization(images), labels


def _augment_one(tf, record):
    raw = tf.io.decode_raw(record, tf.uint8)
    label = tf.cast(raw[0], tf.int32)
    image = tf.cast(tf.transpose(tf.reshape(raw[1:], [DEPTH, HEIGHT, WIDTH]), [1, 2, 0]),
                    tf.float32)
    image = tf.image.random_crop(image, [CROP, CROP, DEPTH])
    image = tf.image.random_flip_left_right(image)
    image = tf.image.random_brightness(image, max_delta=63)
    image = tf.image.random_contrast(image, lower=0.2, upper=1.8)
    return tf.image.per_image_standardization(image), label


def tf_data(tf, paths, params):
    files = tf.data.Dataset.from_tensor_slices(paths).shuffle(len(paths)).repeat(params.epochs)
    records = tf.data.FixedLengthRecordDataset(files, RECORD_BYTES).shuffle(
        params.min_after_dequeue + 3 * params.batch_size)
    if params.tf_data_vectorized:
        batches = records.batch(params.batch_size, drop_remainder=True).map(
            lambda batch: _augment_batch(tf, batch))
    else:
        calls = params.tf_data_parallel_calls
        batches = records.map(lambda record: _augment_one(tf, record),
                              num_parallel_calls=None if calls <= 1 else calls).batch(
            params.batch_size, drop_remainder=True)
    return batches.prefetch(1)
