"""An input module as TF1 code wrote it: the guide's 'before' (see README.md, step 4).

`compat-migrate migration_guide/example_inputs.py -o migration_guide/example_inputs_tf2.py`
writes the 'after'; a test keeps the committed file identical to that output and proves it
gives these functions' batches.
"""
import tensorflow.compat.v1 as tf

FEATURES = {
    'pixels': tf.FixedLenFeature([], tf.string),
    'label': tf.FixedLenFeature([], tf.int64),
}


def parse_record(filename_queue, side):
  reader = tf.TFRecordReader()
  _, serialized = reader.read(filename_queue)
  example = tf.parse_single_example(serialized, features=FEATURES)
  image = tf.reshape(tf.decode_raw(example['pixels'], tf.uint8), [side, side, 1])
  # Training-time augmentation, seeded so that runs can be compared.
  image = tf.image.random_flip_left_right(image, seed=7)
  image = tf.image.resize_images(image, [side // 2, side // 2])
  return image, tf.cast(example['label'], tf.int32)


def train_input(filenames, batch_size, side=8):
  """Shuffled files, four reader copies, a shuffled batch."""
  with tf.name_scope('train_input'):
    filename_queue = tf.train.string_input_producer(filenames, num_epochs=None)
    copies = [parse_record(filename_queue, side) for _ in range(4)]
    images, labels = tf.train.shuffle_batch_join(
        copies, batch_size=batch_size, capacity=200, min_after_dequeue=100)
    tf.summary.image('train_images', images)
    return {'image': images}, labels


def eval_input(filenames, batch_size, side=8):
  """Every record once, in file order; the last batch may be smaller."""
  filename_queue = tf.train.string_input_producer(filenames, num_epochs=1, shuffle=False)
  image, label = parse_record(filename_queue, side)
  images, labels = tf.train.batch([image, label], batch_size,
                                  allow_smaller_final_batch=True)
  return {'image': images}, labels


def fed_input(batch_size):
  """Fed by a Python thread: compat-migrate reports it and leaves it on the shim."""
  name = tf.placeholder(tf.string, [])
  queue = tf.FIFOQueue(32, tf.string)
  tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue(name)]))
  return tf.train.batch([queue.dequeue()], batch_size)
