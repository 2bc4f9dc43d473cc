"""The tf.data statements that reproduce each legacy API, as source lines.

Each function takes the call's arguments (parameter -> source text, as written; missing ones
are TF1's defaults) and returns lines of Python that rebind `dataset`. The semantics are
TF1's, as the shim reproduces them (see DESIGN.md) and the harness tests prove:

* producers: every epoch a whole permutation, drawn by `tf.random.shuffle` with the
  producer's seed, one draw per epoch as TF1's RandomShuffle op makes it;
  `slice_input_producer` shuffles the indices and gathers each tensor, as TF1 does;
* readers: TF1's records (and keys, where the element code reads them);
* batching: `allow_smaller_final_batch=False` drops the remainder; `enqueue_many` splits
  rows; `dynamic_pad` pads to the batch's longest; `shuffle_batch` samples from
  min(capacity, min_after_dequeue + 1) elements (what TF1's dequeue samples from);
  `num_threads` becomes the map's parallel calls.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from compat._migrate.recognize import Call, Read
from compat._migrate.source_file import Unfollowable, plain_batching, row

_TFRECORD_FRAMING_BYTES = 16


def argument(call: Call, param: str) -> str:
    """The argument's source text, or TF1's default for it."""
    if param in call.args:
        return call.args[param]
    for spec in row(call.api).params:
        name, _, default = spec.partition("=")
        if name == param:
            if not _:
                raise KeyError(f"{call.api}: required argument {param!r} missing")
            return default
    raise KeyError(param)


def literal(text: str):
    """The Python value of a literal argument; raises ValueError for an expression."""
    return ast.literal_eval(text)


def truth(text: str):
    """True/False for a literal argument, None for an expression."""
    try:
        return bool(literal(text))
    except (ValueError, SyntaxError):
        return None


def _repeat(epochs: str) -> str:
    return "repeat()" if epochs.strip() == "None" else f"repeat({epochs})"


def _shuffled_epochs(first: str, tensors: str, seed: str, shuffle: str, epochs: str) -> list:
    """`first`: the line that makes `tensors` (one whole epoch, a tensor or a tuple)."""
    on = truth(shuffle)
    lines = [first]
    if on is False:
        return lines + [f"dataset = tf.data.Dataset.from_tensor_slices({tensors})"
                        f".{_repeat(epochs)}"]
    draw = (f"dataset = tf.data.Dataset.from_tensors({tensors}).{_repeat(epochs)}",
            "# One permutation per epoch, drawn as TF1's producer draws it.",
            f"dataset = dataset.flat_map(lambda epoch: tf.data.Dataset.from_tensor_slices("
            f"tf.random.shuffle(epoch, seed={seed})))")
    if on is True:
        return lines + list(draw)
    return lines + [f"if {shuffle}:"] + [f"    {line}" for line in draw] + [
        "else:", f"    dataset = tf.data.Dataset.from_tensor_slices({tensors}).{_repeat(epochs)}"]


def source_lines(source: Call) -> list:
    epochs = argument(source, "num_epochs")
    shuffle = argument(source, "shuffle")
    seed = argument(source, "seed")
    if source.api == "train.string_input_producer":
        return _shuffled_epochs(
            f"names = tf.convert_to_tensor({argument(source, 'string_tensor')}, tf.string)",
            "names", seed, shuffle, epochs)
    if source.api == "train.input_producer":
        return _shuffled_epochs(
            f"tensor = tf.convert_to_tensor({argument(source, 'input_tensor')})",
            "tensor", seed, shuffle, epochs)
    if source.api == "train.range_input_producer":
        return _shuffled_epochs(f"indices = tf.range({argument(source, 'limit')})",
                                "indices", seed, shuffle, epochs)
    if source.api == "train.slice_input_producer":
        tensors = argument(source, "tensor_list")
        lines = [f"tensors = tuple(tf.convert_to_tensor(t) for t in {tensors})"]
        if truth(shuffle) is False:
            return lines + [f"dataset = tf.data.Dataset.from_tensor_slices(tensors).{_repeat(epochs)}"]
        # TF1 shuffles the row indices (an int32 range) and gathers every tensor's row.
        lines += _shuffled_epochs("indices = tf.range(tf.shape(tensors[0])[0])", "indices",
                                  seed, shuffle, epochs)
        return lines + ["dataset = dataset.map(lambda i: tuple(tf.gather(t, i) for t in tensors))"]
    raise KeyError(source.api)


def _compression(reader: Call) -> str:
    options = reader.args.get("options")
    if options is None or options.strip() == "None":
        return ""
    return f", compression_type=tf.io.TFRecordOptions.get_compression_type_string({options})"


# Files read by one reader dataset: a dataset per file costs more than a small file's records.
FILES_PER_READER = 64


@dataclass(frozen=True)
class _FileReader:
    """How a reader's files become records, as source text."""

    function: str                # a callable: a file name -> that file's records
    of_file: str                 # the same records, as an expression of `filename`
    of_files: str | None = None  # a callable reading a vector of names in order, one dataset
    defs: tuple = ()             # lines defining the function `function` names


