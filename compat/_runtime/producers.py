"""TF1 producers (`tf.train.*_input_producer`, `limit_epochs`, `match_filenames_once`).

Same signatures, defaults and errors as TF1's `input.py`. The queue a producer returns is a
`StageQueue` whose elements are, epoch after epoch, the input computed afresh (or once, where
every epoch would compute the same rows: `_evaluated`) and shuffled by a `RandomShuffle`
kernel that lives for the whole run: the kernel TF1 runs once per epoch, with the seed pair
TF1 derives at the same point of graph construction. So seeded producers give TF1's order
bit for bit.
"""
from __future__ import annotations

import dataclasses

import tensorflow as tf
from tensorflow.python.framework import tensor_util

from compat._runtime import (arguments, build_context, datasets, element_source, epoch_maps,
                             plan, tf1_fallback, written_datasets)
from compat._runtime.graph_mode import require_graph_mode
from compat._runtime.stage_queue import StageQueue


def match_filenames_once(pattern, name=None):
    # TF1 caches the glob in a local variable; a tensor needs no initializer and, for files
    # that do not change during the run, gives the same sorted list.
    with tf.compat.v1.name_scope(name, "matching_filenames", [pattern]) as scope:
        return tf.io.matching_files(pattern, name=scope.rstrip("/") if scope else None)


@tf1_fallback.when_not_compilable(lambda a: a["tensor"])
def limit_epochs(tensor, num_epochs=None, name=None):
    if num_epochs is None:
        return tensor
    arguments.require_num_epochs(num_epochs, "limit_epochs")
    with tf.compat.v1.name_scope(name, "limit_epochs", [tensor]) as scope:
        tensor = tf.convert_to_tensor(tensor)
        elements = element_source.element_dataset(tensor, "limit_epochs", consumer=scope)
        return plan.register(lambda: elements.take(num_epochs), scope.rstrip("/"))


# Ops of an input that is the same in every epoch and can be copied into the pipeline as is.
_CONSTANT_OPS = frozenset({"Const", "Identity", "Range"})


def _is_constant(input_tensor) -> bool:
    """Whether the input is computed from constants alone (a list of file names, a range of
    a constant), with no control dependency: then the same rows every epoch, nothing to
    compute per epoch. Not an empty one: repeating an empty epoch would spin without end,
    deaf to run timeouts, where TF1's dequeue waits (the per-epoch map lets it time out)."""
    if not input_tensor.shape.num_elements():
        return False
    computation = element_source.lifted(input_tensor, "input_producer")
    return not computation.sources and all(
        op.type in _CONSTANT_OPS and not op.control_inputs for op in computation.ops)


# Largest value of constants computed once at the first run (bytes): it becomes a constant
# of the pipeline's functions, which the Session's grappler copies at every fetch it reaches.
_LARGEST_EVALUATED = 1 << 18
# Ops whose results are not the graph's to fix (the file system's, a feed's): left to run
# each epoch.
_NOT_CONSTANT = frozenset({"MatchingFiles", "ReadFile", "PlaceholderWithDefault"})


# Ops TF's constant evaluation answers from the graph's static shapes, not by running their
# input: a shape declared by `set_shape` is taken at its word, where the Session measures.
_SHAPE_OPS = frozenset({"Shape", "ShapeN", "Size", "Rank"})


def _exact(op) -> bool:
    """Whether `op`'s results are the same wherever its kernel runs: no state, no file
    system or feed, no floating-point arithmetic (which the Session's grappler may rewrite),
    and, for a shape, a constant's."""
    if op.type in ("Const", "Identity"):
        return True
    if op.type in _SHAPE_OPS and any(tensor.op.type != "Const" for tensor in op.inputs):
        return False
    return (not op.op_def.is_stateful and op.type not in _NOT_CONSTANT
            and not any(out.dtype.is_floating or out.dtype.is_complex for out in op.outputs))


def _evaluated(input_tensor, element_shape):
    """The input's value, where it is computed from constants alone by exact ops, every
    assert on the way holds and its data can be computed (TF1 would compute the same rows
    every epoch, and fail never), and its rows have `element_shape` (TF1's enqueue checks
    them): a PTB producer's `range(epoch_size)`, a `slice_input_producer`'s
    `range(shape(x)[0])`. None otherwise, or where empty (see `_is_constant`) or larger than
    `_LARGEST_EVALUATED`. Computing it costs what TF1 pays every epoch."""
    if _larger_than_evaluated(input_tensor.shape.num_elements(), input_tensor.dtype):
        return None
    computation = element_source.lifted(input_tensor, "input_producer")
    if computation.sources or not all(op.type == "Assert" or _exact(op)
                                      for op in computation.ops):
        return None
    for op in computation.ops:
        if op.type == "Assert":
            # TF's Assert computes its data before it tests the condition.
            condition, *data = (_value_of(tensor) for tensor in op.inputs)
            if condition is None or not condition.all() or any(value is None for value in data):
                return None
    value = _value_of(input_tensor)
    if (value is None or not value.size
            or _larger_than_evaluated(value.size, input_tensor.dtype, value)
            or not tf.TensorShape(value.shape[1:]).is_compatible_with(element_shape)):
        return None
    return value


