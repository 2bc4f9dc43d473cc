"""Per-work-unit record sources: what one TF1 reader returns for one file, as tf.data.

A TF1 reader (``TFRecordReader``, ``TextLineReader``, ...) dequeues a work unit (a filename)
and returns ``(key, value)`` string pairs until the file is exhausted. The shim compiles a
reader into ``filenames.flat_map(<one of these functions>)``, so each function here turns one
scalar ``tf.string`` work unit, graph-traced inside ``flat_map``/``interleave``, into a
``tf.data.Dataset`` of scalar ``(key, value)`` pairs equal byte for byte to TF1's, in order.

Every behaviour below was measured against the real TF1 readers (see
tests/runtime/test_record_sources.py), not taken from their documentation:

* TFRecordReader keys are ``b"<file>:<byte offset of the record>"`` in the decompressed
  stream (not a record index): each record takes ``len(value) + 16`` framing bytes.
* TextLineReader keys are ``b"<file>:<1-based line number>"`` counted from the start of the
  file, header lines included. It strips ONE trailing ``\\r`` per line (also on an unterminated
  last line) and keeps any other ``\\r``; an unterminated last line that is empty after that
  strip is no line. ``TextLineDataset`` drops every ``\\r``, so it is not exact: lines are
  split from the file's bytes with vectorised string ops instead.
* FixedLengthRecordReader keys are ``b"<file>:<record index>"``. Record i starts at
  ``header + i * (hop_bytes or record_bytes)`` and exists iff it ends at or before
  ``size - footer`` of the (decompressed) file; a short remainder is dropped silently.
  ``FixedLengthRecordDataset`` raises on such a remainder, so it is told a footer that
  leaves exactly the records TF1 reads (the file's size is probed first); it knows no
  ``hop_bytes``, so overlapping or gapped records are cut with ``tf.strings.substr``.
  A file shorter than ``header_bytes`` gives no records here; TF1 raises OutOfRangeError
  for it, which a TF1 input loop takes for the end of ALL input.
* WholeFileReader's key is the filename; IdentityReader's key and value are the work unit.
* ReaderReadUpTo never spans work units: a batch ends with its file, and an empty file gives
  no batch.
* Errors: a missing file raises NotFoundError (naming the file); a corrupt TFRecord raises
  DataLossError after the same good records as TF1, whose message does not name the file
  ("corrupted record at 29"), and neither does tf.data's. A fixed-length file that is not
  in its ``encoding`` raises DataLossError; a truncated one ends quietly, as in TF1.

Every reader but WholeFileReader (whose record is the file) streams, as TF1's do: TFRecord
a chunk of 1,024 records at a time, fixed-length records as read, and text lines and
records that overlap or skip bytes from pieces of the file (`streamed_files`).
"""
import tensorflow as tf

from compat._runtime import datasets, streamed_files

# A TFRecord is framed as: uint64 length, uint32 length CRC, data, uint32 data CRC.
_TFRECORD_FRAMING_BYTES = 16

_ENCODINGS = ("", "ZLIB", "GZIP")

# Keys are formatted (and TFRecord records read and counted) this many at a time: a tf.data
# function call per record costs more than reading the record.
_KEY_BATCH = 1024


def compression_type_of(options):
    """The compression string ("", "ZLIB", "GZIP") of TFRecordReader's ``options`` argument.

    Accepts what TF1 accepts: None, a string, a ``tf.io.TFRecordOptions`` or a
    ``TFRecordCompressionType``.
    """
    return tf.io.TFRecordOptions.get_compression_type_string(options)


def _keys(filename, numbers):
    return tf.strings.join([filename, ":", tf.strings.as_string(numbers)])


def _counted(count_records, amount):
    """Control inputs that add `amount` to the reader's record counter (none if not counting).

    Sources count where they already work a batch of records at a time: a stateful op in a
    per-record function would put every record on tf.data's slow path (measured: 4x slower).
    """
    return count_records(amount) if count_records else []


def _keys_by_batch(filename, numbers, count_records=None):
    """Keys for a dataset of int64 numbers, formatted (and counted) a batch at a time."""
    def keys(batch):
        with tf.control_dependencies(_counted(count_records, tf.size(batch))):
            return _keys(filename, batch)
    return datasets.unbatched(numbers.batch(_KEY_BATCH).map(keys))


def _counted_upfront(records, amount, count_records):
    """`records`, counting all `amount` of them as the source opens (it has read them all)."""
    if not count_records:
        return records
    return effect_only(lambda: count_records(amount), records.element_spec).concatenate(records)


def _keyed(values, keys):
    """(key, value) pairs. Values are pulled first so that a failing read raises its own
    error after exactly the records TF1 returns; a key is only computed for a value read."""
    return tf.data.Dataset.zip((values, keys)).map(lambda value, key: (key, value))


