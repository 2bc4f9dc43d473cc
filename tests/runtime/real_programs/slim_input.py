"""Input programs built on tf_slim's data providers, as TF1 image classifiers and OCR models
wrote them: tf_slim calls TensorFlow itself (its queues, readers and runners are TF's), the
program around it calls whatever `tf` it was given.

classifier_input: slim's image-classification training input (its train_image_classifier
    pattern): a slim Dataset of TFRecord shards decoded by TFExampleDecoder, a
    DatasetDataProvider (parallel_read: several readers filling a common queue), the image
    converted and resized, tf.train.batch on several threads, then slim's prefetch_queue.
ocr_input: an OCR data provider: images and their text, the text's first character one-hot
    encoded, shuffle_batch on several threads.
"""
from __future__ import annotations

import os
import struct
import zlib

import numpy as np
import tensorflow as tf_real
import tf_slim as slim

SHARDS = 4
PER_SHARD = 12
CLASSES = 5
SIDE = 6
ALPHABET = "abcdefghij"


def _png(image: np.ndarray) -> bytes:
    """`image` (height, width, 3 uint8) as a PNG file, without TensorFlow (which cannot encode
    eagerly once a test process has switched to TF1 behaviour)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    height, width, _ = image.shape
    rows = b"".join(b"\x00" + image[row].tobytes() for row in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def _example(index: int) -> bytes:
    rng = np.random.default_rng(index)
    image = rng.integers(0, 256, size=(SIDE, SIDE, 3), dtype=np.uint8)
    text = "".join(ALPHABET[(index + offset) % len(ALPHABET)] for offset in range(3))
    feature = {
        "image/encoded": tf_real.train.Feature(bytes_list=tf_real.train.BytesList(
            value=[_png(image)])),
        "image/format": tf_real.train.Feature(bytes_list=tf_real.train.BytesList(
            value=[b"png"])),
        "image/class/label": tf_real.train.Feature(int64_list=tf_real.train.Int64List(
            value=[index % CLASSES])),
        "image/text": tf_real.train.Feature(bytes_list=tf_real.train.BytesList(
            value=[text.encode()])),
        "image/index": tf_real.train.Feature(int64_list=tf_real.train.Int64List(
            value=[index])),
    }
    return tf_real.train.Example(
        features=tf_real.train.Features(feature=feature)).SerializeToString()


def write_data(data_dir: str) -> list:
    os.makedirs(data_dir, exist_ok=True)
    paths = []
    for shard in range(SHARDS):
        path = os.path.join(data_dir, f"train-{shard:05d}-of-{SHARDS:05d}")
        with tf_real.io.TFRecordWriter(path) as writer:
            for row in range(PER_SHARD):
                writer.write(_example(shard * PER_SHARD + row))
        paths.append(path)
    return paths


def _dataset(tf, paths):
    keys_to_features = {
        "image/encoded": tf.FixedLenFeature((), tf.string, default_value=""),
        "image/format": tf.FixedLenFeature((), tf.string, default_value="png"),
        "image/class/label": tf.FixedLenFeature([], tf.int64, default_value=-1),
        "image/text": tf.FixedLenFeature((), tf.string, default_value=""),
        "image/index": tf.FixedLenFeature([], tf.int64, default_value=-1),
    }
    # slim's own tfexample_decoder.Image calls control_flow_ops.case, which TF 2.21 moved
    # (docs: troubleshooting); a decoding callback, as programs with their own formats wrote.
    def decoded_png(keys_to_tensors):
        image = tf.image.decode_png(keys_to_tensors["image/encoded"], channels=3)
        return tf.reshape(image, [SIDE, SIDE, 3])

    items_to_handlers = {
        "image": slim.tfexample_decoder.ItemHandlerCallback(["image/encoded"], decoded_png),
        "label": slim.tfexample_decoder.Tensor("image/class/label"),
        "text": slim.tfexample_decoder.Tensor("image/text"),
        "index": slim.tfexample_decoder.Tensor("image/index"),
    }
    decoder = slim.tfexample_decoder.TFExampleDecoder(keys_to_features, items_to_handlers)
    # The program's reader: the `tf` it was given (compat.v1's under the shim).
    return slim.dataset.Dataset(data_sources=paths, reader=tf.TFRecordReader, decoder=decoder,
                                num_samples=SHARDS * PER_SHARD, items_to_descriptions={},
                                num_classes=CLASSES)


def classifier_input(tf, paths, num_readers=4, shuffle=True, threads=4, batch_size=6,
                     num_epochs=1):
    provider = slim.dataset_data_provider.DatasetDataProvider(
        _dataset(tf, paths), num_readers=num_readers, shuffle=shuffle, num_epochs=num_epochs,
        common_queue_capacity=4 * batch_size, common_queue_min=2 * batch_size, seed=5)
    image, label, index = provider.get(["image", "label", "index"])
    image = tf.image.convert_image_dtype(image, tf.float32)
    image = tf.image.resize_images(image, [SIDE + 2, SIDE + 2])
    images, labels, indices = tf.train.batch([image, label, index], batch_size=batch_size,
                                             num_threads=threads, capacity=5 * batch_size)
    labels = slim.one_hot_encoding(labels, CLASSES)
    queue = slim.prefetch_queue.prefetch_queue([images, labels, indices], capacity=2)
    images, labels, indices = queue.dequeue()
    return {"images": images, "labels": labels, "index": indices}


def ocr_input(tf, paths, threads=4, batch_size=4, num_epochs=1):
    provider = slim.dataset_data_provider.DatasetDataProvider(
        _dataset(tf, paths), num_readers=2, shuffle=True, num_epochs=num_epochs, seed=9)
    image, text, index = provider.get(["image", "text", "index"])
    image = tf.cast(image, tf.float32) / 255.0
    first = tf.strings.substr(text, 0, 1)
    char_id = tf.cast(tf.strings.unicode_decode(first, "UTF-8")[0] - ord("a"), tf.int32)
    one_hot = tf.one_hot(char_id, len(ALPHABET))
    return tf.train.shuffle_batch(
        {"image": image, "text": text, "char": one_hot, "index": index},
        batch_size=batch_size, num_threads=threads, capacity=8 * batch_size,
        min_after_dequeue=2 * batch_size, allow_smaller_final_batch=True)
