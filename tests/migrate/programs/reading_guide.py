"""The 'Reading data' guide's pipeline: several reader copies joined into one batch."""
import tensorflow.compat.v1 as tf


def read_my_file_format(filename_queue):
  reader = tf.TextLineReader(skip_header_lines=1)
  _, record_string = reader.read(filename_queue)
  age, workclass, hours, income = tf.decode_csv(
      record_string, record_defaults=[[0], [''], [0.0], ['']])
  example = tf.stack([tf.cast(age, tf.float32), hours])
  label = tf.cast(tf.equal(income, '>50K'), tf.int32)
  return example, label


def input_pipeline(filenames, batch_size, read_threads, num_epochs=None):
  filename_queue = tf.train.string_input_producer(
      filenames, num_epochs=num_epochs, shuffle=True)
  example_list = [read_my_file_format(filename_queue)
                  for _ in range(read_threads)]
  min_after_dequeue = 5
  capacity = min_after_dequeue + 3 * batch_size
  example_batch, label_batch = tf.train.shuffle_batch_join(
      example_list, batch_size=batch_size, capacity=capacity,
      min_after_dequeue=min_after_dequeue)
  return example_batch, label_batch


def joined_in_order(filenames, batch_size):
  filename_queue = tf.train.string_input_producer(filenames, num_epochs=2, shuffle=False)
  example_list = [read_my_file_format(filename_queue), read_my_file_format(filename_queue)]
  return tf.train.batch_join(example_list, batch_size, allow_smaller_final_batch=True)


def endless(filenames, batch_size):
  """No num_epochs: the files again and again (the harness reads a few batches)."""
  filename_queue = tf.train.string_input_producer(filenames, shuffle=False)
  example, label = read_my_file_format(filename_queue)
  return tf.train.batch([example, label], batch_size)


def from_tensor(values, batch_size):
  queue = tf.train.input_producer(tf.constant(values), num_epochs=3, shuffle=True, seed=4)
  row = queue.dequeue()
  return tf.train.batch([row, tf.reduce_sum(row)], batch_size)
