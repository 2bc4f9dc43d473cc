"""The map that reads whole files and computes each one's element, written as tf.data's trace
writes it.

A batch of values computed from a `WholeFileReader`'s contents (a folder of JPEGs decoded
and resized, one per file) maps, over the file names, a function that reads the file and
calls the lifted computation (see `element_source._fused`). Traced, that function cost
~9-18 ms of the first Session run of a JPEG-folder pipeline, half its build: most of it
the trace's own machinery around four nodes. So it is written as the FunctionDef the trace
makes: ReadFile of the argument, the call, and an Identity per value batched waiting on a
NoOp that waits on the call (automatic control dependencies: a function call is always a
control output). Tested against the trace, whole graphs, in both TF behaviours
(tests/runtime/test_unit_maps.py). Where the trace would differ (values read straight from
the file, shape checks, composites, device functions or colocation in force, TF's own
function path), it is traced.
"""
from __future__ import annotations

import tensorflow as tf
from tensorflow.core.framework import function_pb2
from tensorflow.python.framework import op_def_registry

from compat._runtime import (build_context, c_functions, lifting, prepared_functions,
                             pull_maps, readers)
from compat._runtime.element_source import ElementSource


def written(source: ElementSource, values, parallelism: int) -> tf.data.Dataset | None:
    """`source.computed(finish=lambda computed: computed[0], parallelism=parallelism)` where
    `values` are the tensors the computed structure starts with (a batch call's tensor
    list), with its function written; None where it cannot be written."""
    units = source.units
    if (units is None or units.element_of is not readers.read_whole_file
            or len(source.lifted_outputs) < len(values)
            or any(output is not value for output, value in zip(source.lifted_outputs, values))
            or source.upstream.element_spec != tf.TensorSpec([], tf.string)
            or not pull_maps.writable(source.upstream.element_spec)):
        return None
    stage_outputs = units.stage.get_next_op.outputs
    if len(stage_outputs) != 2:
        return None
    with source.map_context():
        made = lifting.function_of_source(units.lifted, stage_outputs)
        if made is None:
            return None
        lifted, used = made
        graph = tf.compat.v1.get_default_graph()
        c_functions.add_once(lifted, graph)
        prepared_functions.note_function(lifted, graph)
        inputs = {stage_outputs[0].name: "args_0", stage_outputs[1].name: "ReadFile:contents:0"}
        attributes = pull_maps.function_attributes(build_context.one_device_functions_now())
        function = pull_maps.called(
            unit_definition(lifted, [inputs[name] for name in used], len(values), attributes),
            attributes)
        element_spec = tuple(tf.TensorSpec(value.shape, value.dtype) for value in values)
        return pull_maps.WrittenMapDataset(
            source.upstream, function, element_spec, preserve_cardinality=True,
            parallel_calls=source.parallel_calls(parallelism))


def unit_definition(lifted, inputs, count: int, attributes: dict) -> function_pb2.FunctionDef:
    """The FunctionDef tf.data's trace makes of a map over file names that reads the file,
    calls the legacy function `lifted` with `inputs` (the argument or the contents, by their
    names in the function) and returns its first `count` results."""
    called = lifted.definition.signature
    definition = function_pb2.FunctionDef()
    definition.node_def.add(name="ReadFile", op="ReadFile", input=["args_0"])
    call = definition.node_def.add(name="lifted", op=called.name, input=inputs)
    call.attr["_disable_call_shape_inference"].b = True  # as a legacy function's call has it
    pull_maps.returned_after(definition, [(f"lifted:{result.name}:0", result.type)
                                          for result in called.output_arg[:count]], ["lifted"])
    signature = definition.signature
    signature.input_arg.add(name="args_0", type=tf.string.as_datatype_enum)
    signature.is_stateful = (called.is_stateful
                             or op_def_registry.get("ReadFile").is_stateful)
    return pull_maps.signed(definition, attributes, "compat_units", tf.TensorShape([]))
