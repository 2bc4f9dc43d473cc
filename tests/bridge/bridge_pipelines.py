"""Legacy input modules, written as TF1-era code was, for the bridge tests.

Each `build(tf, ...)` takes the `tf` module (tensorflow.compat.v1 or compat.v1) and returns
what a TF1 training loop fetches.
"""
import numpy as np

import tensorflow as tf_real


def write_records(directory, files=3, per_file=40, size=16):
    """TFRecord shards of tf.train.Example(image_raw: `size` bytes, label: int64)."""
    paths = []
    rng = np.random.default_rng(7)
    for shard in range(files):
        path = str(directory / f"train-{shard:05d}-of-{files:05d}.tfrecord")
        with tf_real.io.TFRecordWriter(path) as writer:
            for index in range(per_file):
                label = shard * per_file + index
                image = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
                example = tf_real.train.Example(features=tf_real.train.Features(feature={
                    "image_raw": tf_real.train.Feature(bytes_list=tf_real.train.BytesList(
                        value=[image])),
                    "label": tf_real.train.Feature(int64_list=tf_real.train.Int64List(
                        value=[label]))}))
                writer.write(example.SerializeToString())
        paths.append(path)
    return paths


def _decoded(tf, serialized, size):
    features = tf.parse_single_example(serialized, features={
        "image_raw": tf.FixedLenFeature([], tf.string),
        "label": tf.FixedLenFeature([], tf.int64)})
    image = tf.decode_raw(features["image_raw"], tf.uint8)
    image.set_shape([size])
    image = tf.cast(image, tf.float32) / 255.0
    return image, tf.cast(features["label"], tf.int32)


def ordered_batches(tf, paths, batch_size=8, num_epochs=1, size=16):
    """Deterministic: files in order, one reader, tf.train.batch."""
    queue = tf.train.string_input_producer(paths, num_epochs=num_epochs, shuffle=False)
    _, serialized = tf.TFRecordReader().read(queue)
    image, label = _decoded(tf, serialized, size)
    images, labels = tf.train.batch([image, label], batch_size=batch_size)
    return images, labels


def shuffled_batches(tf, paths, batch_size=8, num_epochs=1, size=16):
    """The tutorial input: shuffled files, random flips under v1 control flow, shuffle_batch."""
    queue = tf.train.string_input_producer(paths, num_epochs=num_epochs)
    _, serialized = tf.TFRecordReader().read(queue)
    image, label = _decoded(tf, serialized, size)
    side = int(np.sqrt(size))
    picture = tf.reshape(image, [side, side, 1])
    picture = tf.image.random_flip_left_right(picture)
    picture = tf.cond(tf.equal(label % 2, 0), lambda: picture * 0.5, lambda: picture)
    images, labels = tf.train.shuffle_batch([tf.reshape(picture, [size]), label],
                                            batch_size=batch_size, capacity=64,
                                            min_after_dequeue=16)
    return {"image": images, "label": labels}