def tfrecord_records(filename, compression_type="", count_records=None, with_keys=True):
    """TFRecordReader on one file: keys are ``file:byte_offset``.

    Records are read a chunk at a time (keys formatted and records counted per chunk, with no
    per-record function). A chunk would drop the good records read before an error, so the
    chunked read ignores errors and stops at the first one; the rest of the file is then read
    again from that record without doing so, which raises TF1's error after exactly TF1's
    records (and is empty for a sound file). The chunked read starts only once the file has
    given its first record: on a file that cannot be opened, an error-ignoring read would
    retry forever.
    with_keys=False gives the values alone (for a consumer that never reads the keys).
    """
    compression_type = compression_type_of(compression_type)

    def records():
        return datasets.tfrecords(filename, compression_type)

    if not with_keys and not count_records:
        return records()  # its errors come after exactly TF1's records already

    def rest_of_file(count):
        return records().skip(count).reduce(
            tf.zeros([0], tf.string), lambda rest, value: tf.concat([rest, [value]], 0))

    def keyed_chunk(state, chunk_and_end):
        start, count = state
        chunk, is_end = chunk_and_end
        # The end marker stands for what the chunked read stopped before: normally nothing.
        chunk = tf.cond(is_end, lambda: rest_of_file(count), lambda: chunk)
        sizes = tf.cast(tf.strings.length(chunk), tf.int64) + _TFRECORD_FRAMING_BYTES
        with tf.control_dependencies(_counted(count_records, tf.size(chunk))):
            chunk = tf.identity(chunk)
            keys = _keys(filename, start + tf.cumsum(sizes, exclusive=True)) if with_keys else None
        state = (start + tf.reduce_sum(sizes), count + tf.size(chunk, tf.int64))
        return state, ((keys, chunk) if with_keys else chunk)

    def chunked_read(_):
        end_marker = tf.data.Dataset.from_tensors((tf.zeros([0], tf.string), True))
        chunks = (records().ignore_errors().batch(_KEY_BATCH).map(lambda chunk: (chunk, False))
                  .concatenate(end_marker))
        zero = tf.constant(0, tf.int64)
        return datasets.unbatched(chunks.scan((zero, zero), keyed_chunk))

    # Only a file that gave its first record is read again by the error-ignoring read: after
    # an error at opening (or a downstream pull after any error), nothing re-opens the file.
    return records().take(1).flat_map(chunked_read)


def text_line_records(filename, skip_header_lines=0, count_records=None, with_keys=True,
                      streamed=True):
    """TextLineReader on one file: keys are ``file:line_number`` (1-based, headers counted).

    streamed: read in pieces where large (`streamed_files.text_lines`), else whole (for files
    known to be small: cheaper to build and read). with_keys=False gives the lines alone
    (for a consumer that never reads the keys)."""
    _require_non_negative(skip_header_lines=skip_header_lines)
    if not streamed:
        return _whole_text_line_records(filename, skip_header_lines, count_records, with_keys)

    def emit(first, lines):
        if skip_header_lines:
            dropped = tf.clip_by_value(skip_header_lines + 1 - first, 0,
                                       tf.size(lines, tf.int64))
            first, lines = first + dropped, lines[dropped:]
        if count_records:
            with tf.control_dependencies(_counted(count_records, tf.size(lines))):
                lines = tf.identity(lines)
        if not with_keys:
            return lines
        return _keys(filename, tf.range(first, first + tf.size(lines, tf.int64))), lines
    return datasets.unbatched(streamed_files.text_lines(filename, emit))


def _whole_text_line_records(filename, skip_header_lines, count_records, with_keys):
    # TextLineReader strips one "\r" before each "\n" and at the end of the file: one regex
    # pass over the file does that; one call per line made a CSV input ~7% slower.
    contents = tf.strings.regex_replace(tf.io.read_file(filename), "\r(\n|$)", "\\1")
    lines = tf.strings.split(contents, "\n")
    # The segment after the last "\n" is a line only if something is left of it.
    line_count = tf.size(lines, tf.int64) - tf.cast(tf.equal(lines[-1], ""), tf.int64)
    first = tf.minimum(tf.constant(skip_header_lines, tf.int64), line_count)
    values = lines[first:line_count]
    records = (_sliced(filename, values, first) if with_keys
               else tf.data.Dataset.from_tensor_slices(values))
    return _counted_upfront(records, line_count - first, count_records)


def _sliced(filename, values, first_index):
    """(file:i+1, values[i]) pairs; TextLineReader numbers lines from 1."""
    numbers = tf.range(first_index + 1, first_index + 1 + tf.size(values, tf.int64))
    return tf.data.Dataset.from_tensor_slices((_keys(filename, numbers), values))


