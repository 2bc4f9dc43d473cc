"""A folder of PNG photos with labels: slice_input_producer, then decode and resize."""
import tensorflow.compat.v1 as tf


def photo_batches(paths, labels, batch_size, num_epochs=None):
  image_path, label = tf.train.slice_input_producer([paths, labels], num_epochs=num_epochs,
                                                    shuffle=False)
  contents = tf.read_file(image_path)
  image = tf.image.decode_png(contents, channels=3)
  image = tf.image.resize_images(image, [5, 7])
  image.set_shape([5, 7, 3])
  return tf.train.batch([image, label], batch_size=batch_size,
                        allow_smaller_final_batch=True)


def shuffled_photos(paths, labels, batch_size):
  pair = tf.train.slice_input_producer([paths, labels], num_epochs=2, seed=5)
  image = tf.image.decode_png(tf.read_file(pair[0]), channels=3)
  image = tf.image.resize_bilinear(image[None], [4, 4])[0]
  image.set_shape([4, 4, 3])
  return tf.train.batch([image, pair[1]], batch_size=batch_size)


def whole_files(pattern_files, batch_size):
  queue = tf.train.string_input_producer(pattern_files, num_epochs=1, shuffle=False)
  reader = tf.WholeFileReader()
  name, contents = reader.read(queue)
  size = tf.strings.length(contents)
  return tf.train.batch([name, size], batch_size, allow_smaller_final_batch=True)


def indices(count, batch_size):
  queue = tf.train.range_input_producer(count, num_epochs=2, shuffle=True, seed=11)
  index = queue.dequeue()
  squared = index * index
  return tf.train.batch({'index': index, 'squared': squared}, batch_size)
