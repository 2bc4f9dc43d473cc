"""A fingerprint of a bridged pipeline that is the same in every process, for `snapshot()`.

TensorFlow fingerprints a snapshot's input with its graph hasher (`HashGraph`), which is not
reproducible for pipelines with several functions (every legacy pipeline has them; a plain
tf.data pipeline with two maps too, TF 2.15 to 2.21): the same dataset hashes differently
from one `snapshot()` to the next, so each run writes a new snapshot instead of reading the
last. The bridged dataset's `snapshot()` gives the snapshot op its own fingerprint instead.
"""
from __future__ import annotations

import hashlib
import multiprocessing

from tensorflow.core.framework import graph_pb2
from tensorflow.python.data.ops import dataset_ops, snapshot_op


def _pipeline_digest(graph_def: graph_pb2.GraphDef) -> bytes:
    """A digest of the pipeline `graph_def` serializes, the same in every process that builds it.

    The serialized graph names its functions `__inference_<name>_<uid>` (uid: a counter over
    everything the process traced before) and its datasets' `metadata` counts the datasets the
    process made: both are dropped here, the functions renamed in the order the graph first
    calls them. What remains is what the pipeline computes (ops, attributes, constants such as
    file names, the seeds `graph_seed` fixes).
    """
    canonical = graph_pb2.GraphDef()
    canonical.CopyFrom(graph_def)
    functions = {function.signature.name: function for function in canonical.library.function}
    renamed = {}

    def visit_function(name):
        if name in functions and name not in renamed:
            renamed[name] = f"compat_function_{len(renamed)}"
            for node in functions[name].node_def:
                visit_node(node)

    def visit_node(node):
        if node.op in functions:
            visit_function(node.op)
        for key in sorted(node.attr):
            value = node.attr[key]
            for function in ([value.func] if value.HasField("func") else value.list.func):
                visit_function(function.name)

    for node in canonical.node:
        visit_node(node)

    def rename(node):
        node.attr.pop("metadata", None)
        if node.op in renamed:
            node.op = renamed[node.op]
        for value in node.attr.values():
            for function in ([value.func] if value.HasField("func") else value.list.func):
                function.name = renamed.get(function.name, function.name)

    for node in canonical.node:
        rename(node)
    used = sorted((renamed[name], functions[name]) for name in renamed)
    del canonical.library.function[:]
    for name, function in used:
        function.signature.name = name
        for node in function.node_def:
            rename(node)
        _number_the_names_in(function)
        canonical.library.function.add().CopyFrom(function)
    return hashlib.sha256(canonical.SerializeToString(deterministic=True)).digest()


def _number_the_names_in(function) -> None:
    """Name a function's arguments and nodes by position (grappler's names for them can
    carry the uid of the function they came from)."""
    names = {arg.name: f"arg{i}" for i, arg in enumerate(function.signature.input_arg)}
    names.update({node.name: f"node{i}" for i, node in enumerate(function.node_def)})

    def renamed(reference):
        control = reference.startswith("^")
        name, colon, rest = reference.lstrip("^").partition(":")
        return ("^" if control else "") + names.get(name, name) + colon + rest

    for arg in function.signature.input_arg:
        arg.name = names[arg.name]
    for node in function.node_def:
        node.name = names[node.name]
        node.input[:] = [renamed(reference) for reference in node.input]
    for key in list(function.ret):
        function.ret[key] = renamed(function.ret[key])
    for key in list(function.control_ret):
        function.control_ret[key] = names.get(function.control_ret[key],
                                              function.control_ret[key])


class BridgedDataset(dataset_ops._VariantDataset):  # pylint: disable=protected-access
    """The rebuilt dataset; its `snapshot()` names the snapshot by the pipeline it runs.

    TensorFlow fingerprints a snapshot's input with its graph hasher (`HashGraph`, run by the
    snapshot op), which is not reproducible for a pipeline with several functions (every
    legacy pipeline has them; plain tf.data pipelines with two maps too, TF 2.15 to 2.21): the
    same dataset hashes differently from one `snapshot()` to the next, so each run writes a
    new snapshot instead of reading the last. Here the fingerprint is `_pipeline_digest` (the
    same for the same `build`, arguments and `graph_seed` in any process) and the
    compression, given to the snapshot op as its `hash`. Only `snapshot()` called on this
    dataset itself is covered: one after further transformations is TensorFlow's own.
    """

    def __init__(self, variant, element_spec, graph_def: graph_pb2.GraphDef):
        self._compat_graph_digest = _pipeline_digest(graph_def)
        super().__init__(variant, element_spec)

    def snapshot(self, path, compression="AUTO", reader_func=None, shard_func=None,
                 name=None):
        """As `tf.data.Dataset.snapshot`, with a fingerprint stable across builds."""
        digest = hashlib.sha256(self._compat_graph_digest + str(compression).encode())
        fingerprint = int.from_bytes(digest.digest()[:8], "little", signed=True)
        source, project = self, None
        if shard_func is None:  # as tf.data.Dataset.snapshot does
            source = self.enumerate(name=name)
            shard_func = lambda index, _: index % multiprocessing.cpu_count()
            project = lambda _, element: element
        dataset = _FingerprintedSnapshot(
            fingerprint, input_dataset=source, path=path, compression=compression,
            reader_func=reader_func, shard_func=shard_func, name=name)
        return dataset if project is None else dataset.map(project, name=name)


class _FingerprintedSnapshot(snapshot_op._SnapshotDataset):  # pylint: disable=protected-access
    """`tf.data.Dataset.snapshot`'s dataset, its fingerprint given (the op's `hash`)."""

    def __init__(self, fingerprint: int, **kwargs):
        self._compat_fingerprint = fingerprint
        super().__init__(**kwargs)

    @property
    def _common_args(self):
        return dict(super()._common_args, hash_valid=True, hash=self._compat_fingerprint)