def _keyed(name: str, body: list) -> _FileReader:
    return _FileReader(name, f"{name}(filename)", None, (f"def {name}(filename):", *body))


def _file_reader(reader: Call, with_keys: bool) -> _FileReader:
    api = reader.api
    if api == "TFRecordReader":
        compression = _compression(reader)
        records = f"tf.data.TFRecordDataset(filename{compression})"
        if with_keys:
            return _keyed("tfrecords_with_keys", [
                "    # TF1's key: the file name and the record's byte offset in the file.",
                "    def keyed(offset, record):",
                "        key = tf.strings.join([filename, tf.strings.as_string(offset)], ':')",
                f"        size = tf.cast(tf.strings.length(record), tf.int64) + "
                f"{_TFRECORD_FRAMING_BYTES}",
                "        return offset + size, (key, record)",
                f"    records = {records}",
                "    return records.scan(tf.constant(0, tf.int64), keyed)"])
        if compression:
            return _FileReader(f"lambda filename: {records}", records)
        return _FileReader("tf.data.TFRecordDataset", records, "tf.data.TFRecordDataset")
    if api == "TextLineReader":
        skip = reader.args.get("skip_header_lines", "None")
        skip = "0" if skip.strip() == "None" else skip
        if with_keys:
            return _keyed("lines_with_keys", [
                "    # TF1's key: the file name and the line's number (from 1, header "
                "lines counted).",
                f"    lines = tf.data.TextLineDataset(filename).skip({skip}).enumerate("
                f"{skip} + 1)",
                "    return lines.map(lambda number, line: (tf.strings.join("
                "[filename, tf.strings.as_string(number)], ':'), line))"])
        lines = "tf.data.TextLineDataset(filename)" + (f".skip({skip})" if skip != "0" else "")
        return _FileReader(f"lambda filename: {lines}", lines)
    if api == "FixedLengthRecordReader":
        hop = reader.args.get("hop_bytes", "None")
        if hop.strip() not in ("None", "0"):
            raise Unfollowable("FixedLengthRecordReader(hop_bytes=...)", reader.line,
                               "overlapping records have no tf.data reader: keep the function "
                               "on the shim (`compat.to_dataset`)")
        layout = [argument(reader, "record_bytes")]
        for param in ("header_bytes", "footer_bytes"):
            value = reader.args.get(param, "None")
            layout.append(f"{param}={'0' if value.strip() == 'None' else value}")
        encoding = reader.args.get("encoding", "None")
        if encoding.strip() != "None":
            layout.append(f"compression_type={encoding}")
        records = f"tf.data.FixedLengthRecordDataset(filename, {', '.join(layout)})"
        if with_keys:
            return _keyed("records_with_keys", [
                "    # TF1's key: the file name and the record's index in the file.",
                f"    records = {records}.enumerate()",
                "    return records.map(lambda index, record: (tf.strings.join("
                "[filename, tf.strings.as_string(index)], ':'), record))"])
        many = records.replace("(filename, ", "(filenames, ")
        return _FileReader(f"lambda filename: {records}", records, f"lambda filenames: {many}")
    raise KeyError(api)


