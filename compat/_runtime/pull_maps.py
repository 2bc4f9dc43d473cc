"""The maps through which a consumer takes a shared stream's elements (`plan.pulled`) or a
fed queue's (`queues.QueueBase._fed_dequeues`), one element per request.

A consumer reads a shared stream as a map over endless ticks whose function finds the
stream's iterator by its shared name and takes its next element. Traced as tf.data traces a
map function, that function cost ~3 ms at the graph's first run, and its ticks ~1 ms more
(Inception's input pulls 9 times, im2txt's 4), for a FunctionDef of an iterator look-up, a
get-next, an Identity per component and a NoOp, which depends on nothing but the stream's
shared name and its element types and shapes. So it is written as that FunctionDef: the one
tf.data's trace makes, node for node and attribute for attribute, but for its name (tested
against the trace in both TF behaviours); and one tick dataset serves every pull in a graph.
A fed queue read by tf.data (FaceNet's input queue under a batch) is the same map with the
queue kernel made again in place of the look-up and a QueueDequeueV2 in place of the
get-next: written, it is ~7 ms less of FaceNet's build (medians of 8 processes: 16 ms for
the dataset, its ticks mostly, against 22).
A stream with other than dense components, a build under a device function or colocation,
a fed queue whose kernel is named as one of the trace's own nodes, and every build where
tf.data functions take TF's path (`build_context.makes_dataset_functions`), still have their
map traced.
"""
from __future__ import annotations

import hashlib
import re
from typing import Callable

import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2, function_pb2
from tensorflow.python.data.ops import map_op as _map_op
from tensorflow.python.data.util import structure as _structure
from tensorflow.python.framework import func_graph as _func_graph
from tensorflow.python.framework import function as legacy_function
from tensorflow.python.ops import gen_dataset_ops

from compat._runtime import build_context, c_functions, written_datasets

TICK = tf.TensorSpec([], tf.int32)  # from_tensors(0)'s element


def ticks() -> tf.data.Dataset:
    """Endless elements (the number 0) to map a pull over; one dataset per graph, kept on
    the graph (which the dataset refers to: a table outside would keep the graph alive).
    Made outside the caller's control dependencies, control flow, device and colocation
    (a pull may be built where the user calls, see `fed_batches`), which its later users
    would otherwise inherit."""
    graph = tf.compat.v1.get_default_graph()
    dataset = getattr(graph, "_compat_pull_ticks", None)
    if dataset is None:
        with graph.control_dependencies(None), graph.device(None), \
                graph.colocate_with(None, ignore_existing=True):
            dataset = tf.data.Dataset.from_tensors(0).repeat()
        graph._compat_pull_ticks = dataset  # pylint: disable=protected-access
    return dataset


def pulled(iterator_attrs: dict, element_spec) -> tf.data.Dataset:
    """Each element of the stream whose iterator `iterator_attrs` find (an `iterator_v2`
    op's attributes), taken from it when this dataset is asked for one; ends where the
    stream ends. Written where it can be (see the module docstring), else traced."""
    if not writable(element_spec):
        return traced(iterator_attrs, element_spec)
    return _written(lambda attributes: function_definition(iterator_attrs, attributes),
                    element_spec)


def dequeued(kernel_op: tf.Operation, element_spec, traced_map: Callable[[], tf.data.Dataset]
             ) -> tf.data.Dataset:
    """A fed queue's elements, each dequeued from its kernel `kernel_op` when asked for
    (`element_spec`: the dequeue's components, a tuple); where the map cannot be written,
    `traced_map()`, the same dataset traced."""
    if writable(element_spec):
        dataset = _written(lambda attributes: dequeue_definition(kernel_op, attributes),
                           element_spec)
        if dataset is not None:
            return dataset
    return traced_map()


def writable(element_spec) -> bool:
    """Whether the map can be written as its trace would be: dense components, the shim's
    tf.data functions, and no device function or colocation in force (a trace takes them
    into its nodes; a device given by name it does not)."""
    graph = tf.compat.v1.get_default_graph()
    return (build_context.makes_dataset_functions()
            and not _func_graph.device_stack_has_callable(graph._device_function_stack)  # pylint: disable=protected-access
            and not len(graph._colocation_stack)  # pylint: disable=protected-access
            and all(type(spec) is tf.TensorSpec for spec in tf.nest.flatten(element_spec)))  # pylint: disable=unidiomatic-typecheck


def _written(define: Callable, element_spec) -> tf.data.Dataset | None:
    """The map over `ticks()` of the function `define(attributes)` writes (None: it cannot)."""
    attributes = function_attributes(build_context.one_device_functions_now())
    definition = define(attributes)
    if definition is None:
        return None
    # As the traced function's output structure has them: unnamed.
    element_spec = tf.nest.map_structure(lambda spec: tf.TensorSpec(spec.shape, spec.dtype),
                                         element_spec)
    function = called(definition, attributes)
    # preserve_cardinality=False: the stream's end of sequence ends this dataset.
    return WrittenMapDataset(ticks(), function, element_spec, preserve_cardinality=False)


