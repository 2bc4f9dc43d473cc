"""A batch of values computed from whole files (`unit_maps`): the map that reads each file
and computes its values is written as tf.data's trace writes it. Each program is run three
times: with TF1's queues, with the shim, and with the shim made to trace the map; the
streams are equal, and so are the written and traced graphs, functions and map ops."""
import re

import pytest

from written_functions import (canonical, functions_named, graph_text, on_devices,
                               written_then_traced)
from test_whole_file_reads import write_pngs

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(600)]

_WRITTEN = re.compile(r"\bcompat_units_[0-9a-f]{16}\b")
_TRACED = re.compile(r"\b__inference_Dataset_map_lambda_\d+\b")


def _canonical(text: str) -> str:
    return canonical(text, _WRITTEN, _TRACED, "UNIT_MAP")


def decoded_images(paths):
    """The tutorial image folder: decode, resize, standardize, batch."""
    def build(tf):
        files = tf.train.string_input_producer(paths, num_epochs=2, seed=7)
        _, contents = tf.WholeFileReader().read(files)
        image = tf.image.resize_images(tf.image.decode_png(contents, channels=3), [6, 6])
        return tf.train.batch([tf.image.per_image_standardization(image)], batch_size=3)
    return build


def flipped_images(paths):
    """A random flip (one call at a time: TF1's one thread takes the draws in order)."""
    def build(tf):
        files = tf.train.string_input_producer(paths, num_epochs=2, shuffle=False)
        _, contents = tf.WholeFileReader().read(files)
        image = tf.image.resize_images(tf.image.decode_png(contents, channels=3), [5, 5])
        image = tf.image.random_flip_left_right(image, seed=4)
        return tf.train.batch([image], batch_size=2, allow_smaller_final_batch=True)
    return build


def labels_from_names(paths):
    """The label parsed from the file's name: the function reads the name and the
    contents."""
    def build(tf):
        files = tf.train.string_input_producer(paths, num_epochs=2, shuffle=False)
        name, contents = tf.WholeFileReader().read(files)
        digits = tf.strings.regex_replace(name, r".*picture-0*(\d+)\.png$", r"\1")
        label = tf.strings.to_number(digits, out_type=tf.int32) % 3
        image = tf.cast(tf.image.decode_png(contents, channels=3), tf.float32) / 255.0
        image = tf.image.resize_image_with_crop_or_pad(image, 4, 4)
        return tf.train.batch([image, label], batch_size=2)
    return build


def names_and_images(paths):
    """The file name batched as read: traced (the trace returns the argument itself)."""
    def build(tf):
        files = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
        name, contents = tf.WholeFileReader().read(files)
        image = tf.image.resize_images(tf.image.decode_png(contents, channels=3), [3, 3])
        return tf.train.batch([name, image], batch_size=2)
    return build


PROGRAMS = {program.__name__: program for program in (
    decoded_images, flipped_images, labels_from_names, names_and_images)}
WRITTEN = {"decoded_images", "flipped_images", "labels_from_names"}


def _library(graph) -> tuple:
    """The graph's nodes and its functions (sorted), as canonical text; how many unit maps
    were written; the map ops calling one."""
    graph_def = graph.as_graph_def()
    whole = graph_text(graph_def, _canonical)
    written = functions_named(graph_def, _WRITTEN)
    maps = [node.op for node in graph_def.node if "UNIT_MAP" in _canonical(str(node))]
    return whole, written, maps


@pytest.mark.parametrize("one_device", [True, False], ids=["one_device", "multi_device"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_written_unit_maps_are_traced_maps(name, one_device, legacy, shim, tf_behavior,
                                           monkeypatch, tmp_path):
    from compat._runtime import unit_maps

    paths = write_pngs(tmp_path, [3, 5, 4, 6, 2])
    build = PROGRAMS[name](paths)
    _, (written_graph, written, written_maps), (traced_graph, traced, traced_maps) = \
        written_then_traced(legacy, shim, build, on_devices(build, one_device), monkeypatch,
                            (unit_maps, "written"), _library)
    # random_flip_left_right's cond is v2 control flow in TF2 graph mode: its branch
    # functions keep the map traced.
    v2_cond = name == "flipped_images" and tf_behavior == "tf2"
    assert written == (1 if name in WRITTEN and not v2_cond else 0)
    assert traced == 0
    if v2_cond:  # traced both times (its branch functions are named anew in each graph)
        return
    assert written_graph == traced_graph
    # The map as the batch fuses it (and the map op it fused, left unread in the graph).
    assert written_maps == traced_maps
    assert "MapAndBatchDataset" in traced_maps
