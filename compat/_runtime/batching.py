"""TF1 batching: `tf.train.{,shuffle_}batch{,_join}` and their `maybe_` forms.

The public functions keep TF1's exact signatures and defaults and all call `_batch_stage`,
which validates like TF1 (same error types and messages, plus the fix) and compiles the
batching queue into the tf.data pipeline:

    inputs (lifted from earlier stages)  -> [unbatch if enqueue_many] -> [keep_input filter]
    -> [shuffle(capacity) for shuffle_*] -> batch / padded_batch (drop remainder unless
    allow_smaller_final_batch) -> prefetch

`*_join` builds one such input stream per list entry and interleaves them; entries reading
one stage share its elements, as TF1's enqueue threads do (see `plan`).
"""
from __future__ import annotations

import numpy as np
import tensorflow as tf

from compat._runtime import (arguments, batch_fusion, build_context, datasets, element_source,
                             fed_batches, plan, tf1_fallback, unit_maps, vectorize,
                             written_datasets)
from compat._runtime.graph_mode import require_graph_mode

# Elements the pipeline keeps ready ahead of the consumer, as a TF1 batching queue's runner
# thread keeps its queue filled.
_PREFETCH_BATCHES = 1
# Whole batches computed at once; two in flight keep both cores busy.
_PARALLEL_BATCHES = 2


def _as_tensor_list(tensors):
    if isinstance(tensors, dict):
        return [tensors[key] for key in sorted(tensors, key=str)]
    return tensors


def _as_tensor_list_list(tensors_list):
    if not tensors_list:
        raise ValueError("Expected at least one set of tensors")
    if isinstance(tensors_list[0], dict):
        expected_keys = set(tensors_list[0].keys())
        for tensors in tensors_list[1:]:
            if set(tensors.keys()) != expected_keys:
                raise ValueError("All dictionaries in tensors_list must have the same keys")
    return [_as_tensor_list(tensors) for tensors in tensors_list]


def _as_original_type(original_tensors, tensor_list):
    if isinstance(original_tensors, dict):
        if len(original_tensors) == 1:
            tensor_list = [tensor_list]
        return {key: tensor_list[i]
                for i, key in enumerate(sorted(original_tensors, key=str))}
    return tensor_list


def _convert(tensor_list, api):
    if not tensor_list:
        raise ValueError(f"Expected at least one tensor in {api}().")
    return [tensor if isinstance(tensor, (tf.SparseTensor, tf.IndexedSlices))
            else tf.convert_to_tensor(tensor) for tensor in tensor_list]


def _validate_keep_input(keep_input, enqueue_many):
    keep_input = tf.convert_to_tensor(keep_input)
    if keep_input.shape.ndims is None:
        raise ValueError("`keep_input` dimensions must be known at graph construction.")
    if not enqueue_many and keep_input.shape.ndims == 1:
        raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
    if keep_input.shape.ndims > 1:
        raise ValueError("`keep_input` must be 0 or 1 dimensions.")
    return keep_input


def _dtypes(tensor_list_list):
    all_types = [[tensor.dtype for tensor in tensor_list] for tensor_list in tensor_list_list]
    for other_types in all_types[1:]:
        if other_types != all_types[0]:
            raise TypeError("Expected types to be consistent: %s vs. %s." % (
                ", ".join(dtype.name for dtype in all_types[0]),
                ", ".join(dtype.name for dtype in other_types)))
    return all_types[0]


def _check_sparse_entries(tensor_list_list):
    """A join's entries must hold SparseTensors in the same places, of compatible ranks, as
    TF1 checks while storing them (`_store_sparse_tensors_join`)."""
    def sparse_rank(tensor):
        if not isinstance(tensor, tf.SparseTensor):
            return None
        return tf.compat.v1.Dimension(tensor.dense_shape.shape.with_rank(1)[0])

    # Each entry against the first one (TF1 merges the ranks it finds but keeps the first's).
    first = [sparse_rank(tensor) for tensor in tensor_list_list[0]]
    for tensor_list in tensor_list_list[1:]:
        for i, rank in enumerate(first):
            missing = i >= len(tensor_list)
            other = None if missing else sparse_rank(tensor_list[i])
            if missing or (rank is None) != (other is None) or (
                    rank is not None and not rank.is_compatible_with(other)):
                raise ValueError(
                    "Inconsistent SparseTensors list: %s vs. %s (tensor %d: every entry of "
                    "a *_join must give as many tensors, with a SparseTensor of the same rank "
                    "in the same places)" % (tensor_list_list[0], tensor_list, i))


