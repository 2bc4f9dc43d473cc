"""Lifting: the user's graph ops between two pipeline stages become a tf.data map function.

TF1 code computes per-element values with ordinary graph ops on a stage's dequeued tensors
(decode, parse, crop, cast...) and hands the results to the next stage. The shim finds that
subgraph, walking back from the values to the outputs of earlier stages, and re-creates its
ops inside the map function, op by op, with the same attributes (random ops keep their
seeds) and the same static shapes (so `set_shape` calls the user made keep holding).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import tensorflow as tf

# Ops whose value lives outside the data stream: copying them into a map function would read
# a fresh copy (a new variable, an empty table) or nothing at all (a placeholder).
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
_STATEFUL_SOURCE_TYPE_PARTS = ("Queue", "Reader", "Iterator", "HashTable", "MutableHashTable",
                               "Barrier", "Stage", "Accumulator")


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


def _check_liftable(op: tf.Operation, what: str) -> None:
    reason = _STATEFUL_SOURCES.get(op.type)
    if reason is None and any(part in op.type for part in _STATEFUL_SOURCE_TYPE_PARTS):
        reason = ("it is stateful TF1 machinery the shim does not replace. Build that part "
                  "with compat.v1 too (import compat.v1 as tf)")
    if reason is not None:
        raise LiftError(
            f"{what}: the input depends on op {op.name!r} (type {op.type}), which cannot be "
            f"moved into the tf.data pipeline: {reason}.")


def _subgraph(flat_tensors, stage_of, what):
    """Ops between the outputs and the stages, in creation (= topological) order."""
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


def _value_of(tensor, copied: dict, source_values: dict, given: dict):
    if tensor.name in given:
        value = given[tensor.name]
        value.set_shape(tensor.shape)
        return value
    if tensor.op.name in source_values:
        return source_values[tensor.op.name][tensor.value_index]
    return copied[tensor.op.name].outputs[tensor.value_index]


def _copy_op(op: tf.Operation, copied: dict, source_values: dict, given: dict) -> None:
    graph = tf.compat.v1.get_default_graph()

    def value_of(tensor):
        return _value_of(tensor, copied, source_values, given)

    attrs = {key: value for key, value in op.node_def.attr.items() if key != "_class"}
    new_op = graph._create_op_internal(  # pylint: disable=protected-access
        op.type,
        [value_of(tensor) for tensor in op.inputs],
        dtypes=[output.dtype for output in op.outputs],
        name=op.name,
        attrs=attrs,
        op_def=op.op_def,
    )
    for old, new in zip(op.outputs, new_op.outputs):
        new.set_shape(old.shape)
    control = [copied[dep.name] for dep in op.control_inputs if dep.name in copied]
    if control:
        new_op._add_control_inputs(control)  # pylint: disable=protected-access
    copied[op.name] = new_op


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


def lift(structure, stage_of, what: str) -> Lifted:
    """Lift the computation of `structure` (tensors, SparseTensors, nested) out of the graph."""
    flat = tf.nest.flatten(structure, expand_composites=True)
    ops, sources = _subgraph(flat, stage_of, what)

    def function(encoded_elements, probes=(), given=()):
        """The computed structure; with `probes` (tensors of the lifted subgraph), only
        their values, and only the ops they need run.

        given: (tensor of the lifted subgraph, its value) pairs, computed elsewhere; only
            the ops still needed for the rest are re-created.
        """
        given = {tensor.name: value for tensor, value in given}
        source_values = {stage.get_next_op.name: list(encoded)
                         for stage, encoded in zip(sources, encoded_elements)}
        wanted = list(probes) or flat
        copied = {}
        for op in (_ops_needed_for(wanted, ops, given) if probes or given else ops):
            _copy_op(op, copied, source_values, given)

        values = [_value_of(tensor, copied, source_values, given) for tensor in wanted]
        if probes:
            return tuple(values)
        return tf.nest.pack_sequence_as(structure, values, expand_composites=True)

    stateful = any(op.op_def.is_stateful for op in ops)
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
