"""Serialized dataset graphs: a tf.data pipeline as a GraphDef, and back in any context.

`serialized` writes a dataset's graph out (`DatasetToGraphV2`); `variant_of` rebuilds the
dataset in the caller's context:

- eager: `DatasetFromGraph` over the serialized graph; each iteration builds new iterators,
  so it replays from the start, as a new Session does;
- while a `tf.function` is traced: the same op, its input behind a stateful identity
  (`Print` that never prints), since grappler would otherwise fold the dataset into a
  constant that cannot be serialized;
- in a plain graph (a TF1 program): the dataset's ops imported into the graph, which a
  one-shot iterator can capture by value.

The bridge (`compat.to_dataset`) and the harness (a candidate's own input order) use both.
"""
from __future__ import annotations

import tensorflow as tf
from tensorflow.core.framework import graph_pb2
from tensorflow.python.data.ops import dataset_ops
from tensorflow.python.framework import func_graph


def serialized(dataset: tf.data.Dataset) -> graph_pb2.GraphDef:
    """The dataset's graph (the dataset must live in a graph: the current, private one)."""
    graph_def = dataset._as_serialized_graph(  # pylint: disable=protected-access
        external_state_policy=tf.data.experimental.ExternalStatePolicy.IGNORE)
    with tf.compat.v1.Session(graph=graph_def.graph) as session:
        return graph_pb2.GraphDef.FromString(session.run(graph_def))


def producer(nodes: dict, name: str):
    """The node of `nodes` (by name) that outputs input `name` ("node:0", "^node", "node")."""
    return nodes.get(name.lstrip("^").split(":")[0])


def output_node(graph_def: graph_pb2.GraphDef):
    """The `_Retval` node that marks the serialized dataset (as DatasetFromGraph reads it)."""
    (retval,) = [node for node in graph_def.node if node.op == "_Retval"]
    return retval


def dataset_of(graph_def: graph_pb2.GraphDef, element_spec) -> tf.data.Dataset:
    """The dataset `graph_def` describes, in the current context."""
    return dataset_ops._VariantDataset(variant_of(graph_def), element_spec)  # pylint: disable=protected-access


def variant_of(graph_def: graph_pb2.GraphDef) -> tf.Tensor:
    """The variant tensor of the dataset `graph_def` describes, in the current context."""
    if tf.executing_eagerly():
        return tf.raw_ops.DatasetFromGraph(graph_def=graph_def.SerializeToString())
    if isinstance(tf.compat.v1.get_default_graph(), func_graph.FuncGraph):
        # first_n=0: never prints; the op is stateful, so grappler leaves the input alone.
        unfolded = tf.raw_ops.Print(input=tf.constant(graph_def.SerializeToString()), data=[],
                                    message="", first_n=0)
        return tf.raw_ops.DatasetFromGraph(graph_def=unfolded)
    return _imported(graph_def)


def _imported(graph_def: graph_pb2.GraphDef) -> tf.Tensor:
    """The dataset's ops imported into the current graph; returns its variant tensor."""
    graph_def = graph_pb2.GraphDef.FromString(graph_def.SerializeToString())
    retval = output_node(graph_def)
    output = retval.input[0]
    graph_def.node.remove(retval)
    (variant,) = tf.graph_util.import_graph_def(
        graph_def, return_elements=[output if ":" in output else output + ":0"],
        name="compat_to_dataset")
    return variant