def _element_shape(tensor, enqueue_many, shapes_given):
    """The shape of one element of `tensor`; None for a sparse tensor (TF1 stores those as
    handles: any shape goes). Given `shapes`, TF1 infers nothing: a tensor of unknown rank
    is then only checked against its given shape (by the enqueue)."""
    if isinstance(tensor, tf.SparseTensor):
        return None
    shape = tensor.shape
    if shape.ndims is None:
        if shapes_given:
            return tf.TensorShape(None)
        raise ValueError("Cannot infer Tensor's rank: %s" % tensor)
    return shape.with_rank_at_least(1)[1:] if enqueue_many else shape


def _shapes(tensor_list_list, shapes, enqueue_many, dynamic_pad):
    """Per-component element shapes, checked as TF1 checks them (entries must agree; the
    first entry's shape is kept)."""
    inferred = []
    for i in range(len(tensor_list_list[0])):
        first = None
        for tensor_list in tensor_list_list:
            shape = _element_shape(tensor_list[i], enqueue_many, shapes is not None)
            if shape is None:
                continue
            if first is None:
                first = shape
            else:
                # TF1 checks that the entries agree, and keeps the first entry's shape.
                first.merge_with(shape)
        inferred.append(first)
    if shapes is not None:
        if len(shapes) != len(inferred):
            raise ValueError(
                f"shapes has {len(shapes)} entries but there are {len(inferred)} tensors; "
                "give one shape per tensor (or leave shapes=None to infer them).")
        for i, (given, actual) in enumerate(zip(shapes, inferred)):
            if actual is not None and not tf.TensorShape(given).is_compatible_with(actual):
                raise ValueError(
                    f"Shapes {actual} and {tf.TensorShape(given)} are incompatible: tensor {i} "
                    f"does not have the shape given in `shapes` ({given}). Fix `shapes` or "
                    "the tensor.")
        inferred = [None if actual is None and not isinstance(given, (list, tuple))
                    else tf.TensorShape(given) for given, actual in zip(shapes, inferred)]
    for shape in inferred:
        if shape is None:
            continue
        if dynamic_pad:
            if shape.ndims is None:
                raise ValueError(
                    "Shapes must have known rank with dynamic_pad=True; got %s. Pass "
                    "`shapes` with a rank for every tensor." % shape)
        elif not shape.is_fully_defined():
            raise ValueError(
                "All shapes must be fully defined: %s. Call set_shape() on the inputs, pass "
                "`shapes`, or use dynamic_pad=True to pad to the batch maximum."
                % [str(s) for s in inferred if s is not None])
    return inferred


def _input_stream(tensor_list, keep_input, enqueue_many, shapes, api, consumer, threads=1):
    """Dataset of single input elements (a tuple per element) for one list of tensors.

    threads: TF1's enqueue threads for it, which compute that many elements at once."""
    keep_per_row = keep_input.shape.ndims == 1
    source = element_source.element_source((tuple(tensor_list), keep_input), api, consumer)
    if not keep_per_row and _is_constant_true(keep_input):
        # Nothing to filter: the values straight from the computation (each map costs a
        # traced function, its instantiation and a call per element).
        if not enqueue_many:
            if all(_shape_holds(value, shape) for value, shape in zip(tensor_list, shapes)):
                written = unit_maps.written(source, tensor_list, threads)
                if written is not None:
                    return written
            return source.computed(finish=lambda computed: _with_shapes(computed[0], shapes),
                                   parallelism=threads)
        dataset = source.computed(finish=lambda computed: computed[0], parallelism=threads)
    else:
        dataset = source.computed(parallelism=threads)
        if keep_per_row:
            dataset = dataset.flat_map(
                lambda values, keep: tf.data.Dataset.from_tensor_slices((values, keep)))
        dataset = dataset.filter(lambda values, keep: keep).map(lambda values, keep: values)
    if enqueue_many and not keep_per_row:
        dataset = datasets.unbatched(dataset)
    if _needs_shape_check(dataset.element_spec, shapes):
        dataset = dataset.map(lambda *values: _with_shapes(values, shapes))
    return dataset


