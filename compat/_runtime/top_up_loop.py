"""The top-up loop of a batch whose size is fed (see `fed_batches`), written as NodeDefs.

Each run of such a batch tops up its staging queue in a v1 while loop: pull the stream's
next element as an optional; enqueue it if there is one, else close the queue; until the
queue holds the size asked for or the stream has ended. Built by `tf.while_loop` and
`tf.cond`, its 39 ops took ~18 ms of Python per batch call (FaceNet's whole input graph
builds in ~140 ms under TF1). `written` imports the same NodeDefs through TF's C importer
in ~1 ms: the nodes, inputs and attributes `tf.while_loop` makes (`test_top_up_loop` compares
the two graphs node for node). Not the Python control-flow contexts (`WhileContext`,
`CondContext`): nothing reads them for these ops, which no gradient or user op reaches.

Written only where the build is plain: no device function, colocation, attribute scope,
kernel label, control dependencies of the caller's or control-flow context in force, each
of which `tf.while_loop` would apply to the ops in ways the NodeDefs do not repeat; there
the caller builds the loop with `tf.while_loop` as before.
"""
from __future__ import annotations

import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2, graph_pb2
from tensorflow.python.client import pywrap_tf_session as c_api
from tensorflow.python.framework import c_api_util, tensor_util

_LOOP_NAME = "top_up"


def writable(graph) -> bool:
    """Whether the loop can be written in `graph` as things stand (see the module
    docstring); the caller's own `control_dependencies` must not be entered yet."""
    # pylint: disable=protected-access
    return not (len(graph._device_function_stack) or len(graph._colocation_stack)
                or graph._attr_scope_map or graph._op_to_kernel_label_map
                or graph._control_dependencies_stack
                or graph._get_control_flow_context() is not None)


def _attr(value) -> attr_value_pb2.AttrValue:
    if isinstance(value, attr_value_pb2.AttrValue):
        return value
    if isinstance(value, bool):
        return attr_value_pb2.AttrValue(b=value)
    if isinstance(value, int):
        return attr_value_pb2.AttrValue(i=value)
    if isinstance(value, str):
        return attr_value_pb2.AttrValue(s=value.encode())
    if isinstance(value, tf.DType):
        return attr_value_pb2.AttrValue(type=value.as_datatype_enum)
    raise TypeError(f"no attribute of {value!r}")


def _types(dtypes) -> attr_value_pb2.AttrValue:
    return attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(
        type=[tf.as_dtype(dtype).as_datatype_enum for dtype in dtypes]))


def _shapes(shapes) -> attr_value_pb2.AttrValue:
    return attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(
        shape=[tf.TensorShape(shape).as_proto() for shape in shapes]))


def _colocated(name) -> attr_value_pb2.AttrValue:
    return attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(
        s=[f"loc:@{name}".encode()]))


def _constant(value, dtype) -> dict:
    return {"value": attr_value_pb2.AttrValue(
        tensor=tensor_util.make_tensor_proto(value, dtype=dtype)), "dtype": dtype}


