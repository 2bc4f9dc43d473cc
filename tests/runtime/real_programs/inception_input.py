"""Inception-style training input: parallel readers, an examples queue, preprocessing threads.

    string_input_producer(TFRecord shards)
    -> `num_readers` TFRecordReaders, each enqueueing into one examples queue
       (RandomShuffleQueue for training, FIFOQueue for evaluation), run by one QueueRunner
    -> examples_queue.dequeue()
    -> for each of `num_preprocess_threads`: parse_single_example (JPEG bytes, label, file name)
       -> decode_jpeg -> float -> (training) resize with a randomly selected method,
       random_flip_left_right, distort_color with a randomly selected ordering of
       brightness/saturation/hue/contrast (switch/merge selector); (evaluation) central crop
       and bilinear resize -> scale to [-1, 1]
    -> batch_join over the preprocessing threads.

`build(tf, data_dir, ...)` is the pipeline; `write_data(data_dir)` writes small TFRecord shards
of tf.train.Example protos holding JPEG-encoded random pictures.
"""
from __future__ import annotations

import glob
import os

import numpy as np

from image_files import encoded_images
from tensorflow.python.ops import control_flow_ops

NUM_CLASSES = 5
NUM_SHARDS = 4
RECORDS_PER_SHARD = 10
SOURCE_SIZE = (40, 48)  # height, width of the stored JPEGs
IMAGE_SIZE = 32


# --------------------------------------------------------------------------- data


def write_data(data_dir, num_shards=NUM_SHARDS, records_per_shard=RECORDS_PER_SHARD, seed=0):
    """Write `num_shards` TFRecord files named like Inception's build_image_data output."""
    import tensorflow as tf_root
    os.makedirs(data_dir, exist_ok=True)
    rng = np.random.default_rng(seed)
    feature = tf_root.train.Feature
    paths = []
    for shard in range(num_shards):
        labels = rng.integers(1, NUM_CLASSES + 1, size=records_per_shard)
        images = rng.integers(0, 256, size=(records_per_shard, *SOURCE_SIZE, 3), dtype=np.uint8)
        encoded = encoded_images(images, "jpeg", quality=90)
        path = os.path.join(data_dir, f"train-{shard:05d}-of-{num_shards:05d}")
        with tf_root.io.TFRecordWriter(path) as writer:
            for index, (label, jpeg) in enumerate(zip(labels, encoded)):
                name = f"shard{shard}_img{index}.JPEG".encode()
                example = tf_root.train.Example(features=tf_root.train.Features(feature={
                    "image/encoded": feature(bytes_list=tf_root.train.BytesList(value=[jpeg])),
                    "image/format": feature(bytes_list=tf_root.train.BytesList(value=[b"JPEG"])),
                    "image/filename": feature(bytes_list=tf_root.train.BytesList(value=[name])),
                    "image/class/label": feature(
                        int64_list=tf_root.train.Int64List(value=[int(label)])),
                    "image/height": feature(
                        int64_list=tf_root.train.Int64List(value=[SOURCE_SIZE[0]])),
                    "image/width": feature(
                        int64_list=tf_root.train.Int64List(value=[SOURCE_SIZE[1]])),
                }))
                writer.write(example.SerializeToString())
        paths.append(path)
    return paths


# --------------------------------------------------------------------------- preprocessing


def apply_with_random_selector(tf, x, func, num_cases):
    """func(x, case) for one case drawn uniformly at run time, through switch/merge: only the
    chosen branch receives a live tensor, the merge forwards it."""
    selector = tf.random_uniform([], maxval=num_cases, dtype=tf.int32)
    branches = []
    for case in range(num_cases):
        _, taken = control_flow_ops.switch(x, tf.equal(selector, case))
        branches.append(func(taken, case))
    return control_flow_ops.merge(branches)[0]


# The colour adjustments, and the four orders in which distort_color may apply them.
_COLOR_ORDERINGS = (
    ("brightness", "saturation", "hue", "contrast"),
    ("saturation", "brightness", "contrast", "hue"),
    ("contrast", "hue", "brightness", "saturation"),
    ("hue", "saturation", "contrast", "brightness"),
)


def distort_color(tf, image, ordering, scope=None):
    """Random brightness/saturation/hue/contrast in the given order; image in [0, 1]."""
    adjust = {
        "brightness": lambda im: tf.image.random_brightness(im, max_delta=32. / 255.),
        "saturation": lambda im: tf.image.random_saturation(im, lower=0.5, upper=1.5),
        "hue": lambda im: tf.image.random_hue(im, max_delta=0.2),
        "contrast": lambda im: tf.image.random_contrast(im, lower=0.5, upper=1.5),
    }
    with tf.name_scope(scope, "distort_color", [image]):
        for step in _COLOR_ORDERINGS[ordering]:
            image = adjust[step](image)
        return tf.clip_by_value(image, 0.0, 1.0)


