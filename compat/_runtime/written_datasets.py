"""Datasets written as the nodes tf.data would create, and created in the graph only if
something other than the shim's factory (`dataset_factories`) asks for their ops.

A stage's dataset is built in the graph only to be copied, op by op, into the function its
iterator runs. tf.data's Python creates each op (~0.3 ms) inside its own bookkeeping
(specs, options merged at every step): a JPEG folder's stage, 13 ops, cost ~10 ms of its
~25 ms build at the first Session run, all of it thrown away once copied. So the shim's own
steps (a producer's epochs of a constant, its written maps, unbatch, batch and
map-and-batch, prefetch, the pipeline options) write their node, with the inputs and
attributes tf.data gives it (tested against tf.data's, whole factories, in both TF
behaviours), and the factory is made from those nodes. Anything else that takes such a
dataset (a tf.data transformation, TF's one-shot iterator, a shuffle) reads its
`_variant_tensor`, which creates its ops then, in the graph it was written for, outside
any control dependency, device or colocation: it is written only where none was in force
(`can_write`), so that the ops are those tf.data would have created.
"""
from __future__ import annotations

import contextlib

import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2, node_def_pb2, tensor_pb2
from tensorflow.python.data.ops import dataset_ops as _dataset_ops
from tensorflow.python.data.ops import options as _options_lib
from tensorflow.python.data.ops import prefetch_op as _prefetch_op
from tensorflow.python.data.util import structure as _structure

from compat._runtime import build_context

_NO_METADATA = b""  # an unnamed dataset's serialized `Metadata`


def _passes(function, keyword: str) -> bool:
    """Whether `function`'s code passes `keyword` to a call."""
    code = function.__code__
    return any(isinstance(const, tuple) and keyword in const for const in code.co_consts)


# TF 2.18's prefetch sets `legacy_autotune` (false for a given size); 2.15's leaves the op's
# default, true.
_PREFETCH_SETS_LEGACY_AUTOTUNE = _passes(_prefetch_op._PrefetchDataset.__init__,  # pylint: disable=protected-access
                                         "legacy_autotune")


class Node:
    """One op, written: its type, its inputs (nodes, or tensors of the graph), its attributes;
    `colocated`: with its first input, as tf.data colocates a prefetch and options with
    theirs. Its output 0 is made (`tensor`) at most once."""

    __slots__ = ("op", "inputs", "attrs", "colocated", "name", "scope", "graph",
                 "made_in_place", "_made")

    def __init__(self, op: str, inputs, attrs: dict, colocated: bool = False, name=None):
        self.op, self.inputs, self.attrs, self.colocated = op, tuple(inputs), attrs, colocated
        self.name = name or op  # as tf.data names the op
        self.graph = tf.compat.v1.get_default_graph()
        self.scope = self.graph.get_name_scope()
        self._made, self.made_in_place = None, False

    def make_in_place(self) -> None:
        """Create the op now, in the current context, as tf.data would have: its own
        arguments (constants) with it, its input datasets as they are made."""
        inputs = []
        for value in self.inputs:
            if isinstance(value, Node):
                if value.op == "Const" and value._made is None:
                    value.make_in_place()
                value = value.tensor()
            inputs.append(value)
        self._made, self.made_in_place = self._create(inputs), True

    def tensor(self) -> tf.Tensor:
        """Output 0 of the op, created in the graph (with its inputs) the first time."""
        if self._made is None:
            inputs = [value.tensor() if isinstance(value, Node) else value
                      for value in self.inputs]
            graph = self.graph
            with graph.as_default(), graph.control_dependencies(None), graph.device(None), \
                    graph.colocate_with(None, ignore_existing=True), \
                    graph.name_scope(self.scope + "/" if self.scope else None):
                self._made = self._create(inputs)
        return self._made

    def _create(self, inputs) -> tf.Tensor:
        """Output 0 of the op, created now in the current context, from `inputs`."""
        with (self.graph.colocate_with(inputs[0].op) if self.colocated
              else contextlib.nullcontext()):
            return self.graph._create_op_internal(self.op, inputs, name=self.name,  # pylint: disable=protected-access
                                                  attrs=self.attrs).outputs[0]


def can_write() -> bool:
    """Whether a dataset built now may be written: while the shim builds a stage's dataset
    with its own functions, outside any control dependency, device, colocation or control
    flow context (which tf.data's ops would take), and not in a function's graph."""
    graph = tf.compat.v1.get_default_graph()
    return (not graph.building_function and build_context.makes_dataset_functions()
            and not graph._current_control_dependencies()  # pylint: disable=protected-access
            and not graph._device_function_stack  # pylint: disable=protected-access
            and not len(graph._colocation_stack)  # pylint: disable=protected-access
            and graph._get_control_flow_context() is None)  # pylint: disable=protected-access