def _loop_graph_def(scope, *, initial_taken, closed, missing, stream, lock, queue,
                    queue_scope, types, shapes) -> graph_pb2.GraphDef:
    """The loop's nodes, named under `scope` (ending in "/"), reading the graph's tensors
    and ops named by the other arguments (tensor names "op:index", op names)."""
    graph_def = graph_pb2.GraphDef()
    frame = {"frame_name": f"{scope}while_context", "parallel_iterations": 1}
    int32, boolean = tf.int32, tf.bool
    cond = f"{scope}cond/"
    enqueue, close = f"{cond}{queue_scope}_enqueue", f"{cond}{queue_scope}_Close"
    get_next = f"{scope}IteratorGetNextAsOptional"
    lock_in_loop = f"{get_next}/Identity"
    element = _types(types), _shapes(shapes)

    def node(name, op, inputs=(), **attrs):
        added = graph_def.node.add(name=name, op=op, input=list(inputs))
        for key, value in attrs.items():
            added.attr[key].CopyFrom(_attr(value))

    def enter(name, source, dtype, constant, after=()):
        node(name, "Enter", [source] + [f"^{op}" for op in after], T=dtype,
             is_constant=constant, **frame)

    # The loop variables: (elements taken, queue closed).
    enter(f"{scope}Enter", initial_taken, int32, False)
    enter(f"{scope}Enter_1", closed, boolean, False)
    node(f"{scope}Merge", "Merge", [f"{scope}Enter", f"{scope}NextIteration:0"], T=int32, N=2)
    node(f"{scope}Merge_1", "Merge", [f"{scope}Enter_1", f"{scope}NextIteration_1:0"],
         T=boolean, N=2)
    # more(): taken < missing and not ended.
    node(f"{scope}Less", "Less", [f"{scope}Merge", f"{scope}Less/Enter:0"], T=int32)
    enter(f"{scope}Less/Enter", missing, int32, True)
    node(f"{scope}LogicalNot", "LogicalNot", [f"{scope}Merge_1"])
    node(f"{scope}LogicalAnd", "LogicalAnd", [f"{scope}Less", f"{scope}LogicalNot"])
    node(f"{scope}LoopCond", "LoopCond", [f"{scope}LogicalAnd"])
    node(f"{scope}Switch", "Switch", [f"{scope}Merge", f"{scope}LoopCond"],
         T=int32, _class=_colocated(f"{scope}Merge"))
    node(f"{scope}Switch_1", "Switch", [f"{scope}Merge_1", f"{scope}LoopCond"],
         T=boolean, _class=_colocated(f"{scope}Merge_1"))
    node(f"{scope}Identity", "Identity", [f"{scope}Switch:1"], T=int32)
    node(f"{scope}Identity_1", "Identity", [f"{scope}Switch_1:1"], T=boolean)
    # pull(): the next element as an optional, after the lock (the loop's way of keeping
    # the caller's control dependency: the lock entered, through an Identity).
    node(get_next, "IteratorGetNextAsOptional",
         [f"{get_next}/Enter:0", f"^{scope}Identity", f"^{lock_in_loop}"],
         output_types=element[0], output_shapes=element[1])
    enter(f"{get_next}/Enter", stream, tf.resource, True, after=[lock])
    node(lock_in_loop, "Identity", [f"{lock_in_loop}/Enter:0", f"^{scope}Identity"],
         T=tf.variant)
    enter(f"{lock_in_loop}/Enter", lock, tf.variant, True)
    node(f"{scope}add/y", "Const", [f"^{scope}Identity", f"^{scope}add/Identity"],
         **_constant(1, int32))
    node(f"{scope}add/Identity", "Identity", [f"{lock_in_loop}/Enter:0", f"^{scope}Identity"],
         T=tf.variant)
    node(f"{scope}add", "AddV2", [f"{scope}Identity", f"{scope}add/y"], T=int32)
    node(f"{scope}OptionalHasValue", "OptionalHasValue", [get_next])
    # The cond: enqueue the element (-> False), or close the queue (-> True).
    node(f"{cond}Switch", "Switch", [f"{scope}OptionalHasValue"] * 2, T=boolean)
    node(f"{cond}switch_t", "Identity", [f"{cond}Switch:1"], T=boolean)
    node(f"{cond}switch_f", "Identity", [f"{cond}Switch"], T=boolean)
    node(f"{cond}pred_id", "Identity", [f"{scope}OptionalHasValue"], T=boolean)
    node(f"{cond}OptionalGetValue", "OptionalGetValue", [f"{cond}OptionalGetValue/Switch:1"],
         output_types=element[0], output_shapes=element[1])
    node(f"{cond}OptionalGetValue/Switch", "Switch", [get_next, f"{cond}pred_id"],
         T=tf.variant, _class=_colocated(get_next))
    node(enqueue, "QueueEnqueueV2",
         [f"{enqueue}/Switch:1"] + [f"{cond}OptionalGetValue" + (f":{index}" if index else "")
                                    for index in range(len(types))],
         timeout_ms=-1, Tcomponents=_types(types), _has_manual_control_dependencies=True)
    enter(f"{enqueue}/Enter", queue, tf.resource, True, after=[lock])
    node(f"{enqueue}/Switch", "Switch", [f"{enqueue}/Enter", f"{cond}pred_id"],
         T=tf.resource, _class=_colocated(f"{enqueue}/Enter"))
    node(f"{cond}Const", "Const", [f"^{enqueue}"], **_constant(False, boolean))
    node(close, "QueueCloseV2", [f"{close}/Switch:0"], cancel_pending_enqueues=False,
         _has_manual_control_dependencies=True)
    node(f"{close}/Switch", "Switch", [f"{enqueue}/Enter", f"{cond}pred_id"],
         T=tf.resource, _class=_colocated(f"{enqueue}/Enter"))
    node(f"{cond}Const_1", "Const", [f"^{close}"], **_constant(True, boolean))
    node(f"{cond}Merge", "Merge", [f"{cond}Const_1", f"{cond}Const"], T=boolean, N=2)
    # Back to the top, and out.
    node(f"{scope}NextIteration", "NextIteration", [f"{scope}add"], T=int32)
    node(f"{scope}NextIteration_1", "NextIteration", [f"{cond}Merge"], T=boolean)
    node(f"{scope}Exit", "Exit", [f"{scope}Switch"], T=int32)
    node(f"{scope}Exit_1", "Exit", [f"{scope}Switch_1"], T=boolean)
    return graph_def


