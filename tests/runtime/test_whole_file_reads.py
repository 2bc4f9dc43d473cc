"""Image-folder inputs (WholeFileReader, decode, resize, batch): TF1's batches, TF1's errors.

The shim reads each file in the same map that decodes it (`Stage.unit_map`); these programs
check that reading and computing in one step changes neither the stream nor where a bad
file stops it.
"""
import collections

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from conftest import run_stream, tf_real
from session_streams import drain_consumers, stream_until_error
from streams import assert_streams_equal

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(600)]


def write_pngs(directory, sides):
    """One small RGB PNG per side length, pixel values from a fixed generator."""
    rng = np.random.default_rng(len(sides))
    paths = []
    with tf_real.Graph().as_default(), tf_real.compat.v1.Session() as sess:
        for index, side in enumerate(sides):
            pixels = rng.integers(0, 256, size=(side, side + index % 3, 3), dtype=np.uint8)
            path = directory / f"picture-{index:03d}.png"
            path.write_bytes(sess.run(tf_real.io.encode_png(pixels)))
            paths.append(str(path))
    return paths


def image_folder(paths, batch_size, flip_seed=None, shuffle=True, num_epochs=2):
    """The tutorial image input: file names, whole files, decode_png, resize, batch."""
    def build(tf):
        files = tf.train.string_input_producer(paths, num_epochs=num_epochs, shuffle=shuffle,
                                               seed=7)
        name, contents = tf.WholeFileReader().read(files)
        image = tf.image.decode_png(contents, channels=3)
        image = tf.image.resize_images(image, [6, 6])
        if flip_seed is not None:  # a random op: one element at a time, in TF1's order
            image = tf.image.random_flip_left_right(image, seed=flip_seed)
        image = tf.image.per_image_standardization(image)
        return tf.train.batch([name, image], batch_size=batch_size,
                              allow_smaller_final_batch=True)
    return build


@settings(max_examples=6)
@given(sides=st.lists(st.integers(2, 9), min_size=1, max_size=7),
       batch_size=st.integers(1, 4),
       flip_seed=st.one_of(st.none(), st.integers(0, 1000)),
       shuffle=st.booleans())
def test_an_image_folder_gives_tf1s_batches(sides, batch_size, flip_seed, shuffle, legacy, shim,
                                            tmp_path_factory):
    paths = write_pngs(tmp_path_factory.mktemp("pictures"), sides)
    build = image_folder(paths, batch_size, flip_seed, shuffle)
    assert_streams_equal(run_stream(legacy, build, graph_seed=11),
                         run_stream(shim, build, graph_seed=11))


@pytest.mark.parametrize("fetched", ["images", "names"])
def test_a_missing_file_fails_where_tf1s_read_fails(tmp_path, fetched, legacy, shim):
    """Also where only the file names are used: TF1's reader reads every file it names."""
    paths = write_pngs(tmp_path, [3, 4, 5, 6])
    paths.insert(2, str(tmp_path / "deleted-before-the-run.png"))
    images = image_folder(paths, batch_size=1, shuffle=False, num_epochs=1)

    def names_only(tf):
        files = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
        name, _ = tf.WholeFileReader().read(files)
        # A random op: the names are computed one element at a time (as the images are).
        noise = tf.random_uniform([], seed=3)
        return tf.train.batch([tf.strings.join([name, "!"]), noise], batch_size=1)[0]

    build = (lambda tf: images(tf)[1]) if fetched == "images" else names_only

    expected, expected_error = stream_until_error(legacy, build)
    got, error = stream_until_error(shim, build)
    assert isinstance(expected_error, tf_real.errors.NotFoundError), expected_error
    assert type(error) is type(expected_error)
    assert "deleted-before-the-run.png" in str(error)
    assert_streams_equal(expected, got)


def test_read_counters_still_count_whole_files(tmp_path, legacy, shim):
    """A reader whose counters are read is not folded into its consumer's map."""
    paths = write_pngs(tmp_path, [3, 4, 5])

    def build(tf):
        files = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
        reader = tf.WholeFileReader()
        _, contents = reader.read(files)
        image = tf.image.resize_images(tf.image.decode_png(contents, channels=3), [4, 4])
        batch = tf.train.batch([image], batch_size=3)
        return batch, reader.num_records_produced()

    def run(tf):
        with tf_real.Graph().as_default():
            batch, count = build(tf)
            with tf.Session() as sess:
                sess.run(tf.local_variables_initializer())
                coord = tf.train.Coordinator()
                threads = tf.train.start_queue_runners(sess=sess, coord=coord)
                images = sess.run(batch)
                counted = sess.run(count)  # after the batch: every file has been read
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=10)
        return images, counted

    expected_images, expected_count = run(legacy)
    images, count = run(shim)
    assert_streams_equal([expected_images], [images])
    assert count == expected_count == len(paths)


def _names(batches):
    return collections.Counter(name for batch in batches for name in np.asarray(batch).ravel())


def test_threads_deliver_every_file_once_per_epoch(tmp_path, legacy, shim):
    """Which thread decodes which file is timing in TF1: compared by what TF1 guarantees."""
    paths = write_pngs(tmp_path, [3, 4, 5, 6, 7, 8])

    def build(tf):
        files = tf.train.string_input_producer(paths, num_epochs=2)
        name, contents = tf.WholeFileReader().read(files)
        image = tf.image.resize_images(tf.image.decode_png(contents, channels=3), [4, 4])
        names, _ = tf.train.shuffle_batch([name, image], batch_size=2, capacity=8,
                                          min_after_dequeue=2, num_threads=3)
        return names

    expected, got = _names(run_stream(legacy, build)), _names(run_stream(shim, build))
    assert set(expected.values()) == {2} and len(expected) == len(paths)
    assert got == expected


def test_two_consumers_of_one_reader_split_its_files(tmp_path, legacy, shim):
    """A second consumer makes the read shared: each file goes to exactly one of them."""
    paths = write_pngs(tmp_path, [3, 4, 5, 6, 7])

    def build(tf):
        files = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
        name, contents = tf.WholeFileReader().read(files)
        image = tf.image.resize_images(tf.image.decode_png(contents, channels=3), [4, 4])
        first = tf.train.batch([name, image], batch_size=1)[0]
        second = tf.train.batch([name, tf.strings.length(contents)], batch_size=1)[0]
        return first, second

    def delivered(tf):
        return collections.Counter(name for names in drain_consumers(tf, build) for name in names)

    expected, got = delivered(legacy), delivered(shim)
    assert set(expected.values()) == {1} and len(expected) == len(paths)
    assert got == expected