# Contiguous fixed-length records of files known to be at most this large are read knowing
# the file's size from a read of the whole file (held only while its size is taken).
LARGEST_SIZED_WHOLE = 64 << 20


def fixed_length_records(filename, record_bytes, header_bytes=0, footer_bytes=0,
                         hop_bytes=0, encoding="", count_records=None, with_keys=True,
                         streamed=True):
    """FixedLengthRecordReader on one file: keys are ``file:record_index``.

    Records that tile the file as FixedLengthRecordDataset reads them; others, and every
    record of a compressed file, cut from the file's bytes. streamed: the file read in pieces
    where large, and its size probed (`streamed_files`); else (for files known to be small)
    read whole. with_keys=False gives the records alone (for a consumer that never reads the
    keys)."""
    _require_positive(record_bytes=record_bytes)
    _require_non_negative(header_bytes=header_bytes, footer_bytes=footer_bytes,
                          hop_bytes=hop_bytes)
    if encoding not in _ENCODINGS:
        raise ValueError(f"FixedLengthRecordReader encoding must be one of {_ENCODINGS}, "
                         f"got {encoding!r}")
    step = hop_bytes or record_bytes
    if step != record_bytes or encoding:
        return _cut_fixed_length_records(filename, record_bytes, header_bytes, footer_bytes,
                                         step, encoding, count_records, with_keys, streamed)
    if not streamed:
        size = tf.cast(tf.strings.length(tf.io.read_file(filename)), tf.int64)
        return _contiguous(filename, record_bytes, header_bytes, footer_bytes, size,
                           count_records, with_keys)

    def size_of_whole(name):
        return tf.data.Dataset.from_tensors(name).map(
            lambda name: tf.cast(tf.strings.length(tf.io.read_file(name)), tf.int64))
    sizes = streamed_files.by_size(filename, size_of_whole,
                                   lambda name, size: tf.data.Dataset.from_tensors(size))
    return sizes.flat_map(lambda size: _contiguous(filename, record_bytes, header_bytes,
                                                   footer_bytes, size, count_records,
                                                   with_keys))


def _contiguous(filename, record_bytes, header_bytes, footer_bytes, size, count_records,
                with_keys):
    """The records of an uncompressed file of `size` bytes that they tile."""
    # Floor division keeps the count at 0 or below when not even one record fits.
    count = tf.maximum((size - header_bytes - footer_bytes - record_bytes) // record_bytes + 1,
                       0)
    values = _contiguous_records(filename, record_bytes, header_bytes, size, count, "")
    if not with_keys and not count_records:
        return values
    keyed = _keyed(values, _keys_by_batch(filename, tf.data.Dataset.range(count), count_records))
    return keyed if with_keys else keyed.map(lambda key, value: value)


def _cut_fixed_length_records(filename, record_bytes, header_bytes, footer_bytes, step,
                              encoding, count_records, with_keys, streamed):
    """Records that overlap or skip bytes, or of a compressed file, cut from its bytes."""
    if encoding and step == record_bytes:
        values = _compressed_contiguous_records(filename, record_bytes, header_bytes,
                                                footer_bytes, encoding)
        if not with_keys and not count_records:
            return values


        # Keyed (and counted) a batch of records at a time, as they are read.
        def numbered(first, values):
            count = tf.size(values, tf.int64)
            with tf.control_dependencies(_counted(count_records, count)):
                values = tf.identity(values)
            keys = _keys(filename, tf.range(first, first + count))
            return first + count, ((keys, values) if with_keys else values)
        return datasets.unbatched(values.batch(_KEY_BATCH).scan(tf.constant(0, tf.int64),
                                                                numbered))
    if streamed or encoding:
        pieces = streamed_files.fixed_length_pieces(filename, header_bytes, step, encoding)
    else:
        pieces = tf.data.Dataset.from_tensors(streamed_files.after_header(
            tf.io.read_file(filename), header_bytes))
    cut = streamed_files.cut_records(pieces, record_bytes, step, footer_bytes)
    if encoding:
        cut = streamed_files.verified(cut, filename, encoding)

    def records(indices, values):
        with tf.control_dependencies(_counted(count_records, tf.size(values))):
            values = tf.identity(values)
            return (_keys(filename, indices), values) if with_keys else values
    return datasets.unbatched(cut.map(records))


def _contiguous_records(filename, record_bytes, header_bytes, size, count, encoding):
    """FixedLengthRecordDataset, told a footer that leaves exactly `count` whole records.

    It rejects a body that is not a multiple of record_bytes, which TF1 drops silently.
    """
    header = tf.where(count > 0, tf.constant(header_bytes, tf.int64), 0)
    footer = size - header - count * record_bytes
    return datasets.fixed_length_records(filename, record_bytes, header, footer, encoding)


