"""Computing a stateless per-element computation on whole batches.

TF1 runs the user's per-element ops (parse, decode, cast...) once per element. When nothing
between those ops and the batching queue filters or reorders by value, batching the raw
upstream elements first and computing each batch with `tf.vectorized_map` gives the same
batches, and turns e.g. parse_single_example into one parse of the batch, which is where
most of the time goes.

Only exact conversions are used. A computation is vectorized only when every op in it is one
whose batched form computes each element with the same arithmetic as the op on that element
alone (`exact_when_batched`): data movement, parsing and string ops, and elementwise IEEE
arithmetic. Float accumulations (MatMul, Conv2D, float sums and means) are left per element:
batched, they add in another order and differ from TF1 in the last bits; so are
transcendental functions (Eigen's vectorized exp/log/tanh differ from its scalar ones), control
flow, and anything else not listed. pfor's per-element loop fallback is never used (it fails
at run time where per-element intermediate shapes differ, and TF1 does not). DecodeRaw, which
pfor cannot convert, gets a batched form here that is exact when every element's input has the
same byte length; each batch checks that first and, when it does not hold, computes element by
element (a dataset of the batch's elements). Where TF1 itself fails on such a batch (the
decoded length is kept up to an output of declared length, as in the MNIST example), the
batched op runs alone and fails there too, and no per-element path is built.
"""
from __future__ import annotations

import threading

import tensorflow as tf

from compat._runtime import build_context, lifting

# Ops given a batched form here, valid when their inputs in one batch have equal lengths.
_EQUAL_LENGTH_OPS = ("DecodeRaw",)
# One-input elementwise string ops pfor has no converter for: applied to the stacked input,
# each gives exactly its per-element results.
_ELEMENTWISE_STRING_OPS = ("StringLength", "AsString", "StringToNumber", "StaticRegexReplace",
                           "StaticRegexFullMatch", "StringStrip", "StringLower", "StringUpper",
                           "DecodeBase64", "EncodeBase64")
# Ops whose batched form (pfor's) computes each element exactly as the op does alone.
_DATA_MOVEMENT = {
    "Const", "Identity", "IdentityN", "StopGradient", "Snapshot", "Reshape", "Squeeze",
    "ExpandDims", "Shape", "ShapeN", "Size", "Rank", "Transpose", "Slice", "StridedSlice",
    "Gather", "GatherV2", "GatherNd", "ConcatV2", "Pack", "Unpack", "Split", "SplitV", "Tile",
    "Pad", "PadV2", "MirrorPad", "Fill", "ZerosLike", "OnesLike", "Range", "ReverseV2",
    "BroadcastTo", "OneHot", "Select", "SelectV2", "Cast", "Bitcast", "NoOp",
}
_PARSING_AND_STRINGS = {
    "ParseExample", "ParseExampleV2", "ParseSingleExample", "DecodeRaw", "DecodeCSV",
    "Substr", "StringJoin", "StringToHashBucketFast",
} | set(_ELEMENTWISE_STRING_OPS)
# Elementwise ops that IEEE arithmetic computes identically in Eigen's packet and scalar
# paths (one correctly rounded operation per element, or none).
_ELEMENTWISE_EXACT = {
    "Add", "AddV2", "AddN", "Sub", "Mul", "RealDiv", "Div", "DivNoNan", "FloorDiv", "FloorMod",
    "Mod", "TruncateDiv", "TruncateMod", "Neg", "Abs", "Maximum", "Minimum", "Square", "Sqrt",
    "SquaredDifference", "Floor", "Ceil", "Round", "Rint", "Sign", "ClipByValue", "Relu",
    "Relu6", "BiasAdd", "Reciprocal", "Inv", "Equal", "NotEqual", "Less", "LessEqual",
    "Greater", "GreaterEqual", "LogicalAnd", "LogicalOr", "LogicalNot", "IsNan", "IsInf",
    "IsFinite", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift",
}
# Reductions: max/min/all/any do not depend on the order; sums only for integers.
_ORDER_FREE_REDUCTIONS = {"Max", "Min", "All", "Any", "ArgMax", "ArgMin"}
_INTEGER_ONLY_REDUCTIONS = {"Sum", "Prod", "Mean", "Cumsum", "Cumprod"}


