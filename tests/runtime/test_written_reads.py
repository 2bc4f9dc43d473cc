"""A FixedLengthRecordReader's read of each file (`written_reads`), written as tf.data's trace
writes it. Each program runs with TF1's queues, with the shim, and with the shim made to
trace the read; the streams are equal, and so are the written and traced graphs and
functions, where the layout is one the shim writes."""
import re

import numpy as np
import pytest

from written_functions import (canonical, functions_named, graph_text, on_devices, run_in_graph,
                               written_then_traced)

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(600)]

_WRITTEN = re.compile(r"\bcompat_read_[0-9a-f]{16}\b")
_TRACED = re.compile(r"\b__inference_Dataset_flat_map_lambda_\d+\b")
_SIDE = 4
_RECORD = 1 + _SIDE * _SIDE * 3  # a label byte and a small depth-major image


def _canonical(text: str) -> str:
    return canonical(text, _WRITTEN, _TRACED, "READ")


def _write_files(directory, counts, header=b"", footer=b"", tail=b""):
    """CIFAR-style files of `counts` records each (labels and pixels from the file's index),
    framed by `header` and `footer`, with `tail` (a partial record) before the footer."""
    paths = []
    for index, count in enumerate(counts):
        rng = np.random.default_rng(index)
        body = rng.integers(0, 256, size=(count, _RECORD), dtype=np.uint8).tobytes()
        path = directory / f"data_batch_{index}.bin"
        path.write_bytes(header + body + tail + footer)
        paths.append(str(path))
    return paths


def _image_and_label(tf, value):
    record = tf.decode_raw(value, tf.uint8)
    label = tf.cast(tf.strided_slice(record, [0], [1]), tf.int32)
    planes = tf.reshape(tf.strided_slice(record, [1], [_RECORD]), [3, _SIDE, _SIDE])
    image = tf.cast(tf.transpose(planes, [1, 2, 0]), tf.float32)
    return tf.image.per_image_standardization(image), tf.reshape(label, [])


def _bytes(tf, value):
    return tf.reshape(tf.decode_raw(value, tf.uint8), [_RECORD])


def cifar_batches(paths):
    """The CIFAR-10 tutorial's reader: labels and images from the value, batched."""
    def build(tf):
        files = tf.train.string_input_producer(paths, num_epochs=2, seed=3)
        _, value = tf.FixedLengthRecordReader(record_bytes=_RECORD).read(files)
        image, label = _image_and_label(tf, value)
        return tf.train.batch([image, label], batch_size=4, allow_smaller_final_batch=True)
    return build


def _read_in_order(tf, paths, **layout):
    """(key, value) of a FixedLengthRecordReader of `layout` reading `paths` once, in order."""
    files = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
    return tf.FixedLengthRecordReader(record_bytes=_RECORD, **layout).read(files)


def framed_records(paths):
    """Files with a header and a footer around the records (hop_bytes as record_bytes)."""
    def build(tf):
        _, value = _read_in_order(tf, paths, header_bytes=5, footer_bytes=3, hop_bytes=_RECORD)
        return tf.train.batch([_bytes(tf, value)], batch_size=3,
                              allow_smaller_final_batch=True)
    return build


def overlapping_records(paths):
    """Records that overlap (hop_bytes under record_bytes): traced."""
    def build(tf):
        _, value = _read_in_order(tf, paths, hop_bytes=7)
        return tf.train.batch([_bytes(tf, value)], batch_size=5,
                              allow_smaller_final_batch=True)
    return build


def keyed_records(paths):
    """The keys read too: traced (the keys name the file and the record)."""
    def build(tf):
        key, value = _read_in_order(tf, paths)
        return tf.train.batch([key, _bytes(tf, value)], batch_size=4,
                              allow_smaller_final_batch=True)
    return build


PROGRAMS = {program.__name__: program for program in (
    cifar_batches, framed_records, overlapping_records, keyed_records)}
WRITTEN = {"cifar_batches", "framed_records"}
FRAMES = {"framed_records": dict(header=b"HEADR", footer=b"END")}


def _library(graph) -> tuple:
    """The graph's nodes and its functions (sorted), as canonical text, and how many reads
    were written."""
    graph_def = graph.as_graph_def()
    whole = graph_text(graph_def, _canonical)
    written = functions_named(graph_def, _WRITTEN)
    return whole, written


@pytest.mark.parametrize("one_device", [True, False], ids=["one_device", "multi_device"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_written_reads_are_traced_reads(name, one_device, legacy, shim, monkeypatch,
                                        tmp_path):
    from compat._runtime import written_reads

    # An empty file, and a partial record at a file's end, which TF1 drops silently.
    paths = _write_files(tmp_path, [3, 0, 5], tail=b"xyz", **FRAMES.get(name, {}))
    build = PROGRAMS[name](paths)
    expected, (written_graph, written), (traced_graph, traced) = written_then_traced(
        legacy, shim, build, on_devices(build, one_device), monkeypatch,
        (written_reads, "fixed_length_values"), _library)
    assert len(expected) > 1
    assert written == (1 if name in WRITTEN else 0)
    assert traced == 0
    assert written_graph == traced_graph


@pytest.mark.parametrize("footer", [0, 2])
def test_a_file_with_no_whole_record_reads_as_tf1_reads_it(footer, legacy, shim, tmp_path):
    """A file holding its header but no whole record inside its frame gives no record, as
    in TF1, and the next file is read."""
    short = tmp_path / "short.bin"
    short.write_bytes(bytes(range(8)))
    paths = [str(short)] + _write_files(tmp_path, [2], header=b"H" * 6,
                                        footer=b"F" * footer)

    def build(tf):
        _, value = _read_in_order(tf, paths, header_bytes=6, footer_bytes=footer)
        return tf.train.batch([_bytes(tf, value)], batch_size=1)

    expected, _ = run_in_graph(legacy, build)
    written, graph = run_in_graph(shim, build)
    np.testing.assert_equal(written, expected)
    assert expected
    assert any(_WRITTEN.fullmatch(function.signature.name)
               for function in graph.as_graph_def().library.function)