def reader_lines(reader: Call, read: Read, with_keys: bool, copies: str | None = None) -> list:
    """`dataset` of file names -> `dataset` of TF1's records: values, or (key, value).
    With `copies` (batch_join's reader copies), that many files are read at a time, a record
    from each in turn: TF1's copies each read a whole file from the shared queue."""
    if reader.api == "WholeFileReader":
        if read.method == "read_up_to":
            raise Unfollowable("WholeFileReader.read_up_to", read.line,
                               "a whole file is one record: use read()")
        # Reading a file depends on nothing else: files are read in parallel, kept in order.
        if not with_keys:
            return ["dataset = dataset.map(tf.io.read_file, num_parallel_calls=tf.data.AUTOTUNE)"]
        return ["dataset = dataset.map(lambda filename: (filename, tf.io.read_file(filename)), "
                "num_parallel_calls=tf.data.AUTOTUNE)"]
    files = _file_reader(reader, with_keys)
    function = files.function
    if read.method == "read_up_to":
        # up to num_records of one file at a time, as TF1's reader returns them
        function = f"lambda filename: {files.of_file}.batch({read.count})"
    if copies is not None:
        return list(files.defs) + [f"dataset = dataset.interleave({function}, cycle_length="
                                   f"{copies}, num_parallel_calls={copies})"]
    if files.of_files is not None and read.method == "read":
        return list(files.defs) + [
            f"# {FILES_PER_READER} files per reader dataset, read one after the other.",
            f"dataset = dataset.batch({FILES_PER_READER}).flat_map({files.of_files})"]
    return list(files.defs) + [f"dataset = dataset.flat_map({function})"]


def map_line(function: str, threads: str) -> str:
    parallel = "" if threads.strip() in ("1", "None") else f", num_parallel_calls={threads}"
    return f"dataset = dataset.map({function}{parallel})"


def keeps(batching: Call) -> bool:
    """Whether it is a maybe_* call: its elements are (tensors, keep_input) pairs."""
    return batching.api != plain_batching(batching.api)


def batching_lines(batching: Call) -> list:
    """What a batching call does to the stream of elements its tensors make."""
    api = plain_batching(batching.api)
    lines = []
    if truth(argument(batching, "enqueue_many")) is not False:
        many = argument(batching, "enqueue_many")
        lines.append("dataset = dataset.unbatch()" if truth(many) else
                     f"dataset = dataset.unbatch() if {many} else dataset")
    if keeps(batching):
        lines.append("# keep_input: only what it keeps is batched.")
        lines.append("dataset = dataset.filter(lambda element, keep: keep).map("
                     "lambda element, keep: element)")
    batch_size = argument(batching, "batch_size")
    if api in ("train.shuffle_batch", "train.shuffle_batch_join"):
        capacity = argument(batching, "capacity")
        minimum = argument(batching, "min_after_dequeue")
        try:
            buffer = str(max(1, min(literal(capacity), literal(minimum) + 1)))
        except (ValueError, SyntaxError, TypeError):
            buffer = f"max(1, min({capacity}, {minimum} + 1))"
        seed = argument(batching, "seed")
        lines.append("# TF1's dequeue samples from min_after_dequeue + 1 elements "
                     "(at most capacity).")
        lines.append(f"dataset = dataset.shuffle({buffer}, seed={seed})")
    if batch_size.strip() == "None":  # a hand-built queue's dequeue(): single elements
        return lines
    allow = argument(batching, "allow_smaller_final_batch")
    allowed = truth(allow)
    drop = ("True" if allowed is False else "False" if allowed is True else f"not {allow}")
    padded = api in ("train.batch", "train.batch_join") and truth(
        argument(batching, "dynamic_pad")) is not False
    if padded and truth(argument(batching, "dynamic_pad")) is None:
        pad = argument(batching, "dynamic_pad")
        lines += [f"if {pad}:",
                  f"    dataset = dataset.padded_batch({batch_size}, drop_remainder={drop})",
                  "else:",
                  f"    dataset = dataset.batch({batch_size}, drop_remainder={drop})"]
    elif padded:
        lines.append(f"dataset = dataset.padded_batch({batch_size}, drop_remainder={drop})")
    else:
        lines.append(f"dataset = dataset.batch({batch_size}, drop_remainder={drop})")
    return lines


def threads_of(batching: Call, copies: str | None = None) -> str:
    if plain_batching(batching.api) in ("train.batch", "train.shuffle_batch"):
        return argument(batching, "num_threads")
    return copies or "1"


def tensors_of(batching: Call) -> str:
    """The tensors it batches (a maybe_* call's element function also returns keep_input)."""
    return argument(batching, "tensors_list" if batching.api.endswith("_join") else "tensors")