def called(definition: function_pb2.FunctionDef, attributes: dict) -> _Called:
    """The function `definition` as a dataset op calls it, added to the current graph."""
    function = _Called(legacy_function._from_definition(definition), attributes)  # pylint: disable=protected-access
    function.add_to_graph(tf.compat.v1.get_default_graph())
    return function


def traced(iterator_attrs: dict, element_spec) -> tf.data.Dataset:
    """`pulled`'s dataset, its function traced by tf.data."""
    def pull(_):
        handle = gen_dataset_ops.iterator_v2(**iterator_attrs)
        flat = gen_dataset_ops.iterator_get_next(
            handle, output_types=iterator_attrs["output_types"],
            output_shapes=iterator_attrs["output_shapes"])
        return _structure.from_tensor_list(element_spec, flat)

    # preserve_cardinality=False: the stream's end of sequence ends this dataset.
    return _map_op._MapDataset(ticks(), pull, preserve_cardinality=False)  # pylint: disable=protected-access


def function_attributes(one_device: bool) -> dict:
    """The attributes tf.data gives the function, in its order (see
    `build_context._install_one_device_functions`)."""
    attributes = {}
    if one_device:
        attributes["experimental_ints_on_device"] = attr_value_pb2.AttrValue(b=True)
    attributes["_tf_data_function"] = attr_value_pb2.AttrValue(b=True)
    return attributes


class _Called:
    """A made function as a dataset op's function attribute takes it: called by name with
    its attributes (`_as_name_attr_list`, as tf.data calls a traced function), added to a
    graph once."""

    def __init__(self, function, attributes: dict):
        self._function = function
        self.name = function.name
        self.captured_inputs = []
        self._as_name_attr_list = attr_value_pb2.NameAttrList(name=function.name)
        for name, value in attributes.items():
            self._as_name_attr_list.attr[name].CopyFrom(value)

    def add_to_graph(self, graph):
        c_functions.add_once(self._function, graph)


class MadeFunction:
    """What a map dataset keeps of its function, as `StructuredFunctionWrapper` has it (see
    `batch_fusion`)."""

    def __init__(self, function: _Called, output_structure):
        self.function = function
        self.output_structure = output_structure


class WrittenMapDataset(written_datasets.WrittenDataset):
    """`_MapDataset` (or a deterministic `_ParallelMapDataset`, given `parallel_calls`) with
    its function made, not traced: the same op and attributes, and a map as `batch_fusion`
    fuses it. Written (see `written_datasets`)."""

    def __init__(self, input_dataset, function: _Called, element_spec, *,
                 preserve_cardinality: bool, parallel_calls: int | None = None):
        self._input_dataset = input_dataset
        self._map_func = MadeFunction(function, element_spec)
        self._preserve_cardinality = preserve_cardinality
        self.parallel_calls = parallel_calls
        attrs = written_datasets.structure_attrs(element_spec)
        attrs.update(f=written_datasets.function_attr(function),
                     Targuments=written_datasets.no_arguments(),
                     use_inter_op_parallelism=written_datasets.flag(True),
                     preserve_cardinality=written_datasets.flag(preserve_cardinality))
        inputs = [written_datasets.variant_input(input_dataset)]
        if parallel_calls is None:
            node = written_datasets.Node("MapDataset", inputs, attrs)
        else:
            inputs.append(written_datasets.constant(parallel_calls, tf.int64,
                                                    "num_parallel_calls"))
            attrs["deterministic"] = attr_value_pb2.AttrValue(s=b"true")
            node = written_datasets.Node("ParallelMapDatasetV2", inputs, attrs)
        # force_synchronous (TF 2.18+) and use_unbounded_threadpool left at their defaults
        super().__init__(node, element_spec, [input_dataset], [self._map_func])
        if node.made_in_place and parallel_calls is not None:
            self._num_parallel_calls = node.inputs[1].tensor()  # the fused batch's too


def function_definition(iterator_attrs: dict, attributes: dict) -> function_pb2.FunctionDef:
    """The FunctionDef tf.data's trace makes of `plan.pulled`'s pull (automatic control
    dependencies included: the Identities wait on a NoOp that waits on both stateful ops,
    which are the function's control outputs), named after a hash of its body."""
    types = [tf.as_dtype(dtype).as_datatype_enum for dtype in iterator_attrs["output_types"]]
    shapes = [tf.TensorShape(shape).as_proto() for shape in iterator_attrs["output_shapes"]]
    definition = function_pb2.FunctionDef()
    lookup = definition.node_def.add(name="IteratorV2", op="IteratorV2")
    lookup.attr["shared_name"].s = iterator_attrs["shared_name"].encode()
    lookup.attr["container"].s = iterator_attrs["container"].encode()
    get_next = definition.node_def.add(name="IteratorGetNext", op="IteratorGetNext",
                                       input=["IteratorV2:handle:0"])
    for node in (lookup, get_next):
        node.attr["output_types"].list.type.extend(types)
        node.attr["output_shapes"].list.shape.extend(shapes)
    return _finished(definition, types, attributes)


