"""Census-style CSV input functions."""
import tensorflow.compat.v1 as tf

COLUMNS = ['age', 'workclass', 'hours', 'income']
DEFAULTS = [[0], [''], [0.0], ['']]


def input_fn(data_files, batch_size, num_epochs=1, shuffle=False):
  filename_queue = tf.train.string_input_producer(data_files, num_epochs=num_epochs,
                                                  shuffle=False)
  reader = tf.TextLineReader(skip_header_lines=1)
  _, line = reader.read(filename_queue)
  columns = tf.decode_csv(line, record_defaults=DEFAULTS)
  features = dict(zip(COLUMNS, columns))
  income = features.pop('income')
  features['label'] = tf.cast(tf.equal(income, '>50K'), tf.int64)
  if shuffle:
    batch = tf.train.shuffle_batch(
        features, batch_size, capacity=100, min_after_dequeue=50, num_threads=2)
  else:
    batch = tf.train.batch(features, batch_size, allow_smaller_final_batch=True)
  label_batch = batch.pop('label')
  return batch, label_batch


def keyed_lines(data_files):
  queue = tf.train.string_input_producer(data_files, num_epochs=1, shuffle=False)
  reader = tf.TextLineReader()
  key, line = reader.read(queue)
  return key, line
