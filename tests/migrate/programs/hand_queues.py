"""Queues built by hand and filled by QueueRunners, as pre-`tf.train.batch` code did."""
import tensorflow.compat.v1 as tf


def threaded_batches(filenames, batch_size):
  """Two enqueue threads into a FIFOQueue, whole batches out."""
  filename_queue = tf.train.string_input_producer(filenames, num_epochs=2, shuffle=False)
  reader = tf.TFRecordReader()
  _, serialized = reader.read(filename_queue)
  digit = tf.parse_single_example(serialized, {'digit': tf.FixedLenFeature([], tf.int64)})
  digit = digit['digit'] * 3
  queue = tf.FIFOQueue(capacity=50, dtypes=[tf.int64, tf.int64], shapes=[[], []])
  enqueue_op = queue.enqueue([digit, digit + 1])
  qr = tf.train.QueueRunner(queue, [enqueue_op] * 2)
  tf.train.add_queue_runner(qr)
  first, second = queue.dequeue_many(batch_size)
  return first, second


def up_to_batches(filenames, batch_size):
  filename_queue = tf.train.string_input_producer(filenames, num_epochs=1, shuffle=False)
  _, serialized = tf.TFRecordReader().read(filename_queue)
  parsed = tf.parse_single_example(serialized, {'digit': tf.FixedLenFeature([], tf.int64)})
  queue = tf.FIFOQueue(20, [tf.int64], shapes=[[]])
  enqueue = queue.enqueue([parsed['digit']])
  tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue]))
  return queue.dequeue_up_to(batch_size)


def shuffled_batches(filenames, batch_size):
  filename_queue = tf.train.string_input_producer(filenames, num_epochs=2, shuffle=False)
  _, serialized = tf.TFRecordReader().read(filename_queue)
  parsed = tf.parse_single_example(serialized, {'digit': tf.FixedLenFeature([], tf.int64)})
  examples = tf.RandomShuffleQueue(capacity=30, min_after_dequeue=10, dtypes=[tf.int64],
                                   shapes=[[]])
  enqueue = examples.enqueue([parsed['digit']])
  tf.train.queue_runner.add_queue_runner(tf.train.queue_runner.QueueRunner(examples, [enqueue]))
  batch = examples.dequeue_many(batch_size)
  return batch


def padded_batches(filenames, batch_size):
  filename_queue = tf.train.string_input_producer(filenames, num_epochs=1, shuffle=False)
  _, serialized = tf.TFRecordReader().read(filename_queue)
  parsed = tf.parse_single_example(serialized, {'tokens': tf.VarLenFeature(tf.int64)})
  tokens = tf.sparse_tensor_to_dense(parsed['tokens'])
  queue = tf.PaddingFIFOQueue(10, [tf.int64], shapes=[[None]])
  enqueue = queue.enqueue([tokens])
  tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue]))
  return queue.dequeue_many(batch_size)


def single_elements(filenames):
  filename_queue = tf.train.string_input_producer(filenames, num_epochs=1, shuffle=False)
  _, serialized = tf.TFRecordReader().read(filename_queue)
  parsed = tf.parse_single_example(serialized, {'digit': tf.FixedLenFeature([], tf.int64)})
  queue = tf.FIFOQueue(5, [tf.int64, tf.string], shapes=[[], []])
  enqueue = queue.enqueue([parsed['digit'], serialized])
  tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue]))
  digit, record = queue.dequeue()
  return digit, tf.strings.length(record)
