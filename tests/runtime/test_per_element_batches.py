"""Batches of per-element work: TF1's batches, and TF1's stop when that work fails.

These programs batch per-element work of every kind the shim computes in a map before its
batch (computed whole, where exact; stateful, one element at a time; on several threads),
with and without a smaller final batch, and one whose per-element work fails part way.
"""
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from conftest import run_stream, tf_real
from session_streams import stream_until_error
from streams import assert_streams_equal

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(600)]

RECORD_BYTES = 12


def write_records(directory, records):
    """One file of `records` fixed-length records of random bytes."""
    rng = np.random.default_rng(records)
    payload = rng.integers(0, 256, size=(records, RECORD_BYTES), dtype=np.uint8)
    path = directory / "records.bin"
    path.write_bytes(payload.tobytes())
    return str(path)


def byte_pictures(path, batch_size, *, random_flip, num_threads, allow_smaller_final_batch,
                  num_epochs=2):
    """The CIFAR tutorial's reading, in small: fixed-length records, decode_raw, reshape,
    scale, an optional random flip, then a batch of (picture, label)."""
    def build(tf):
        files = tf.train.string_input_producer([path], num_epochs=num_epochs, shuffle=False)
        _, value = tf.FixedLengthRecordReader(record_bytes=RECORD_BYTES).read(files)
        raw = tf.decode_raw(value, tf.uint8)
        label = tf.cast(raw[0], tf.int32)
        picture = tf.reshape(tf.cast(raw[1:], tf.float32) / 255.0, [1, 11, 1])
        if random_flip:
            picture = tf.image.random_flip_left_right(picture, seed=5)
        return tf.train.batch([picture, label], batch_size=batch_size, num_threads=num_threads,
                              allow_smaller_final_batch=allow_smaller_final_batch)
    return build


def _as_multiset(batches):
    """The (label, picture) pairs of all batches, in one order."""
    return sorted((int(label), np.asarray(picture).tobytes())
                  for pictures, labels in batches for picture, label in zip(pictures, labels))


@settings(max_examples=8, deadline=None)
@given(records=st.integers(1, 23), batch_size=st.integers(1, 6),
       random_flip=st.booleans(), num_threads=st.sampled_from([1, 1, 3]),
       allow_smaller_final_batch=st.booleans())
def test_batches_of_per_element_work_are_tf1s(records, batch_size, random_flip, num_threads,
                                              allow_smaller_final_batch, legacy, shim,
                                              tmp_path_factory):
    path = write_records(tmp_path_factory.mktemp("records"), records)
    build = byte_pictures(path, batch_size, random_flip=random_flip, num_threads=num_threads,
                          allow_smaller_final_batch=allow_smaller_final_batch)
    expected = run_stream(legacy, build, graph_seed=3)
    got = run_stream(shim, build, graph_seed=3)
    if num_threads == 1:
        assert_streams_equal(expected, got)
        return
    # TF1's threads take elements in the order they are scheduled: the same batches' sizes,
    # and the same (picture, label) pairs overall.
    assert [len(batch[1]) for batch in got] == [len(batch[1]) for batch in expected]
    if random_flip:  # each thread's flip stream then depends on the schedule
        return
    delivered = sum(len(batch[1]) for batch in expected)
    every_element = _as_multiset(run_stream(legacy, byte_pictures(
        path, 1, random_flip=False, num_threads=1, allow_smaller_final_batch=True),
        graph_seed=3))
    if delivered == len(every_element):
        assert _as_multiset(got) == _as_multiset(expected)
    else:
        # The final partial batch is dropped, and which elements it held depends on the
        # schedule (TF1's own runs differ there): some of the elements, each at most as
        # often as the input has it.
        assert not Counter(_as_multiset(got)) - Counter(every_element)


@pytest.mark.parametrize("random_flip", [False, True])
def test_per_element_work_failing_part_way_stops_where_tf1_stops(tmp_path, random_flip,
                                                                   legacy, shim):
    """Record 5 decodes to the wrong number of values: TF1 gives the batches before it,
    then the reshape's error."""
    path = tmp_path / "records.bin"
    good = np.arange(RECORD_BYTES * 9, dtype=np.uint8).reshape(9, RECORD_BYTES)
    path.write_bytes(good.tobytes())

    def build(tf):
        files = tf.train.string_input_producer([str(path)], num_epochs=1, shuffle=False)
        _, value = tf.FixedLengthRecordReader(record_bytes=RECORD_BYTES).read(files)
        raw = tf.decode_raw(value, tf.uint8)
        # Record 5's first byte is 60: keep fewer values of it, and the reshape fails there.
        kept = tf.cond(tf.equal(raw[0], 60), lambda: raw[1:5], lambda: raw[1:])
        picture = tf.reshape(tf.cast(kept, tf.float32), [1, 11, 1])
        if random_flip:
            picture = tf.image.random_flip_left_right(picture, seed=2)
        return tf.train.batch([picture], batch_size=2)

    expected, expected_error = stream_until_error(legacy, build)
    got, error = stream_until_error(shim, build)
    assert isinstance(expected_error, tf_real.errors.InvalidArgumentError), expected_error
    assert type(error) is type(expected_error), error
    assert_streams_equal(expected, got)
