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


def joined_batches(tf, paths, batch_size=8, num_epochs=1, size=16):
    """Two preprocessing threads, each reading its own files and decoding, batch_join
    (`to_dataset` refuses a stream read by several consumers, e.g. one filename queue)."""
    entries = []
    for files in (paths[:1], paths[1:]):
        queue = tf.train.string_input_producer(files, num_epochs=num_epochs, shuffle=False)
        _, serialized = tf.TFRecordReader().read(queue)
        image, label = _decoded(tf, serialized, size)
        entries.append({"image": image * 2.0, "label": label})
    return tf.train.batch_join(entries, batch_size=batch_size)


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


def write_csv(directory, files=3, per_file=40):
    """CSV shards with a header line: rows (label, label / 4), labels 0..files*per_file-1."""
    paths = []
    for shard in range(files):
        path = directory / f"rows-{shard:03d}.csv"
        rows = [f"{label},{label / 4}" for label in range(shard * per_file, (shard + 1) * per_file)]
        path.write_text("label,value\n" + "\n".join(rows) + "\n")
        paths.append(str(path))
    return paths


def csv_batches(tf, paths, batch_size=8, num_epochs=1):
    """The CSV tutorial input: text lines after a header, decode_csv, tf.train.batch."""
    queue = tf.train.string_input_producer(paths, num_epochs=num_epochs, shuffle=False)
    _, line = tf.TextLineReader(skip_header_lines=1).read(queue)
    label, value = tf.decode_csv(line, record_defaults=[[0], [0.0]])
    values, labels = tf.train.batch([value, label], batch_size=batch_size)
    return values, labels


def write_fixed_length(directory, files=3, per_file=40):
    """Files of 4-byte little-endian int32 records after an 8-byte header: labels 0..119."""
    paths = []
    for shard in range(files):
        path = directory / f"records-{shard:03d}.bin"
        labels = np.arange(shard * per_file, (shard + 1) * per_file, dtype="<i4")
        path.write_bytes(b"HEADER!!" + labels.tobytes())
        paths.append(str(path))
    return paths


def fixed_length_batches(tf, paths, batch_size=8, num_epochs=1):
    """CIFAR-style input: fixed-length records after a header, decode_raw, tf.train.batch."""
    queue = tf.train.string_input_producer(paths, num_epochs=num_epochs, shuffle=False)
    _, record = tf.FixedLengthRecordReader(record_bytes=4, header_bytes=8).read(queue)
    label = tf.reshape(tf.decode_raw(record, tf.int32), [])
    values = tf.cast(label, tf.float32) / 4.0
    return tf.train.batch([values, label], batch_size=batch_size)


def write_whole_files(directory, files=24):
    """One file per record, holding its label as text: labels 0..files-1."""
    paths = []
    for label in range(files):
        path = directory / f"item-{label:03d}.txt"
        path.write_text(str(label))
        paths.append(str(path))
    return paths


def whole_file_batches(tf, paths, batch_size=4, num_epochs=1):
    """One record per file (images in a folder): WholeFileReader, tf.train.batch."""
    queue = tf.train.string_input_producer(paths, num_epochs=num_epochs, shuffle=False)
    _, contents = tf.WholeFileReader().read(queue)
    label = tf.strings.to_number(contents, tf.int32)
    return tf.train.batch([tf.cast(label, tf.float32), label], batch_size=batch_size)
