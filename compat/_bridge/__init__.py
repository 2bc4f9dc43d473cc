"""The TF2 bridge: a legacy pipeline as an ordinary `tf.data.Dataset` (`compat.to_dataset`).

`build(tf, *args, **kwargs)` runs with `compat.v1` in a private graph, so every queue call
compiles to tf.data as in graph mode. The dataset of what `build` returned (its batches, or
any structure computed from stage outputs) is serialized there and rebuilt in the caller's
context: eager, a `tf.function` being traced, or a plain graph (see `dataset_graphs`).

What cannot cross (its state lives in the private graph's Session, which never runs): a
queue fed from Python, a placeholder, a lookup table or variable, a stream shared by several
consumers. These raise `ValueError` here, naming what to change.
"""
from __future__ import annotations

import contextlib
from typing import Callable

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import graph_pb2, node_def_pb2, types_pb2
from tensorflow.python.framework import tensor_util

from compat._bridge import dataset_graphs, fingerprinted
from compat._runtime import (build_context, element_source, lifting, plan, readers,
                             stage_iterators, tf1_fallback)

# Op types whose state the private graph's Session would hold (or feed): the rebuilt
# dataset could not see it. Types -> what the user wrote.
_CANNOT_CROSS = {
    "Placeholder": "a tf.placeholder (nothing can feed it)",
    "QueueDequeueV2": "a queue fed from Python",
    "QueueDequeueManyV2": "a queue fed from Python",
    "QueueDequeueUpToV2": "a queue fed from Python",
    "IteratorV2": "a stream read by several consumers (e.g. two batch calls on one reader)",
    "HashTableV2": "a lookup table (initialized by a Session)",
    "MutableHashTableV2": "a lookup table (initialized by a Session)",
    "VarHandleOp": "a variable (e.g. reader counters)",
    "VariableV2": "a variable (e.g. reader counters)",
}


def to_dataset(build: Callable, *args, graph_seed: int | None = None, **kwargs) -> tf.data.Dataset:
    """Run legacy pipeline code and return its output as a `tf.data.Dataset`.

    build: ``build(tf, *args, **kwargs)``, the legacy pipeline code taking the ``tf`` module
        (``compat.v1`` is passed); returns what a TF1 program fetches (a tensor, or a tuple,
        list or dict of them). Its elements are that structure, one per fetch.
    graph_seed: as ``tf.set_random_seed(graph_seed)`` before ``build``: the elements are then
        exactly those ``compat.v1`` gives in graph mode with that seed, every iteration.
        None: unseeded, as in TF1 (every iteration draws anew).

    Returns a dataset in the caller's context (eager, a ``tf.function`` being traced, or a
    plain graph). Each iteration starts from the beginning; a finite pipeline ends.
    Raises ValueError for what cannot leave the private graph (see the module docstring).
    """
    import compat.v1 as shim

    graph = tf.Graph()
    readers.read_each_file_alone(graph)
    build_context.functions_as_tf_makes_them(graph)
    build_context.repeatable_order(graph)
    build_context.epochs_split_by_row(graph)
    tf1_fallback.without_session(graph)
    with graph.as_default():
        if graph_seed is not None:
            shim.set_random_seed(graph_seed)
        with _session_only_values_refused(build):
            structure = build(shim, *args, **kwargs)
            _require_fetchable(structure, build)
            # Built as a batch call builds its input: the frame tells what it reads.
            with build_context.building(graph) as frame:
                dataset = element_source.element_dataset(structure, "compat.to_dataset",
                                                         consumer=("compat.to_dataset",))
            if frame.threads_as_tf1:
                dataset = dataset.with_options(stage_iterators.tf1_threading(tf.data.Options()))
        if frame.waits_on_runs:
            _refuse("a queue fed from Python (its enqueue runs in a Session)")
        plan.build_pending(graph)
        graph_def = dataset_graphs.serialized(dataset)
        if len(_sources(graph_def)) > 1:
            # Stages read together (zipped): the tf.data service's dynamic sharding would hand
            # each source's splits to any worker, pairing elements that never met. One split
            # for the whole pipeline instead: one worker reads all of it.
            dataset = tf.data.Dataset.from_tensors(0).flat_map(lambda _, whole=dataset: whole)
            graph_def = dataset_graphs.serialized(dataset)
        element_spec = dataset.element_spec
    _check_crossable(graph_def)
    _divisions_by_constants_as_tf1_runs_them(graph_def)
    _epochs_bounded_at_their_source(graph_def)
    return fingerprinted.BridgedDataset(dataset_graphs.variant_of(graph_def), element_spec,
                                        graph_def)


@contextlib.contextmanager
def _session_only_values_refused(build):
    try:
        yield
    except lifting.LiftError as error:
        raise ValueError(
            f"compat.to_dataset: what {getattr(build, '__name__', 'build')} returned cannot "
            "become a tf.data.Dataset, because it is computed from values only a Session can "
            "give (a placeholder, a batch_size fed per run, a queue fed from Python or picked "
            f"with QueueBase.from_list): {error}") from error


_FETCHABLE = "a Tensor, a SparseTensor, or a (nested) list, tuple or dict of them"


