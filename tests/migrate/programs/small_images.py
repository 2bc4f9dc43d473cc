"""CIFAR-style binary records: a label byte then a depth-major image, with augmentation."""
import tensorflow.compat.v1 as tf

SIDE = 8
CROP = 6


class ImageRecord(object):
  pass


def read_record(filename_queue):
  """One record of the binary format."""
  result = ImageRecord()
  label_bytes = 1
  result.height = SIDE
  result.width = SIDE
  result.depth = 3
  image_bytes = result.height * result.width * result.depth
  record_bytes = label_bytes + image_bytes

  reader = tf.FixedLengthRecordReader(record_bytes=record_bytes, header_bytes=2)
  result.key, value = reader.read(filename_queue)
  record = tf.decode_raw(value, tf.uint8)
  result.label = tf.cast(tf.strided_slice(record, [0], [label_bytes]), tf.int32)
  depth_major = tf.reshape(
      tf.strided_slice(record, [label_bytes], [label_bytes + image_bytes]),
      [result.depth, result.height, result.width])
  result.uint8image = tf.transpose(depth_major, [1, 2, 0])
  return result


def _batch_of(image, label, min_queue_examples, batch_size, shuffle):
  num_preprocess_threads = 3
  if shuffle:
    images, label_batch = tf.train.shuffle_batch(
        [image, label], batch_size=batch_size, num_threads=num_preprocess_threads,
        capacity=min_queue_examples + 3 * batch_size, min_after_dequeue=min_queue_examples)
  else:
    images, label_batch = tf.train.batch(
        [image, label], batch_size=batch_size, num_threads=num_preprocess_threads,
        capacity=min_queue_examples + 3 * batch_size)
  tf.summary.image('images', images)
  return images, tf.reshape(label_batch, [batch_size])


def distorted_inputs(filenames, batch_size):
  filename_queue = tf.train.string_input_producer(filenames, num_epochs=3)
  read_input = read_record(filename_queue)
  reshaped_image = tf.cast(read_input.uint8image, tf.float32)
  # Randomly crop, flip and change brightness (op seeds: the harness compares values).
  distorted_image = tf.random_crop(reshaped_image, [CROP, CROP, 3], seed=1)
  distorted_image = tf.image.random_flip_left_right(distorted_image, seed=2)
  distorted_image = tf.image.random_brightness(distorted_image, max_delta=63, seed=3)
  float_image = tf.image.per_image_standardization(distorted_image)
  float_image.set_shape([CROP, CROP, 3])
  read_input.label.set_shape([1])
  min_queue_examples = 20
  print('Filling queue with %d images before starting to train.' % min_queue_examples)
  return _batch_of(float_image, read_input.label, min_queue_examples, batch_size,
                   shuffle=True)


def eval_inputs(filenames, batch_size):
  filename_queue = tf.train.string_input_producer(filenames, num_epochs=1, shuffle=False)
  read_input = read_record(filename_queue)
  reshaped_image = tf.cast(read_input.uint8image, tf.float32)
  resized_image = tf.image.resize_image_with_crop_or_pad(reshaped_image, CROP, CROP)
  float_image = tf.image.per_image_standardization(resized_image)
  float_image.set_shape([CROP, CROP, 3])
  read_input.label.set_shape([1])
  return _batch_of(float_image, read_input.label, 10, batch_size, shuffle=False)


def keyed_eval_inputs(filenames):
  filename_queue = tf.train.string_input_producer(filenames, num_epochs=1, shuffle=False)
  read_input = read_record(filename_queue)
  return read_input.key, read_input.label


def overlapping_windows(filenames):
  """Records that overlap (hop_bytes): no tf.data reader reads them; stays on the shim."""
  queue = tf.train.string_input_producer(filenames, num_epochs=1, shuffle=False)
  reader = tf.FixedLengthRecordReader(record_bytes=8, hop_bytes=4, header_bytes=2)
  _, window = reader.read(queue)
  pixels = tf.decode_raw(window, tf.uint8)
  pixels.set_shape([8])
  return tf.train.batch([pixels], 5, allow_smaller_final_batch=True)
