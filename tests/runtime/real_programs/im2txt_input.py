"""Image-captioning input (Show-and-Tell style): a prefetch queue, 4 preprocessing threads,
captions split into input/target word sequences, batched with dynamic padding.

    string_input_producer(TFRecord shards of SequenceExamples)
    -> TFRecordReader(s) -> values queue (RandomShuffleQueue for training, FIFOQueue for
       evaluation), filled by one QueueRunner
    -> 4 x values_queue.dequeue(), each followed by its own parse_single_sequence_example,
       decode_jpeg/resize/crop (+ flip and colour distortion when training) and caption split
       (input = caption[:-1], target = caption[1:], mask of ones)
    -> batch_join(..., dynamic_pad=True) over the 4 entries (captions have different lengths).

`build(tf, data_dir, ...)` is the pipeline; `write_data(data_dir)` writes small shards of
tf.train.SequenceExample protos: a JPEG, an image id, and a caption of word ids.
"""
from __future__ import annotations

import os

import numpy as np

from image_files import encoded_images

START_ID, END_ID = 1, 2
VOCAB_SIZE = 40
NUM_SHARDS = 3
RECORDS_PER_SHARD = 8
SOURCE_SIZE = (36, 44)
RESIZE = (30, 30)
IMAGE_SIZE = 24

IMAGE_FEATURE = "image/data"
IMAGE_ID_FEATURE = "image/image_id"
CAPTION_FEATURE = "image/caption_ids"


# --------------------------------------------------------------------------- data


def write_data(data_dir, num_shards=NUM_SHARDS, records_per_shard=RECORDS_PER_SHARD, seed=0):
    """Shards named like im2txt's build_mscoco_data output; returns their paths."""
    import tensorflow as tf_root
    os.makedirs(data_dir, exist_ok=True)
    rng = np.random.default_rng(seed)
    train = tf_root.train
    paths = []
    for shard in range(num_shards):
        images = rng.integers(0, 256, size=(records_per_shard, *SOURCE_SIZE, 3), dtype=np.uint8)
        encoded = encoded_images(images, "jpeg", quality=85)
        path = os.path.join(data_dir, f"train-{shard:05d}-of-{num_shards:05d}")
        with tf_root.io.TFRecordWriter(path) as writer:
            for index, jpeg in enumerate(encoded):
                words = rng.integers(3, VOCAB_SIZE, size=int(rng.integers(2, 12)))
                caption = [START_ID, *words.tolist(), END_ID]
                context = train.Features(feature={
                    IMAGE_ID_FEATURE: train.Feature(
                        int64_list=train.Int64List(value=[shard * 1000 + index])),
                    IMAGE_FEATURE: train.Feature(bytes_list=train.BytesList(value=[jpeg])),
                })
                feature_lists = train.FeatureLists(feature_list={
                    CAPTION_FEATURE: train.FeatureList(feature=[
                        train.Feature(int64_list=train.Int64List(value=[word]))
                        for word in caption]),
                })
                example = train.SequenceExample(context=context, feature_lists=feature_lists)
                writer.write(example.SerializeToString())
        paths.append(path)
    return paths


# --------------------------------------------------------------------------- inputs


def prefetch_input_data(tf, reader_factory, file_pattern, is_training, batch_size,
                        values_per_shard, input_queue_capacity_factor=16,
                        num_reader_threads=1, num_epochs=None):
    """A queue of serialized records, filled by reader threads (one QueueRunner)."""
    data_files = []
    for pattern in file_pattern.split(","):
        data_files.extend(tf.gfile.Glob(pattern))
    if not data_files:
        raise ValueError("Found no input files matching %s" % file_pattern)
    data_files.sort()

    if is_training:
        filename_queue = tf.train.string_input_producer(
            data_files, shuffle=True, capacity=16, num_epochs=num_epochs, name="shuffle_input")
        min_queue_examples = values_per_shard * input_queue_capacity_factor
        capacity = min_queue_examples + 100 * batch_size
        values_queue = tf.RandomShuffleQueue(capacity=capacity,
                                             min_after_dequeue=min_queue_examples,
                                             dtypes=[tf.string], name="random_input_queue")
    else:
        filename_queue = tf.train.string_input_producer(
            data_files, shuffle=False, capacity=1, num_epochs=num_epochs, name="input_queue")
        capacity = values_per_shard + 3 * batch_size
        values_queue = tf.FIFOQueue(capacity=capacity, dtypes=[tf.string],
                                    name="fifo_input_queue")

    enqueue_ops = []
    for _ in range(num_reader_threads):
        _, value = reader_factory().read(filename_queue)
        enqueue_ops.append(values_queue.enqueue([value]))
    tf.train.queue_runner.add_queue_runner(
        tf.train.queue_runner.QueueRunner(values_queue, enqueue_ops))
    tf.summary.scalar("queue/%s/fraction_of_%d_full" % (values_queue.name, capacity),
                      tf.cast(values_queue.size(), tf.float32) * (1. / capacity))
    return values_queue