def _require_fetchable(structure, build) -> None:
    """TypeError unless `structure` is what a TF1 program fetches from a pipeline."""
    leaves = tf.nest.flatten(structure, expand_composites=False)
    bad = [leaf for leaf in leaves if not isinstance(leaf, (tf.Tensor, tf.SparseTensor))]
    if structure is not None and leaves and not bad:
        return
    returned = type(structure).__name__
    if bad and bad[0] is not structure:
        returned += f" holding {type(bad[0]).__name__} {bad[0]!r:.60}"
    elif structure is not None:
        returned += f" {structure!r:.60}"
    raise TypeError(
        f"compat.to_dataset: {getattr(build, '__name__', 'build')} returned {returned}; it "
        f"must return what the legacy program fetches from its pipeline: {_FETCHABLE} (e.g. "
        "the batch tensors of tf.train.batch).")


def _refuse(what: str):
    raise ValueError(
        f"compat.to_dataset: the pipeline reads {what}, whose state would stay in the graph "
        "that to_dataset builds it in. Build that part with tf.data (or constants) inside "
        "`build`, or keep this pipeline on compat.v1 in graph mode with a Session.")


def _check_crossable(graph_def: graph_pb2.GraphDef) -> None:
    nodes = list(graph_def.node)
    for function in graph_def.library.function:
        nodes.extend(function.node_def)
    for node in nodes:
        if node.op in _CANNOT_CROSS:
            _refuse(_CANNOT_CROSS[node.op])


_FLOAT_TYPES = {types_pb2.DT_HALF, types_pb2.DT_BFLOAT16, types_pb2.DT_FLOAT, types_pb2.DT_DOUBLE}


def _divisions_by_constants_as_tf1_runs_them(graph_def: graph_pb2.GraphDef) -> None:
    """Rewrite `x / c` (c a floating-point constant) as `x * (1 / c)`, in place.

    TF1's Session runs grappler on the user's graph, whose constant folding does exactly this
    (`ReduceDivToReciprocalMul`), so TF1's floats are those of the multiplication. In graph
    mode the shim gets the rewrite from the Session as well (see `lifting`); the rebuilt
    dataset runs its functions without a Session's grappler, so the bridge applies the
    rewrite itself. The reciprocal is rounded once, in the constant's own type, as grappler
    folds it.
    """
    for function in graph_def.library.function:
        constants = {node.name: node for node in function.node_def if node.op == "Const"}
        added = []
        for node in function.node_def:
            if node.op not in ("RealDiv", "Div") or node.attr["T"].type not in _FLOAT_TYPES:
                continue
            divisor = node.input[1].split(":")[0]
            if divisor.startswith("^") or divisor not in constants:
                continue
            value = tensor_util.MakeNdarray(constants[divisor].attr["value"].tensor)
            reciprocal = node_def_pb2.NodeDef(name=f"{node.name}/compat_reciprocal", op="Const")
            reciprocal.attr["dtype"].type = node.attr["T"].type
            reciprocal.attr["value"].tensor.CopyFrom(tensor_util.make_tensor_proto(
                (np.ones((), value.dtype) / value).astype(value.dtype)))
            added.append(reciprocal)
            node.op = "Mul"
            node.input[1] = f"{reciprocal.name}:output:0"
        function.node_def.extend(added)


def _sources(graph_def: graph_pb2.GraphDef) -> list:
    """The pipeline's datasets that read no other dataset: what dynamic sharding splits."""
    nodes = {node.name: node for node in graph_def.node}

    def is_dataset(node):
        return node is not None and "Dataset" in node.op

    return [node for node in graph_def.node if is_dataset(node)
            and not any(is_dataset(dataset_graphs.producer(nodes, name)) for name in node.input)]


# Dataset ops that give exactly one element per input element.
_ONE_TO_ONE = ("MapDataset", "ParallelMapDataset", "ParallelMapDatasetV2")


def _epochs_bounded_at_their_source(graph_def: graph_pb2.GraphDef) -> None:
    """Rewrite `from_tensors(x).repeat()`, mapped one to one, then `take(n)` (how the runtime
    builds a producer's `num_epochs` epochs) as `from_tensors(x).repeat(n)` ... `take(n)`.

    The same elements either way. But the tf.data service's dynamic sharding
    (`distributed_epoch`) splits the source among its workers, and each worker applies the
    `take` to its own splits: from an endless source every worker would read all n epochs
    (each element once per worker); from `repeat(n)` the n epochs are read once in all.
    """
    nodes = {node.name: node for node in graph_def.node}

    def constant(name):
        node = dataset_graphs.producer(nodes, name)
        if node is None or node.op != "Const":
            return None
        return tensor_util.MakeNdarray(node.attr["value"].tensor)

    for take in [node for node in graph_def.node if node.op == "TakeDataset"]:
        count = constant(take.input[1])
        if count is None or count.shape or count < 0:
            continue
        node = dataset_graphs.producer(nodes, take.input[0])
        while node is not None and node.op in _ONE_TO_ONE:
            node = dataset_graphs.producer(nodes, node.input[0])
        if (node is not None and node.op == "RepeatDataset"
                and constant(node.input[1]) == -1
                and getattr(dataset_graphs.producer(nodes, node.input[0]), "op", None) == "TensorDataset"):
            node.input[1] = take.input[1]
