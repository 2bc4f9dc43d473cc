"""The map that computes a producer's epochs from an input computed in the graph, written as
tf.data's trace writes it.

A producer whose input is computed (`range_input_producer` of a computed limit, as PTB's
`ptb_producer` has it, `slice_input_producer`, `string_input_producer` of
`match_filenames_once`) computes that input once per epoch, in a map over the epochs whose
function calls the lifted computation and, when the producer shuffles, shuffles its rows.
That function depends on nothing but the lifted function, the seeds and the map's options;
traced, it was the only function a PTB-style pipeline traces. So it is written as the
FunctionDef the trace makes: the call, RandomShuffle, an Identity waiting on a NoOp that
waits on the call (automatic control dependencies, which make every function call a control
output and leave the legacy random op alone). Tested against the trace, whole graphs, in both
TF behaviours. PTB's first Session run: ~28 -> ~23 ms, its first batch ~3 ms earlier
(medians of 28 fresh processes, paired). Where the trace would differ (a computation that
calls functions of its own, a device function or colocation in force, TF's own function
path, other than one dense input), it is traced.

Two producers of one computation with the same seeds get one written function where the trace
makes two; each map op still instantiates its own kernels, so each shuffles on its own.

A shuffled producer of a constant input (a list of file names: `string_input_producer`'s
usual input, shuffled by default) repeats that input and maps only the shuffle over its
epochs. That map's function, RandomShuffle and an Identity (no control output: a legacy
random op), is written too (`written_shuffles`): ~5 ms of the first Session run of every
file-reading pipeline built with the graph.
"""
from __future__ import annotations

import tensorflow as tf
from tensorflow.core.framework import function_pb2

from compat._runtime import build_context, c_functions, pull_maps
from compat._runtime.element_source import ElementSource


def written_epochs(source: ElementSource, shuffle_seeds) -> tf.data.Dataset | None:
    """`source.computed()`, its rows shuffled with the seed pair `shuffle_seeds` (None: not
    shuffled) as `producers._epochs` shuffles them, with its function written; None where it
    cannot be written."""
    outputs = source.lifted_outputs
    if (source.function_without_inputs is None or len(outputs) != 1
            or not isinstance(outputs[0], tf.Tensor)
            or source.upstream.element_spec != pull_maps.TICK
            or not pull_maps.writable(source.upstream.element_spec)):
        return None
    with source.map_context():
        lifted = source.function_without_inputs()
        if lifted is None:
            return None
        graph = tf.compat.v1.get_default_graph()
        c_functions.add_once(lifted, graph)
        attributes = pull_maps.function_attributes(build_context.one_device_functions_now())
        function = pull_maps.called(epoch_definition(lifted, shuffle_seeds, attributes),
                                    attributes)
        element_spec = tf.TensorSpec(outputs[0].shape, outputs[0].dtype)
        return pull_maps.WrittenMapDataset(
            source.upstream, function, element_spec, preserve_cardinality=True,
            parallel_calls=source.parallel_calls(1))


def epoch_definition(lifted, shuffle_seeds, attributes: dict) -> function_pb2.FunctionDef:
    """The FunctionDef tf.data's trace makes of a map calling the legacy function `lifted`
    (no arguments, one result), then RandomShuffle with `shuffle_seeds` unless None."""
    called = lifted.definition.signature
    result = called.output_arg[0]
    definition = function_pb2.FunctionDef()
    call = definition.node_def.add(name="lifted", op=called.name)
    call.attr["_disable_call_shape_inference"].b = True  # as a legacy function's call has it
    value = f"lifted:{result.name}:0"
    if shuffle_seeds is not None:
        seed, seed2 = shuffle_seeds
        shuffle = definition.node_def.add(name="RandomShuffle", op="RandomShuffle",
                                          input=[value])
        shuffle.attr["seed"].i = seed
        shuffle.attr["seed2"].i = seed2
        shuffle.attr["T"].type = result.type
        value = "RandomShuffle:output:0"
    pull_maps.returned_after(definition, [(value, result.type)], ["lifted"])
    signature = definition.signature
    signature.input_arg.add(name="args_0", type=pull_maps.TICK.dtype.as_datatype_enum)
    signature.is_stateful = called.is_stateful or shuffle_seeds is not None
    return pull_maps.signed(definition, attributes, "compat_epochs")


def written_shuffles(epochs: tf.data.Dataset, shuffle_seeds) -> tf.data.Dataset | None:
    """`epochs.map(lambda rows: RandomShuffle(rows, *shuffle_seeds))` as `producers._epochs`
    traces it, with its function written; None where it cannot be written."""
    spec = epochs.element_spec
    if not pull_maps.writable(spec):
        return None
    attributes = pull_maps.function_attributes(build_context.one_device_functions_now())
    function = pull_maps.called(shuffle_definition(spec, shuffle_seeds, attributes),
                                attributes)
    return pull_maps.WrittenMapDataset(epochs, function, tf.TensorSpec(spec.shape, spec.dtype),
                                       preserve_cardinality=True)


def shuffle_definition(spec: tf.TensorSpec, shuffle_seeds, attributes: dict
                       ) -> function_pb2.FunctionDef:
    """The FunctionDef tf.data's trace makes of a map that shuffles the rows of its one
    argument (`spec`) with the seed pair `shuffle_seeds`."""
    dtype = spec.dtype.as_datatype_enum
    definition = function_pb2.FunctionDef()
    seed, seed2 = shuffle_seeds
    shuffle = definition.node_def.add(name="RandomShuffle", op="RandomShuffle", input=["args_0"])
    shuffle.attr["seed"].i = seed
    shuffle.attr["seed2"].i = seed2
    shuffle.attr["T"].type = dtype
    identity = definition.node_def.add(name="Identity", op="Identity",
                                       input=["RandomShuffle:output:0"])
    identity.attr["T"].type = dtype
    signature = definition.signature
    signature.input_arg.add(name="args_0", type=dtype)
    signature.output_arg.add(name="identity", type=dtype)
    signature.is_stateful = True
    definition.ret["identity"] = "Identity:output:0"
    return pull_maps.signed(definition, attributes, "compat_shuffle", spec.shape)
