"""Batching a pipeline's elements in the form tf.data's static rewrites would give it.

tf.data rewrites a pipeline when its iterator is made: a map directly followed by a batch
becomes one map-and-batch (each element computed straight into its batch, no hand-over
between the two), and a batch copies its elements in parallel. Those rewrites run grappler
over the whole serialized pipeline, which delays the first batch by 5-10 ms (MNIST, JPEG
folder, CIFAR benchmarks); the shim knows where its batches are, so it builds them that way
directly and turns the rewrite pass off (`stage_iterators.with_pipeline_options`; the
identity maps that pass also removed are not built, see `datasets.unless_identity`).

The ops are those the rewrites would put there, with the same inputs and attributes, so
the elements and their order are the same. A batch of a size known at graph construction,
over anything but a map tf.data traced, is written (`written_datasets`).
"""
from __future__ import annotations

import tensorflow as tf
from tensorflow.python.data.ops import dataset_ops as _dataset_ops
from tensorflow.python.data.ops import map_op as _map_op
from tensorflow.python.framework import tensor_util as _tensor_util
from tensorflow.python.ops import gen_dataset_ops
from tensorflow.python.ops import gen_experimental_dataset_ops

from compat._runtime import pull_maps, written_datasets


def batched(dataset: tf.data.Dataset, batch_size, drop_remainder) -> tf.data.Dataset:
    """`dataset.batch(batch_size, drop_remainder)`, fused with the map it follows, if any."""
    written = _written_batch(dataset, batch_size, drop_remainder)
    if written is not None:
        return written
    if type(dataset) in (_map_op._MapDataset, _map_op._ParallelMapDataset,  # pylint: disable=protected-access
                         pull_maps.WrittenMapDataset):
        return _MapAndBatchDataset(dataset, batch_size, drop_remainder)
    return _ParallelCopyBatchDataset(dataset, batch_size, drop_remainder)


def _written_batch(dataset, batch_size, drop_remainder):
    """`batched`'s dataset written (see `written_datasets`): for a batch size and
    drop_remainder given as Python values, over a written map or any dataset but a traced
    map; else None."""
    if (isinstance(batch_size, bool) or not isinstance(batch_size, int)
            or not isinstance(drop_remainder, bool)
            or type(dataset) in (_map_op._MapDataset, _map_op._ParallelMapDataset)  # pylint: disable=protected-access
            or not written_datasets.can_write()):
        return None
    arguments = [written_datasets.constant(batch_size, tf.int64, "batch_size")]
    if type(dataset) is pull_maps.WrittenMapDataset:  # pylint: disable=unidiomatic-typecheck
        map_func = dataset._map_func  # pylint: disable=protected-access
        upstream, op, functions = dataset._input_dataset, "MapAndBatchDataset", [map_func]  # pylint: disable=protected-access
        element_spec = map_func.output_structure
        attrs = dict(f=written_datasets.function_attr(map_func.function),
                     Targuments=written_datasets.no_arguments(),
                     preserve_cardinality=written_datasets.flag(dataset._preserve_cardinality))  # pylint: disable=protected-access
        arguments.append(written_datasets.constant(dataset.parallel_calls or 1, tf.int64,
                                                   "num_parallel_calls"))
    else:
        upstream, op, functions = dataset, "BatchDatasetV2", []
        element_spec = dataset.element_spec
        attrs = dict(parallel_copy=written_datasets.flag(True))
    arguments.append(written_datasets.constant(drop_remainder, tf.bool, "drop_remainder"))
    size = batch_size if drop_remainder else None
    element_spec = tf.nest.map_structure(lambda spec: spec._batch(size), element_spec)  # pylint: disable=protected-access
    attrs.update(written_datasets.structure_attrs(element_spec))
    node = written_datasets.Node(op, [written_datasets.variant_input(upstream)] + arguments,
                                 attrs)
    return written_datasets.WrittenDataset(node, element_spec, [upstream], functions)


def _batched_spec(element_spec, batch_size, drop_remainder):
    size = (_tensor_util.constant_value(batch_size)
            if _tensor_util.constant_value(drop_remainder) else None)
    return tf.nest.map_structure(lambda spec: spec._batch(size), element_spec)  # pylint: disable=protected-access


def _batch_arguments(batch_size, drop_remainder):
    return (tf.convert_to_tensor(batch_size, tf.int64, name="batch_size"),
            tf.convert_to_tensor(drop_remainder, tf.bool, name="drop_remainder"))


class _ParallelCopyBatchDataset(_dataset_ops.UnaryDataset):
    """`Dataset.batch` whose elements are copied into the batch in parallel (what tf.data's
    `parallel_batch` rewrite makes of it)."""

    def __init__(self, input_dataset, batch_size, drop_remainder):
        self._input_dataset, self._name = input_dataset, None
        batch_size, drop_remainder = _batch_arguments(batch_size, drop_remainder)
        self._structure = _batched_spec(input_dataset.element_spec, batch_size, drop_remainder)
        variant_tensor = gen_dataset_ops.batch_dataset_v2(
            input_dataset._variant_tensor, batch_size=batch_size,  # pylint: disable=protected-access
            drop_remainder=drop_remainder, parallel_copy=True, **self._common_args)
        super().__init__(input_dataset, variant_tensor)

    @property
    def element_spec(self):
        return self._structure


class _MapAndBatchDataset(_dataset_ops.UnaryDataset):
    """A map followed by a batch, as one op (what tf.data's `map_and_batch_fusion` rewrite
    makes of them): the map's traced function, its calls at once (1 for a sequential
    map) and its cardinality rule."""

    def __init__(self, map_dataset, batch_size, drop_remainder):
        input_dataset = map_dataset._input_dataset  # pylint: disable=protected-access
        self._input_dataset, self._name = input_dataset, None
        self._map_func = map_dataset._map_func  # pylint: disable=protected-access
        batch_size, drop_remainder = _batch_arguments(batch_size, drop_remainder)
        calls = getattr(map_dataset, "_num_parallel_calls", 1)
        self._structure = _batched_spec(self._map_func.output_structure, batch_size,
                                        drop_remainder)
        variant_tensor = gen_experimental_dataset_ops.map_and_batch_dataset(
            input_dataset._variant_tensor,  # pylint: disable=protected-access
            self._map_func.function.captured_inputs, f=self._map_func.function,
            batch_size=batch_size,
            num_parallel_calls=tf.convert_to_tensor(calls, tf.int64, name="num_parallel_calls"),
            drop_remainder=drop_remainder,
            preserve_cardinality=map_dataset._preserve_cardinality,  # pylint: disable=protected-access
            **self._common_args)
        super().__init__(input_dataset, variant_tensor)

    def _functions(self):
        return [self._map_func]

    @property
    def element_spec(self):
        return self._structure