def decode_jpeg(tf, image_buffer, scope=None):
    with tf.name_scope(scope, "decode_jpeg", [image_buffer]):
        image = tf.image.decode_jpeg(image_buffer, channels=3)
        return tf.image.convert_image_dtype(image, dtype=tf.float32)


def distort_image(tf, image, height, width, thread_id=0):
    """Training distortions: resize by a random method, flip, colour jitter."""
    with tf.name_scope("distort_image"):
        resized = apply_with_random_selector(
            tf, image, lambda x, method: tf.image.resize_images(x, [height, width], method=method),
            num_cases=4)
        resized.set_shape([height, width, 3])
        if not thread_id:
            tf.summary.image("resized_image", tf.expand_dims(resized, 0))
        flipped = tf.image.random_flip_left_right(resized)
        colored = apply_with_random_selector(
            tf, flipped, lambda x, ordering: distort_color(tf, x, ordering), num_cases=4)
        colored.set_shape([height, width, 3])
        return colored


def eval_image(tf, image, height, width):
    with tf.name_scope("eval_image"):
        image = tf.image.central_crop(image, central_fraction=0.875)
        image = tf.expand_dims(image, 0)
        image = tf.image.resize_bilinear(image, [height, width], align_corners=False)
        return tf.squeeze(image, [0])


def image_preprocessing(tf, image_buffer, train, thread_id=0, image_size=IMAGE_SIZE):
    image = decode_jpeg(tf, image_buffer)
    if train:
        image = distort_image(tf, image, image_size, image_size, thread_id)
    else:
        image = eval_image(tf, image, image_size, image_size)
    # [0, 1] -> [-1, 1]
    return tf.multiply(tf.subtract(image, 0.5), 2.0)


def parse_example_proto(tf, serialized):
    features = tf.parse_single_example(serialized, {
        "image/encoded": tf.FixedLenFeature([], dtype=tf.string, default_value=""),
        "image/class/label": tf.FixedLenFeature([1], dtype=tf.int64, default_value=-1),
        "image/filename": tf.FixedLenFeature([], dtype=tf.string, default_value=""),
    })
    label = tf.cast(features["image/class/label"], dtype=tf.int32)
    return features["image/encoded"], label, features["image/filename"]


# --------------------------------------------------------------------------- the pipeline


def build(tf, data_dir, train=True, batch_size=8, num_readers=4, num_preprocess_threads=4,
          input_queue_memory_factor=2, num_epochs=None, image_size=IMAGE_SIZE,
          examples_per_shard=RECORDS_PER_SHARD, with_filenames=False):
    """Batches of preprocessed images and labels.

    Returns {"images": [batch, size, size, 3] float32, "labels": [batch] int32}, plus
    "filenames" (the stored file name of each picture) when `with_filenames`.
    """
    if num_preprocess_threads % 4:
        raise ValueError("Please make num_preprocess_threads a multiple of 4 (%d %% 4 != 0)."
                         % num_preprocess_threads)
    with tf.name_scope("batch_processing"):
        files = sorted(glob.glob(os.path.join(data_dir, "train-*")))
        if not files:
            raise ValueError("No data files found in %s" % data_dir)
        if train:
            filename_queue = tf.train.string_input_producer(files, shuffle=True, capacity=16,
                                                            num_epochs=num_epochs)
        else:
            filename_queue = tf.train.string_input_producer(files, shuffle=False, capacity=1,
                                                            num_epochs=num_epochs)
        min_queue_examples = examples_per_shard * input_queue_memory_factor
        if train:
            examples_queue = tf.RandomShuffleQueue(
                capacity=min_queue_examples + 3 * batch_size,
                min_after_dequeue=min_queue_examples, dtypes=[tf.string])
        else:
            examples_queue = tf.FIFOQueue(capacity=examples_per_shard + 3 * batch_size,
                                          dtypes=[tf.string])
        if num_readers > 1:
            enqueue_ops = []
            for _ in range(num_readers):
                reader = tf.TFRecordReader()
                _, value = reader.read(filename_queue)
                enqueue_ops.append(examples_queue.enqueue([value]))
            tf.train.queue_runner.add_queue_runner(
                tf.train.queue_runner.QueueRunner(examples_queue, enqueue_ops))
            example_serialized = examples_queue.dequeue()
        else:
            _, example_serialized = tf.TFRecordReader().read(filename_queue)

        images_and_labels = []
        for thread_id in range(num_preprocess_threads):
            image_buffer, label_index, filename = parse_example_proto(tf, example_serialized)
            image = image_preprocessing(tf, image_buffer, train, thread_id, image_size)
            entry = [image, label_index] + ([filename] if with_filenames else [])
            images_and_labels.append(entry)

        batch = tf.train.batch_join(images_and_labels, batch_size=batch_size,
                                    capacity=2 * num_preprocess_threads * batch_size)
        images = tf.reshape(tf.cast(batch[0], tf.float32),
                            shape=[batch_size, image_size, image_size, 3])
        tf.summary.image("images", images)
        result = {"images": images, "labels": tf.reshape(batch[1], [batch_size])}
        if with_filenames:
            result["filenames"] = batch[2]
        return result