def parse_sequence_example(tf, serialized):
    context, sequence = tf.parse_single_sequence_example(
        serialized,
        context_features={
            IMAGE_FEATURE: tf.FixedLenFeature([], dtype=tf.string),
            IMAGE_ID_FEATURE: tf.FixedLenFeature([], dtype=tf.int64),
        },
        sequence_features={CAPTION_FEATURE: tf.FixedLenSequenceFeature([], dtype=tf.int64)})
    return context[IMAGE_FEATURE], context[IMAGE_ID_FEATURE], sequence[CAPTION_FEATURE]


def distort_image(tf, image, thread_id):
    """Flip, then colour jitter in one of two orders chosen by the thread id."""
    with tf.name_scope("flip_horizontal", values=[image]):
        image = tf.image.random_flip_left_right(image)
    with tf.name_scope("distort_color", values=[image]):
        if thread_id % 2 == 0:
            image = tf.image.random_brightness(image, max_delta=32. / 255.)
            image = tf.image.random_saturation(image, lower=0.5, upper=1.5)
            image = tf.image.random_hue(image, max_delta=0.032)
            image = tf.image.random_contrast(image, lower=0.5, upper=1.5)
        else:
            image = tf.image.random_brightness(image, max_delta=32. / 255.)
            image = tf.image.random_contrast(image, lower=0.5, upper=1.5)
            image = tf.image.random_saturation(image, lower=0.5, upper=1.5)
            image = tf.image.random_hue(image, max_delta=0.032)
        return tf.clip_by_value(image, 0.0, 1.0)


def process_image(tf, encoded_image, is_training, thread_id=0, resize=RESIZE,
                  image_size=IMAGE_SIZE):
    """JPEG bytes -> float image [size, size, 3] in [-1, 1]."""
    with tf.name_scope("decode", values=[encoded_image]):
        image = tf.image.decode_jpeg(encoded_image, channels=3)
    image = tf.image.convert_image_dtype(image, dtype=tf.float32)
    image = tf.image.resize_images(image, size=list(resize),
                                   method=tf.image.ResizeMethod.BILINEAR)
    if is_training:
        image = tf.random_crop(image, [image_size, image_size, 3])
    else:
        image = tf.image.resize_image_with_crop_or_pad(image, image_size, image_size)
    if is_training:
        image = distort_image(tf, image, thread_id)
    return (image - 0.5) * 2.0


def batch_with_dynamic_pad(tf, images_and_captions, batch_size, queue_capacity,
                           add_summaries=True):
    """Input/target sequences (caption shifted by one) and their mask, padded per batch."""
    enqueue_list = []
    for image, image_id, caption in images_and_captions:
        caption_length = tf.shape(caption)[0]
        input_length = tf.expand_dims(tf.subtract(caption_length, 1), 0)
        input_seq = tf.slice(caption, [0], input_length)
        target_seq = tf.slice(caption, [1], input_length)
        indicator = tf.ones(input_length, dtype=tf.int32)
        enqueue_list.append([image, image_id, input_seq, target_seq, indicator])
    images, image_ids, input_seqs, target_seqs, mask = tf.train.batch_join(
        enqueue_list, batch_size=batch_size, capacity=queue_capacity, dynamic_pad=True,
        name="batch_and_pad")
    if add_summaries:
        lengths = tf.add(tf.reduce_sum(mask, 1), 1)
        tf.summary.scalar("caption_length/batch_min", tf.reduce_min(lengths))
        tf.summary.scalar("caption_length/batch_max", tf.reduce_max(lengths))
        tf.summary.scalar("caption_length/batch_mean", tf.reduce_mean(lengths))
    return images, image_ids, input_seqs, target_seqs, mask


def build(tf, data_dir, is_training=True, batch_size=4, num_preprocess_threads=4,
          num_reader_threads=1, values_per_shard=RECORDS_PER_SHARD,
          input_queue_capacity_factor=2, num_epochs=None):
    """{"images", "image_ids", "input_seqs", "target_seqs", "input_mask"} batches."""
    if num_preprocess_threads % 2:
        raise ValueError("num_preprocess_threads must be even (got %d)"
                         % num_preprocess_threads)
    input_queue = prefetch_input_data(
        tf, tf.TFRecordReader, os.path.join(data_dir, "train-?????-of-?????"), is_training,
        batch_size, values_per_shard, input_queue_capacity_factor, num_reader_threads,
        num_epochs)
    images_and_captions = []
    for thread_id in range(num_preprocess_threads):
        serialized = input_queue.dequeue()
        encoded_image, image_id, caption = parse_sequence_example(tf, serialized)
        image = process_image(tf, encoded_image, is_training, thread_id)
        images_and_captions.append([image, image_id, caption])
    queue_capacity = 2 * num_preprocess_threads * batch_size
    images, image_ids, input_seqs, target_seqs, mask = batch_with_dynamic_pad(
        tf, images_and_captions, batch_size, queue_capacity)
    return {"images": images, "image_ids": image_ids, "input_seqs": input_seqs,
            "target_seqs": target_seqs, "input_mask": mask}