def _with_shapes(values, shapes):
    """`values`, each checked against its shape in `shapes` where that says more."""
    return tuple(value if _shape_holds(value, shape) else tf.ensure_shape(value, shape)
                 for value, shape in zip(values, shapes))


def _shape_holds(value, shape) -> bool:
    """Whether `value` needs no check against `shape` (None: no shape given): its static
    shape is that shape, or it is sparse (left as it is)."""
    return shape is None or isinstance(value, tf.SparseTensor) or value.shape == shape


def _shuffle_buffer(capacity, min_after_dequeue):
    """The shuffle buffer of a shuffle_batch: what TF1's dequeue_many samples from.

    TF1's RandomShuffleQueue hands out a batch of n once it holds min_after_dequeue + n
    elements; capacity only bounds how far its runner threads read ahead (TF1's docs:
    min_after_dequeue sets the shuffle, capacity the prefetch). A buffer of
    min_after_dequeue + 1 has taken in exactly that many inputs at its n-th output, so a
    batch comes when TF1's would, for a size fixed or fed per run (a feeder that stops
    there is served, not left waiting), and the j-th output is still among the first
    j + capacity inputs.
    """
    if capacity < 0:  # unbounded (a shuffle_batch_join accepts it)
        return max(1, min_after_dequeue + 1)
    return max(1, min(capacity, min_after_dequeue + 1))


def _check_join_capacity(capacity, min_after_dequeue, api):
    """A shuffle_batch_join's capacity as TF1 takes it (unlike shuffle_batch, it does not
    compare capacity with min_after_dequeue): raises the ZeroDivisionError of TF1's
    fraction-of-full summary when they are equal; returns the message of the error TF1's
    queue op raises at the first run when a bounded capacity is below min_after_dequeue;
    else None (a negative capacity is unbounded)."""
    capacity, minimum = (arguments.known_number(value) for value in (capacity, min_after_dequeue))
    if capacity is None or minimum is None:
        return None
    fix = "pass a capacity above min_after_dequeue (or a negative one, unbounded)"
    if capacity == minimum:
        raise ZeroDivisionError(f"{api}: capacity {capacity} equals min_after_dequeue {minimum}: "
                                f"the queue's fraction-of-full summary divides by their "
                                f"difference; {fix}.")
    if 0 <= capacity < minimum:
        return (f"{api}: capacity {capacity} is below min_after_dequeue {minimum}: the queue "
                f"could never hold enough elements to dequeue; {fix}.")
    return None


def _static_batch_size(batch_size):
    """batch_size as a Python int where it is known at graph construction (an int or an
    int32 constant), else None (e.g. an int32 placeholder fed per run).

    TF1 hands batch_size to an int32 `dequeue_many` input: other dtypes are a TypeError."""
    if isinstance(batch_size, (tf.Tensor, tf.Variable)):
        if batch_size.dtype.base_dtype != tf.int32:
            raise TypeError(
                f"batch_size: TF1's dequeue takes an int32 batch size; got a tensor of dtype "
                f"{batch_size.dtype.name} ({batch_size!r}). Cast it: tf.cast(batch_size, "
                "tf.int32).")
        value = tf.get_static_value(batch_size)
        return None if value is None else int(value)
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
        raise TypeError(f"batch_size: expected an int32 value; got {batch_size!r} of type "
                        f"{type(batch_size).__name__}. Pass an int.")
    return int(batch_size)


def _is_constant_true(keep_input):
    value = tf.get_static_value(keep_input)
    return value is not None and bool(value)


def _needs_shape_check(element_spec, shapes):
    """Whether `shapes` says more than the lifted values' static shapes do."""
    return any(isinstance(spec, tf.TensorSpec) and shape is not None and spec.shape != shape
               for spec, shape in zip(element_spec, shapes))