def written(*, initial_taken, closed, missing, stream, lock, queue, queue_scope: str,
            types, shapes) -> list:
    """The loop's outputs ([taken, closed] after it), as `tf.while_loop(more, pull,
    [initial_taken, closed], parallel_iterations=1, name="top_up")` returns them when
    called where `fed_batches` calls it (see `writable`).

    stream: the stream's iterator handle; lock: the MutexLock the loop runs under; queue:
    the staging queue's handle, whose ops are named from `queue_scope`; types, shapes: its
    components' (the stream's elements')."""
    graph = initial_taken.graph
    with tf.name_scope(_LOOP_NAME) as scope:
        pass
    graph_def = _loop_graph_def(
        scope, initial_taken=initial_taken.name, closed=closed.name, missing=missing.name,
        stream=stream.name, lock=lock.op.name, queue=queue.name, queue_scope=queue_scope,
        types=types, shapes=shapes)
    # The graph's own versions: an import lowers the graph's producer version to its own.
    graph_def.versions.CopyFrom(graph.graph_def_versions)
    scoped = c_api_util.ScopedTFImportGraphDefOptions()
    options = scoped.options
    # The lock is read as a value (entered) and as a control input.
    for source in (initial_taken, closed, missing, stream, queue, lock):
        name, index = source.name.rsplit(":", 1)
        c_api.TF_ImportGraphDefOptionsAddInputMapping(options, name, int(index),
                                                      source._as_tf_output())  # pylint: disable=protected-access
    c_api.TF_ImportGraphDefOptionsRemapControlDependency(options, lock.op.name, lock.op._c_op)  # pylint: disable=protected-access
    for name in (f"{scope}Exit", f"{scope}Exit_1"):
        c_api.TF_ImportGraphDefOptionsAddReturnOutput(options, name, 0)
    with graph._mutation_lock():  # pylint: disable=protected-access
        with c_api_util.tf_buffer(graph_def.SerializeToString()) as serialized, \
                graph._c_graph.get() as c_graph:  # pylint: disable=protected-access
            results = c_api_util.ScopedTFImportGraphDefResults(
                c_api.TF_GraphImportGraphDefWithResults(c_graph, serialized, options))
        # Not under the caller's control dependencies: the NodeDefs have the loop's own.
        with graph.control_dependencies(None):
            graph._add_new_tf_operations(compute_devices=False)  # pylint: disable=protected-access
    outputs = c_api.TF_ImportGraphDefResultsReturnOutputs(results.results)
    return [graph._get_tensor_by_tf_output(output) for output in outputs]  # pylint: disable=protected-access
