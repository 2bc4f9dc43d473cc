"""GAN image-pair loader (pix2pix style): side-by-side A|B pictures, one random crop and flip
shared by both halves.

    string_input_producer(png paths, shuffle in training) -> WholeFileReader -> decode_png
    -> float in [0, 1], a run-time check of the channel count -> split left/right halves,
       scale to [-1, 1] -> concatenate along channels (so one crop and one flip serve both)
    -> resize to scale_size (area) -> seeded random_crop -> seeded random_flip_left_right
    -> split back into (input, target) -> batch with the file paths.

`build(tf, data_dir, ...)` is the pipeline; `write_data(data_dir)` writes small PNG pairs.
"""
from __future__ import annotations

import glob
import os

import numpy as np

from image_files import encoded_images

PAIR_HEIGHT, HALF_WIDTH = 28, 28
SCALE_SIZE = 22
CROP_SIZE = 16
NUM_PAIRS = 10


def write_data(data_dir, num_pairs=NUM_PAIRS, seed=0):
    """data_dir/NNN.png: a picture (left) next to its 'label map' (right: a posterised copy)."""
    os.makedirs(data_dir, exist_ok=True)
    rng = np.random.default_rng(seed)
    photos = rng.integers(0, 256, size=(num_pairs, PAIR_HEIGHT, HALF_WIDTH, 3), dtype=np.uint8)
    maps = (photos // 64) * 64
    pairs = np.concatenate([photos, maps], axis=2)
    paths = []
    for index, png in enumerate(encoded_images(pairs)):
        path = os.path.join(data_dir, f"{index:03d}.png")
        with open(path, "wb") as out:
            out.write(png)
        paths.append(path)
    return paths


def preprocess(tf, image):
    with tf.name_scope("preprocess"):
        return image * 2 - 1  # [0, 1] -> [-1, 1]


def load_examples(tf, input_dir, mode="train", batch_size=4, scale_size=SCALE_SIZE,
                  crop_size=CROP_SIZE, flip=True, seed=1234, which_direction="AtoB",
                  num_epochs=None):
    input_paths = sorted(glob.glob(os.path.join(input_dir, "*.png")))
    if not input_paths:
        raise Exception("input_dir contains no image files")

    with tf.name_scope("load_images"):
        path_queue = tf.train.string_input_producer(input_paths, shuffle=mode == "train",
                                                    num_epochs=num_epochs)
        reader = tf.WholeFileReader()
        paths, contents = reader.read(path_queue)
        raw_input = tf.image.decode_png(contents)
        raw_input = tf.image.convert_image_dtype(raw_input, dtype=tf.float32)

        assertion = tf.assert_equal(tf.shape(raw_input)[2], 3,
                                    message="image does not have 3 channels")
        with tf.control_dependencies([assertion]):
            raw_input = tf.identity(raw_input)
        raw_input.set_shape([None, None, 3])

        width = tf.shape(raw_input)[1]
        a_images = preprocess(tf, raw_input[:, :width // 2, :])
        b_images = preprocess(tf, raw_input[:, width // 2:, :])

    if which_direction == "AtoB":
        inputs, targets = a_images, b_images
    elif which_direction == "BtoA":
        inputs, targets = b_images, a_images
    else:
        raise Exception("invalid direction")

    with tf.name_scope("transform_pair"):
        # Both halves stacked on the channel axis: one crop offset, one flip decision.
        pair = tf.concat([inputs, targets], axis=2)
        pair = tf.image.resize_images(pair, [scale_size, scale_size],
                                      method=tf.image.ResizeMethod.AREA)
        if scale_size > crop_size:
            pair = tf.random_crop(pair, [crop_size, crop_size, 6], seed=seed)
        if flip:
            pair = tf.image.random_flip_left_right(pair, seed=seed)
        input_images, target_images = tf.split(pair, 2, axis=2)

    paths_batch, inputs_batch, targets_batch = tf.train.batch(
        [paths, input_images, target_images], batch_size=batch_size)
    return {"paths": paths_batch, "inputs": inputs_batch, "targets": targets_batch}


def build(tf, data_dir, **options):
    return load_examples(tf, data_dir, **options)
