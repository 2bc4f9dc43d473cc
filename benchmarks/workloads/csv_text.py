"""CSV: text files with a header line, decoded line by line.

    string_input_producer(files) -> TextLineReader(skip_header_lines=1) -> decode_csv
    (NUM_FEATURES floats + an int label) -> stack -> shuffle_batch(256)

tf.data: files shuffled per epoch, each file's lines minus its header (flat_map, sequential
reads), shuffle(capacity), batch, then ONE `decode_csv` on the whole batch of lines,
prefetch(1).
"""
from __future__ import annotations

import dataclasses
import os

import numpy as np

from . import data_field

NAME = "csv"
DESCRIPTION = "text files, TextLineReader(skip_header_lines=1), decode_csv, shuffle_batch(256)"
UNIT = "lines"


@dataclasses.dataclass
class Params:
    files: int = data_field(4)
    lines_per_file: int = data_field(5_000)
    num_features: int = data_field(10)
    epochs: int = 40
    batch_size: int = 256
    min_after_dequeue: int = 2_000
    batches: int = 400


def _paths(params, data_dir):
    return [os.path.join(data_dir, f"part-{index:03d}.csv") for index in range(params.files)]


def prepare(params, data_dir):
    rng = np.random.default_rng(0)
    header = ",".join([f"f{index}" for index in range(params.num_features)] + ["label"])
    for path in _paths(params, data_dir):
        features = rng.normal(size=(params.lines_per_file, params.num_features))
        labels = rng.integers(0, 10, size=params.lines_per_file)
        with open(path, "w") as out:
            out.write(header + "\n")
            for row, label in zip(features, labels):
                out.write(",".join(f"{value:.5f}" for value in row) + f",{label}\n")


def load(params, data_dir):
    return _paths(params, data_dir)


def _defaults(tf, params):
    return [[0.0]] * params.num_features + [[0]]


def build(tf, paths, params):
    queue = tf.train.string_input_producer(paths, num_epochs=params.epochs)
    _, line = tf.TextLineReader(skip_header_lines=1).read(queue)
    columns = tf.decode_csv(line, record_defaults=_defaults(tf, params))
    features = tf.stack(columns[:-1])
    label = columns[-1]
    return tf.train.shuffle_batch(
        [features, label], batch_size=params.batch_size,
        capacity=params.min_after_dequeue + 3 * params.batch_size,
        min_after_dequeue=params.min_after_dequeue)


def tf_data(tf, paths, params):
    def decode(lines):
        columns = tf.io.decode_csv(lines, record_defaults=_defaults(tf, params))
        return tf.stack(columns[:-1], axis=1), columns[-1]

    files = (tf.data.Dataset.from_tensor_slices(paths)
             .shuffle(len(paths), seed=None).repeat(params.epochs))
    return (files.flat_map(lambda path: tf.data.TextLineDataset(path).skip(1))
            .shuffle(params.min_after_dequeue + 3 * params.batch_size)
            .batch(params.batch_size, drop_remainder=True).map(decode).prefetch(1))