def _value_of(tensor):
    """`tensor`'s value as TF's constant evaluation computes it (its kernels, on the CPU,
    without the control inputs: asserts are `_evaluated`'s), or None."""
    try:
        return tensor_util.try_evaluate_constant(tensor)
    except tf.errors.OpError:
        return None


def _larger_than_evaluated(size, dtype, value=None) -> bool:
    if size is None:
        return False
    if dtype == tf.string:
        return value is not None and sum(map(len, value.flat)) > _LARGEST_EVALUATED
    return size * dtype.size > _LARGEST_EVALUATED


# Epochs given as one list of rows hold at most this many rows (see `_rows_of_all_epochs`).
_MOST_ROWS_LISTED = 1 << 20


def _rows_of_all_epochs(rows, num_epochs, shuffle_seeds) -> tf.data.Dataset | None:
    """The rows of `num_epochs` shuffled epochs, as one dataset of slices of their list: the
    same rows in the same order as epoch after epoch (the shuffle's k-th call permutes the
    k-th epoch, once, when the pipeline starts), and each row a split of its own to the
    tf.data service's dynamic sharding, where the epochs of a repeated input are one split
    each. Seeded only: unseeded, every worker would list its own permutations. None where
    it does not apply."""
    count = rows.shape.num_elements()
    if (num_epochs is None or shuffle_seeds is None or shuffle_seeds == (0, 0)
            or count is None or count * num_epochs > _MOST_ROWS_LISTED):
        return None
    seed, seed2 = shuffle_seeds
    epochs = tf.data.Dataset.from_tensors(rows).repeat(num_epochs).map(
        lambda rows: tf.raw_ops.RandomShuffle(value=rows, seed=seed, seed2=seed2))
    listed = epochs.batch(num_epochs).get_single_element()
    return tf.data.Dataset.from_tensor_slices(
        tf.reshape(listed, tf.concat([[-1], tf.shape(rows)[1:]], 0)))


def _epochs(input_tensor, element_shape, num_epochs, shuffle_seeds, consumer):
    """A dataset of the input's rows, epoch after epoch, each epoch one permutation."""
    def elements():
        value = (input_tensor if _is_constant(input_tensor)
                 else _evaluated(input_tensor, element_shape))
        if value is not None:
            # No function computing the epoch (one fewer to trace and prepare at the first
            # run): only the shuffle, if any, is applied per epoch.
            rows = value if value is input_tensor else tf.constant(value, input_tensor.dtype)
            listed = (_rows_of_all_epochs(rows, num_epochs, shuffle_seeds)
                      if build_context.epochs_split_by_row_now() else None)
            if listed is not None:
                return listed
            if shuffle_seeds is None:
                return written_datasets.repeated(written_datasets.from_tensor_slices(rows),
                                                 num_epochs)
            epochs = written_datasets.repeated(written_datasets.from_tensors(rows), num_epochs)
            written = epoch_maps.written_shuffles(epochs, shuffle_seeds)
            if written is not None:
                return datasets.unbatched(written)
            seed, seed2 = shuffle_seeds
            with build_context.without_autograph():
                return datasets.unbatched(epochs.map(
                    lambda rows: tf.raw_ops.RandomShuffle(value=rows, seed=seed, seed2=seed2)))
        source = element_source.element_source(input_tensor, "input_producer", consumer)
        if num_epochs is not None:
            source = dataclasses.replace(source, upstream=source.upstream.take(num_epochs))
        if shuffle_seeds is not None:
            # The shuffle kernel's k-th call must permute the k-th epoch: one call at a time.
            source = dataclasses.replace(source, stateful=True)
        written = epoch_maps.written_epochs(source, shuffle_seeds)
        if written is not None:
            return datasets.unbatched(written)
        if shuffle_seeds is None:
            return datasets.unbatched(source.computed())
        seed, seed2 = shuffle_seeds
        # Shuffled in the function that computes the epoch: one function fewer to trace and
        # prepare.
        return datasets.unbatched(source.computed(
            finish=lambda rows: tf.raw_ops.RandomShuffle(value=rows, seed=seed, seed2=seed2)))
    return elements


