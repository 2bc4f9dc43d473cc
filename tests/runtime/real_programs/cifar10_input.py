"""CIFAR-10 "distorted inputs", in the shape of the TF1 CIFAR-10 tutorial's input module.

    string_input_producer(5 binary files) -> FixedLengthRecordReader -> decode_raw
    -> label byte + depth-major image -> transpose to HWC -> float
    -> random_crop 24x24 -> random_flip_left_right -> random_brightness -> random_contrast
    -> per_image_standardization -> shuffle_batch(num_threads=16, min_after_dequeue = a
       fraction of an epoch)

`build(tf, data_dir, ...)` is the pipeline; `write_data(data_dir)` writes small synthetic
files in the CIFAR-10 binary layout (one label byte, then 3 planes of 32x32 bytes).
"""
from __future__ import annotations

import os

import numpy as np

HEIGHT = WIDTH = 32
DEPTH = 3
LABEL_BYTES = 1
IMAGE_BYTES = HEIGHT * WIDTH * DEPTH
RECORD_BYTES = LABEL_BYTES + IMAGE_BYTES
CROP_SIZE = 24
NUM_CLASSES = 10
NUM_FILES = 5
RECORDS_PER_FILE = 30


def data_files(data_dir):
    return [os.path.join(data_dir, f"data_batch_{index}.bin") for index in range(1, NUM_FILES + 1)]


def write_data(data_dir, records_per_file=RECORDS_PER_FILE, seed=0):
    """Write NUM_FILES files of `records_per_file` records; returns their paths."""
    os.makedirs(data_dir, exist_ok=True)
    rng = np.random.default_rng(seed)
    paths = data_files(data_dir)
    for path in paths:
        labels = rng.integers(0, NUM_CLASSES, size=records_per_file, dtype=np.uint8)
        # Images stored plane by plane (all reds, all greens, all blues), as CIFAR-10 does;
        # a per-class tint keeps the classes apart.
        planes = rng.integers(0, 200, size=(records_per_file, DEPTH, HEIGHT, WIDTH),
                              dtype=np.uint8)
        planes[:, 0] += (labels * 5)[:, None, None]
        with open(path, "wb") as out:
            for label, image in zip(labels, planes):
                out.write(bytes([int(label)]))
                out.write(image.tobytes())
    return paths


class CifarRecord:
    """What one read of the record reader gives."""

    key = None
    label = None
    uint8image = None


def read_cifar10(tf, filename_queue):
    """One record: its key, its int32 label [1] and its uint8 image [32, 32, 3]."""
    record = CifarRecord()
    reader = tf.FixedLengthRecordReader(record_bytes=RECORD_BYTES)
    record.key, value = reader.read(filename_queue)
    record_bytes = tf.decode_raw(value, tf.uint8)
    record.label = tf.cast(tf.strided_slice(record_bytes, [0], [LABEL_BYTES]), tf.int32)
    planes = tf.reshape(tf.strided_slice(record_bytes, [LABEL_BYTES], [RECORD_BYTES]),
                        [DEPTH, HEIGHT, WIDTH])
    record.uint8image = tf.transpose(planes, [1, 2, 0])
    return record


def _batch(tf, image, label, key, min_queue_examples, batch_size, num_threads, shuffle):
    tensors = [image, label] + ([key] if key is not None else [])
    capacity = min_queue_examples + 3 * batch_size
    if shuffle:
        batch = tf.train.shuffle_batch(tensors, batch_size=batch_size, num_threads=num_threads,
                                       capacity=capacity, min_after_dequeue=min_queue_examples)
    else:
        batch = tf.train.batch(tensors, batch_size=batch_size, num_threads=num_threads,
                               capacity=capacity)
    tf.summary.image("images", batch[0])
    return batch


def build(tf, data_dir, batch_size=16, num_threads=16, min_fraction_of_examples_in_queue=0.4,
          num_epochs=None, examples_per_epoch=NUM_FILES * RECORDS_PER_FILE, with_keys=False):
    """The training input: distorted 24x24 images and labels, shuffled.

    Returns {"images": [batch, 24, 24, 3] float32, "labels": [batch] int32}, plus "keys" (the
    reader's b"file:offset" of each record) when `with_keys`.
    """
    filenames = data_files(data_dir)
    for name in filenames:
        if not tf.gfile.Exists(name):
            raise ValueError("Failed to find file: " + name)
    filename_queue = tf.train.string_input_producer(filenames, num_epochs=num_epochs)

    with tf.name_scope("data_augmentation"):
        record = read_cifar10(tf, filename_queue)
        image = tf.cast(record.uint8image, tf.float32)
        # Random 24x24 window, mirrored half of the time, random brightness and contrast:
        # every epoch sees a different variant of each picture.
        image = tf.random_crop(image, [CROP_SIZE, CROP_SIZE, DEPTH])
        image = tf.image.random_flip_left_right(image)
        image = tf.image.random_brightness(image, max_delta=63)
        image = tf.image.random_contrast(image, lower=0.2, upper=1.8)
        image = tf.image.per_image_standardization(image)
        image.set_shape([CROP_SIZE, CROP_SIZE, DEPTH])
        record.label.set_shape([1])

        min_queue_examples = int(examples_per_epoch * min_fraction_of_examples_in_queue)
        batch = _batch(tf, image, record.label, record.key if with_keys else None,
                       min_queue_examples, batch_size, num_threads, shuffle=True)
    result = {"images": batch[0], "labels": tf.reshape(batch[1], [batch_size])}
    if with_keys:
        result["keys"] = batch[2]
    return result
