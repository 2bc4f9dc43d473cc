"""record_sources against the real TF1 readers: same (key, value) stream, same errors.

Every expectation is what tf.compat.v1's reader returns for the same files in a Session;
no literal key format is asserted on its own.
"""
import contextlib
import gzip
import os
import tempfile
import zlib

import pytest
from hypothesis import given, strategies as st

# The readers' byte streams do not depend on the TF behaviour: the quick run takes one.
pytestmark = [pytest.mark.needs_tf, pytest.mark.behaviour_independent]

tf = pytest.importorskip("tensorflow")
v1 = tf.compat.v1

from compat._runtime import record_sources as rs  # noqa: E402  (needs TensorFlow)
from compat._runtime import streamed_files  # noqa: E402

# How files are read: streamed, small ones found small when read (whole); streamed, all but
# the tiniest read in pieces of a few bytes, so that lines, records, headers and footers fall
# across piece boundaries; or whole, as where every file is known to be small.
READS = ["streamed", "in_pieces", "known_small"]


@contextlib.contextmanager
def reading(how):
    """Build pipelines that read files `how` (see READS); yields the record source's
    keyword arguments for it."""
    saved = streamed_files.WHOLE_FILE_BYTES, streamed_files.CHUNK_BYTES
    if how == "in_pieces":
        streamed_files.WHOLE_FILE_BYTES, streamed_files.CHUNK_BYTES = 4, 3
    try:
        yield {"streamed": how != "known_small"}
    finally:
        streamed_files.WHOLE_FILE_BYTES, streamed_files.CHUNK_BYTES = saved

COMPRESSIONS = ["", "ZLIB", "GZIP"]


# --- running both sides --------------------------------------------------------------------

def tf1_stream(files, make_reader, up_to=None):
    """What a TF1 reader yields for `files` in one epoch, and the error class that ended it."""
    records, error = [], None
    with tf.Graph().as_default():
        queue = v1.train.string_input_producer(files, shuffle=False, num_epochs=1)
        reader = make_reader()
        key, value = reader.read_up_to(queue, up_to) if up_to else reader.read(queue)
        with v1.Session() as session:
            session.run(v1.local_variables_initializer())
            coord = v1.train.Coordinator()
            threads = v1.train.start_queue_runners(session, coord)
            try:
                while True:
                    records.append(_as_lists(session.run([key, value])))
            except tf.errors.OutOfRangeError:
                pass
            except tf.errors.OpError as e:
                error = e
            coord.request_stop()
            coord.join(threads)
    return records, error


def shim_stream(files, records_of, up_to=None):
    """What records_of yields per work unit, flat-mapped over `files`, run in a Session (as
    the shim's pipelines run, under either TF behaviour)."""
    def per_file(filename):
        records = records_of(filename)
        return rs.records_up_to(records, up_to) if up_to else records

    records, error = [], None
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_tensor_slices(files).flat_map(per_file)
        next_pair = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
        with tf.compat.v1.Session() as sess:
            try:
                while True:
                    records.append(_as_lists(sess.run(next_pair)))
            except tf.errors.OutOfRangeError:
                pass
            except tf.errors.OpError as e:
                error = e
    return records, error


def _as_lists(pair):
    return [x.tolist() if hasattr(x, "tolist") else x for x in pair]


def assert_same_stream(files, make_reader, records_of, up_to=None):
    expected, expected_error = tf1_stream(files, make_reader, up_to)
    got, error = shim_stream(files, records_of, up_to)
    assert got == expected
    assert type(error) is type(expected_error), (error, expected_error)
    return got, error


