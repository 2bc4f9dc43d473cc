"""A folder of small JPEG files of varying sizes, one picture per file.

    string_input_producer(file names) -> WholeFileReader -> decode_jpeg(channels=3)
    -> resize_images(32x32) -> batch(32)

tf.data: the file names shuffled per epoch, `read_file` + `decode_jpeg` + `resize` per file
in a `map` (pictures of different sizes cannot be decoded or resized as one batch;
`tf_data_parallel_calls` of them at once), batch, prefetch(1).
"""
from __future__ import annotations

import dataclasses
import os

import numpy as np

from . import data_field

NAME = "jpeg_folder"
DESCRIPTION = "folder of small JPEGs, WholeFileReader, decode_jpeg, resize_images, batch(32)"
UNIT = "images"

SIZE = 32


@dataclasses.dataclass
class Params:
    files: int = data_field(1_000)
    min_side: int = data_field(48)
    max_side: int = data_field(96)
    epochs: int = 40
    batch_size: int = 32
    batches: int = 300
    tf_data_parallel_calls: int = 1


def _paths(params, data_dir):
    return [os.path.join(data_dir, f"img_{index:05d}.jpg") for index in range(params.files)]


def prepare(params, data_dir):
    import tensorflow as tf
    rng = np.random.default_rng(0)
    for path in _paths(params, data_dir):
        height, width = rng.integers(params.min_side, params.max_side + 1, size=2)
        # A smooth colour gradient plus noise: compresses like a photo, not like static.
        ys, xs = np.mgrid[0:height, 0:width]
        base = rng.integers(0, 256, size=3)
        image = (base + 80 * np.stack([ys / height, xs / width, (ys + xs) / (height + width)],
                                      axis=-1) + rng.normal(0, 8, size=(height, width, 3)))
        encoded = tf.io.encode_jpeg(np.clip(image, 0, 255).astype(np.uint8), quality=90)
        with open(path, "wb") as out:
            out.write(encoded.numpy())


def load(params, data_dir):
    return _paths(params, data_dir)


def build(tf, paths, params):
    queue = tf.train.string_input_producer(paths, num_epochs=params.epochs)
    _, contents = tf.WholeFileReader().read(queue)
    image = tf.image.decode_jpeg(contents, channels=3)
    image = tf.image.resize_images(image, [SIZE, SIZE])
    return tf.train.batch([image], batch_size=params.batch_size)


def tf_data(tf, paths, params):
    def load_one(path):
        image = tf.io.decode_jpeg(tf.io.read_file(path), channels=3)
        return tf.image.resize(image, [SIZE, SIZE])

    calls = params.tf_data_parallel_calls
    return (tf.data.Dataset.from_tensor_slices(paths).shuffle(len(paths)).repeat(params.epochs)
            .map(load_one, num_parallel_calls=None if calls <= 1 else calls)
            .batch(params.batch_size, drop_remainder=True).prefetch(1))