def _deferred_spec(dtypes, element_shapes, batch_size, drop_remainder):
    """The spec of a batch stage whose pipeline is traced when its graph is first used (see
    `plan.register`): TF1's dequeue's, [batch_size] + shape (None for the batch dimension
    when a smaller final batch may come; a padded batch's shapes keep their unknown
    dimensions, which each batch's longest element sets). None (traced now) for sparse
    batches, whose spec the shim's batching decides."""
    if any(shape is None for shape in element_shapes):
        return None
    batch_dimension = tf.TensorShape([batch_size if drop_remainder else None])
    return tuple(tf.TensorSpec(batch_dimension.concatenate(shape), dtype)
                 for shape, dtype in zip(element_shapes, dtypes))


def _vectorized_batches(tensor_list, batch_size, drop_remainder, shuffled, shapes, api,
                        consumer):
    """Batches computed whole (see `vectorize`), or None to compute per element.

    Valid because nothing between the computation and the batch filters elements; the
    shuffle, if any, reorders raw elements instead of computed ones, which for a stateless
    computation is the same thing.
    """
    computation = element_source.lifted(tuple(tensor_list), api)
    if computation.stateful or not vectorize.all_exact_when_batched(computation.ops):
        return None  # decided before the upstream is built: a build not used costs its tracing
    source = element_source.element_source(tuple(tensor_list), api, consumer, fuse_units=False)
    if not source.dense:
        return None
    element_specs = tuple(tf.TensorSpec(shape, tensor.dtype)
                          for shape, tensor in zip(shapes, tensor_list))
    raw = batch_fusion.batched(shuffled(source.upstream), batch_size, drop_remainder)
    try:
        return raw.map(vectorize.batch_computation(source, element_specs),
                       num_parallel_calls=_PARALLEL_BATCHES, deterministic=True)
    except (ValueError, NotImplementedError, TypeError, AttributeError, AssertionError):
        # pfor could not convert an op exactly (its own errors come in these types): the
        # per-element computation is always right.
        return None