def exact_when_batched(op) -> bool:
    """Whether computing `op` on a batch gives each element's result bit for bit."""
    if op.type in _DATA_MOVEMENT or op.type in _PARSING_AND_STRINGS:
        return True
    if op.type in _ELEMENTWISE_EXACT or op.type in _ORDER_FREE_REDUCTIONS:
        return True
    if op.type in _INTEGER_ONLY_REDUCTIONS:
        return all(tensor.dtype.is_integer for tensor in op.outputs)
    return False


# Float kernels that neither oneDNN's kernel rewrites nor grappler's arithmetic rewrites
# replace or combine with their neighbours (tests/runtime/test_float_exactness.py runs each).
_FLOAT_KERNELS_LEFT_ALONE = {
    "ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic", "ResizeArea",
    "AdjustContrastv2", "AdjustSaturation", "AdjustHue",
}
# Float kernels oneDNN has none of its own for in any supported TF (no `_Mkl` op: 2.15, 2.18,
# 2.21), so either preparation runs Eigen's: reductions (whose order of adding depends on the
# tensor's shape and the device, the same for both) and Rsqrt. Per element only: batched, a
# reduction adds in another order (see `exact_when_batched`).
_EIGEN_FLOAT_KERNELS = {"Mean", "Sum", "Prod", "EuclideanNorm", "Rsqrt"}
# Random kernels draw from their own Philox stream whatever kernel rewrites a function gets.
_RANDOM_DRAWS = {"RandomUniform", "RandomUniformInt", "RandomStandardNormal", "TruncatedNormal",
                 "RandomShuffle"}
# Elementwise ops oneDNN has kernels of its own for, which the multi-device path may swap in
# (a relu or max in oneDNN may treat NaN and -0.0 otherwise than Eigen's). TF 2.18 on (oneDNN
# 3) registers such a kernel for Relu only of these; Relu and Relu6 stay multi-device
# everywhere. TF 2.15 (oneDNN 2, whose `_MklAddN` is registered) has kernels for all of them.
_ONEDNN_ELEMENTWISE = {"Relu", "Relu6"}
_ONEDNN_2_ELEMENTWISE = {"Add", "AddV2", "AddN", "Sub", "Mul", "Maximum", "Minimum",
                         "SquaredDifference", "BiasAdd", "ClipByValue"} | _ONEDNN_ELEMENTWISE


def onednn_2_kernels() -> bool:
    """Whether this TensorFlow has oneDNN 2's elementwise kernels (TF 2.15; not 2.18 on)."""
    from tensorflow.python.framework import op_def_registry
    return op_def_registry.get("_MklAddN") is not None


def _one_device_elementwise() -> frozenset:
    rewritten = _ONEDNN_2_ELEMENTWISE if onednn_2_kernels() else _ONEDNN_ELEMENTWISE
    return frozenset(_ELEMENTWISE_EXACT - rewritten)


def same_floats_on_one_device(ops) -> bool:
    """Whether `ops` give TF1's values however their function is prepared.

    TF's multi-device preparation applies oneDNN's kernel rewrites, which TF1's Session
    applies too and which change floats where oneDNN computes differently (Softmax, Tanh,
    MatMul, Conv2D). Grappler's rewrites (x / c -> x * (1 / c), exp(x) - 1 -> expm1(x)) reach
    the user's ops on either path, in the function of their own the Session optimizes
    (`lifting.called_as_function`). So one device gives TF1's floats when every op moves,
    parses, compares or draws values, computes no float, is one correctly rounded IEEE
    operation per element that oneDNN leaves to Eigen (see `_ONEDNN_ELEMENTWISE`), a kernel
    left alone, or a reduction or Rsqrt, which oneDNN has no kernel for.
    """
    elementwise = _one_device_elementwise()
    return all(op.type in _DATA_MOVEMENT or op.type in _PARSING_AND_STRINGS
               or op.type in elementwise or op.type in lifting.V1_CONTROL_FLOW
               or op.type in _RANDOM_DRAWS or op.type in _FLOAT_KERNELS_LEFT_ALONE
               or op.type in _ORDER_FREE_REDUCTIONS or op.type in _EIGEN_FLOAT_KERNELS
               or not any(tensor.dtype.is_floating or tensor.dtype.is_complex
                          for tensor in op.outputs)
               for op in ops)


