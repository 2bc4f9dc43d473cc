"""The functions a one-shot iterator runs to make its dataset (its `dataset_factory`), made
in C from GraphDefs (see `c_functions`).

TF's `make_one_shot_iterator` copies the dataset's ops into a Defun one Python op at a time
(~0.15 ms an op, ~3-5 ms a pipeline, 20-40 ms for an Inception-style input's streams); here
the same ops go in as one GraphDef: copied from the graph, or, for the shim's own steps,
written without ever being created there (`written_datasets`). Also here: the stand-ins of iterators that must fail when
run, made once per process, and the factory that creates a shared stream's iterator.

Grappler. At a fetch's first run the Session's grappler optimizes every function the fetch
reaches but tf.data's own, and a factory, the whole dataset graph, took it 10-20 ms with
nothing to gain. So the ops that make the dataset go into a function marked as tf.data marks
its functions (and not to be inlined), which a one-node function calls: grappler optimizes
that one node (~1 ms). That one-node function is written as a FunctionDef
(`c_functions.calling`), not made in C from a GraphDef whose library would carry the whole
body once more. Optimizing it matters: grappler marks the functions that tf.data
functions call (the user's ops, see `lifting.called_as_function`) as tf.data's too, and forgets
that mark only when a pass over the library changed a function; its next pass then optimizes
the user's ops as TF1's Session optimizes them (tests/runtime/test_float_exactness.py checks
the rewrites that follow). The same held when the factory was the whole dataset graph.
A dataset graph that names no function (a producer's epochs of constants: PTB's steps) is
the factory itself, marked: nothing to unmark, and one function fewer to make, instantiate
and take through the fetch's module-wide TFG pass (PTB's first batch, 16 alternating fresh
processes: 136 -> 114 ms, the first fetch 38 -> 33 ms).
"""
from __future__ import annotations

import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2, graph_pb2, node_def_pb2, tensor_pb2
from tensorflow.python.data.ops import debug_mode
from tensorflow.python.data.util import structure as _structure
from tensorflow.python.data.util import traverse as _traverse
from tensorflow.python.framework import versions

from compat._runtime import c_functions, written_datasets

# message -> the function that fails with it, made once per process (see `failing`)
_failing: dict = {}


def _constant(graph_def, name, dtype, **value) -> None:
    node = graph_def.node.add(name=name, op="Const")
    node.attr["dtype"].type = dtype.as_datatype_enum
    node.attr["value"].tensor.CopyFrom(tensor_pb2.TensorProto(
        dtype=dtype.as_datatype_enum, tensor_shape={}, **value))


def _add_marker_dataset(graph_def, after: str, name: str) -> None:
    """Node `name`: the dataset `from_tensors(0)`, made after node `after` runs."""
    _constant(graph_def, name + "/zero", tf.int32, int_val=[0])
    marker = graph_def.node.add(name=name, op="TensorDataset",
                                input=[name + "/zero", "^" + after])
    marker.attr["Toutput_types"].list.type.append(tf.int32.as_datatype_enum)
    marker.attr["output_shapes"].list.shape.add()


def failing(graph: tf.Graph, message: str):
    """A dataset factory, in `graph`, that fails with `message` when run: the stand-in of an
    iterator that must never yield (the op's name in TF's error says which). Made once per
    process (a Defun per graph cost ~2 ms of every pipeline's build)."""
    factory = _failing.get(message)
    if factory is None:
        graph_def = graph_pb2.GraphDef()
        graph_def.versions.producer = versions.GRAPH_DEF_VERSION
        _constant(graph_def, "message", tf.string, string_val=[message.encode()])
        _constant(graph_def, "false", tf.bool, bool_val=[False])
        failed = graph_def.node.add(name="assert", op="Assert", input=["false", "message"])
        failed.attr["T"].list.type.append(tf.string.as_datatype_enum)
        _add_marker_dataset(graph_def, after="assert", name="dataset")
        factory = _failing.setdefault(message, c_functions.of_graph_def(
            graph_def, [], [("dataset", 0)], "failing_factory", skipped_by_grappler=True))
    c_functions.add_once(factory, graph)
    return factory


def _by_value(dataset: tf.data.Dataset) -> tuple[graph_pb2.GraphDef, tuple] | None:
    """(the ops that make `dataset`, as `make_one_shot_iterator`'s Defun copies them, and
    (node, output) of its variant): what its variant reads, transitively, without control
    inputs or devices (colocations kept). One copy of an op read on two paths, where the
    Defun copies it twice: the same values, and the same datasets but where one keeps state
    per dataset object (a `cache()` read twice). A written dataset (`written_datasets`) is
    its nodes and the copies of what they read.

    None where TF's path does something else, so that the caller takes it: where its Defun
    would refuse an op (a placeholder, a stateful op other than a dataset's) with its error,
    where an op calls a function of the graph (a GraphDef of its own would not know it),
    under tf.data's debug mode (which adds its options), and where the dataset lives in
    another graph than the current one (TF's check refuses it)."""
    graph = tf.compat.v1.get_default_graph()
    if debug_mode.DEBUG_MODE:
        return None
    if written_datasets.is_written(dataset):
        written = (written_datasets.node_defs(dataset, _copied_ops)
                   if dataset._graph is graph else None)  # pylint: disable=protected-access
        if written is None:
            return None
        nodes, output = written[0], (written[1], 0)
    else:
        variant = dataset._variant_tensor  # pylint: disable=protected-access
        if variant.graph is not graph:
            return None
        nodes, output = _copied_ops([variant]), (variant.op.name, variant.value_index)
        if nodes is None:
            return None
    graph_def = graph_pb2.GraphDef()
    graph_def.versions.CopyFrom(graph.graph_def_versions)
    graph_def.node.extend(nodes)
    return graph_def, output


