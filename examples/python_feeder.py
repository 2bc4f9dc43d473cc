"""Python threads feeding a PaddingFIFOQueue through placeholders (the TF1 tutorials',
WaveNet's and DeepSpeech's reader pattern), unchanged but for the import.

    placeholders -> PaddingFIFOQueue.enqueue, run by 4 feeder threads under a Coordinator
    -> dequeue_up_to(batch_size) pads variable-length sequences -> a classifier trained
    until OutOfRangeError; the last feeder to finish closes the queue.

Values fed from Python cannot be part of a tf.data pipeline, so under the shim this queue is
the one thing that stays a buffer filled by threads: a bounded, closable queue with TF1's
blocking semantics (enqueue blocks when full, close ends the stream, dequeue drains it, then
raises OutOfRangeError).

Run it:  python examples/python_feeder.py            (under compat.v1, the shim)
         python examples/python_feeder.py --legacy   (under tensorflow.compat.v1)
"""
from __future__ import annotations

import argparse
import sys
import threading
import time

import numpy as np

NUM_FEATURES = 40
NUM_CLASSES = 3
NUM_FEEDERS = 4


def synthetic_utterances(count=400, seed=0):
    """(features [frames, 40], label) pairs; each class has its own mean feature level."""
    rng = np.random.default_rng(seed)
    utterances = []
    for _ in range(count):
        label = int(rng.integers(NUM_CLASSES))
        frames = int(rng.integers(5, 60))
        features = rng.normal(loc=label - 1.0, size=(frames, NUM_FEATURES)).astype(np.float32)
        utterances.append((features, label))
    return utterances


class FeederReader:
    """The shape of WaveNet's AudioReader: placeholders, a padding queue, feeder threads."""

    def __init__(self, tf, coord, utterances, num_threads=NUM_FEEDERS, capacity=64):
        self.coord = coord
        self.features = tf.placeholder(tf.float32, [None, NUM_FEATURES], name="features")
        self.label = tf.placeholder(tf.int32, [], name="label")
        self.queue = tf.PaddingFIFOQueue(capacity, [tf.float32, tf.int32, tf.int32],
                                         shapes=[[None, NUM_FEATURES], [], []])
        self.enqueue = self.queue.enqueue(
            [self.features, tf.shape(self.features)[0], self.label])
        self.close = self.queue.close()
        self.cancel = self.queue.close(cancel_pending_enqueues=True)
        self._shards = [utterances[index::num_threads] for index in range(num_threads)]
        self._lock = threading.Lock()
        self._finished = 0

    def dequeue(self, batch_size):
        """A padded batch: (features [batch, max_frames, 40], frame counts, labels)."""
        return self.queue.dequeue_up_to(batch_size)

    def _feed(self, sess, shard):
        with self.coord.stop_on_exception():
            for features, label in shard:
                if self.coord.should_stop():
                    return
                sess.run(self.enqueue, feed_dict={self.features: features, self.label: label})
            with self._lock:
                self._finished += 1
                if self._finished == len(self._shards):
                    sess.run(self.close)  # the last feeder ends the stream

    def start_threads(self, sess):
        threads = [threading.Thread(target=self._feed, args=(sess, shard), daemon=True,
                                    name=f"feeder-{index}")
                   for index, shard in enumerate(self._shards)]
        for thread in threads:
            self.coord.register_thread(thread)
            thread.start()
        return threads


def train(tf, utterances=None, batch_size=16):
    """Train on the fed stream once; returns (utterances seen, batches, seconds, accuracy)."""
    utterances = utterances if utterances is not None else synthetic_utterances()
    with tf.Graph().as_default():
        coord = tf.train.Coordinator()
        reader = FeederReader(tf, coord, utterances)
        features, frames, labels = reader.dequeue(batch_size)
        mask = tf.sequence_mask(frames, tf.shape(features)[1], dtype=tf.float32)
        mean = tf.reduce_sum(features * mask[:, :, None], axis=1) / tf.cast(
            frames[:, None], tf.float32)
        weights = tf.Variable(tf.zeros([NUM_FEATURES, NUM_CLASSES]))
        bias = tf.Variable(tf.zeros([NUM_CLASSES]))
        logits = tf.matmul(mean, weights) + bias
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        accuracy = tf.reduce_mean(
            tf.cast(tf.equal(tf.argmax(logits, axis=1, output_type=tf.int32), labels),
                    tf.float32))
        train_op = tf.train.AdamOptimizer(0.05).minimize(loss)
        batch_size_op = tf.size(labels)

        seen, batches, accuracy_value = 0, 0, float("nan")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)  # none here
            threads += reader.start_threads(sess)
            start = time.perf_counter()
            try:
                while not coord.should_stop():
                    _, accuracy_value, size = sess.run([train_op, accuracy, batch_size_op])
                    seen += size
                    batches += 1
            except tf.errors.OutOfRangeError:
                pass
            finally:
                coord.request_stop()
                sess.run(reader.cancel)  # unblocks feeders waiting on a full queue
            coord.join(threads, stop_grace_period_secs=10)
            seconds = time.perf_counter() - start
    return seen, batches, seconds, accuracy_value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--legacy", action="store_true",
                        help="run under tensorflow.compat.v1 queues instead of the shim")
    parser.add_argument("--utterances", type=int, default=400)
    args = parser.parse_args(argv)
    if args.legacy:
        import tensorflow.compat.v1 as tf
    else:
        import compat.v1 as tf
    tf.disable_v2_behavior()
    seen, batches, seconds, accuracy = train(tf, synthetic_utterances(args.utterances))
    side = "tensorflow.compat.v1 (legacy queues)" if args.legacy else "compat.v1 (shim)"
    print(f"{side}: {NUM_FEEDERS} feeder threads fed {seen} utterances in {batches} padded "
          f"batches in {seconds:.2f} s; last batch accuracy {accuracy:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