# Float kernels whose every output element is computed alone (whatever the threads, the same
# arithmetic), beyond the one-rounding elementwise ones.
_FLOATS_ALONE = _RANDOM_DRAWS | {"ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic",
                                 "ResizeArea", "AdjustSaturation", "AdjustHue", "Rsqrt",
                                 "Exp", "Log", "Log1p", "Expm1", "Tanh", "Sigmoid", "Sin", "Cos",
                                 "Softplus", "Pow", "Erf"}
# Sums whose order of adding Eigen splits between threads for a large enough tensor.
_FLOAT_SUMS = {"Mean", "Sum", "Prod", "EuclideanNorm", "AdjustContrastv2"}
# Eigen's cost model splits a float sum between threads past ~100k-260k elements (~1 cycle an
# element, 100k cycles a thread); below this, far from it on purpose, one thread adds it
# whatever the pool.
_ADDED_IN_ONE_BLOCK = 16_384


def adds_as_threads_split(ops) -> bool:
    """Whether some op's floats may depend on how many threads compute it: a reduction or
    mean over a tensor that may be large enough for Eigen to split between threads (TF1's
    Session gives it the device's intra-op threads, tf.data one), or a float kernel not
    known to compute each output element alone (a matmul or convolution splits its sums).
    The ops of the functions that v2 control flow calls count too (of unknown sizes)."""
    for op in ops:
        if not any(tensor.dtype.is_floating or tensor.dtype.is_complex for tensor in op.outputs):
            continue
        if op.type in _FLOAT_SUMS:
            size = op.inputs[0].shape.num_elements() if op.inputs else None
            if size is None or size >= _ADDED_IN_ONE_BLOCK:
                return True
        elif op.type in _CALLING_OPS:
            if _calls_split(op.graph, lifting._function_names(op.node_def.attr), set()):  # pylint: disable=protected-access
                return True
        elif not _alone(op.type):
            return True
    return False


# v2 control flow and function calls: what they compute is in the functions they call.
_CALLING_OPS = {"If", "StatelessIf", "While", "StatelessWhile", "Case", "StatelessCase",
                "PartitionedCall", "StatefulPartitionedCall"}


def _alone(op_type: str) -> bool:
    """Whether ops of this type compute each float output element alone (or none)."""
    return (op_type in _DATA_MOVEMENT or op_type in _PARSING_AND_STRINGS
            or op_type in _ELEMENTWISE_EXACT or op_type in _FLOATS_ALONE
            or op_type in _ORDER_FREE_REDUCTIONS or op_type in lifting.V1_CONTROL_FLOW)


def _calls_split(graph, names, seen) -> bool:
    """Whether the functions `names` (of `graph`'s library) or those they call hold an op
    that may add as threads split it (sizes unknown: every reduction counts)."""
    for name in names:
        if name in seen:
            continue
        seen.add(name)
        function = graph._get_function(name)  # pylint: disable=protected-access
        if function is None:
            return True  # nothing to tell what it computes
        for node in function.definition.node_def:
            if graph._is_function(node.op):  # pylint: disable=protected-access
                if _calls_split(graph, [node.op], seen):
                    return True
            elif node.op in _CALLING_OPS:
                if _calls_split(graph, lifting._function_names(node.attr), seen):  # pylint: disable=protected-access
                    return True
            elif node.op not in ("Placeholder", "_Arg", "_Retval") and not _alone(node.op):
                return True
    return False


def all_exact_when_batched(ops) -> bool:
    return all(exact_when_batched(op) for op in ops)


_registered = []
_registration_lock = threading.Lock()