def dequeue_definition(kernel_op: tf.Operation, attributes: dict
                       ) -> function_pb2.FunctionDef | None:
    """The FunctionDef tf.data's trace makes of a fed queue's one-element dequeue (see
    `queues.QueueBase._fed_dataset`): the queue kernel `kernel_op` made again in the function
    (its attributes but for colocation), found by its shared name, then QueueDequeueV2
    (`timeout_ms` -1: wait, as TF1's dequeue does);
    None where the trace would rename its nodes (a kernel named as one of them)."""
    lookup_name, attrs = kernel_in_function(kernel_op)
    if _RESERVED_IN_DEQUEUE.fullmatch(lookup_name.lower()):
        return None
    types = [dtype.as_datatype_enum for dtype in kernel_op.get_attr("component_types")]
    definition = function_pb2.FunctionDef()
    lookup = definition.node_def.add(name=lookup_name, op=kernel_op.type)
    for key, value in attrs.items():
        lookup.attr[key].CopyFrom(value)
    dequeue = definition.node_def.add(name="QueueDequeueV2", op="QueueDequeueV2",
                                      input=[f"{lookup_name}:handle:0"])
    dequeue.attr["component_types"].list.type.extend(types)
    dequeue.attr["timeout_ms"].i = -1
    return _finished(definition, types, attributes)


def kernel_in_function(kernel_op: tf.Operation) -> tuple:
    """(name, attributes) of the queue kernel `kernel_op` made again inside a tf.data
    function, where it is found by its shared name: its own name without the scope, its
    attributes but for colocation (which names an op of the user's graph). One answer for
    the traced dequeue (`queues._rebuild_in_function`) and the written one, which must be
    the same function."""
    attrs = {key: value for key, value in kernel_op.node_def.attr.items() if key != "_class"}
    return kernel_op.name.split("/")[-1], attrs


# Names the dequeue's trace gives its other nodes (compared in lower case, as graphs do).
_RESERVED_IN_DEQUEUE = re.compile(r"args_0|queuedequeuev2|noop|identity(_\d+)?")


def _finished(definition: function_pb2.FunctionDef, types: list, attributes: dict
              ) -> function_pb2.FunctionDef:
    """`definition`, whose first node finds a resource and whose second takes `types` from
    it, completed as tf.data's trace completes such a function: an Identity per component
    waiting on a NoOp that waits on both stateful nodes (automatic control dependencies),
    which are the control outputs; one tick argument; `attributes`; named after a hash of
    its body."""
    lookup, take = definition.node_def[0].name, definition.node_def[1]
    signature = definition.signature
    signature.input_arg.add(name="args_0", type=TICK.dtype.as_datatype_enum)
    signature.is_stateful = True
    returned_after(definition, [(f"{take.name}:components:{index}", dtype)
                                for index, dtype in enumerate(types)],
                   sorted([lookup, take.name]))
    return signed(definition, attributes, "compat_pull")


def returned_after(definition: function_pb2.FunctionDef, values, waited) -> None:
    """Complete `definition`'s results as a trace's automatic control dependencies make them:
    an Identity per value of `values` ((its name in the function, its dtype enum)), each
    waiting on a NoOp that waits on the nodes named in `waited`, which are the function's
    control outputs."""
    signature = definition.signature
    for index, (value, dtype) in enumerate(values):
        suffix = f"_{index}" if index else ""
        identity = definition.node_def.add(name=f"Identity{suffix}", op="Identity",
                                           input=[value, "^NoOp"])
        identity.attr["T"].type = dtype
        signature.output_arg.add(name=f"identity{suffix}", type=dtype)
        definition.ret[f"identity{suffix}"] = f"Identity{suffix}:output:0"
    definition.node_def.add(name="NoOp", op="NoOp", input=[f"^{name}" for name in waited])
    signature.control_output.extend(waited)
    for name in waited:
        definition.control_ret[name] = name


def signed(definition: function_pb2.FunctionDef, attributes: dict, prefix: str,
           argument_shape: tf.TensorShape = TICK.shape) -> function_pb2.FunctionDef:
    """`definition`, of one argument (`args_0`, a tick unless `argument_shape` says
    otherwise), completed as tf.data's trace completes a map function: the argument's
    attributes, the function's `attributes`, and a name of `prefix` and a hash of the body."""
    argument = definition.arg_attr[0].attr
    argument["_user_specified_name"].s = b"args_0"
    argument["_output_shapes"].list.shape.add().CopyFrom(argument_shape.as_proto())
    for name, value in attributes.items():
        definition.attr[name].CopyFrom(value)
    definition.attr["_construction_context"].s = b"kEagerRuntime"  # as tf.function adds it
    digest = hashlib.sha256(definition.SerializeToString(deterministic=True)).hexdigest()[:16]
    definition.signature.name = f"{prefix}_{digest}"
    return definition
