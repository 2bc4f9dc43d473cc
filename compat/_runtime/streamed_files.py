"""Files read in bounded pieces, for the readers no tf.data dataset reads exactly.

TF1's TextLineReader (one `\\r` stripped per line), a FixedLengthRecordReader whose records
overlap or skip bytes (`hop_bytes`), and one over compressed files stream their files: TF1
holds a buffer, not the file. tf.data reads arbitrary bytes of a file only as fixed-length
records (`FixedLengthRecordDataset`), which must tile the file (or, compressed, end with an
error on a short remainder), so the pieces here are made from those:

* A file up to `WHOLE_FILE_BYTES` is read whole (one ReadFile): cheapest for small files,
  and bounded.
* A larger uncompressed file is read as `CHUNK_BYTES` records cut to its exact size, which
  probes find: a FixedLengthRecordDataset of 1-byte records with a footer of n bytes has a
  record iff the file is longer than n, for any n (a footer past the end is no error), and
  reads one byte. One probe tells a large file from a small one (~0.1 ms, as the file is
  opened); `_SIZE_BITS` more give a large file's size bit by bit.
* A compressed file's decompressed size is not known before it is read: it is read as
  `step`-byte records, which end with an error on a short remainder (ignored: TF1 drops it
  too), then its last bytes one at a time from where those ended.

Every function here is called inside a `flat_map` over work units (file names) and returns
a dataset; nothing is read until that dataset is iterated. They are built from raw ops
and few functions: a TextLineReader's pipeline traces them when its graph first runs.
"""
from __future__ import annotations

import tensorflow as tf
from tensorflow.python.data.ops import readers as _readers

# Files up to this size are read whole; larger ones in pieces of CHUNK_BYTES.
WHOLE_FILE_BYTES = 1 << 20
CHUNK_BYTES = 1 << 18
# Probed sizes go up to 2**_SIZE_BITS bytes (16 TiB).
_SIZE_BITS = 44


def _fixed_length(filename, record_bytes, header_bytes=0, footer_bytes=0, buffer_size=None,
                  compression_type=""):
    """`tf.data.FixedLengthRecordDataset` of one file, without the function tf.data wraps a
    file name in (traced at every call)."""
    return _readers._FixedLengthRecordDataset(  # pylint: disable=protected-access
        filename, record_bytes, header_bytes=header_bytes, footer_bytes=footer_bytes,
        buffer_size=buffer_size, compression_type=compression_type)


def _all_if(condition):
    """A `take` count: everything where `condition` holds, else nothing."""
    return tf.where(condition, tf.constant(-1, tf.int64), 0)


def _options() -> tf.data.Options:
    """No static rewrites or autotuning for the probes' tiny datasets, made at every probe."""
    options = tf.data.Options()
    options.experimental_optimization.apply_default_optimizations = False
    options.experimental_optimization.inject_prefetch = False
    options.autotune.enabled = False
    return options


def _is_longer(filename, length):
    """Whether the file is longer than `length` bytes (a bool tensor, probed when run); a
    file that cannot be opened raises TF1's error."""
    byte = _fixed_length(filename, 1, footer_bytes=length, buffer_size=1)
    found = byte.take(1).concatenate(tf.data.Dataset.from_tensors(tf.constant(""))).take(1)
    return tf.strings.length(found.with_options(_options()).get_single_element()) > 0


def _large_size(filename) -> tf.data.Dataset:
    """One int64: the size of a file larger than WHOLE_FILE_BYTES, found bit by bit."""
    def with_bit(size, bit):
        candidate = size + tf.bitwise.left_shift(tf.constant(1, tf.int64), bit)
        size = tf.where(_is_longer(filename, candidate - 1), candidate, size)
        return size, size
    bits = tf.data.Dataset.range(_SIZE_BITS - 1, -1, -1)
    return bits.scan(tf.constant(0, tf.int64), with_bit).skip(_SIZE_BITS - 1)