@tf1_fallback.when_not_compilable(lambda a: a["input_tensor"])
def input_producer(input_tensor,
                   element_shape=None,
                   num_epochs=None,
                   shuffle=True,
                   seed=None,
                   capacity=32,
                   shared_name=None,
                   summary_name=None,
                   name=None,
                   cancel_op=None):
    del shared_name, cancel_op  # no queue resource to share or cancel
    require_graph_mode("input_producer")
    with tf.compat.v1.name_scope(name, "input_producer", [input_tensor]) as scope:
        input_tensor = tf.convert_to_tensor(input_tensor, name="input_tensor")
        element_shape = input_tensor.shape[1:].merge_with(
            tf.TensorShape(element_shape) if element_shape is not None else None)
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape "
                             "or `element_shape` must be specified")
        arguments.require_num_epochs(num_epochs, "input_producer")
        # TF1 divides by capacity for its summary; without one, capacity 0 hangs instead.
        arguments.require_capacity(capacity, "input_producer",
                                   ValueError if summary_name is None else ZeroDivisionError)
        shuffle_seeds = build_context.op_seeds(seed) if shuffle else None
        # Lifted (and counted on the stages it reads) now: what cannot be lifted fails here,
        # at construction, though its dequeues are traced when the graph first runs.
        element_source.add_consumers(input_tensor, "input_producer", scope)
        return StageQueue(_epochs(input_tensor, element_shape, num_epochs, shuffle_seeds,
                                  consumer=scope),
                          dtypes=[input_tensor.dtype.base_dtype], shapes=[element_shape],
                          capacity=capacity, name=scope.rstrip("/"), bare_elements=True,
                          reads_only=element_source.reads_only(input_tensor, "input_producer"),
                          static_rows=lambda: tf.get_static_value(input_tensor))


@tf1_fallback.when_not_compilable(lambda a: a["string_tensor"])
def string_input_producer(string_tensor,
                          num_epochs=None,
                          shuffle=True,
                          seed=None,
                          capacity=32,
                          shared_name=None,
                          name=None,
                          cancel_op=None):
    not_null_err = "string_input_producer requires a non-null input tensor"
    if string_tensor is None or (
            not isinstance(string_tensor, tf.Tensor) and not len(string_tensor)):
        raise ValueError(f"{not_null_err}; string_tensor is {string_tensor!r}. Pass a "
                         "non-empty list of file names (e.g. tf.io.gfile.glob(pattern)) or a "
                         "string tensor.")
    with tf.compat.v1.name_scope(name, "input_producer", [string_tensor]) as scope:
        string_tensor = tf.convert_to_tensor(string_tensor, dtype=tf.string)
        if not string_tensor.shape.num_elements():  # else statically non-empty: cannot fail
            with tf.control_dependencies([
                    tf.debugging.Assert(tf.greater(tf.size(string_tensor), 0), [not_null_err])]):
                string_tensor = tf.identity(string_tensor)
        # TF1 checks these in its input_producer, whose summary divides by capacity.
        arguments.require_num_epochs(num_epochs, "string_input_producer")
        arguments.require_capacity(capacity, "string_input_producer", ZeroDivisionError)
        return input_producer(
            input_tensor=string_tensor, element_shape=[], num_epochs=num_epochs,
            shuffle=shuffle, seed=seed, capacity=capacity, shared_name=shared_name,
            name=scope, cancel_op=cancel_op)


@tf1_fallback.when_not_compilable(lambda a: a["limit"])
def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None,
                         capacity=32, shared_name=None, name=None):
    with tf.compat.v1.name_scope(name, "input_producer", [limit]) as scope:
        range_tensor = tf.range(limit)
        arguments.require_num_epochs(num_epochs, "range_input_producer")
        arguments.require_capacity(capacity, "range_input_producer", ZeroDivisionError)
        return input_producer(range_tensor, [], num_epochs, shuffle, seed, capacity,
                              shared_name, None, scope)


@tf1_fallback.when_not_compilable(lambda a: a["tensor_list"])
def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None,
                         capacity=32, shared_name=None, name=None):
    with tf.compat.v1.name_scope(name, "input_producer", tensor_list):
        tensor_list = [tf.convert_to_tensor(tensor) for tensor in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        range_size = tf.shape(tensor_list[0])[0]
        arguments.require_num_epochs(num_epochs, "slice_input_producer")
        arguments.require_capacity(capacity, "slice_input_producer", ZeroDivisionError)
        queue = range_input_producer(range_size, num_epochs=num_epochs, shuffle=shuffle,
                                     seed=seed, capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [tf.gather(tensor, index) for tensor in tensor_list]
