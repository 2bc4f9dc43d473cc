"""A `FixedLengthRecordReader`'s read of each file, written as tf.data's trace writes it.

Where only a reader's values are read (CIFAR-10's input reads the label and the image from
the value), the stage maps each file name to `record_sources.fixed_length_records(...,
with_keys=False)` with `flat_map`. Traced, that function cost ~40 ms of the first Session
run of a CIFAR-10 input: ~20 small ops through TF's Python op creation and the trace's own
machinery. Its body depends on nothing but the reader's layout, so it is written as the
FunctionDef the trace makes: the file read to learn its size, the count of whole records
and the header and footer that leave exactly those (`record_sources._contiguous_records`),
and the FixedLengthRecordDatasetV2 that reads them. Tested against the trace, whole graphs,
in both TF behaviours (tests/runtime/test_written_reads.py). Where the trace would differ
(a compressed file, records that overlap or skip bytes, a layout TF1 refuses, device
functions or colocation in force, TF's own function path), it is traced.
"""
from __future__ import annotations

import tensorflow as tf
from tensorflow.core.framework import full_type_pb2, function_pb2, tensor_pb2
from tensorflow.python.data.ops import readers as _readers
from tensorflow.python.framework import op_def_registry

from compat._runtime import build_context, pull_maps, written_datasets

_STRING = tf.TensorSpec([], tf.string)
_INT64 = tf.int64.as_datatype_enum


def fixed_length_values(units: tf.data.Dataset, record_bytes, header_bytes, footer_bytes,
                        hop_bytes, encoding) -> tf.data.Dataset | None:
    """`units.flat_map(f)`, where `f` maps a file name to the records of
    `record_sources.fixed_length_records(name, ..., with_keys=False)`, with `f` written;
    None where the trace would write something else."""
    layout = (record_bytes, header_bytes, footer_bytes, hop_bytes)
    if (encoding or any(isinstance(value, bool) or not isinstance(value, int)
                        for value in layout)
            or record_bytes <= 0 or header_bytes < 0 or footer_bytes < 0
            or hop_bytes not in (0, record_bytes)
            or units.element_spec != _STRING or not pull_maps.writable(units.element_spec)):
        return None
    attributes = pull_maps.function_attributes(build_context.one_device_functions_now())
    function = pull_maps.called(records_definition(record_bytes, header_bytes, footer_bytes,
                                                   attributes), attributes)
    attrs = written_datasets.structure_attrs(_STRING)
    attrs.update(f=written_datasets.function_attr(function),
                 Targuments=written_datasets.no_arguments())
    node = written_datasets.Node("FlatMapDataset", [written_datasets.variant_input(units)],
                                 attrs)
    return written_datasets.WrittenDataset(node, _STRING, [units],
                                           [pull_maps.MadeFunction(function, _STRING)])


class _Body:
    """Nodes of a FunctionDef, named and wired as a trace names and wires them."""

    def __init__(self, definition: function_pb2.FunctionDef):
        self.definition = definition

    def node(self, name: str, op: str, inputs, **types) -> str:
        node = self.definition.node_def.add(name=name, op=op, input=inputs)
        for key, dtype in types.items():
            node.attr[key].type = dtype
        return name

    def constant(self, name: str, dtype: int, **value) -> str:
        node = self.definition.node_def.add(name=name, op="Const")
        node.attr["value"].tensor.CopyFrom(
            tensor_pb2.TensorProto(dtype=dtype, tensor_shape={}, **value))
        node.attr["dtype"].type = dtype
        return f"{name}:output:0"

    def binary(self, name: str, op: str, left: str, right) -> str:
        """`left op right` of int64s, `right` a node's output or a Python int (a constant
        named `name/y`, as an operator's conversion names it)."""
        if isinstance(right, int):
            right = self.constant(f"{name}/y", _INT64, int64_val=[right])
        self.node(name, op, [left, right], T=_INT64)
        return f"{name}:z:0"


def records_definition(record_bytes: int, header_bytes: int, footer_bytes: int,
                       attributes: dict) -> function_pb2.FunctionDef:
    """The FunctionDef tf.data's trace makes of `fixed_length_records(args_0, record_bytes,
    header_bytes, footer_bytes, with_keys=False)` for contiguous records of a file read as it
    is (`record_sources`)."""
    definition = function_pb2.FunctionDef()
    body = _Body(definition)
    body.node("ReadFile", "ReadFile", ["args_0"])
    length = definition.node_def.add(name="StringLength", op="StringLength",
                                     input=["ReadFile:contents:0"])
    length.attr["unit"].s = b"BYTE"
    cast = definition.node_def.add(name="Cast", op="Cast", input=["StringLength:output:0"])
    cast.attr["Truncate"].b = False
    cast.attr["SrcT"].type = tf.int32.as_datatype_enum
    cast.attr["DstT"].type = _INT64
    size = "Cast:y:0"
    # count = max((size - header - footer - record_bytes) // record_bytes + 1, 0)
    rest = body.binary("sub", "Sub", size, header_bytes)
    rest = body.binary("sub_1", "Sub", rest, footer_bytes)
    rest = body.binary("sub_2", "Sub", rest, record_bytes)
    count = body.binary("floordiv", "FloorDiv", rest, record_bytes)
    count = body.binary("add", "AddV2", count, 1)
    count = body.binary("Maximum", "Maximum", count, 0)
    # header = where(count > 0, header_bytes, 0); footer = size - header - count * record_bytes
    any_record = body.binary("Greater", "Greater", count, 0)
    kept = body.constant("Const", _INT64, int64_val=[header_bytes])
    dropped = body.constant("SelectV2/e", _INT64, int64_val=[0])
    body.node("SelectV2", "SelectV2", [any_record, kept, dropped], T=_INT64)
    header = "SelectV2:output:0"
    footer = body.binary("sub_3", "Sub", size, header)
    footer = body.binary("sub_4", "Sub", footer, body.binary("mul", "Mul", count, record_bytes))
    records = definition.node_def.add(
        name="FixedLengthRecordDatasetV2", op="FixedLengthRecordDatasetV2",
        input=["args_0", header,
               body.constant("record_bytes", _INT64, int64_val=[record_bytes]), footer,
               body.constant("buffer_size", _INT64, int64_val=[
                   _readers._DEFAULT_READER_BUFFER_SIZE_BYTES]),  # pylint: disable=protected-access
               body.constant("compression_type", tf.string.as_datatype_enum,
                             string_val=[b""])])
    records.attr["metadata"].s = b""
    records.experimental_type.CopyFrom(_dataset_of_strings())
    pull_maps.returned_after(definition, [("FixedLengthRecordDatasetV2:handle:0",
                                           tf.variant.as_datatype_enum)],
                             ["FixedLengthRecordDatasetV2"])
    signature = definition.signature
    signature.input_arg.add(name="args_0", type=tf.string.as_datatype_enum)
    signature.is_stateful = any(op_def_registry.get(node.op).is_stateful
                                for node in definition.node_def)
    return pull_maps.signed(definition, attributes, "compat_read", tf.TensorShape([]))


def _dataset_of_strings() -> full_type_pb2.FullTypeDef:
    """The full type TF gives a dataset op of scalar strings."""
    strings = full_type_pb2.FullTypeDef(type_id=full_type_pb2.TFT_TENSOR, args=[
        full_type_pb2.FullTypeDef(type_id=full_type_pb2.TFT_STRING)])
    dataset = full_type_pb2.FullTypeDef(type_id=full_type_pb2.TFT_DATASET, args=[strings])
    return full_type_pb2.FullTypeDef(type_id=full_type_pb2.TFT_PRODUCT, args=[dataset])
