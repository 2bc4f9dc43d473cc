# Migrated from example_inputs.py by compat-migrate: legacy TF1 queue input
# functions rewritten as tf.data, for TensorFlow 2 (no compat import needed by the
# migrated functions). Each keeps its name and parameters and returns a
# tf.data.Dataset whose elements are what the legacy function returned per run.
# Migrated: train_input, eval_input.
# NOT migrated: fed_input (line 50: FIFOQueue fed from Python: a queue fed from Python (its
#   enqueue reads placeholders, not a reader): write the feeder as
#   `tf.data.Dataset.from_generator(feeder, output_signature=...)` yielding what it enqueued,
#   then batch that dataset); it runs the original through compat.to_dataset.
# train_input, line 33: a tf.summary call on the pipeline's tensors is left out (tf.data keeps
#   no summary collection): write it in the training loop.
# Kept TF1's tf.image.resize_images (under tf.compat.v1): TF2's tf.image.resize samples pixel
#   centres (half_pixel_centers).
"""An input module as TF1 code wrote it: the guide's 'before' (see README.md, step 4).

`compat-migrate migration_guide/example_inputs.py -o migration_guide/example_inputs_tf2.py`
writes the 'after'; a test keeps the committed file identical to that output and proves it
gives these functions' batches.
"""
import tensorflow as tf

FEATURES = {
    'pixels': tf.io.FixedLenFeature([], tf.string),
    'label': tf.io.FixedLenFeature([], tf.int64),
}


def train_input(filenames, batch_size, side=8):
    """Shuffled files, four reader copies, a shuffled batch."""
    names = tf.convert_to_tensor(filenames, tf.string)
    dataset = tf.data.Dataset.from_tensors(names).repeat()
    # One permutation per epoch, drawn as TF1's producer draws it.
    dataset = dataset.flat_map(lambda epoch: tf.data.Dataset.from_tensor_slices(tf.random.shuffle(epoch, seed=None)))
    dataset = dataset.interleave(tf.data.TFRecordDataset, cycle_length=4, num_parallel_calls=4)
    def parse_element(serialized):
        example = tf.io.parse_single_example(serialized, features=FEATURES)
        image = tf.reshape(tf.io.decode_raw(example['pixels'], tf.uint8), [side, side, 1])
        # Training-time augmentation, seeded so that runs can be compared.
        image = tf.image.random_flip_left_right(image, seed=7)
        image = tf.compat.v1.image.resize_images(image, [side // 2, side // 2])
        joined_element = image, tf.cast(example['label'], tf.int32)
        return joined_element
    dataset = dataset.map(parse_element, num_parallel_calls=4)
    # TF1's dequeue samples from min_after_dequeue + 1 elements (at most capacity).
    dataset = dataset.shuffle(101, seed=None)
    dataset = dataset.batch(batch_size, drop_remainder=True)
    def on_batch(images, labels):
        return {'image': images}, labels
    dataset = dataset.map(on_batch)
    return dataset.prefetch(tf.data.AUTOTUNE)


def eval_input(filenames, batch_size, side=8):
    """Every record once, in file order; the last batch may be smaller."""
    names = tf.convert_to_tensor(filenames, tf.string)
    dataset = tf.data.Dataset.from_tensor_slices(names).repeat(1)
    # 64 files per reader dataset, read one after the other.
    dataset = dataset.batch(64).flat_map(tf.data.TFRecordDataset)
    def parse_element(serialized):
        example = tf.io.parse_single_example(serialized, features=FEATURES)
        image = tf.reshape(tf.io.decode_raw(example['pixels'], tf.uint8), [side, side, 1])
        # Training-time augmentation, seeded so that runs can be compared.
        image = tf.image.random_flip_left_right(image, seed=7)
        image = tf.compat.v1.image.resize_images(image, [side // 2, side // 2])
        image, label = image, tf.cast(example['label'], tf.int32)
        return (image, label)
    dataset = dataset.map(parse_element)
    dataset = dataset.batch(batch_size, drop_remainder=False)
    def on_batch(images, labels):
        return {'image': images}, labels
    dataset = dataset.map(on_batch)
    return dataset.prefetch(tf.data.AUTOTUNE)


def fed_input(batch_size):
    """NOT MIGRATED by compat-migrate (line 50: FIFOQueue fed from Python: a queue fed from Python (its enqueue reads placeholders, not a reader): write the feeder as `tf.data.Dataset.from_generator(feeder, output_signature=...)` yielding what it enqueued, then batch that dataset).

    Runs the original function on the compat.v1 shim and hands its stream to TF2.
    """
    import importlib
    import compat
    from compat.migrate import on_shim
    legacy = importlib.import_module('example_inputs')
    return compat.to_dataset(lambda tf: on_shim(legacy.fed_input)(batch_size))