def _batch_stage(tensors, tensors_list, batch_size, keep_input, *, capacity, enqueue_many,
                 shapes, dynamic_pad, allow_smaller_final_batch, name, default_name,
                 num_threads=1, shuffle=None):
    """One batching queue, compiled. `shuffle` is (min_after_dequeue, seed) or None."""
    require_graph_mode(default_name, ValueError)
    original = tensors if tensors is not None else tensors_list[0]
    tensor_list_list = ([_as_tensor_list(tensors)] if tensors is not None
                        else _as_tensor_list_list(tensors_list))
    flat_inputs = [t for tensor_list in tensor_list_list for t in tensor_list]
    with tf.compat.v1.name_scope(name, default_name, flat_inputs + [keep_input]) as scope:
        if shuffle is not None and tensors is not None and capacity <= shuffle[0]:
            raise ValueError("capacity %d must be bigger than min_after_dequeue %d."
                             % (capacity, shuffle[0]))
        tensor_list_list = [_convert(tensor_list, default_name) for tensor_list in tensor_list_list]
        keep_input = _validate_keep_input(keep_input, enqueue_many)
        _check_sparse_entries(tensor_list_list)
        dtypes = _dtypes(tensor_list_list)
        element_shapes = _shapes(tensor_list_list, shapes, enqueue_many, dynamic_pad)
        # TF1 checks these while building its queue, its enqueue ops and its dequeue.
        arguments.require_num_threads(num_threads, default_name)
        if shuffle is None:  # a shuffle queue's summary divides by capacity-min_after_dequeue
            arguments.require_capacity(capacity, default_name, ZeroDivisionError)
        rejected_capacity = (None if shuffle is None or tensors is not None
                             else _check_join_capacity(capacity, shuffle[0], default_name))
        arguments.require_batch_size(batch_size, default_name)
        static_batch_size = _static_batch_size(batch_size)
        # TF1's RandomShuffleQueue draws its seed here; draw it at the same point.
        shuffle_seed = build_context.op_seeds(shuffle[1]) if shuffle is not None else None

        drop_remainder = not allow_smaller_final_batch
        vectorizable = (len(tensor_list_list) == 1 and not enqueue_many and not dynamic_pad
                        and _is_constant_true(keep_input)
                        and not any(isinstance(t, tf.SparseTensor) for t in flat_inputs))

        def shuffled(dataset):
            if shuffle_seed is None:
                return dataset
            rejected = (arguments.negative_min_after_dequeue(shuffle[0], default_name)
                        or rejected_capacity)
            if rejected is not None:  # TF1's queue op rejects it on the first run
                return arguments.fails_when_run(dataset, rejected)
            deterministic = shuffle_seed != (0, 0)
            # Seeded: the same order in every new pipeline, as in every new Session.
            return dataset.shuffle(_shuffle_buffer(capacity, shuffle[0]),
                                   seed=shuffle_seed[1] if deterministic else None,
                                   reshuffle_each_iteration=not deterministic)

        # One TF1 enqueue op per entry: entries reading one stage share its elements.
        consumers = [(scope, index) for index in range(len(tensor_list_list))]
        for tensor_list, consumer in zip(tensor_list_list, consumers):
            element_source.add_consumers((tuple(tensor_list), keep_input), default_name, consumer)

        def elements():
            in_turn = all(element_source.reads_only((tuple(tensor_list), keep_input),
                                                    default_name)
                          for tensor_list in tensor_list_list)
            return shuffled(datasets.interleaved([
                _input_stream(tensor_list, keep_input, enqueue_many, element_shapes,
                              default_name, consumer, num_threads)
                for tensor_list, consumer in zip(tensor_list_list, consumers)], in_turn))

        def batch_of(dataset, size):
            if dynamic_pad:
                padded = tuple(shape if shape is not None else tf.TensorShape(None)
                               for shape in element_shapes)
                return dataset.padded_batch(size, padded_shapes=padded,
                                            drop_remainder=drop_remainder)
            return batch_fusion.batched(dataset, size, drop_remainder)

        def computed_ahead(dataset):
            # TF1's runner threads fill the batch queue up to `capacity` between runs; a
            # shuffling queue's buffer already holds what TF1's holds.
            return (dataset if shuffle is not None
                    else written_datasets.prefetched(dataset, capacity))

        def batches():
            dataset = None
            if vectorizable:
                dataset = _vectorized_batches(tensor_list_list[0], static_batch_size,
                                              drop_remainder, shuffled, element_shapes,
                                              default_name, consumers[0])
            if dataset is None:
                dataset = batch_of(elements(), static_batch_size)
            return written_datasets.prefetched(dataset, _PREFETCH_BATCHES)

        if static_batch_size is None:
            dequeued = fed_batches.batches_of_fed_size(
                lambda: computed_ahead(elements()), batch_of, batch_size, scope.rstrip("/"),
                element_shapes=element_shapes, dynamic_pad=dynamic_pad,
                drop_remainder=drop_remainder)
        else:
            graph = tf.compat.v1.get_default_graph()
            dequeued = plan.register(
                batches, scope, element_spec=_deferred_spec(
                    dtypes, element_shapes, static_batch_size, drop_remainder),
                blocking=not plan.may_wait_on_runs(graph))
        dequeued = list(dequeued)
    if len(dequeued) == 1:
        dequeued = dequeued[0]  # a one-component TF1 queue dequeues a bare tensor
    return _as_original_type(original, dequeued)


@tf1_fallback.when_not_compilable(lambda a: a["tensors"])
def batch(tensors, batch_size, num_threads=1, capacity=32,
          enqueue_many=False, shapes=None, dynamic_pad=False,
          allow_smaller_final_batch=False, shared_name=None, name=None):
    del shared_name  # no queue resource to share between sessions
    return _batch_stage(tensors, None, batch_size, True, capacity=capacity,
                        enqueue_many=enqueue_many, shapes=shapes, dynamic_pad=dynamic_pad,
                        allow_smaller_final_batch=allow_smaller_final_batch, name=name,
                        default_name="batch", num_threads=num_threads)