class WrittenDataset(_dataset_ops.DatasetV2):
    """A dataset whose last op is `node` (see the module docstring); its op created at once
    where it may not be written (`can_write`)."""

    def __init__(self, node: Node, element_spec, inputs=(), functions=()):  # pylint: disable=super-init-not-called
        if not can_write():
            node.make_in_place()
        self._written_node = node
        self._structure = element_spec
        self._input_datasets = tuple(inputs)
        self._written_functions = list(functions)
        self._graph_attr = node.graph
        self._name = None
        options = None
        for dataset in self._input_datasets:
            if dataset._options_attr is not None:  # pylint: disable=protected-access
                options = (dataset._options_attr if options is None  # pylint: disable=protected-access
                           else options.merge(dataset._options_attr))  # pylint: disable=protected-access
        self._options_attr = options if options is not None else _EMPTY_OPTIONS

    @property
    def _variant_tensor(self):
        return self._written_node.tensor()

    def _inputs(self):
        return list(self._input_datasets)

    def _functions(self):
        return list(self._written_functions)

    @property
    def element_spec(self):
        return self._structure


def _empty_options():
    options = _options_lib.Options()
    options._set_mutable(False)  # pylint: disable=protected-access
    return options


_EMPTY_OPTIONS = _empty_options()


def is_written(dataset) -> bool:
    """Whether `dataset` is written (its ops not created where it was built)."""
    return (isinstance(dataset, WrittenDataset)
            and not dataset._written_node.made_in_place)  # pylint: disable=protected-access


def variant_input(dataset):
    """What a written node takes for `dataset`: its node where it is written, else its
    variant tensor."""
    if is_written(dataset):
        return dataset._written_node  # pylint: disable=protected-access
    return dataset._variant_tensor  # pylint: disable=protected-access


def constant(value, dtype: tf.DType, name: str) -> Node:
    """A scalar Const node."""
    proto = tensor_pb2.TensorProto(dtype=dtype.as_datatype_enum, tensor_shape={})
    if dtype == tf.bool:
        proto.bool_val.append(value)
    else:
        proto.int64_val.append(value)
    return Node("Const", (), {"dtype": attr_value_pb2.AttrValue(type=dtype.as_datatype_enum),
                               "value": attr_value_pb2.AttrValue(tensor=proto)}, name=name)


def structure_attrs(element_spec, types_key: str = "output_types") -> dict:
    """The `output_types` (or `types_key`) and `output_shapes` attributes of a dataset op
    with elements `element_spec`, and its unnamed metadata."""
    types = attr_value_pb2.AttrValue()
    types.list.type.extend(dtype.as_datatype_enum
                           for dtype in _structure.get_flat_tensor_types(element_spec))
    shapes = attr_value_pb2.AttrValue()
    shapes.list.shape.extend(shape.as_proto()
                             for shape in _structure.get_flat_tensor_shapes(element_spec))
    return {types_key: types, "output_shapes": shapes,
            "metadata": attr_value_pb2.AttrValue(s=_NO_METADATA)}


def function_attr(function) -> attr_value_pb2.AttrValue:
    """A dataset op's attribute naming `function` (a `pull_maps` made function)."""
    return attr_value_pb2.AttrValue(func=function._as_name_attr_list)  # pylint: disable=protected-access


def no_arguments() -> attr_value_pb2.AttrValue:
    """The `Targuments` of a function that captures nothing."""
    value = attr_value_pb2.AttrValue()
    value.list.SetInParent()
    return value


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def flag(value: bool) -> attr_value_pb2.AttrValue:
    return attr_value_pb2.AttrValue(b=value)


def from_tensors(rows: tf.Tensor) -> tf.data.Dataset:
    """`tf.data.Dataset.from_tensors(rows)` of one dense tensor."""
    if not can_write():
        return tf.data.Dataset.from_tensors(rows)
    spec = tf.TensorSpec(rows.shape, rows.dtype)
    return WrittenDataset(Node("TensorDataset", [rows],
                               structure_attrs(spec, "Toutput_types")), spec)


def from_tensor_slices(rows: tf.Tensor) -> tf.data.Dataset:
    """`tf.data.Dataset.from_tensor_slices(rows)` of one dense tensor of rank 1 or more."""
    if not can_write() or rows.shape.rank in (None, 0):
        return tf.data.Dataset.from_tensor_slices(rows)
    spec = tf.TensorSpec(rows.shape[1:], rows.dtype)
    attrs = structure_attrs(spec, "Toutput_types")
    attrs["is_files"] = flag(False)
    return WrittenDataset(Node("TensorSliceDataset", [rows], attrs), spec)


def repeated(dataset: tf.data.Dataset, count) -> tf.data.Dataset:
    """`dataset.repeat(count)`; written for `count` a Python int or None."""
    if not (count is None or _is_int(count)) or not can_write():
        return dataset.repeat(count)
    node = Node("RepeatDataset",
                [variant_input(dataset),
                 constant(-1 if count is None else count, tf.int64, "count")],
                structure_attrs(dataset.element_spec))
    return WrittenDataset(node, dataset.element_spec, [dataset])


