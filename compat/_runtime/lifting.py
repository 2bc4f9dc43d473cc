"""Lifting: the user's graph ops between two pipeline stages become a tf.data map function.

TF1 code computes per-element values with ordinary graph ops on a stage's dequeued tensors
(decode, parse, crop, cast...) and hands the results to the next stage. The shim finds that
subgraph, walking back from the values to the outputs of earlier stages, and re-creates its
ops for the map function with the same attributes (random ops keep their seeds): in a
function of their own, made in C from their GraphDef (`_function_of`), or in the current
graph for pfor to vectorize. The results keep their static shapes (so `set_shape` calls the
user made keep holding).
Lookup tables are not copied but shared with the user's graph (see `_TABLES_FOUND_BY_NAME`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import tensorflow as tf
from tensorflow.core.framework import function_pb2, graph_pb2
from tensorflow.python.framework import function as legacy_function

from compat._runtime import (c_functions, cancellable_runs, prepared_functions,
                             shared_functions)

# Ops that call Python: what they wait for is the program's (a sleep, a lock, I/O).
_PYTHON_OPS = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc"})

# Ops whose value lives outside the data stream: copying them into a map function would read
# a fresh copy (a new variable) or nothing at all (a placeholder).
_STATEFUL_SOURCES = {
    "Placeholder": "it is fed at run time, and a tf.data pipeline cannot see feeds. Feed the "
                   "values through a queue fed from Python (tf.FIFOQueue + enqueue with feed_dict), "
                   "or make them constants",
    "VariableV2": "it reads a variable, and the pipeline runs ahead of your training steps. Use "
                  "a constant, or read the variable outside the pipeline",
    "Variable": "it reads a variable, and the pipeline runs ahead of your training steps. Use a "
                "constant, or read the variable outside the pipeline",
    "VarHandleOp": "it reads a variable, and the pipeline runs ahead of your training steps. Use "
                   "a constant, or read the variable outside the pipeline",
}
_STATEFUL_SOURCE_TYPE_PARTS = ("Queue", "Reader", "Iterator", "Barrier", "Stage", "Accumulator")

# Lookup tables. TF keeps a table in the Session's resource manager under the name its op
# gives (see `_table_resource_name`), so a copy of the op in a tf.data function of the same
# Session opens the same table: lookups in the pipeline read what the user's
# `tables_initializer()` put there, and fail as TF1's do ("Table not initialized") before it.
_TABLES_FOUND_BY_NAME = {"HashTableV2"}
# A static table's contents do not change once initialized, so reading it gives the same
# values whatever the order of the calls.
_STATIC_TABLE_READS = {"LookupTableFindV2", "LookupTableSizeV2", "LookupTableExportV2"}
ORDER_FREE_TABLE_OPS = _TABLES_FOUND_BY_NAME | _STATIC_TABLE_READS
_LOOK_UP_AFTER_BATCHING = ("look the values up after batching instead (table.lookup on the "
                           "batched tensor runs with your training step, as in TF1)")
_MUTABLE_TABLE = (
    "it reads a mutable lookup table, and the pipeline runs ahead of the training steps that "
    "change it. If the contents are fixed before training, use tf.lookup.StaticHashTable("
    "tf.lookup.KeyValueTensorInitializer(keys, values), default_value) and run "
    f"tf.tables_initializer(); otherwise {_LOOK_UP_AFTER_BATCHING}")
_ANONYMOUS_TABLE = ("it is an anonymous lookup table (experimental_is_anonymous=True), which a "
                    "copy in the pipeline cannot find. Create the table without "
                    f"experimental_is_anonymous, or {_LOOK_UP_AFTER_BATCHING}")
_UNNAMED_TABLE = ("it is a lookup table with no shared_name (a graph built by TF 1.x, or "
                  "hash_table_v2 called without one), which a copy in the pipeline cannot find. "
                  "Create it with tf.lookup.StaticHashTable or the index_table_from_* "
                  f"functions (they name it), or {_LOOK_UP_AFTER_BATCHING}")
_REF_TABLE = ("it uses a reference-typed lookup table, which cannot run in a tf.data function. "
              f"Create it with tf.lookup.StaticHashTable, or {_LOOK_UP_AFTER_BATCHING}")
_TABLE_WRITE = ("it writes a lookup table (an initializer, insert or remove), which the "
                "pipeline would run once per element, ahead of your training steps. Run table "
                "initializers once with sess.run(tf.tables_initializer()) before fetching, and "
                f"do not make per-element values depend on them; or {_LOOK_UP_AFTER_BATCHING}")
_UNKNOWN_TABLE_OP = f"it is a lookup-table op the shim does not know; {_LOOK_UP_AFTER_BATCHING}"
_TABLE_REFUSALS = {
    **dict.fromkeys(("MutableHashTableV2", "MutableHashTableOfTensorsV2",
                     "MutableDenseHashTableV2"), _MUTABLE_TABLE),
    **dict.fromkeys(("AnonymousHashTable", "AnonymousMutableHashTable",
                     "AnonymousMutableHashTableOfTensors", "AnonymousMutableDenseHashTable"),
                    _ANONYMOUS_TABLE),
    **dict.fromkeys(("HashTable", "MutableHashTable", "MutableHashTableOfTensors",
                     "MutableDenseHashTable", "LookupTableFind", "LookupTableSize",
                     "LookupTableExport"), _REF_TABLE),
    **dict.fromkeys(("InitializeTable", "InitializeTableV2", "InitializeTableFromTextFile",
                     "InitializeTableFromTextFileV2", "InitializeTableFromDataset",
                     "LookupTableImport", "LookupTableImportV2", "LookupTableInsert",
                     "LookupTableInsertV2", "LookupTableRemoveV2"), _TABLE_WRITE),
}


class LiftError(ValueError):
    """A per-element computation cannot become part of the tf.data pipeline."""


@dataclass(frozen=True)
class Lifted:
    """A lifted computation.

    sources: the stages whose elements it reads, in a fixed order.
    function: takes one encoded element per source (see `Stage.encoded`) and returns the
        computed structure. Must be called while building a tf.data function.
    stateful: some lifted op keeps state between calls (random ops, asserts...), so calls
        must stay sequential for the results to be TF1's.
    ops: the lifted ops of the user's graph, in creation order.
    outputs: the user's tensors the function computes, flattened (composites expanded).
    source_outputs_read: for each source, the indices of its get_next outputs the
        computation reads (the others need not be produced).
    """

    sources: tuple
    function: Callable
    stateful: bool
    ops: tuple
    outputs: tuple
    source_outputs_read: tuple


def _table_resource_name(op: tf.Operation) -> str:
    """The name TF's resource manager keeps the table of op `op` under, as its kernel computes
    it (ContainerInfo::Init); "" when the table is private to that kernel."""
    shared_name = op.get_attr("shared_name").decode()
    if shared_name:
        return shared_name
    return op.name if op.get_attr("use_node_name_sharing") else ""


def _table_refusal(op: tf.Operation) -> str | None:
    """Why lookup-table op `op` cannot be lifted; None when it can, or is no table op."""
    if op.type in _TABLES_FOUND_BY_NAME:
        return None if _table_resource_name(op) else _UNNAMED_TABLE
    if op.type in _STATIC_TABLE_READS or "Table" not in op.type:
        return None  # a read: the walk checks the op that creates its table, upstream
    return _TABLE_REFUSALS.get(op.type, _UNKNOWN_TABLE_OP)


def _check_liftable(op: tf.Operation, what: str) -> None:
    reason = _STATEFUL_SOURCES.get(op.type) or _table_refusal(op)
    if reason is None and any(part in op.type for part in _STATEFUL_SOURCE_TYPE_PARTS):
        reason = ("it is stateful TF1 machinery the shim does not replace. Build that part "
                  "with compat.v1 too (import compat.v1 as tf)")
    if reason is not None:
        raise LiftError(
            f"{what}: the input depends on op {op.name!r} (type {op.type}), which cannot be "
            f"moved into the tf.data pipeline: {reason}.")


def _subgraph(flat_tensors, stage_of, what):
    """Ops between the outputs and the stages (in creation order), and the stages."""
    needed = {}
    sources = {}
    pending = [tensor.op for tensor in flat_tensors]
    while pending:
        op = pending.pop()
        if op.name in needed or op.name in sources:
            continue
        stage = stage_of(op)
        if stage is not None:
            sources[op.name] = stage
            continue
        _check_liftable(op, what)
        needed[op.name] = op
        pending.extend(tensor.op for tensor in op.inputs)
        pending.extend(op.control_inputs)
    ordered = sorted(needed.values(), key=lambda op: op._id)  # pylint: disable=protected-access
    source_list = sorted(sources.values(), key=lambda stage: stage.get_next_op._id)  # pylint: disable=protected-access
    return ordered, tuple(source_list)


def _function_names(attrs) -> list:
    """Names of the functions an op's (or a function node's) attributes refer to."""
    names = []
    for value in attrs.values():
        if value.HasField("func"):
            names.append(value.func.name)
        elif value.HasField("list"):
            names.extend(func.name for func in value.list.func)
    return names


def _library_of(graph, node_defs) -> function_pb2.FunctionDefLibrary:
    """The function definitions `node_defs` need (v2 control flow branches and bodies,
    py_function wrappers...), with the ones those need in turn."""
    library = function_pb2.FunctionDefLibrary()
    pending = [name for node in node_defs for name in _function_names(node.attr)]
    seen = set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        function = graph._get_function(name)  # pylint: disable=protected-access
        if function is None:
            continue  # a function of TF's own registry (e.g. a kernel-backed op)
        definition = function.definition
        library.function.add().CopyFrom(definition)
        for node in definition.node_def:
            pending.extend(_function_names(node.attr))
    return library


def _graph_def_of(ops, kept_inputs) -> graph_pb2.GraphDef:
    """The ops as a GraphDef to import elsewhere.

    kept_inputs: names of the ops whose outputs and control edges survive; control edges to
    anything else (a stage's dequeue: its value arrives as the element) are dropped.
    Colocation and device requests are dropped too: they name ops and devices of the
    user's graph, and the pipeline runs where tf.data runs it.
    """
    graph_def = graph_pb2.GraphDef()
    if ops:
        graph_def.versions.CopyFrom(ops[0].graph.graph_def_versions)
    for op in ops:
        node = graph_def.node.add()
        node.CopyFrom(op.node_def)
        node.device = ""
        if "_class" in node.attr:
            del node.attr["_class"]
        if op.type in _TABLES_FOUND_BY_NAME:
            # The copy gets a node name of its own: name the table explicitly.
            node.attr["shared_name"].s = _table_resource_name(op).encode()
            node.attr["use_node_name_sharing"].b = False
        inputs = [name for name in node.input
                  if not name.startswith("^") or name[1:] in kept_inputs]
        del node.input[:]
        node.input.extend(inputs)
    if ops:
        graph_def.library.CopyFrom(_library_of(ops[0].graph, graph_def.node))
    return graph_def


# TF1 control flow (tf.cond, while_loop, map_fn after disable_v2_behavior()): frames and
# dead branches that pfor cannot vectorize.
V1_CONTROL_FLOW = {"Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit",
                   "RefExit", "NextIteration", "RefNextIteration", "LoopCond"}


# The Identities through which a lifted function returns its results (see `_function_of`).
_RESULT_PREFIX = "compat_result_"


def called_as_function(body, arguments, name="lifted"):
    """`body(*arguments)` computed by a function of its own, called from the current graph.

    Two reasons. TF runs grappler on a called function's body as TF1's Session runs it on
    the user's graph, so the values are TF1's bit for bit where grappler changes them (a
    division by a constant becomes a multiplication by its reciprocal), while the body of a
    tf.data map function itself is not optimized. And the body gets no automatic control
    dependencies, which would tie ops inside a TF1 loop frame to ops outside it.
    Static shapes of the results are kept. The results are returned through Identities:
    grappler leaves a function's returned nodes as they are, where TF1's Session folds the
    same ops (they feed an enqueue) when they compute from constants alone.
    """
    arguments = list(arguments)
    shapes = []

    @legacy_function.Defun(*[value.dtype for value in arguments])
    def function(*parameters):
        for parameter, value in zip(parameters, arguments):
            parameter.set_shape(value.shape)
        results = list(body(*parameters))
        shapes.extend(result.shape for result in results)
        # Through an Identity each, so that grappler folds a result computed from constants
        # alone as TF1's Session folds it (see `_function_of`).
        return [tf.identity(result, name=f"{name}/{_RESULT_PREFIX}{index}")
                for index, result in enumerate(results)]

    outputs = _call_of(function, arguments, name)
    for output, shape in zip(outputs, shapes):
        output.set_shape(shape)
    return outputs


def _function_of(graph_def, used, arguments, computed):
    """The function `called_as_function` would make of `graph_def`'s ops, made in C.

    The same FunctionDef (the ops imported under the "lifted" prefix, one argument per
    `used` tensor, returning `computed`), without a Python object for each imported op: an
    Inception-style input imports hundreds of ops per preprocessing thread, and wrapping
    them was most of its tracing. `graph_def` is rewritten in place (its inputs become
    placeholders)."""
    taken = {node.name for node in graph_def.node}
    argument_of = {}
    for index, (name, value) in enumerate(zip(used, arguments)):
        argument = f"compat_argument_{index}"
        while argument in taken:
            argument += "_"
        node = graph_def.node.add(name=argument, op="Placeholder")
        node.attr["dtype"].type = value.dtype.as_datatype_enum
        # Of unknown shape, as Defun's parameters are (its set_shape reaches no attribute):
        # the function's argument attributes, which grappler reads, stay the same.
        node.attr["shape"].shape.unknown_rank = True
        argument_of[name] = argument
    for node in graph_def.node:
        for position, source in enumerate(node.input):
            if not source.startswith("^"):
                tensor_name = source if ":" in source else f"{source}:0"
                if tensor_name in argument_of:
                    node.input[position] = argument_of[tensor_name]
    # Each result through an Identity: grappler preserves a function's returned nodes, so a
    # result computed from constants alone would not be folded where TF1's Session folds it
    # (its ops feed an enqueue): a softmax of constants would take oneDNN's kernel at run
    # time, not the folding's, and differ from TF1's in the last bit.
    results = []
    for index, tensor in enumerate(computed):
        name = f"{_RESULT_PREFIX}{index}"  # imported as lifted/..., as the Defun path names it
        while name in taken:
            name += "_"
        taken.add(name)
        source = tensor.op.name if tensor.value_index == 0 else tensor.name
        node = graph_def.node.add(name=name, op="Identity", input=[source])
        node.attr["T"].type = tensor.dtype.base_dtype.as_datatype_enum
        results.append((name, 0))
    return c_functions.of_graph_def(
        graph_def, [(argument_of[name], 0) for name in used], results, "function",
        prefix="lifted")


def _call_of(function, arguments, name="lifted"):
    """The outputs of a call of legacy function `function`, as a list (one comes bare). The
    function is noted for the Session's grappler to optimize once (`prepared_functions`)."""
    outputs = function(*arguments, name=name)
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    if outputs:
        prepared_functions.note(outputs[0].op)
    return outputs


def _imported(ops, input_map, wanted, inline):
    """Re-create `ops` reading `input_map` (tensor name -> value) instead of the tensors
    named there; return the values of the `wanted` tensors.

    Importing a GraphDef (rather than copying op by op) keeps any graph TF1 runs: v1 control
    flow creates a cond's Switch after the ops that read it and gives loops back edges, so
    no op-by-op order exists. The ops go into a function of their own (see
    `called_as_function`), or with `inline` into the current graph (for pfor to vectorize:
    the caller then puts the batched computation into such a function). Every output keeps
    the static shape it had (`set_shape` calls the user made keep holding).
    """
    names = {op.name for op in ops}
    used = sorted({tensor.name for op in ops for tensor in op.inputs} & set(input_map))
    computed = [tensor for tensor in wanted if tensor.name not in input_map]
    if inline:
        if any(op.type in V1_CONTROL_FLOW for op in ops):
            raise ValueError("TF1 control flow is computed per element, not inline")
        values = _import_into_current_graph(ops, names, {name: input_map[name] for name in used},
                                            computed)
    elif computed:
        arguments = [input_map[name] for name in used]
        graph_def = _graph_def_of(ops, names)
        if graph_def.library.function:
            # Functions the ops call (v2 control flow) must come along: Defun adds them.
            values = called_as_function(
                lambda *parameters: _import_into_current_graph(
                    ops, names, dict(zip(used, parameters)), computed, graph_def),
                arguments)
        else:
            function = _made_in_c(ops, graph_def, used, arguments, computed)
            values = _call_of(function, arguments)
    else:
        values = []
    by_name = dict(zip((tensor.name for tensor in computed), values))
    results = []
    for tensor in wanted:
        value = input_map.get(tensor.name, by_name.get(tensor.name))
        if value.shape.is_compatible_with(tensor.shape):
            value.set_shape(tensor.shape)
        results.append(value)
    return results


def function_without_inputs(lifted: Lifted):
    """The function that `lifted.function([])` calls, made now, for a computation that reads
    no stage: the same function (shared with equal copies, see `shared_functions`), called
    with no arguments, returning `lifted.outputs` in order. None where the computation reads
    a stage or calls functions of its own (v2 control flow: a Defun traces it)."""
    if lifted.sources or not lifted.ops:
        return None
    ops = list(lifted.ops)
    graph_def = _graph_def_of(ops, {op.name for op in ops})
    if graph_def.library.function:
        return None
    return _made_in_c(ops, graph_def, [], [], list(lifted.outputs))


def function_of_source(lifted: Lifted, source_outputs) -> tuple | None:
    """(function, names of the source outputs it takes, in order) that `lifted.function`
    calls when it computes every output from the one stage it reads, made now: the same
    function (shared with equal copies, see `shared_functions`). `source_outputs` are the
    stage's get_next outputs (their dtypes type the arguments). None where the call would be
    something else: no op to compute, an output read straight from the stage, or a
    computation that calls functions of its own (v2 control flow: a Defun traces it)."""
    if len(lifted.sources) != 1 or not lifted.ops:
        return None
    stage_outputs = {tensor.name: tensor for tensor in source_outputs}
    if any(tensor.name in stage_outputs for tensor in lifted.outputs):
        return None
    ops = list(lifted.ops)
    names = {op.name for op in ops}
    used = sorted({tensor.name for op in ops for tensor in op.inputs} & set(stage_outputs))
    graph_def = _graph_def_of(ops, names)
    if graph_def.library.function:
        return None
    function = _made_in_c(ops, graph_def, used, [stage_outputs[name] for name in used],
                          list(lifted.outputs))
    return function, used


def _made_in_c(ops, graph_def, used, arguments, computed):
    """The function `_function_of` makes of `ops` (as `graph_def`), or the one made for an
    equal copy of them in this graph where every op may share its kernels."""
    shareable = all(shared_functions.kernel_state_free(op, ORDER_FREE_TABLE_OPS) for op in ops)
    return shared_functions.function_of(graph_def, used, arguments, computed, shareable,
                                        _function_of)


def _import_into_current_graph(ops, names, input_map, computed, graph_def=None):
    if not ops:
        return []
    returned = tf.graph_util.import_graph_def(
        graph_def or _graph_def_of(ops, names), input_map=input_map,
        return_elements=[op.name for op in ops], name="lifted")
    imported = dict(zip((op.name for op in ops), returned))
    for op in ops:
        for old, new in zip(op.outputs, imported[op.name].outputs):
            if new.shape.is_compatible_with(old.shape):
                new.set_shape(old.shape)
    return [imported[tensor.op.name].outputs[tensor.value_index] for tensor in computed]


def _ops_needed_for(tensors, ops, given_names):
    """The ops among `ops` that computing `tensors` runs, when `given_names` are known."""
    by_name = {op.name: op for op in ops}
    needed = set()
    pending = [tensor.op for tensor in tensors if tensor.name not in given_names]
    while pending:
        op = pending.pop()
        if op.name in needed or op.name not in by_name:
            continue
        needed.add(op.name)
        pending.extend(tensor.op for tensor in op.inputs if tensor.name not in given_names)
        pending.extend(op.control_inputs)
    return [op for op in ops if op.name in needed]


def _flat(structure):
    """`structure`'s tensors, flattened as `tf.nest` flattens composites; a list of dense
    tensors (an enqueue's values) without `tf.nest`, which asks each value whether it is a
    CompositeTensor: the first such check of a class walks every subclass tf.data defines
    (~5 of a Python-fed queue's 14 ms build, 8.6 ms without it). The dataset's own `nest`
    calls make that check anyway, at the first run."""
    if type(structure) is list and all(isinstance(value, tf.Tensor) for value in structure):
        return list(structure)
    return tf.nest.flatten(structure, expand_composites=True)


def lift(structure, stage_of, what: str) -> Lifted:
    """Lift the computation of `structure` (tensors, SparseTensors, nested) out of the graph."""
    flat = _flat(structure)
    ops, sources = _subgraph(flat, stage_of, what)

    def function(encoded_elements, probes=(), given=(), inline=False):
        """The computed structure; with `probes` (tensors of the lifted subgraph), only
        their values, and only the ops they need run.

        given: (tensor of the lifted subgraph, its value) pairs, computed elsewhere; only
            the ops still needed for the rest are re-created.
        inline: create the ops in the current graph instead of a function of their own
            (see `_imported`).
        """
        input_map = {tensor.name: value for tensor, value in given}
        for stage, encoded in zip(sources, encoded_elements):
            for index, value in enumerate(encoded):
                if value is not None:
                    input_map[f"{stage.get_next_op.name}:{index}"] = value
        wanted = list(probes) or flat
        needed = _ops_needed_for(wanted, ops, input_map) if probes or given else ops
        values = _imported(needed, input_map, wanted, inline)
        if probes:
            return tuple(values)
        return tf.nest.pack_sequence_as(structure, values, expand_composites=True)

    stateful = any(op.op_def.is_stateful and op.type not in ORDER_FREE_TABLE_OPS for op in ops)
    if any(op.type in _PYTHON_OPS for op in ops):
        cancellable_runs.note_may_wait(ops[0].graph)
    return Lifted(sources, function, stateful, tuple(ops), tuple(flat),
                  _source_outputs_read(sources, ops, flat))


def _source_outputs_read(sources, ops, flat):
    read = {stage.get_next_op.name: set() for stage in sources}
    for tensor in list(flat) + [tensor for op in ops for tensor in op.inputs]:
        if tensor.op.name in read:
            read[tensor.op.name].add(tensor.value_index)
    for op in ops:
        for dep in op.control_inputs:
            if dep.name in read:  # waits on the whole dequeue
                read[dep.name].update(range(len(dep.outputs)))
    return tuple(tuple(sorted(read[stage.get_next_op.name])) for stage in sources)
