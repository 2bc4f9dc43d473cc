"""Batches whose size is fed on each run: TF1's `dequeue_many(batch_size)` on a tensor.

A tf.data pipeline fixes its batch size when it is built. A batch call given a tensor for
`batch_size` (e.g. a placeholder fed on every step) reads its elements from a shared stream
(`plan.shared_stream`), and each run of the batch, holding a mutex:

1. tops up a staging queue from the stream, in a loop of the run's own graph, until it holds
   `batch_size` elements, or closes it once the stream has ended;
2. dequeues the batch from it as TF1's batch does: `dequeue_many`, or `dequeue_up_to` when
   smaller final batches are allowed, from a FIFOQueue (a PaddingFIFOQueue for
   `dynamic_pad`).

The stream is made by a queue runner the batch adds (`stream_starts`), which holds the
mutex until it is made, so that no run of the batch prepares the stream's functions.

So TF1's queue kernels give the answers: an empty batch for a size of 0, InvalidArgumentError
for a negative size, OutOfRangeError when fewer elements are left than asked, which stay for
a smaller size later (or come as a smaller batch, when allowed). The mutex makes runs from
several threads take whole batches in turn, and none waits for elements another run took.
The stream computes elements ahead (`batching`), as TF1's runner threads fill its batch queue.

Elements a queue cannot hold (sparse components, shapes TF1 only batches padded) take the
per-run path (`_per_run_batch`): each run makes a small dataset into an iterator that pulls
its elements. There a size of 0 or less is refused and the elements of a batch that cannot
be filled are not kept.
"""
from __future__ import annotations

import contextlib
from typing import Callable

import tensorflow as tf
from tensorflow.python.data.util import structure as _structure
from tensorflow.python.ops import data_flow_ops, gen_dataset_ops, gen_optional_ops
from tensorflow.python.ops import gen_resource_variable_ops

from compat._runtime import build_context, plan, stage_iterators, stream_starts, top_up_loop


def batches_of_fed_size(elements: Callable[[], tf.data.Dataset], batch_of: Callable,
                        batch_size: tf.Tensor, name: str, *, element_shapes,
                        dynamic_pad: bool, drop_remainder: bool):
    """One batch per run of `batch_size` elements, the size read when the batch is taken.

    elements: the stream (tuples of components); batch_of(dataset, size): its batches, for
    the per-run path; element_shapes: each component's shape as TF1's batch queue declares
    it (None: a sparse component). Returns the batch's components."""
    owner = plan.shared_stream(elements, name)
    specs = tf.nest.flatten(owner.element_spec)
    stageable = all(type(spec) is tf.TensorSpec for spec in specs) and all(  # pylint: disable=unidiomatic-typecheck
        shape is not None and (dynamic_pad or tf.TensorShape(shape).is_fully_defined())
        for shape in element_shapes)
    if not stageable:
        return _per_run_batch(owner, batch_of, batch_size, name)
    return _staged_batch(owner, batch_size, [tf.TensorShape(shape) for shape in element_shapes],
                         dynamic_pad, drop_remainder, name)


@contextlib.contextmanager
def _own_ops(graph):
    """The shim's own ops in the user's graph: TF1's op-seed counter untouched, and v1 loops
    and conds under either TF behaviour (see `build_context.shim_control_flow`)."""
    with graph.as_default(), build_context.seed_counter_preserved(graph), \
            build_context.without_autograph(), build_context.shim_control_flow(v2=False):
        yield