def _copied_ops(tensors) -> list | None:
    """NodeDefs of the ops computing `tensors`, transitively, in creation order, as
    `_by_value` copies them; None where it refuses one."""
    found, pending = {}, [tensor.op for tensor in tensors]
    while pending:
        op = pending.pop()
        if op.name not in found:
            found[op.name] = op
            pending.extend(tensor.op for tensor in op.inputs)
    for op in found.values():
        if op.type in ("Placeholder", "PlaceholderV2") or op.graph._is_function(op.type) or (  # pylint: disable=protected-access
                op._is_stateful and op.outputs[0].dtype not in _traverse.TENSOR_TYPES_ALLOWLIST  # pylint: disable=protected-access
                and op.type not in _traverse.OP_TYPES_ALLOWLIST):
            return None
    copies = []
    for op in sorted(found.values(), key=lambda op: op._id):  # pylint: disable=protected-access
        node = node_def_pb2.NodeDef()
        node.CopyFrom(op.node_def)
        node.device = ""
        inputs = [name for name in node.input if not name.startswith("^")]
        del node.input[:]
        node.input.extend(inputs)
        copies.append(node)
    return copies


def _factory(graph_def: graph_pb2.GraphDef, output, name: str):
    """A dataset factory, added to the current graph, returning `output` of `graph_def`'s ops:
    a one-node function calling a function of those ops, or, where they name no function
    (nothing for the Session's grappler to unmark), that function itself (see the module
    docstring)."""
    graph = tf.compat.v1.get_default_graph()
    calls = _calls_functions(graph_def)
    body = c_functions.of_graph_def(graph_def, [], [output], f"{name}_body" if calls else name,
                                    skipped_by_grappler=True)
    body.add_to_graph(graph)
    if not calls:
        return body
    body_hash = body.name[len(f"{name}_body_"):]
    factory = c_functions.calling(body.definition, f"{name}_{body_hash}")
    factory.add_to_graph(graph)
    return factory


def _calls_functions(graph_def: graph_pb2.GraphDef) -> bool:
    """Whether some node of `graph_def` names a function (a map's, a filter's...)."""
    return any(value.HasField("func") or value.list.func
               for node in graph_def.node for value in node.attr.values())


def _as_attr(factory) -> attr_value_pb2.AttrValue:
    return attr_value_pb2.AttrValue(func=attr_value_pb2.NameAttrList(name=factory.name))


def of_dataset(dataset: tf.data.Dataset) -> attr_value_pb2.AttrValue:
    """The `dataset_factory` attribute of a one-shot iterator over `dataset`, whose ops are in
    the current graph: a function making them anew, added to the graph."""
    copied = _by_value(dataset)
    if copied is None:
        iterator = tf.compat.v1.data.make_one_shot_iterator(dataset)
        op = tf.nest.flatten(iterator._iterator_resource)[0].op  # pylint: disable=protected-access
        return op.node_def.attr["dataset_factory"]
    graph_def, output = copied
    return _as_attr(_factory(graph_def, output, "make_dataset"))


def making_shared_iterator(dataset: tf.data.Dataset, shared_name: str):
    """A dataset factory (added to the current graph) whose dataset is `from_tensors(0)`, made
    after it creates an iterator over `dataset` under `shared_name`: a one-shot iterator runs
    its factory once per Session, so each Session gets one such iterator. None where
    `dataset`'s ops cannot be copied (see `_by_value`)."""
    copied = _by_value(dataset)
    if copied is None:
        return None
    graph_def, (source, index) = copied
    spec = dataset.element_spec
    prefix = "compat_shared"
    while any(node.name.startswith(prefix) for node in graph_def.node):
        prefix += "_"
    iterator = graph_def.node.add(name=f"{prefix}_iterator", op="IteratorV2")
    iterator.attr["shared_name"].s = shared_name.encode()
    iterator.attr["container"].s = b""
    iterator.attr["output_types"].list.type.extend(
        dtype.as_datatype_enum for dtype in _structure.get_flat_tensor_types(spec))
    iterator.attr["output_shapes"].list.shape.extend(
        shape.as_proto() for shape in _structure.get_flat_tensor_shapes(spec))
    source = source if index == 0 else f"{source}:{index}"
    graph_def.node.add(name=f"{prefix}_make_iterator", op="MakeIterator",
                       input=[source, f"{prefix}_iterator"])
    _add_marker_dataset(graph_def, after=f"{prefix}_make_iterator", name=f"{prefix}_stream")
    return _factory(graph_def, (f"{prefix}_stream", 0), "make_shared_iterator")