def _compressed_contiguous_records(filename, record_bytes, header_bytes, footer_bytes,
                                   encoding):
    """A compressed file's records, streamed: FixedLengthRecordDataset reads exactly TF1's
    (a record with `footer_bytes` after it), then fails on a short remainder, which TF1
    drops: that error is ignored, once the file is known to open and hold its header
    (`streamed_files.compressed_opened`), and a corrupt stream's error raised after."""
    def records(_):
        return datasets.fixed_length_records(filename, record_bytes, header_bytes,
                                             footer_bytes, encoding).ignore_errors()
    opened = streamed_files.compressed_opened(filename, encoding, header_bytes)
    return streamed_files.verified(opened.flat_map(records), filename, encoding)


def whole_file_records(filename, count_records=None):
    """WholeFileReader on one file: one record, keyed by the filename."""
    def read(name):
        contents = tf.io.read_file(name)
        with tf.control_dependencies(_counted(count_records, 1)):
            return name, tf.identity(contents)
    return tf.data.Dataset.from_tensors(filename).map(read)


def identity_records(work_unit, count_records=None):
    """IdentityReader: the work unit is both key and value."""
    return _counted_upfront(tf.data.Dataset.from_tensors((work_unit, work_unit)), 1,
                            count_records)


def lmdb_records(filename, count_records=None):
    """LMDBReader on one database: keys and values are the database's own.

    Current TensorFlow builds have the op but its kernel is removed (TF1's LMDBReader fails
    with UnimplementedError too), so this raises the same error class, at build time, with
    what to do instead.
    """
    if not _lmdb_kernel_available():
        raise tf.errors.UnimplementedError(
            None, None,
            "LMDBReader: this TensorFlow has no LMDB support (its LMDB kernels were removed; "
            "tf.compat.v1.LMDBReader fails the same way). Read the database with the `lmdb` "
            "package and feed it through tf.data.Dataset.from_generator, or convert it once "
            "to TFRecord files and use TFRecordReader.")
    spec = (tf.TensorSpec([], tf.string), tf.TensorSpec([], tf.string))
    variant = tf.raw_ops.LMDBDataset(filenames=tf.reshape(filename, [1]),
                                     output_types=[tf.string, tf.string],
                                     output_shapes=[[], []])
    records = tf.data.experimental.from_variant(variant, tf.data.DatasetSpec(spec))
    if not count_records:
        return records
    # The database gives records one at a time: count each window of them as it is read.
    def counted_window(keys, values):
        window = tf.data.Dataset.zip((keys, values))
        return _counted_upfront(window, window.cardinality(), count_records)
    return records.window(_KEY_BATCH).flat_map(counted_window)


_lmdb_probe = []


def _lmdb_kernel_available():
    """Whether the LMDBDataset kernel exists: probed once, in a throwaway graph, on no file."""
    if not _lmdb_probe:
        with tf.Graph().as_default():
            dataset = tf.raw_ops.LMDBDataset(filenames=[""], output_types=[tf.string, tf.string],
                                             output_shapes=[[], []])
            # Cardinality builds the dataset (the kernel) without reading the database.
            cardinality = tf.raw_ops.DatasetCardinality(input_dataset=dataset)
            with tf.compat.v1.Session() as session:
                try:
                    session.run(cardinality)
                    _lmdb_probe.append(True)
                except tf.errors.UnimplementedError:
                    _lmdb_probe.append(False)
    return _lmdb_probe[0]


def effect_only(effect, element_spec) -> tf.data.Dataset:
    """A dataset of `element_spec`'s structure that runs `effect()` once and yields nothing.

    Built from the spec, not from a dataset: a dataset used a second time in the graph is
    run twice (and made tf.data's rewrite pass, which the shim's pipelines now run without,
    fail to fuse its map and batch nodes).
    """
    def placeholder_of(spec):
        return tf.zeros([0 if size is None else size for size in spec.shape.as_list()],
                        spec.dtype)

    def run(_):
        with tf.control_dependencies(effect()):
            return tf.constant(False)
    return (tf.data.Dataset.from_tensors(0).filter(run)
            .map(lambda _: tf.nest.map_structure(placeholder_of, element_spec)))


def records_up_to(records, num_records):
    """ReaderReadUpTo on one work unit: batches of at most ``num_records``, never spanning files.

    Apply it to the per-file dataset (inside ``flat_map``): TF1 ends a batch with its file.
    """
    return records.batch(num_records)


def _require_positive(**values):
    for name, value in values.items():
        if value <= 0:
            raise ValueError(f"{name} must be > 0, got {value}")


def _require_non_negative(**values):
    for name, value in values.items():
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value}")
