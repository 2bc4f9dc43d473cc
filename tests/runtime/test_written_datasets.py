"""A stage's dataset written as nodes (`written_datasets`): each program runs with TF1's
queues, with the shim, and with the shim made to create every dataset op in the graph as
tf.data does (`can_write` false, the factory copied from those ops); the three streams are
equal, the dataset factories are the same functions but for their nodes' names, and the
written run left fewer dataset ops in the graph."""
import hashlib
import re

import numpy as np
import pytest

from test_whole_file_reads import write_pngs
from written_functions import UID, datasets_created_as_tf_data_does, run_in_graph

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(600)]

_FACTORY = re.compile(r"_?make_(dataset|shared_iterator)(_body)?_[A-Za-z0-9_-]{11}")
_DATASET_OP = re.compile(r".*Dataset(V\d)?")


# A shared stream's name is drawn anew per graph, and so the hash of a pull naming it.
_STREAM = re.compile(r"\bcompat_(stream_[0-9a-f]{32}|pull_[0-9a-f]{16})\b")


def _named_alike(text: str) -> str:
    text = _STREAM.sub(lambda match: match.group(1).split("_")[0].upper(), text)
    return UID.sub(r"\1_UID", _FACTORY.sub("FACTORY", text))


def image_folder(paths):
    """A tutorial image folder: names shuffled per epoch, decoded, resized, batched."""
    def build(tf):
        names = tf.train.string_input_producer(paths, num_epochs=2, seed=5)
        _, contents = tf.WholeFileReader().read(names)
        image = tf.image.resize_images(tf.image.decode_png(contents, channels=3), [4, 4])
        return tf.train.batch([image], batch_size=2)
    return build


def labelled_rows(_):
    """Rows and labels sliced from constants in order, over three epochs, batched with the
    last batch short."""
    def build(tf):
        rows = tf.constant(np.arange(21, dtype=np.float32).reshape(7, 3))
        labels = tf.constant(np.arange(7, dtype=np.int64))
        row, label = tf.train.slice_input_producer([rows, labels], num_epochs=3, shuffle=False)
        return tf.train.batch([row * 2.0, label], batch_size=4, allow_smaller_final_batch=True)
    return build


def numbered_steps(_):
    """A range producer's numbers, shuffled per epoch, batched as they come (no map)."""
    def build(tf):
        step = tf.train.range_input_producer(9, num_epochs=2, seed=11).dequeue()
        return tf.train.batch([step], batch_size=3)
    return build


def shuffled_names(paths):
    """File names under shuffle_batch: its shuffle takes the written names. TF1's batches
    depend on how far its runners got: the same names, in other orders."""
    def build(tf):
        names = tf.train.string_input_producer(paths, num_epochs=2, shuffle=False)
        return tf.train.shuffle_batch([names.dequeue()], batch_size=2, capacity=6,
                                      min_after_dequeue=2, seed=3)
    return build


def two_readers(_):
    """One producer read twice per step: a stream shared by two consumers. Which of TF1's
    two dequeues runs first depends on its threads: the same pairs, either way round."""
    def build(tf):
        words = tf.train.string_input_producer([b"a", b"b", b"c", b"d"], num_epochs=2,
                                               shuffle=False)
        first, second = words.dequeue(), words.dequeue()
        return tf.train.batch([tf.strings.join([first, second])], batch_size=2)
    return build


PROGRAMS = {program.__name__: program for program in
            (image_folder, labelled_rows, numbered_steps, shuffled_names, two_readers)}
TIMED_BY_TF1 = {"shuffled_names", "two_readers"}  # compared with TF1 as multisets


def _multiset(stream) -> list:
    """The stream's strings, each with its characters sorted, sorted."""
    return sorted(bytes(sorted(value)) for batch in stream for value in np.ravel(batch[0]
                  if isinstance(batch, (list, tuple)) else batch))


def _canonical_nodes(nodes) -> list:
    """Each node as a hash of its op, attributes and inputs (themselves hashed), its name
    left out; colocations by the hash of the node they name. Sorted."""
    by_name = {node.name: node for node in nodes}
    keys = {}

    def key(name):
        if name not in by_name:  # a function's argument
            return name
        if name not in keys:
            node = by_name[name]
            inputs = []
            for text in node.input:
                control = text.startswith("^")
                source, _, port = text.lstrip("^").partition(":")
                inputs.append(("^" if control else "") + key(source) + port)
            attrs = []
            for attr_name in sorted(node.attr):
                value = node.attr[attr_name]
                if attr_name == "_class":
                    attrs.append((attr_name, sorted(key(group.decode()[len("loc:@"):])
                                                    for group in value.list.s)))
                else:
                    attrs.append((attr_name, _named_alike(str(value))))
            op = _named_alike(node.op)
            keys[name] = hashlib.sha256(repr((op, inputs, attrs)).encode()).hexdigest()[:16]
        return keys[name]

    return sorted(key(name) for name in by_name)


def _factories(graph) -> list:
    """The graph's dataset factories (and the functions they call), as canonical nodes and
    signatures; other functions as they are."""
    library = graph.as_graph_def().library.function
    result = []
    for function in library:
        if _FACTORY.fullmatch(function.signature.name):  # its nodes named alike
            signature = [arg.type for arg in function.signature.output_arg]
            result.append(("factory", signature, _canonical_nodes(function.node_def)))
        else:
            result.append(("function", _named_alike(str(function))))
    return sorted(result)


def _dataset_ops(graph) -> int:
    return sum(bool(_DATASET_OP.fullmatch(op.type)) for op in graph.get_operations())


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_written_factories_are_the_ones_copied_from_tf_data_ops(name, legacy, shim,
                                                                monkeypatch, tmp_path):
    build = PROGRAMS[name](write_pngs(tmp_path, [3, 5, 4, 6, 2]))
    expected, _ = run_in_graph(legacy, build)
    written_stream, written_graph = run_in_graph(shim, build)
    datasets_created_as_tf_data_does(monkeypatch)
    created_stream, created_graph = run_in_graph(shim, build)
    np.testing.assert_equal(written_stream, created_stream)
    if name in TIMED_BY_TF1:
        assert _multiset(written_stream) == _multiset(expected)
    else:
        np.testing.assert_equal(written_stream, expected)
    assert _factories(written_graph) == _factories(created_graph)
    assert _dataset_ops(written_graph) < _dataset_ops(created_graph)