def _register_converters() -> None:
    """pfor converters for the ops above, where TensorFlow has none (once per process)."""
    from tensorflow.python.ops import gen_parsing_ops
    from tensorflow.python.ops.parallel_for import pfor

    def convert_decode_raw(pfor_input):
        return pfor.wrap(gen_parsing_ops.decode_raw(
            pfor_input.stacked_input(0), out_type=pfor_input.get_attr("out_type"),
            little_endian=pfor_input.get_attr("little_endian")), True)

    converters = {"DecodeRaw": convert_decode_raw}
    converters.update({name: pfor._convert_cwise for name in _ELEMENTWISE_STRING_OPS})  # pylint: disable=protected-access
    with _registration_lock:
        if _registered:
            return
        for name, converter in converters.items():
            if name not in pfor._pfor_converter_registry:  # pylint: disable=protected-access
                pfor.RegisterPFor(name)(converter)
        _registered.append(True)


def _same_lengths(strings) -> tf.Tensor:
    lengths = tf.reshape(tf.strings.length(strings), [-1])
    return tf.reduce_all(tf.equal(lengths, lengths[0]))


# Ops whose output has the shape of their one non-scalar input (the others scalars).
_SHAPE_FOLLOWING = {"Cast", "Identity", "Snapshot", "StopGradient", "Neg", "Abs", "Square",
                    "Sqrt", "Floor", "Ceil", "Round", "Rint", "Sign", "Relu", "Relu6",
                    "Reciprocal", "Inv", "LogicalNot", "IsNan", "IsInf", "IsFinite",
                    "ClipByValue"} | _ELEMENTWISE_EXACT - {"AddN", "BiasAdd"}


def _fixes_the_length(op) -> bool:
    """Whether `op` fails at run time on every input length but one: a reshape to a constant
    shape without -1, or an ensure_shape to a fully defined one (a static shape alone may
    come from a user's set_shape, which nothing checks when the graph runs)."""
    if op.type == "Reshape":
        shape = tf.get_static_value(op.inputs[1])
        return shape is not None and all(size >= 0 for size in shape.reshape(-1))
    if op.type == "EnsureShape":
        return tf.TensorShape(op.get_attr("shape")).is_fully_defined()
    return False


def _unequal_lengths_fail_in_tf1(source, element_specs) -> bool:
    """Whether, in TF1, a batch whose equal-length ops' inputs differ in length always holds
    an element that fails: when each such op's result reaches the outputs only through ops
    that keep its length, ending in an output of fully defined shape (the batch's, which
    TF1's enqueue checks) or in an op that fixes the length (`_fixes_the_length`). Then no
    element-by-element fallback is needed: the batched op fails on such a batch, as TF1 does
    on the element whose length differs (e.g. the MNIST example: decode_raw, cast, scale,
    784), with the batched op's message instead of TF1's."""
    lifted = {op.name for op in source.lifted_ops}
    declared = {tensor.name: spec.shape
                for tensor, spec in zip(source.lifted_outputs, element_specs)}
    pending = [op.outputs[0] for op in source.lifted_ops if op.type in _EQUAL_LENGTH_OPS]
    seen = set()
    while pending:
        tensor = pending.pop()
        if tensor.name in seen:
            continue
        seen.add(tensor.name)
        if tensor.name in declared and not declared[tensor.name].is_fully_defined():
            return False  # an output of any length is TF1's to compute, element by element
        for consumer in tensor.consumers():
            if consumer.name not in lifted:
                continue
            if consumer.inputs[0] is tensor and _fixes_the_length(consumer):
                continue  # fails on every length but one
            if consumer.type not in _SHAPE_FOLLOWING or any(
                    other is not tensor and other.shape.rank != 0 for other in consumer.inputs):
                return False
            pending.extend(consumer.outputs)
    return True


