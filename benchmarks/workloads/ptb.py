"""PTB language-model input (the TF1 RNN tutorial's `ptb_producer`).

    one int32 token tensor -> [batch_size, batch_len] -> range_input_producer(epoch_size,
    shuffle=False).dequeue() -> strided_slice windows of num_steps: x, and y shifted by one

As in PTB there is no batching call: each step dequeues ONE index and slices a whole
[batch_size, num_steps] window, so one "record" here is one row of num_steps tokens
(batch_size records per step).

tf.data: the windows cut once in NumPy ([epoch_size, batch_size, num_steps] for x and y,
the same values as the slices), `from_tensor_slices`, repeat, prefetch(1).
"""
from __future__ import annotations

import dataclasses
import os

import numpy as np

from . import data_field

NAME = "ptb"
DESCRIPTION = "range_input_producer over a token tensor, strided_slice windows (no batch call)"
UNIT = "sequences"


@dataclasses.dataclass
class Params:
    tokens: int = data_field(200_000)
    vocabulary: int = data_field(10_000)
    batch_size: int = 20
    num_steps: int = 35
    epochs: int = 300
    batches: int = 8_000


def _path(data_dir):
    return os.path.join(data_dir, "ptb.train.ids.npy")


def prepare(params, data_dir):
    rng = np.random.default_rng(0)
    # Zipf-like ids, as word ids sorted by frequency are.
    ids = np.minimum(rng.zipf(1.2, size=params.tokens) - 1, params.vocabulary - 1)
    np.save(_path(data_dir), ids.astype(np.int32))


def load(params, data_dir):
    return np.load(_path(data_dir))


def build(tf, raw_data, params):
    batch_size, num_steps = params.batch_size, params.num_steps
    with tf.name_scope("PTBProducer"):
        raw_data = tf.convert_to_tensor(raw_data, name="raw_data", dtype=tf.int32)
        data_len = tf.size(raw_data)
        batch_len = data_len // batch_size
        data = tf.reshape(raw_data[0: batch_size * batch_len], [batch_size, batch_len])
        epoch_size = (batch_len - 1) // num_steps
        assertion = tf.assert_positive(
            epoch_size, message="epoch_size == 0, decrease batch_size or num_steps")
        with tf.control_dependencies([assertion]):
            epoch_size = tf.identity(epoch_size, name="epoch_size")
        i = tf.train.range_input_producer(epoch_size, num_epochs=params.epochs,
                                          shuffle=False).dequeue()
        x = tf.strided_slice(data, [0, i * num_steps], [batch_size, (i + 1) * num_steps])
        x.set_shape([batch_size, num_steps])
        y = tf.strided_slice(data, [0, i * num_steps + 1], [batch_size, (i + 1) * num_steps + 1])
        y.set_shape([batch_size, num_steps])
        return x, y


def tf_data(tf, raw_data, params):
    batch_size, num_steps = params.batch_size, params.num_steps
    batch_len = len(raw_data) // batch_size
    data = raw_data[:batch_size * batch_len].reshape(batch_size, batch_len)
    epoch_size = (batch_len - 1) // num_steps
    span = epoch_size * num_steps

    def windows(array):  # [batch, span] -> [epoch_size, batch, num_steps]
        return array.reshape(batch_size, epoch_size, num_steps).transpose(1, 0, 2)

    return (tf.data.Dataset.from_tensor_slices((windows(data[:, :span]),
                                                windows(data[:, 1:span + 1])))
            .repeat(params.epochs).prefetch(1))
