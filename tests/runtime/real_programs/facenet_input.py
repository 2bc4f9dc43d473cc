"""Face-recognition trainer input (FaceNet style): file names fed from Python, batch size fed
on every step.

    placeholders (image paths, labels, per-image control flags)
    -> FIFOQueue.enqueue_many, run from a Python feeder thread (sess.run with feed_dict in a
       loop, then close)
    -> dequeue -> read_file -> decode_png -> tf.cond on the control flags: random crop or
       central crop/pad, random flip or not, fixed or per-image standardization
    -> tf.train.batch(batch_size=<int32 placeholder>, allow_smaller_final_batch=True)

`build(tf, data_dir, ...)` returns a `FaceInput` with the placeholders, the enqueue/close ops
and the batch tensors; `feed(...)` is the feeder-thread body, `dataset(...)` lists the images
and labels as the trainer does, `write_data(data_dir)` writes small PNG "face" folders.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from image_files import encoded_images

IMAGE_SIZE = (20, 20)
SOURCE_SIZE = (24, 26)
NUM_PEOPLE = 4
IMAGES_PER_PERSON = 6

# Bits of the per-image control word.
RANDOM_CROP = 1
RANDOM_FLIP = 2
FIXED_STANDARDIZATION = 4


def write_data(data_dir, num_people=NUM_PEOPLE, per_person=IMAGES_PER_PERSON, seed=0):
    """data_dir/person_XX/person_XX_000N.png, one folder per identity."""
    rng = np.random.default_rng(seed)
    for person in range(num_people):
        folder = os.path.join(data_dir, f"person_{person:02d}")
        os.makedirs(folder, exist_ok=True)
        images = rng.integers(0, 256, size=(per_person, *SOURCE_SIZE, 3), dtype=np.uint8)
        for index, png in enumerate(encoded_images(images)):
            with open(os.path.join(folder, f"person_{person:02d}_{index:04d}.png"), "wb") as out:
                out.write(png)
    return data_dir


def dataset(data_dir):
    """(image paths, labels): every image of every identity, identities in sorted order."""
    paths, labels = [], []
    for label, person in enumerate(sorted(os.listdir(data_dir))):
        folder = os.path.join(data_dir, person)
        for name in sorted(os.listdir(folder)):
            paths.append(os.path.join(folder, name))
            labels.append(label)
    return paths, labels


@dataclass
class FaceInput:
    image_paths: object    # placeholder string [None, 1]
    labels: object         # placeholder int32 [None, 1]
    control: object        # placeholder int32 [None, 1]
    batch_size: object     # placeholder int32 [] (or the fixed int given to build)
    enqueue_op: object
    close_op: object
    image_batch: object
    label_batch: object

    def fetches(self):
        return {"images": self.image_batch, "labels": self.label_batch}


def _flag(tf, control, bit):
    return tf.equal(tf.mod(tf.floor_div(control, bit), 2), 1)


def build(tf, data_dir=None, image_size=IMAGE_SIZE, capacity=1000, batch_size=None):
    """The input graph; nothing is enqueued until `feed` runs.

    batch_size: None (the trainer's way) makes it an int32 placeholder fed on every step.
    """
    image_paths = tf.placeholder(tf.string, shape=(None, 1), name="image_paths")
    labels = tf.placeholder(tf.int32, shape=(None, 1), name="labels")
    control = tf.placeholder(tf.int32, shape=(None, 1), name="control")
    if batch_size is None:
        batch_size = tf.placeholder(tf.int32, name="batch_size")

    input_queue = tf.FIFOQueue(capacity=capacity, dtypes=[tf.string, tf.int32, tf.int32],
                               shapes=[(1,), (1,), (1,)], shared_name=None, name=None)
    enqueue_op = input_queue.enqueue_many([image_paths, labels, control], name="enqueue_op")
    close_op = input_queue.close(name="close_op")

    filenames, label, flags = input_queue.dequeue()
    images = []
    for filename in tf.unstack(filenames):
        contents = tf.read_file(filename)
        image = tf.image.decode_png(contents, channels=3)
        image = tf.cond(_flag(tf, flags[0], RANDOM_CROP),
                        lambda: tf.random_crop(image, image_size + (3,)),
                        lambda: tf.image.resize_image_with_crop_or_pad(image, *image_size))
        image = tf.cond(_flag(tf, flags[0], RANDOM_FLIP),
                        lambda: tf.image.random_flip_left_right(image),
                        lambda: tf.identity(image))
        image = tf.cond(_flag(tf, flags[0], FIXED_STANDARDIZATION),
                        lambda: (tf.cast(image, tf.float32) - 127.5) / 128.0,
                        lambda: tf.image.per_image_standardization(image))
        image.set_shape(image_size + (3,))
        images.append(image)

    image_batch, label_batch = tf.train.batch(
        [tf.stack(images), label], batch_size=batch_size, shapes=[image_size + (3,), ()],
        enqueue_many=True, capacity=4 * 100, allow_smaller_final_batch=True)
    image_batch = tf.identity(image_batch, "image_batch")
    label_batch = tf.identity(label_batch, "label_batch")
    return FaceInput(image_paths, labels, control, batch_size, enqueue_op, close_op,
                     image_batch, label_batch)


def control_flags(count, seed=0):
    """Per-image control words, as the trainer derives them from its options."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, 8, size=count).astype(np.int32)


def feed(sess, inputs: FaceInput, paths, labels, flags, chunk=5, coord=None):
    """Feeder-thread body: enqueue the epoch in chunks, then close the queue."""
    for start in range(0, len(paths), chunk):
        if coord is not None and coord.should_stop():
            return
        stop = start + chunk
        sess.run(inputs.enqueue_op, feed_dict={
            inputs.image_paths: np.expand_dims(np.array(paths[start:stop], dtype=object), 1),
            inputs.labels: np.expand_dims(np.array(labels[start:stop], dtype=np.int32), 1),
            inputs.control: np.expand_dims(np.array(flags[start:stop], dtype=np.int32), 1),
        })
    sess.run(inputs.close_op)