def _split_at_equal_length_ops(source):
    """Where the computation is cut before its equal-length ops: (before, checked).

    `before` are the tensors computed ahead of those ops that the rest needs (their inputs,
    and the outputs that do not depend on them) and that depend on the element: constants stay
    in the rest, so that TF optimizes e.g. a division by a constant as it does in TF1's graph.
    `checked` are the inputs whose lengths decide whether the batched form is exact. Computing
    `before` once, checking, then only the rest from it runs each op once per batch. Raises
    ValueError when an equal-length op reads another's result: its input cannot be known
    before the first one runs batched.
    """
    lifted = {op.name for op in source.lifted_ops}
    after, per_element = set(), set()
    for op in source.lifted_ops:
        if (op.type in _EQUAL_LENGTH_OPS
                or any(tensor.op.name in after for tensor in op.inputs)
                or any(dep.name in after for dep in op.control_inputs)):
            after.add(op.name)
        if any(tensor.op.name not in lifted or tensor.op.name in per_element
               for tensor in op.inputs):
            per_element.add(op.name)
    checked = [op.inputs[0] for op in source.lifted_ops if op.type in _EQUAL_LENGTH_OPS]
    if any(tensor.op.name in after for tensor in checked):
        raise ValueError("an equal-length op reads another's result: computed per element")

    def crosses_the_cut(tensor):
        return tensor.op.name not in after and (tensor.op.name not in lifted
                                                or tensor.op.name in per_element)

    before = {}
    for op in source.lifted_ops:
        if op.name in after:
            for tensor in op.inputs:
                if crosses_the_cut(tensor):
                    before.setdefault(tensor.name, tensor)
    for tensor in source.lifted_outputs:
        if crosses_the_cut(tensor):
            before.setdefault(tensor.name, tensor)
    return tuple(before.values()), tuple(checked)


def batch_computation(source, element_specs):
    """A map function from a batch of raw upstream elements to the computed batch.

    source: a `element_source.ElementSource` whose computation is stateless and whose upstream
        elements are dense.
    element_specs: the per-element `tf.TensorSpec`s of the computed tuple.
    Raises ValueError when the computation cannot be vectorized exactly (at trace time,
    where pfor itself cannot convert an op).
    """
    inexact = sorted({op.type for op in source.lifted_ops if not exact_when_batched(op)})
    if inexact:
        raise ValueError(f"not vectorized: {', '.join(inexact)} may differ when batched")
    _register_converters()
    cut = (_split_at_equal_length_ops(source)
           if any(op.type in _EQUAL_LENGTH_OPS for op in source.lifted_ops)
           and not _unequal_lengths_fail_in_tf1(source, element_specs) else None)

    def per_element(element):
        return source.compute(*element, inline=True)

    def batched(values):
        return tuple(tf.ensure_shape(value, tf.TensorShape([None]).concatenate(spec.shape))
                     if value.shape[1:] != spec.shape else value
                     for value, spec in zip(values, element_specs))

    def compute_batch(*batch):
        # In a function of its own, so that grappler rewrites the batched ops as TF1's Session
        # rewrites the per-element ones (see `lifting.called_as_function`).
        return tuple(lifting.called_as_function(compute_batch_inline, batch, name="batched"))

    def compute_batch_inline(*batch):
        if cut is None:
            return batched(tf.vectorized_map(per_element, batch, fallback_to_while_loop=False))
        before, checked = cut
        known = tf.vectorized_map(lambda element: source.compute(*element, probes=before, inline=True),
                                  batch, fallback_to_while_loop=False)
        by_name = dict(zip((tensor.name for tensor in before), known))
        # A checked input that is not per-element (a constant) has one length anyway.
        uniform = tf.reduce_all(tf.stack([_same_lengths(by_name[tensor.name])
                                          for tensor in checked if tensor.name in by_name]
                                         + [tf.constant(True)]))

        def rest(element_and_known):
            element, values = element_and_known
            return source.compute(*element, given=tuple(zip(before, values)), inline=True)

        return batched(tf.cond(
            uniform,
            lambda: tf.vectorized_map(rest, (batch, known), fallback_to_while_loop=False),
            lambda: element_by_element(batch)))

    def element_by_element(batch):
        # A dataset rather than a loop: TF prepares its map function when a batch first needs
        # it, where a loop's body would be optimized and instantiated with the batch function
        # at the first run (~17 ms of MNIST's) for the rare batch of unequal lengths.
        with build_context.user_ops_per_element():
            elements = tf.data.Dataset.from_tensor_slices(batch).map(
                lambda *element: tuple(source.compute(*element)))
        size = tf.shape(batch[0], out_type=tf.int64)[0]
        return tuple(elements.batch(size).get_single_element())

    return compute_batch
