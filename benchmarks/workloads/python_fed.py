"""Examples produced in Python, fed through placeholders into a FIFOQueue by a feeder thread.

    Python generator -> sess.run(enqueue, feed_dict={placeholders}) in a feeder thread
    (one example per run) -> FIFOQueue(capacity) -> dequeue_many(batch_size); the feeder
    closes the queue when the generator is exhausted

(the TF1 threading-and-queues tutorial's pattern). Values fed from Python cannot be part of
a tf.data pipeline, so under the shim this queue stays a buffer filled by the thread.

tf.data: `Dataset.from_generator` over the same Python generator, batch, prefetch(1).
"""
from __future__ import annotations

import dataclasses
import os
import threading

import numpy as np

from . import Pipeline, data_field

NAME = "python_fed"
DESCRIPTION = "FIFOQueue fed from Python through placeholders by a feeder thread, dequeue_many"
UNIT = "examples"


@dataclasses.dataclass
class Params:
    examples: int = data_field(5_000)
    num_features: int = data_field(64)
    epochs: int = 16
    batch_size: int = 128
    capacity: int = 1_000
    batches: int = 80


def _path(data_dir):
    return os.path.join(data_dir, "examples.npz")


def prepare(params, data_dir):
    rng = np.random.default_rng(0)
    np.savez(_path(data_dir),
             features=rng.normal(size=(params.examples, params.num_features)).astype(np.float32),
             labels=rng.integers(0, 10, size=params.examples).astype(np.int32))


def load(params, data_dir):
    with np.load(_path(data_dir)) as arrays:
        features, labels = arrays["features"], arrays["labels"]

    def examples():
        """The Python source: one (features, label) pair at a time, epoch after epoch."""
        for _ in range(params.epochs):
            for index in range(len(labels)):
                yield features[index], labels[index]

    return examples


def build(tf, examples, params):
    features = tf.placeholder(tf.float32, [params.num_features], name="features")
    label = tf.placeholder(tf.int32, [], name="label")
    queue = tf.FIFOQueue(params.capacity, [tf.float32, tf.int32],
                         shapes=[[params.num_features], []])
    enqueue = queue.enqueue([features, label])
    close = queue.close()
    cancel = queue.close(cancel_pending_enqueues=True)

    def feed(sess, coord):
        try:
            for example_features, example_label in examples():
                if coord.should_stop():
                    return
                sess.run(enqueue, feed_dict={features: example_features, label: example_label})
            sess.run(close)
        except (tf.errors.CancelledError, tf.errors.OutOfRangeError):
            if not coord.should_stop():
                raise
        except Exception as error:  # noqa: BLE001 - handed to the coordinator, as TF1 does
            coord.request_stop(error)

    def start(sess, coord):
        thread = threading.Thread(target=feed, args=(sess, coord), daemon=True, name="feeder")
        coord.register_thread(thread)
        thread.start()
        return [thread]

    def stop(sess):
        sess.run(cancel)  # unblocks a feeder waiting on a full queue

    return Pipeline(fetches=queue.dequeue_many(params.batch_size), start=start, stop=stop)


def tf_data(tf, examples, params):
    signature = (tf.TensorSpec([params.num_features], tf.float32), tf.TensorSpec([], tf.int32))
    return (tf.data.Dataset.from_generator(examples, output_signature=signature)
            .batch(params.batch_size, drop_remainder=True).prefetch(1))