def by_size(filename, read_whole, read_large) -> tf.data.Dataset:
    """`read_whole(filename)` for a file up to WHOLE_FILE_BYTES, else
    `read_large(filename, size)`; both return datasets of the same structure."""
    large = _is_longer(filename, WHOLE_FILE_BYTES)
    pieces = _large_size(filename).flat_map(lambda size: read_large(filename, size))
    return read_whole(filename).take(_all_if(~large)).concatenate(pieces.take(_all_if(large)))


def chunks(filename, size, start=0) -> tf.data.Dataset:
    """The bytes of an uncompressed file of `size` bytes from `start`, in order, in pieces of
    CHUNK_BYTES (the last one shorter; none empty)."""
    start = tf.minimum(tf.cast(start, tf.int64), size)
    tail = (size - start) % CHUNK_BYTES
    body = _fixed_length(filename, CHUNK_BYTES, header_bytes=start,
                                            footer_bytes=tail, buffer_size=CHUNK_BYTES)
    last = _fixed_length(filename, tf.maximum(tail, 1),
                                            header_bytes=size - tail, buffer_size=CHUNK_BYTES)
    return body.concatenate(last.take(_all_if(tail > 0)))


def compressed_opened(filename, encoding, header_bytes=0) -> tf.data.Dataset:
    """One element if the compressed file opens and holds more than `header_bytes`
    decompressed bytes, else none; raises TF1's error for a file that cannot be opened.

    Reads of the file that ignore errors (below) must come after it: they would retry a file
    that cannot be opened forever, and a header longer than the file would fail inside
    tf.data's reader (logged as an internal error)."""
    def first(length):
        return _fixed_length(filename, length, compression_type=encoding,
                                                buffer_size=1 << 16).take(1)
    opened = first(1)
    if header_bytes:
        # A short read of the header is a DataLossError, ignored: the file has no records.
        opened = opened.concatenate(first(header_bytes + 1).ignore_errors()).skip(1)
    return opened


def compressed_pieces(filename, encoding, step, start=0) -> tf.data.Dataset:
    """The decompressed bytes of a compressed file from `start`, in order: `step`-byte
    pieces, then what is left (shorter than `step`) as one piece, if anything.

    A compressed FixedLengthRecordDataset ends a file with DataLossError on a short
    remainder (ignored here: TF1 drops it too), and reads a corrupt stream as if it ended
    there (`verified` raises its error after the pieces)."""
    def pieces(_):
        whole = _fixed_length(filename, step, header_bytes=start,
                                                 compression_type=encoding).ignore_errors()

        def count(read, piece):
            return read + 1, (piece, read)

        def rest(piece, read):
            # The end is the empty piece; then the bytes left, at most step - 1, as one.
            is_end = tf.equal(tf.strings.length(piece), 0)
            left = _fixed_length(
                filename, 1, header_bytes=start + read * step, compression_type=encoding)
            left = left.take(step).batch(step).map(tf.strings.reduce_join)
            return tf.data.Dataset.from_tensors(piece).take(_all_if(~is_end)).concatenate(
                left.take(_all_if(is_end)))
        ended = whole.concatenate(tf.data.Dataset.from_tensors(tf.constant("")))
        return ended.scan(tf.constant(0, tf.int64), count).flat_map(rest)
    return compressed_opened(filename, encoding, start).flat_map(pieces)


def verified(records: tf.data.Dataset, filename, encoding) -> tf.data.Dataset:
    """`records`, then the error of a corrupt compressed stream, if any: the file decompressed
    once more, to its end (a text-line read raises where inflating fails)."""
    # Read through, a batch of lines per call (skip() of a large count reads nothing here).
    check = _readers._TextLineDataset(  # pylint: disable=protected-access
        filename, compression_type=encoding).batch(4096).filter(
        lambda _: False)
    return records.concatenate(check.map(lambda _: tf.nest.map_structure(
        lambda spec: tf.zeros([0 if d is None else d for d in spec.shape.as_list()], spec.dtype),
        records.element_spec)))


# --- text lines ----------------------------------------------------------------------------

def _split(text):
    """The parts of a scalar string between its "\\n"s (one more than it has)."""
    return tf.raw_ops.StringSplitV2(input=tf.reshape(text, [1]), sep="\n").values