def _staged_batch(owner, batch_size, shapes, dynamic_pad, drop_remainder, name):
    graph = tf.compat.v1.get_default_graph()
    attrs = plan.iterator_attrs(owner)
    types, stream_shapes = attrs["output_types"], attrs["output_shapes"]
    with _own_ops(graph):
        write_loop = top_up_loop.writable(graph)
        queue_type = data_flow_ops.PaddingFIFOQueue if dynamic_pad else data_flow_ops.FIFOQueue
        # Unbounded: a size above TF1's capacity is served too (TF1's dequeue_many waits
        # for its runners to enqueue the rest).
        queue = queue_type(-1, types, shapes,
                           name="padding_fifo_queue" if dynamic_pad else "fifo_queue")
        mutex = gen_resource_variable_ops.mutex_v2(name="mutex")
        size = tf.convert_to_tensor(batch_size)
        if stream_starts.applies(graph):
            stream = gen_dataset_ops.iterator_v2(**attrs)
            stream_starts.read_when_started(stream.op, owner.init_op, queue, mutex, name)
        else:
            with tf.control_dependencies([owner.init_op]):
                stream = gen_dataset_ops.iterator_v2(**attrs)
        # Locked once the size and the stream are there: a run waiting for its feed or for
        # the stream's creation holds no lock.
        with tf.control_dependencies([size.op, stream.op]):
            lock = gen_resource_variable_ops.mutex_lock(mutex)
        with tf.control_dependencies([lock]):
            missing = tf.cast(size, tf.int32) - queue.size()

            def more(taken, ended):
                return tf.logical_and(taken < missing, tf.logical_not(ended))

            def pull(taken, ended):
                del ended
                next_element = gen_dataset_ops.iterator_get_next_as_optional(
                    stream, output_types=types, output_shapes=stream_shapes)

                def enqueue():
                    values = gen_optional_ops.optional_get_value(
                        next_element, output_types=types, output_shapes=stream_shapes)
                    with tf.control_dependencies([queue.enqueue(values)]):
                        return tf.constant(False)

                def close():
                    with tf.control_dependencies([queue.close()]):
                        return tf.constant(True)

                return taken + 1, tf.cond(gen_optional_ops.optional_has_value(next_element),
                                          enqueue, close)

            initial = [tf.constant(0), queue.is_closed()]
            if write_loop:
                topped_up = top_up_loop.written(
                    initial_taken=initial[0], closed=initial[1], missing=missing,
                    stream=stream, lock=lock, queue=queue.queue_ref,
                    queue_scope=queue._name, types=types, shapes=stream_shapes)  # pylint: disable=protected-access
            else:
                topped_up = tf.while_loop(more, pull, initial, parallel_iterations=1,
                                          name="top_up")
            with tf.control_dependencies(topped_up):
                take = queue.dequeue_many if drop_remainder else queue.dequeue_up_to
                batch = take(batch_size, name="dequeue")
        batch = list(batch) if isinstance(batch, (list, tuple)) else [batch]
        with tf.control_dependencies(batch):
            released = gen_resource_variable_ops.consume_mutex_lock(lock)
        with tf.control_dependencies([released]), tf.compat.v1.name_scope(None):
            # One op named as TF1's dequeue (the batch's name scope, as a name): the
            # components are `name:0`, `name:1`, ...
            return tuple(tf.identity_n(batch, name=name + "/"))


def _per_run_batch(owner, batch_of, batch_size, name):
    graph = tf.compat.v1.get_default_graph()
    with tf.compat.v1.name_scope(None):
        with build_context.building(graph):
            size = tf.cast(batch_size, tf.int64)
            dataset = batch_of(plan.pulled(owner).take(size), size).with_options(
                stage_iterators.per_run_options())
        types = _structure.get_flat_tensor_types(dataset.element_spec)
        shapes = _structure.get_flat_tensor_shapes(dataset.element_spec)
        with tf.control_dependencies([owner.init_op]):
            handle = gen_dataset_ops.anonymous_iterator_v3(output_types=types,
                                                           output_shapes=shapes)
            made = gen_dataset_ops.make_iterator(dataset._variant_tensor, handle)  # pylint: disable=protected-access
        with tf.control_dependencies([made]):
            flat = gen_dataset_ops.iterator_get_next(handle, output_types=types,
                                                     output_shapes=shapes, name=name)
    return _structure.from_tensor_list(dataset.element_spec, flat)
