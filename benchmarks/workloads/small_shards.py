"""Many small TFRecord shards: per-file overhead dominates.

    string_input_producer(200 shards, shuffled) -> TFRecordReader -> parse_single_example
    (a float vector + an int64 label) -> shuffle_batch(64, num_threads=2)

tf.data: the shard list shuffled per epoch, read one shard after another
(`TFRecordDataset` over a dataset of file names: sequential, no parallel reads), shuffle,
batch, then ONE `parse_example` per batch, prefetch(1).
"""
from __future__ import annotations

import dataclasses
import os

import numpy as np

from . import data_field

NAME = "small_shards"
DESCRIPTION = "200 TFRecord shards x 40 records, parse_single_example, shuffle_batch(64, 2 threads)"
UNIT = "records"


@dataclasses.dataclass
class Params:
    shards: int = data_field(200)
    records_per_shard: int = data_field(40)
    num_features: int = data_field(32)
    epochs: int = 50
    batch_size: int = 64
    num_threads: int = 2
    min_after_dequeue: int = 1_000
    batches: int = 800


def _paths(params, data_dir):
    return [os.path.join(data_dir, f"shard-{index:05d}-of-{params.shards:05d}.tfrecord")
            for index in range(params.shards)]


def prepare(params, data_dir):
    import tensorflow as tf
    rng = np.random.default_rng(0)
    for path in _paths(params, data_dir):
        with tf.io.TFRecordWriter(path) as writer:
            for _ in range(params.records_per_shard):
                example = tf.train.Example(features=tf.train.Features(feature={
                    "features": tf.train.Feature(float_list=tf.train.FloatList(
                        value=rng.normal(size=params.num_features).astype(np.float32))),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(
                        value=[int(rng.integers(10))])),
                }))
                writer.write(example.SerializeToString())


def load(params, data_dir):
    return _paths(params, data_dir)


def _spec(tf, params):
    return {"features": tf.io.FixedLenFeature([params.num_features], tf.float32),
            "label": tf.io.FixedLenFeature([], tf.int64)}


def build(tf, paths, params):
    queue = tf.train.string_input_producer(paths, num_epochs=params.epochs)
    _, serialized = tf.TFRecordReader().read(queue)
    parsed = tf.parse_single_example(serialized, features=_spec(tf, params))
    return tf.train.shuffle_batch(
        [parsed["features"], tf.cast(parsed["label"], tf.int32)],
        batch_size=params.batch_size, num_threads=params.num_threads,
        capacity=params.min_after_dequeue + 3 * params.batch_size,
        min_after_dequeue=params.min_after_dequeue)


def tf_data(tf, paths, params):
    def parse(serialized):
        parsed = tf.io.parse_example(serialized, _spec(tf, params))
        return parsed["features"], tf.cast(parsed["label"], tf.int32)

    files = tf.data.Dataset.from_tensor_slices(paths).shuffle(len(paths)).repeat(params.epochs)
    return (tf.data.TFRecordDataset(files)
            .shuffle(params.min_after_dequeue + 3 * params.batch_size)
            .batch(params.batch_size, drop_remainder=True).map(parse).prefetch(1))
