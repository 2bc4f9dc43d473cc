"""The iterator ops through which user code reads a stage (see `plan`)."""
from __future__ import annotations

import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2
from tensorflow.python.data.ops import iterator_ops as _iterator_ops
from tensorflow.python.data.util import structure as _structure
from tensorflow.python.ops import gen_dataset_ops

from compat._runtime import build_context, dataset_factories, written_datasets


_UNBUILT = ("compat.v1: this pipeline was not built before its graph ran (a graph run in a "
            "way compat.v1 does not see; please report it)")
_REFUSED = ("compat.v1: these tensors are consumed by another pipeline stage (a batch, a "
            "queue or a reader built on them), which takes their elements; fetching them "
            "directly too would see copies of those elements (TF1 would split them between "
            "the two). Fetch the consumer's output instead, or give the direct fetch its own "
            "stage (e.g. a second tf.train.batch on the same tensors: the two then share the "
            "elements as in TF1).")


def refuse_direct_fetches(iterator_op) -> None:
    """Make a stage's own iterator fail, naming the rule, when its tensors are fetched (see
    `plan`: a stage consumed by one other stage gives that stage its elements)."""
    factory = dataset_factories.failing(iterator_op.graph, _REFUSED)
    iterator_op._set_attr("dataset_factory", attr_value_pb2.AttrValue(  # pylint: disable=protected-access
        func=attr_value_pb2.NameAttrList(name=factory.name)))


def _iterator(dataset_factory, element_spec, name=None):
    """A one-shot iterator of `element_spec` that runs `dataset_factory` (a function, or the
    attribute naming one)."""
    legacy = lambda method: tf.nest.map_structure(  # noqa: E731
        lambda spec: getattr(spec, method)(), element_spec)
    if isinstance(dataset_factory, attr_value_pb2.AttrValue):
        dataset_factory = dataset_factory.func
    handle = gen_dataset_ops.one_shot_iterator(
        dataset_factory=dataset_factory,
        output_types=_structure.get_flat_tensor_types(element_spec),
        output_shapes=_structure.get_flat_tensor_shapes(element_spec), name=name)
    return _iterator_ops.Iterator(handle, None, legacy("_to_legacy_output_types"),
                                  legacy("_to_legacy_output_shapes"),
                                  legacy("_to_legacy_output_classes"))


def one_shot_iterator(dataset):
    """`make_one_shot_iterator(dataset)`, with its factory made in C (see
    `dataset_factories`)."""
    with tf.compat.v1.colocate_with(dataset._variant_tensor):  # pylint: disable=protected-access
        return _iterator(dataset_factories.of_dataset(dataset), dataset.element_spec)


def unbuilt_iterator(graph, element_spec, name=None):
    """A one-shot iterator of `element_spec` whose dataset is set when the stage is built
    (`plan.build_pending`); its stand-in factory fails, naming the cause, if the graph ever
    runs without it."""
    return _iterator(dataset_factories.failing(graph, _UNBUILT), element_spec, name=name)


def next_of(iterator, name, blocking):
    """The iterator's next element. `blocking`: with IteratorGetNextSync, which waits on the
    Session's thread instead of handing over to another thread and back (TF's get_next):
    ~40 us less per run, which a pipeline that runs once per step (PTB) feels. Only for a
    pipeline that cannot wait for another Session run: with all of the Session's threads
    waiting, a fed queue's enqueue could never run."""
    if not blocking:
        return iterator.get_next(name=name)
    resource = iterator._iterator_resource  # pylint: disable=protected-access
    spec = iterator.element_spec
    flat = gen_dataset_ops.iterator_get_next_sync(
        resource, output_types=_structure.get_flat_tensor_types(spec),
        output_shapes=_structure.get_flat_tensor_shapes(spec), name=name)
    return _structure.from_compatible_tensor_list(spec, flat)


def with_pipeline_options(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """The dataset with the options of every pipeline the shim iterates: none of tf.data's
    static rewrites, and no autotuning.

    The rewrites' pass serializes the whole pipeline and runs grappler over it when the
    iterator is made, 5-10 ms before the first batch. What the rewrites that pay would make is built
    directly: map/batch fusion and parallel batch copies (`batch_fusion`), no identity maps
    (`datasets.unless_identity`; 4 of them cost Inception's input ~12%), and the shim sets its
    maps' parallel calls itself. The injected prefetch would also fail: its pass over a
    pipeline's functions takes the shim's functions of one device (see `build_context`).

    The shim sets every buffer and parallelism itself, so autotuning has nothing to tune,
    but its model still timed and sized every element at every stage (~5% of a CSV
    pipeline's CPU in `perf`): without it, CSV read ~1.15x, CIFAR-style augmentation
    ~1.2x and small shards ~1.1x the lines or images per second (medians of 5-10 paired
    fresh processes, 2026-11-28).

    And, where the pipeline computes floats whose last bits depend on it
    (`build_context.threads_as_tf1`), the intra-op parallelism TF1's Session gives an op
    (`tf1_threading`); elsewhere tf.data's one thread per op, which is faster: small ops
    computed on several threads at once, in 4 parallel calls on 2 cores, read CIFAR-style
    images at ~0.6x the speed.
    """
    options = tf.data.Options()
    if build_context.threads_as_tf1_now():
        tf1_threading(options)
    options.experimental_optimization.apply_default_optimizations = False
    options.experimental_optimization.inject_prefetch = False
    options.autotune.enabled = False
    return written_datasets.with_options(dataset, options)


def tf1_threading(options: tf.data.Options) -> tf.data.Options:
    """`options`, with ops in the pipeline's functions free to use the device's intra-op
    threads as TF1's Session lets them: with tf.data's default of one thread, Eigen adds a
    large float tensor (a 299x299 image's mean) in one block where TF1's Session adds it in
    several, and the last bit differs."""
    options.threading.max_intra_op_parallelism = 0
    return options


def per_run_options() -> tf.data.Options:
    """Options for a small dataset made into an iterator at every run: no static rewrites
    and no autotuning, whose passes over the dataset cost milliseconds per iterator."""
    options = tf.data.Options()
    options.experimental_optimization.apply_default_optimizations = False
    options.experimental_optimization.inject_prefetch = False
    options.autotune.enabled = False
    return options


def on_demand_options() -> tf.data.Options:
    """Options for a pipeline that takes elements exactly when asked: a prefetched element
    would be stranded when its consumer stops, and missing from the queue's other consumers."""
    options = tf.data.Options()
    options.experimental_optimization.inject_prefetch = False
    # A fused map-and-batch computes batches ahead, pulling elements before they are asked for.
    options.experimental_optimization.map_and_batch_fusion = False
    options.autotune.enabled = False
    return options


def get_next_op_of(flat_tensors) -> tf.Operation:
    """The IteratorGetNext op behind a get_next() result (sparse parts sit one op further)."""
    for tensor in flat_tensors:
        op = tensor.op
        while op.type not in ("IteratorGetNext", "IteratorGetNextSync"):
            if not op.inputs:
                break
            op = op.inputs[0].op
        if op.type in ("IteratorGetNext", "IteratorGetNextSync"):
            return op
    raise AssertionError("get_next() produced no IteratorGetNext op")
