"""Digit images stored as TFRecords, read as the fully-connected reader tutorial did."""
import tensorflow.compat.v1 as tf

PIXELS = 64


def decode_example(filename_queue):
  reader = tf.TFRecordReader()
  _, serialized = reader.read(filename_queue)
  parsed = tf.parse_single_example(
      serialized,
      features={
          'pixels': tf.FixedLenFeature([], tf.string),
          'digit': tf.FixedLenFeature([], tf.int64),
      })
  # raw bytes -> floats centred on zero
  image = tf.decode_raw(parsed['pixels'], tf.uint8)
  image.set_shape([PIXELS])
  image = tf.cast(image, tf.float32) * (1. / 255) - 0.5
  digit = tf.cast(parsed['digit'], tf.int32)
  return image, digit


def inputs(filenames, batch_size, num_epochs):
  """Batches of (image, digit), num_epochs passes over the files in order."""
  if not num_epochs:
    num_epochs = None
  with tf.name_scope('input'):
    filename_queue = tf.train.string_input_producer(
        filenames, num_epochs=num_epochs, shuffle=False)
    image, digit = decode_example(filename_queue)
    images, digits = tf.train.batch(
        [image, digit], batch_size=batch_size, num_threads=1,
        capacity=100 + 3 * batch_size, allow_smaller_final_batch=True)
    return images, digits


def train_inputs(filenames, batch_size, num_epochs):
  """Shuffled files and shuffled examples, two preprocessing threads."""
  filename_queue = tf.train.string_input_producer(filenames, num_epochs=num_epochs)
  image, digit = decode_example(filename_queue)
  images, digits = tf.train.shuffle_batch(
      [image, digit], batch_size=batch_size, num_threads=2,
      capacity=40 + 3 * batch_size,
      # Ensures a minimum amount of shuffling of examples.
      min_after_dequeue=40)
  return images, digits


def compressed_inputs(filenames, batch_size):
  queue = tf.train.string_input_producer(filenames, num_epochs=1, shuffle=False)
  options = tf.python_io.TFRecordOptions(tf.python_io.TFRecordCompressionType.GZIP)
  reader = tf.TFRecordReader(options=options)
  key, serialized = reader.read(queue)
  digit = tf.parse_single_example(
      serialized, {'digit': tf.FixedLenFeature([], tf.int64)})['digit']
  return tf.train.batch([key, digit], batch_size, allow_smaller_final_batch=False)


def chunked_inputs(filenames, batch_size):
  """Reads up to 3 records at a time and batches their rows."""
  queue = tf.train.string_input_producer(filenames, num_epochs=2, shuffle=False)
  reader = tf.TFRecordReader()
  _, records = reader.read_up_to(queue, 3)
  parsed = tf.parse_example(records, {'digit': tf.FixedLenFeature([], tf.int64)})
  return tf.train.batch([parsed['digit']], batch_size, enqueue_many=True,
                        allow_smaller_final_batch=True)


def even_digits(filenames, batch_size):
  """Only the even digits are batched (keep_input)."""
  queue = tf.train.string_input_producer(filenames, num_epochs=1, shuffle=False)
  _, serialized = tf.TFRecordReader().read(queue)
  digit = tf.parse_single_example(
      serialized, {'digit': tf.FixedLenFeature([], tf.int64)})['digit']
  return tf.train.maybe_batch([digit], tf.equal(digit % 2, 0), batch_size,
                              allow_smaller_final_batch=True)


def kept_rows(filenames, batch_size):
  """Rows read three at a time; the ones not divisible by three are kept."""
  queue = tf.train.string_input_producer(filenames, num_epochs=1, shuffle=False)
  _, records = tf.TFRecordReader().read_up_to(queue, 3)
  digits = tf.parse_example(records, {'digit': tf.FixedLenFeature([], tf.int64)})['digit']
  return tf.train.maybe_batch([digits], tf.not_equal(digits % 3, 0), batch_size,
                              enqueue_many=True, allow_smaller_final_batch=True)


def shuffled_odd_digits(filenames, batch_size):
  queue = tf.train.string_input_producer(filenames, num_epochs=2)
  _, serialized = tf.TFRecordReader().read(queue)
  digit = tf.parse_single_example(
      serialized, {'digit': tf.FixedLenFeature([], tf.int64)})['digit']
  return tf.train.maybe_shuffle_batch([digit], batch_size, capacity=30, min_after_dequeue=10,
                                      keep_input=tf.equal(digit % 2, 1))