@tf1_fallback.when_not_compilable(lambda a: (a["tensors"], a["keep_input"]))
def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32,
                enqueue_many=False, shapes=None, dynamic_pad=False,
                allow_smaller_final_batch=False, shared_name=None, name=None):
    del shared_name
    return _batch_stage(tensors, None, batch_size, keep_input, capacity=capacity,
                        enqueue_many=enqueue_many, shapes=shapes, dynamic_pad=dynamic_pad,
                        allow_smaller_final_batch=allow_smaller_final_batch, name=name,
                        default_name="batch", num_threads=num_threads)


@tf1_fallback.when_not_compilable(lambda a: a["tensors_list"])
def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False,
               shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
               shared_name=None, name=None):
    del shared_name
    return _batch_stage(None, tensors_list, batch_size, True, capacity=capacity,
                        enqueue_many=enqueue_many, shapes=shapes, dynamic_pad=dynamic_pad,
                        allow_smaller_final_batch=allow_smaller_final_batch, name=name,
                        default_name="batch_join")


@tf1_fallback.when_not_compilable(lambda a: (a["tensors_list"], a["keep_input"]))
def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32,
                     enqueue_many=False, shapes=None, dynamic_pad=False,
                     allow_smaller_final_batch=False, shared_name=None,
                     name=None):
    del shared_name
    return _batch_stage(None, tensors_list, batch_size, keep_input, capacity=capacity,
                        enqueue_many=enqueue_many, shapes=shapes, dynamic_pad=dynamic_pad,
                        allow_smaller_final_batch=allow_smaller_final_batch, name=name,
                        default_name="batch_join")


@tf1_fallback.when_not_compilable(lambda a: a["tensors"])
def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue,
                  num_threads=1, seed=None, enqueue_many=False, shapes=None,
                  allow_smaller_final_batch=False, shared_name=None, name=None):
    del shared_name
    return _batch_stage(tensors, None, batch_size, True, capacity=capacity,
                        enqueue_many=enqueue_many, shapes=shapes, dynamic_pad=False,
                        allow_smaller_final_batch=allow_smaller_final_batch, name=name,
                        default_name="shuffle_batch", num_threads=num_threads,
                        shuffle=(min_after_dequeue, seed))


@tf1_fallback.when_not_compilable(lambda a: (a["tensors"], a["keep_input"]))
def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue,
                        keep_input, num_threads=1, seed=None,
                        enqueue_many=False, shapes=None,
                        allow_smaller_final_batch=False, shared_name=None,
                        name=None):
    del shared_name
    return _batch_stage(tensors, None, batch_size, keep_input, capacity=capacity,
                        enqueue_many=enqueue_many, shapes=shapes, dynamic_pad=False,
                        allow_smaller_final_batch=allow_smaller_final_batch, name=name,
                        default_name="shuffle_batch", num_threads=num_threads,
                        shuffle=(min_after_dequeue, seed))


@tf1_fallback.when_not_compilable(lambda a: a["tensors_list"])
def shuffle_batch_join(tensors_list, batch_size, capacity,
                       min_after_dequeue, seed=None, enqueue_many=False,
                       shapes=None, allow_smaller_final_batch=False,
                       shared_name=None, name=None):
    del shared_name
    return _batch_stage(None, tensors_list, batch_size, True, capacity=capacity,
                        enqueue_many=enqueue_many, shapes=shapes, dynamic_pad=False,
                        allow_smaller_final_batch=allow_smaller_final_batch, name=name,
                        default_name="shuffle_batch_join", shuffle=(min_after_dequeue, seed))


@tf1_fallback.when_not_compilable(lambda a: (a["tensors_list"], a["keep_input"]))
def maybe_shuffle_batch_join(tensors_list, batch_size, capacity,
                             min_after_dequeue, keep_input, seed=None,
                             enqueue_many=False, shapes=None,
                             allow_smaller_final_batch=False, shared_name=None,
                             name=None):
    del shared_name
    return _batch_stage(None, tensors_list, batch_size, keep_input, capacity=capacity,
                        enqueue_many=enqueue_many, shapes=shapes, dynamic_pad=False,
                        allow_smaller_final_batch=allow_smaller_final_batch, name=name,
                        default_name="shuffle_batch_join", shuffle=(min_after_dequeue, seed))