def _whole_file_lines(contents):
    """The lines of a whole file's contents, in order."""
    # One regex pass over the whole file strips TF1's `\r`s: a call per line made a CSV input
    # ~7% slower.
    lines = _split(tf.raw_ops.StaticRegexReplace(input=contents, pattern="\r(\n|$)",
                                                 rewrite="\\1"))
    # The segment after the last "\n" is a line only if something is left of it.
    return lines[:tf.size(lines) - tf.cast(tf.equal(lines[-1], ""), tf.int32)]


def _chunk_lines(pieces: tf.data.Dataset, emit) -> tf.data.Dataset:
    """`emit(number of the first line, lines)` of the lines completed in each piece of a file
    read in pieces (none empty; a line may span pieces)."""
    def cut(state, piece):
        carried, numbered = state
        # The end is an empty piece, read as a last "\n": it strips one "\r" and completes the
        # unterminated last line, which is no line if nothing is left of it.
        is_end = tf.equal(tf.strings.length(piece), 0)
        text = tf.strings.join([carried, tf.where(is_end, "\n", piece)])
        parts = _split(tf.raw_ops.StaticRegexReplace(input=text, pattern="\r\n",
                                                     rewrite="\n"))
        count = tf.size(parts, tf.int64) - 1
        count -= tf.cast(is_end & tf.equal(parts[0], ""), tf.int64)
        return (parts[-1], numbered + count), emit(numbered + 1, parts[:count])
    ended = pieces.concatenate(tf.data.Dataset.from_tensors(tf.constant("")))
    return ended.scan((tf.constant(""), tf.constant(0, tf.int64)), cut)


def text_lines(filename, emit) -> tf.data.Dataset:
    """One text file, streamed: `emit(number of the first line, lines)` of each piece of its
    lines, in order (lines numbered from 1)."""
    def whole(name):
        return tf.data.Dataset.from_tensors(name).map(
            lambda name: emit(tf.constant(1, tf.int64), _whole_file_lines(tf.io.read_file(name))))
    return by_size(filename, whole, lambda name, size: _chunk_lines(chunks(name, size), emit))


# --- fixed-length records ------------------------------------------------------------------

def cut_records(pieces: tf.data.Dataset, record_bytes, hop_bytes, footer_bytes):
    """(record indices, records) vectors from the pieces of a byte stream (starting at the
    first record): record i is the `record_bytes` bytes at `i * hop_bytes`, and exists iff
    `footer_bytes` more bytes follow it. Buffers at most a piece plus a record."""
    def cut(state, piece):
        buffered, start, index = state
        buffered = tf.strings.join([buffered, piece])
        seen = start + tf.cast(tf.strings.length(buffered), tf.int64)
        # Records index.. whose end, and footer_bytes after it, have been seen.
        last = tf.math.floordiv(seen - record_bytes - footer_bytes, hop_bytes)
        indices = tf.range(index, tf.maximum(last + 1, index))
        offsets = indices * hop_bytes - start
        records = tf.strings.substr(buffered, offsets, tf.fill(tf.shape(offsets),
                                                                tf.constant(record_bytes,
                                                                            tf.int64)))
        index += tf.size(indices, tf.int64)
        keep_from = tf.minimum(index * hop_bytes, seen)
        buffered = tf.strings.substr(buffered, keep_from - start, -1)
        return (buffered, keep_from, index), (indices, records)
    zero = tf.constant(0, tf.int64)
    return pieces.scan((tf.constant(""), zero, zero), cut)


def after_header(contents, header_bytes):
    """A file's contents after its first `header_bytes` (none if it is shorter)."""
    return tf.strings.substr(contents, tf.minimum(header_bytes, tf.strings.length(contents)),
                             -1)


def fixed_length_pieces(filename, header_bytes, step, encoding) -> tf.data.Dataset:
    """The bytes of a file after its header, in pieces, streamed (`step`: the records' hop,
    the size of a compressed file's pieces)."""
    if encoding:
        return compressed_pieces(filename, encoding, step, start=header_bytes)

    def whole(name):
        return tf.data.Dataset.from_tensors(name).map(
            lambda name: after_header(tf.io.read_file(name), header_bytes))
    return by_size(filename, whole,
                   lambda name, size: chunks(name, size, start=header_bytes))