def unbatched(dataset: tf.data.Dataset):
    """`_UnbatchDataset(dataset)` of dense components whose leading dimensions agree; None
    where it cannot be written."""
    if not can_write():
        return None
    specs = tf.nest.flatten(dataset.element_spec)
    if not all(type(spec) is tf.TensorSpec and spec.shape.rank for spec in specs):  # pylint: disable=unidiomatic-typecheck
        return None
    leading = tf.compat.v1.Dimension(None)
    for spec in specs:
        if not leading.is_compatible_with(spec.shape[0]):
            return None
        leading = leading.merge_with(spec.shape[0])
    element_spec = tf.nest.map_structure(lambda spec: spec._unbatch(), dataset.element_spec)  # pylint: disable=protected-access
    return WrittenDataset(Node("UnbatchDataset", [variant_input(dataset)],
                               structure_attrs(element_spec)), element_spec, [dataset])


def prefetched(dataset: tf.data.Dataset, buffer_size) -> tf.data.Dataset:
    """`dataset.prefetch(buffer_size)`; written for `buffer_size` a Python int, not
    AUTOTUNE."""
    if not _is_int(buffer_size) or buffer_size < 0 or not can_write():
        return dataset.prefetch(buffer_size)
    attrs = structure_attrs(dataset.element_spec)
    attrs["slack_period"] = attr_value_pb2.AttrValue(i=0)
    if _PREFETCH_SETS_LEGACY_AUTOTUNE:
        attrs["legacy_autotune"] = flag(False)
    node = Node("PrefetchDataset",
                [variant_input(dataset), constant(buffer_size, tf.int64, "buffer_size")],
                attrs, colocated=True)
    return WrittenDataset(node, dataset.element_spec, [dataset])


def with_options(dataset: tf.data.Dataset, options: tf.data.Options) -> tf.data.Dataset:
    """`dataset.with_options(options)`."""
    if not can_write():
        return dataset.with_options(options)
    attrs = structure_attrs(dataset.element_spec)
    attrs["serialized_options"] = attr_value_pb2.AttrValue(
        s=options._to_proto().SerializeToString())  # pylint: disable=protected-access
    written = WrittenDataset(Node("OptionsDataset", [variant_input(dataset)], attrs,
                                  colocated=True), dataset.element_spec, [dataset])
    merged = dataset._options_attr  # pylint: disable=protected-access
    merged = options if merged is _EMPTY_OPTIONS else merged.merge(options)
    merged._set_mutable(False)  # pylint: disable=protected-access
    written._options_attr = merged  # pylint: disable=protected-access
    return written


def node_defs(dataset: WrittenDataset, copied_ops) -> tuple[list, str] | None:
    """(the NodeDefs of the ops that make `dataset`, the name of the node whose output 0 is
    it), as `dataset_factories._by_value` copies a dataset's ops: `copied_ops(tensors)`'s
    copies (a list of NodeDefs, or None: refused) of what the graph's tensors they read need,
    then the written nodes. None where those are refused."""
    order, external, seen = [], [], set()
    pending = [(dataset._written_node, False)]  # pylint: disable=protected-access
    while pending:  # depth first, each node after its inputs
        node, expanded = pending.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        pending.append((node, True))
        for value in reversed(node.inputs):
            if isinstance(value, Node):
                pending.append((value, False))
            else:
                external.append(value)
    copies = copied_ops(external)
    if copies is None:
        return None
    taken = {copy.name for copy in copies}
    prefix = "compat_written"
    while any(name.startswith(prefix) for name in taken):
        prefix += "_"
    names = {id(node): f"{prefix}_{index}_{node.op}" for index, node in enumerate(order)}
    result = list(copies)
    for node in order:
        written = node_def_pb2.NodeDef(name=names[id(node)], op=node.op)
        result.append(written)
        written.input.extend(names[id(value)] if isinstance(value, Node)
                             else _input_name(value) for value in node.inputs)
        for key, value in node.attrs.items():
            written.attr[key].CopyFrom(value)
        if node.colocated:
            written.attr["_class"].list.s.extend(_colocation_groups(node.inputs[0], names))
    return result, names[id(order[-1])]


def _input_name(tensor: tf.Tensor) -> str:
    return tensor.op.name if tensor.value_index == 0 else f"{tensor.op.name}:{tensor.value_index}"


def _colocation_groups(value, names) -> list:
    """The `_class` of an op colocated with `value` (a node or a tensor), as
    `colocate_with` gives it."""
    if isinstance(value, Node):
        if value.colocated:
            return _colocation_groups(value.inputs[0], names)
        return [b"loc:@" + names[id(value)].encode()]
    return list(value.op.colocation_groups())