def write(directory, name, data):
    path = os.path.join(directory, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def compress(data, encoding):
    if encoding == "GZIP":
        return gzip.compress(data)
    if encoding == "ZLIB":
        return zlib.compress(data)
    return data


def write_tfrecords(directory, name, records, compression=""):
    path = os.path.join(directory, name)
    with tf.io.TFRecordWriter(path, compression) as writer:
        for record in records:
            writer.write(record)
    return path


# --- TFRecordReader ------------------------------------------------------------------------

record_lists = st.lists(st.lists(st.binary(max_size=40), max_size=6), min_size=1, max_size=3)


@given(files=record_lists, compression=st.sampled_from(COMPRESSIONS),
       as_options=st.sampled_from(["string", "options", "enum"]))
def test_tfrecord_stream_matches_tf1(files, compression, as_options):
    options = {
        "string": compression,
        "options": tf.io.TFRecordOptions(compression),
        "enum": getattr(v1.python_io.TFRecordCompressionType, compression or "NONE"),
    }[as_options]
    with tempfile.TemporaryDirectory() as d:
        paths = [write_tfrecords(d, f"r{i}.tfrecord", records, compression)
                 for i, records in enumerate(files)]
        assert_same_stream(paths, lambda: v1.TFRecordReader(options=options),
                           lambda f: rs.tfrecord_records(f, rs.compression_type_of(options)))


@given(records=st.lists(st.binary(max_size=30), min_size=1, max_size=5),
       damage=st.sampled_from(["truncate", "flip", "not_tfrecord"]))
def test_corrupt_tfrecord_is_data_loss_after_the_good_records(records, damage):
    with tempfile.TemporaryDirectory() as d:
        good = write_tfrecords(d, "good.tfrecord", records)
        data = open(good, "rb").read()
        if damage == "truncate":
            data = data[:-3]
        elif damage == "flip":
            data = data[:-1] + bytes([data[-1] ^ 0xFF])
        else:
            data = b"this is not a TFRecord file at all"
        bad = write(d, "bad.tfrecord", data)
        got, error = assert_same_stream([good, bad], v1.TFRecordReader, rs.tfrecord_records)
        assert isinstance(error, tf.errors.DataLossError)
        assert len(got) >= len(records)


@pytest.mark.parametrize("damage", ["truncate_end", "flip_middle", "gzip_flip_middle"])
def test_tfrecord_keys_and_errors_across_key_batches(tmp_path, damage):
    """Records are read in chunks of rs._KEY_BATCH: offsets carry across chunks, and a
    corruption inside a chunk still yields every good record before it, then TF1's error."""
    records = [bytes([i % 251]) * (i % 7) for i in range(rs._KEY_BATCH * 2 + 5)]
    compression = "GZIP" if damage.startswith("gzip") else ""
    good = write_tfrecords(str(tmp_path), "good.tfrecord", records, compression)
    data = bytearray(open(good, "rb").read())
    if damage.endswith("flip_middle"):
        data[len(data) * 2 // 3] ^= 0xFF
    else:
        data = data[:-3]
    bad = write(tmp_path, "bad.tfrecord", bytes(data))
    options = v1.io.TFRecordOptions(compression) if compression else None
    got, error = assert_same_stream([good, bad], lambda: v1.TFRecordReader(options=options),
                                    lambda f: rs.tfrecord_records(f, compression))
    assert error is not None and len(records) <= len(got) < 2 * len(records)


# --- TextLineReader ------------------------------------------------------------------------

# Line endings are where TextLineDataset and TextLineReader differ: "\r" inside lines,
# "\r\r\n", unterminated last lines, empty lines.
text_files = st.lists(
    st.lists(st.sampled_from([b"a", b"bc", b" ", b"\n", b"\r", b"\r\n", b"\n\n", b"\x00"]),
             max_size=12).map(b"".join),
    min_size=1, max_size=3)


@pytest.mark.parametrize("how", READS)
@given(files=text_files, skip_header_lines=st.integers(0, 3))
def test_text_line_stream_matches_tf1(how, files, skip_header_lines):
    with tempfile.TemporaryDirectory() as d, reading(how) as kwargs:
        paths = [write(d, f"t{i}.txt", data) for i, data in enumerate(files)]
        assert_same_stream(
            paths, lambda: v1.TextLineReader(skip_header_lines=skip_header_lines),
            lambda f: rs.text_line_records(f, skip_header_lines, **kwargs))


@pytest.mark.parametrize("data", [b"", b"\n", b"h\nx\n", b"h\nx", b"h\r\n\r\nx\r\n", b"a\rb\r",
                                  b"x\r\r\n", b"a\n\r", b"\r", b"ab\r\ncd\r\r\nefg\rh\r\n",
                                  b"long line one\nlong line two\r\n\r\n\n\rlast\r"])
@pytest.mark.parametrize("how", READS)
def test_text_line_edge_cases_match_tf1(tmp_path, data, how):
    paths = [write(tmp_path, "t.txt", data), write(tmp_path, "u.txt", b"after\n")]
    for skip in (0, 1):
        with reading(how) as kwargs:
            assert_same_stream(paths, lambda: v1.TextLineReader(skip_header_lines=skip),
                               lambda f: rs.text_line_records(f, skip, **kwargs))


# --- FixedLengthRecordReader ---------------------------------------------------------------

@st.composite
def fixed_length_cases(draw):
    header_bytes = draw(st.integers(0, 3))
    # A file shorter than its header is a TF1 quirk of its own (see the test below).
    files = draw(st.lists(st.binary(min_size=header_bytes, max_size=40), min_size=1,
                          max_size=3))
    return dict(files=files, record_bytes=draw(st.integers(1, 5)), header_bytes=header_bytes,
                footer_bytes=draw(st.integers(0, 3)), hop_bytes=draw(st.integers(0, 7)),
                encoding=draw(st.sampled_from(COMPRESSIONS)))


@pytest.mark.parametrize("how", READS)
@given(case=fixed_length_cases())
def test_fixed_length_stream_matches_tf1(how, case):
    files, encoding = case.pop("files"), case["encoding"]
    with tempfile.TemporaryDirectory() as d, reading(how) as kwargs:
        paths = [write(d, f"f{i}.bin", compress(data, encoding)) for i, data in enumerate(files)]
        pairs, error = assert_same_stream(paths, lambda: v1.FixedLengthRecordReader(**case),
                                          lambda f: rs.fixed_length_records(f, **case, **kwargs))
        # Read alone (a consumer that never reads the keys): the same values, the same end.
        values, values_error = shim_stream(paths, lambda f: rs.fixed_length_records(
            f, **case, with_keys=False, **kwargs).map(lambda value: (value,)))
        assert values == [[value] for _, value in pairs]
        assert type(values_error) is type(error)


@given(data=st.binary(min_size=1, max_size=200), encoding=st.sampled_from(["ZLIB", "GZIP"]),
       cut=st.floats(0, 1))
def test_truncated_compressed_fixed_length_file_matches_tf1(data, encoding, cut):
    compressed = compress(data, encoding)
    with tempfile.TemporaryDirectory() as d:
        path = write(d, "f.z", compressed[:int(len(compressed) * cut)])
        assert_same_stream([path], lambda: v1.FixedLengthRecordReader(3, encoding=encoding),
                           lambda f: rs.fixed_length_records(f, 3, encoding=encoding))


@pytest.mark.parametrize("encoding", COMPRESSIONS)
def test_file_shorter_than_header_reads_as_no_records(tmp_path, encoding):
    """TF1 fails that work unit with OutOfRangeError, which a TF1 loop takes as the end of
    all input; a per-file dataset cannot end the whole stream, so the shim yields nothing for
    that file and goes on. The records of every other file are the same."""
    short = write(tmp_path, "short.bin", compress(b"x", encoding))
    full = write(tmp_path, "full.bin", compress(bytes(range(10)), encoding))

    def reader():
        return v1.FixedLengthRecordReader(3, header_bytes=2, encoding=encoding)

    expected, error = tf1_stream([short, full], reader)
    assert expected == [] and error is None  # OutOfRangeError: the loop ends
    got, error = shim_stream([short, full],
                             lambda f: rs.fixed_length_records(f, 3, 2, encoding=encoding))
    assert error is None
    assert got == tf1_stream([full], reader)[0]


# --- WholeFileReader and IdentityReader ----------------------------------------------------

@given(files=st.lists(st.binary(max_size=50), min_size=1, max_size=4))
def test_whole_file_stream_matches_tf1(files):
    with tempfile.TemporaryDirectory() as d:
        paths = [write(d, f"w{i}", data) for i, data in enumerate(files)]
        assert_same_stream(paths, v1.WholeFileReader, rs.whole_file_records)


@given(work_units=st.lists(st.binary(max_size=20), min_size=1, max_size=5))
def test_identity_stream_matches_tf1(work_units):
    assert_same_stream(work_units, v1.IdentityReader, rs.identity_records)


# --- read_up_to ----------------------------------------------------------------------------

@given(files=st.lists(st.lists(st.binary(max_size=10), max_size=7), min_size=1, max_size=3),
       num_records=st.integers(1, 4))
def test_read_up_to_matches_tf1_and_never_spans_files(files, num_records):
    with tempfile.TemporaryDirectory() as d:
        paths = [write_tfrecords(d, f"r{i}.tfrecord", records) for i, records in enumerate(files)]
        batches, _ = assert_same_stream(paths, v1.TFRecordReader, rs.tfrecord_records,
                                        up_to=num_records)
    for keys, _ in batches:
        assert len({key.rsplit(b":", 1)[0] for key in keys}) == 1


def test_read_up_to_drops_the_batch_that_hits_a_corrupt_record_like_tf1(tmp_path):
    good = write_tfrecords(str(tmp_path), "good.tfrecord", [b"a", b"bb", b"c", b"dd", b"e"])
    bad = write(tmp_path, "bad.tfrecord", open(good, "rb").read()[:-2])
    _, error = assert_same_stream([good, bad], v1.TFRecordReader, rs.tfrecord_records, up_to=3)
    assert isinstance(error, tf.errors.DataLossError)


@pytest.mark.parametrize("reader, records_of, data", [
    (lambda: v1.TextLineReader(skip_header_lines=1),
     lambda f, **kwargs: rs.text_line_records(f, 1, **kwargs), b"h\n1\n2\n3\n4\n5"),
    (lambda: v1.FixedLengthRecordReader(2, hop_bytes=1),
     lambda f, **kwargs: rs.fixed_length_records(f, 2, hop_bytes=1, **kwargs), b"abcdefg"),
    # No header: TF1 ends all input at a file shorter than it (see the test above).
    (lambda: v1.FixedLengthRecordReader(2, footer_bytes=1),
     lambda f, **kwargs: rs.fixed_length_records(f, 2, 0, 1, **kwargs), b"abcdefghij"),
    (v1.WholeFileReader, lambda f, **kwargs: rs.whole_file_records(f), b"whole"),
])
@pytest.mark.parametrize("how", READS)
def test_read_up_to_matches_tf1_for_other_readers(tmp_path, reader, records_of, data, how):
    paths = [write(tmp_path, "a", data), write(tmp_path, "empty", b""),
             write(tmp_path, "b", data[:5])]
    with reading(how) as kwargs:
        assert_same_stream(paths, reader, lambda f: records_of(f, **kwargs), up_to=3)


def test_read_up_to_identity_matches_tf1():
    assert_same_stream([b"w1", b"w2", b"w3"], v1.IdentityReader, rs.identity_records, up_to=2)


# --- errors --------------------------------------------------------------------------------

@pytest.mark.parametrize("reader, records_of", [
    (v1.TFRecordReader, rs.tfrecord_records),
    (v1.TextLineReader, rs.text_line_records),
    (lambda: v1.FixedLengthRecordReader(4), lambda f: rs.fixed_length_records(f, 4)),
    (lambda: v1.FixedLengthRecordReader(4, encoding="GZIP"),
     lambda f: rs.fixed_length_records(f, 4, encoding="GZIP")),
    (v1.WholeFileReader, rs.whole_file_records),
])
def test_missing_file_is_not_found_naming_the_file(tmp_path, reader, records_of):
    missing = str(tmp_path / "no_such_file")
    _, error = assert_same_stream([missing], reader, records_of)
    assert isinstance(error, tf.errors.NotFoundError)
    assert missing in error.message


def test_missing_file_fails_after_the_previous_files_records(tmp_path):
    present = write(tmp_path, "present.txt", b"one\ntwo\n")
    got, error = assert_same_stream([present, str(tmp_path / "missing.txt")],
                                    v1.TextLineReader, rs.text_line_records)
    assert len(got) == 2 and isinstance(error, tf.errors.NotFoundError)


def test_corrupt_compressed_fixed_length_file_is_data_loss(tmp_path):
    bad = write(tmp_path, "bad.gz", b"not gzip data at all")
    _, error = assert_same_stream([bad], lambda: v1.FixedLengthRecordReader(2, encoding="GZIP"),
                                  lambda f: rs.fixed_length_records(f, 2, encoding="GZIP"))
    assert isinstance(error, tf.errors.DataLossError)


@pytest.mark.parametrize("kwargs", [
    dict(record_bytes=0), dict(record_bytes=2, header_bytes=-1),
    dict(record_bytes=2, footer_bytes=-1), dict(record_bytes=2, hop_bytes=-1),
    dict(record_bytes=2, encoding="BZIP2"),
])
def test_fixed_length_rejects_bad_arguments_by_name(kwargs):
    bad = [name for name, value in kwargs.items() if name != "record_bytes" or value == 0][0]
    with pytest.raises(ValueError, match=bad):
        rs.fixed_length_records(tf.constant("f"), **kwargs)


def test_negative_skip_header_lines_is_rejected_by_name():
    with pytest.raises(ValueError, match="skip_header_lines"):
        rs.text_line_records(tf.constant("f"), -1)


# --- LMDB ----------------------------------------------------------------------------------

def test_lmdb_matches_tf1_or_fails_like_it(tmp_path):
    lmdb = pytest.importorskip("lmdb")
    env = lmdb.open(str(tmp_path / "db"), map_size=1 << 20)
    with env.begin(write=True) as txn:
        for key, value in [(b"b", b"2"), (b"a", b"1"), (b"c", b"")]:
            txn.put(key, value)
    env.close()
    path = str(tmp_path / "db" / "data.mdb")
    expected, expected_error = tf1_stream([path], v1.LMDBReader)
    if isinstance(expected_error, tf.errors.UnimplementedError):
        with pytest.raises(tf.errors.UnimplementedError, match="TFRecord"):
            shim_stream([path], rs.lmdb_records)
    else:
        assert shim_stream([path], rs.lmdb_records) == (expected, expected_error)


# --- graph mode, as the shim's Session path runs it ----------------------------------------

@pytest.mark.parametrize("reader, records_of, data", [
    (lambda: v1.TFRecordReader(options="GZIP"), lambda f: rs.tfrecord_records(f, "GZIP"), None),
    (lambda: v1.TextLineReader(skip_header_lines=1), lambda f: rs.text_line_records(f, 1),
     b"h\nx\r\ny"),
    (lambda: v1.FixedLengthRecordReader(2, hop_bytes=1, encoding="ZLIB"),
     lambda f: rs.fixed_length_records(f, 2, hop_bytes=1, encoding="ZLIB"), zlib.compress(b"abc")),
    (lambda: v1.FixedLengthRecordReader(2, footer_bytes=1),
     lambda f: rs.fixed_length_records(f, 2, footer_bytes=1), b"abcdef"),
])
def test_records_run_in_a_tf1_graph_session(tmp_path, reader, records_of, data):
    if data is None:
        path = write_tfrecords(str(tmp_path), "r.tfrecord", [b"x", b"yy"], "GZIP")
    else:
        path = write(tmp_path, "f", data)
    expected, _ = tf1_stream([path], reader)
    got = []
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_tensor_slices([path]).flat_map(records_of)
        key, value = v1.data.make_one_shot_iterator(dataset).get_next()
        with v1.Session() as session:
            try:
                while True:
                    got.append(_as_lists(session.run([key, value])))
            except tf.errors.OutOfRangeError:
                pass
    assert got == expected and got
