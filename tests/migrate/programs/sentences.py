"""Variable-length token sequences, batched with dynamic padding."""
import tensorflow.compat.v1 as tf


def padded_sequences(filenames, batch_size):
  filename_queue = tf.train.string_input_producer(filenames, num_epochs=1, shuffle=False)
  reader = tf.TFRecordReader()
  _, example = reader.read(filename_queue)
  context = tf.parse_single_example(example, features={
      'tokens': tf.VarLenFeature(tf.int64), 'length': tf.FixedLenFeature([], tf.int64)})
  tokens = tf.sparse_tensor_to_dense(context['tokens'])
  return tf.train.batch([tokens, context['length']], batch_size, dynamic_pad=True,
                        allow_smaller_final_batch=True)


def fed_sentences(batch_size):
  """Fed from Python threads: not an input compat-migrate can follow."""
  sentence = tf.placeholder(tf.string, [])
  queue = tf.FIFOQueue(10, tf.string)
  enqueue = queue.enqueue(sentence)
  tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue]))
  return tf.train.batch([queue.dequeue()], batch_size)
