"""Dataset transformations the shim uses in place of tf.data's, where those cost more."""
from __future__ import annotations

import tensorflow as tf
# tf.data loads the modules of its transformations at their first use; the shim's pipelines
# use these, and load them with the shim (see `lazy_modules._load_runtime`).
from tensorflow.python.data.ops import (concatenate_op, flat_map_op, from_tensors_op,  # noqa: F401
                                       interleave_op, take_op)
from tensorflow.python.data.ops import readers as _readers
from tensorflow.python.data.ops import unbatch_op as _unbatch_op

from compat._runtime import build_context, written_datasets


def unbatched(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """`dataset.unbatch()` without its re-encoding map where every component is dense.

    tf.data's unbatch first maps every element through a function that re-encodes sparse and
    ragged components; for dense ones it is an identity that still costs a traced function,
    its instantiation, and a call per element (and, inside a flat_map, per file)."""
    written = written_datasets.unbatched(dataset)
    if written is not None:
        return written
    if all(isinstance(spec, tf.TensorSpec) for spec in tf.nest.flatten(dataset.element_spec)):
        return _unbatch_op._UnbatchDataset(dataset)  # pylint: disable=protected-access
    return dataset.unbatch()


def unless_identity(mapped: tf.data.Dataset, upstream: tf.data.Dataset) -> tf.data.Dataset:
    """`upstream` where `mapped` (a map over it) gives each element as it is (an enqueue of a
    reader's records as read, its shapes declared only statically), else `mapped`. Such a map
    costs a hand-over per element, which tf.data's `noop_elimination` rewrite would drop; the
    shim's pipelines run without that pass (`stage_iterators.with_pipeline_options`).
    Inception's 4 readers filling its examples queue: ~12% more images/s without them."""
    map_func = getattr(mapped, "_map_func", None)
    if map_func is None:  # not a map tf.data built here (a V1 adapter)
        return mapped
    graph = map_func.function.graph
    if any(op.type not in ("Placeholder", "Identity") for op in graph.get_operations()):
        return mapped
    specs, upstream_specs = (tf.nest.flatten(dataset.element_spec)
                             for dataset in (mapped, upstream))
    if len(specs) != len(upstream_specs) or not all(
            isinstance(spec, tf.TensorSpec) and spec.is_compatible_with(upstream_spec)
            for spec, upstream_spec in zip(specs, upstream_specs)):
        return mapped

    def passed_from(tensor):
        while tensor.op.type == "Identity":
            tensor = tensor.op.inputs[0]
        return tensor

    outputs, inputs = [passed_from(tensor) for tensor in graph.outputs], list(graph.inputs)
    if len(outputs) != len(inputs) or any(out is not arg for out, arg in zip(outputs, inputs)):
        return mapped
    # The upstream's elements, under the map's structure and static shapes.
    return tf.data.experimental.from_variant(upstream._variant_tensor, mapped.element_spec)  # pylint: disable=protected-access


def interleaved(inputs, in_turn: bool) -> tf.data.Dataset:
    """The elements of several inputs feeding one queue (a `*_join`'s entries, a QueueRunner's
    enqueue ops), each input's in its order; an input that ends drops out.

    Each input computes in a thread of its own and elements are taken as they are ready, as
    TF1's queue takes whichever thread enqueues first: one held input (a slow decode, a
    py_func waiting on I/O, a queue fed from Python) does not hold back the others, where
    taken in a fixed turn every input would wait for the slowest (4 Inception-style
    preprocessing threads read ~20% fewer images/s than TF1's on 2 cores). A pipeline that
    must give the same order every time (`build_context.repeatable_order`) takes the
    threads' elements in turn.

    in_turn: the inputs come straight from reads (`element_source.reads_only`); they are
    read in turn in the consumer's thread, since a thread per input costs a handoff per
    element that such reads do not repay (4 readers filling Inception's examples queue:
    ~25% fewer images/s).
    """
    if len(inputs) == 1:
        return inputs[0]
    if in_turn:
        return tf.data.Dataset.choose_from_datasets(
            inputs, tf.data.Dataset.range(len(inputs)).repeat(), stop_on_empty_dataset=False)
    nested = tf.data.Dataset.from_tensors(inputs[0])
    for dataset in inputs[1:]:
        nested = nested.concatenate(tf.data.Dataset.from_tensors(dataset))
    return nested.interleave(lambda dataset: dataset, cycle_length=len(inputs), block_length=1,
                             num_parallel_calls=len(inputs),
                             deterministic=build_context.repeatable_order_now())


# The reader datasets without tf.data's wrapping of their file names into a dataset and a
# flat_map with one reader per file (a traced function, and a dataset per file when run): the
# reader ops read a vector of file names in order themselves, with the same errors.
def tfrecords(filenames, compression_type) -> tf.data.Dataset:
    """`tf.data.TFRecordDataset(filenames, compression_type)`; filenames: a string tensor."""
    return _readers._TFRecordDataset(filenames, compression_type)  # pylint: disable=protected-access


def fixed_length_records(filenames, record_bytes, header_bytes, footer_bytes,
                         compression_type) -> tf.data.Dataset:
    """`tf.data.FixedLengthRecordDataset(...)` of the same arguments."""
    return _readers._FixedLengthRecordDataset(  # pylint: disable=protected-access
        filenames, record_bytes, header_bytes=header_bytes, footer_bytes=footer_bytes,
        compression_type=compression_type)
