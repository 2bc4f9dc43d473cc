"""Checks of the numeric arguments of TF1's queue APIs (batching and producers).

Each check raises the exception type TF1 raises for the same value, at the moment TF1
raises it, with a message that names the API, the argument and its value, and says what to
pass instead. Where TF1 accepts a value and then never delivers data (it hangs, or returns
empty batches forever), the check refuses it while building the graph instead. Arguments
may be tensors: only values known while building the graph (`tf.get_static_value`) are
checked; others are left to the ops that use them.
"""
from __future__ import annotations

import numbers

import numpy as np
import tensorflow as tf


def known_number(value):
    """`value` as a Python number if it is one, or a tensor whose value the graph fixes;
    else None."""
    if tf.is_tensor(value):
        value = tf.get_static_value(value)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    return value if isinstance(value, numbers.Real) else None


def require_positive(name, value, api, fix, error=ValueError):
    known = known_number(value)
    if known is not None and known <= 0:
        raise error(f"{api}: {name} must be > 0, not {known}. {fix}")


def require_nonzero(name, value, api, fix, error=ValueError):
    known = known_number(value)
    if known == 0:
        raise error(f"{api}: {name} must not be 0. {fix}")


def require_num_threads(num_threads, api):
    # TF1 builds `num_threads` enqueue ops (none for 0 or less) and its QueueRunner rejects
    # an empty list with a ValueError.
    require_positive(
        "num_threads", num_threads, api,
        "Pass num_threads=1 (the default), or more to compute the inputs in parallel; with "
        "no thread nothing would ever fill the batch.")


def require_batch_size(batch_size, api):
    # TF1 rejects a negative size while building (ValueError). With batch_size=0 it builds
    # and then returns empty batches forever without reading its input, so a loop run until
    # OutOfRangeError never ends and no data arrives: as good as a hang, so refuse it the
    # same way as a negative size.
    require_positive(
        "batch_size", batch_size, api,
        "Pass the number of elements per batch, at least 1 (with 0, TF1 returns empty "
        "batches forever without reading the input).")


def require_capacity(capacity, api, error):
    # A negative capacity means "unbounded" to TF1's queues and runs normally, so only 0 is
    # refused. `error`: ZeroDivisionError where TF1 computes its fraction-of-full summary
    # (1 / capacity) and so raises that; where it has no summary, TF1 builds the queue and
    # its first dequeue blocks forever, and callers refuse 0 with a ValueError instead.
    require_nonzero(
        "capacity", capacity, api,
        "A queue of capacity 0 can never hold an element; pass a positive capacity (the "
        "default is 32), or a negative one for an unbounded queue.", error)


def require_num_epochs(num_epochs, api):
    # Compared as TF1 does, in Python: a tensor raises TypeError, as in TF1 (whose epoch
    # counter needs a Python int anyway).
    if num_epochs is not None and num_epochs <= 0:
        raise ValueError(
            f"{api}: num_epochs must be > 0, not {num_epochs}. Pass num_epochs=None to "
            "repeat the input forever, or the number of passes over it.")


def negative_min_after_dequeue(min_after_dequeue, api):
    """The message of the error TF1 raises for a negative `min_after_dequeue`, or None.

    TF1 builds the graph; its RandomShuffleQueue op rejects the value when the graph first
    runs (InvalidArgumentError), so the shim fails then too (see `fails_when_run`)."""
    known = known_number(min_after_dequeue)
    if known is None or known >= 0:
        return None
    return (f"{api}: min_after_dequeue must be >= 0, not {known}. Pass how many elements "
            "the queue keeps for mixing after each dequeue: 0 for no minimum, more for a "
            "better shuffle (and capacity above it).")


def fails_when_run(dataset, message):
    """`dataset`, except that asking for its first element raises InvalidArgumentError with
    `message`, before reading any input: how a TF1 op that rejects its attributes fails.

    The failing dataset comes first in the zip, and a zip asks its inputs in order. The
    graph keeps the message, so that the Session raises this error from the run, as TF1
    does, instead of handing it to the Coordinator as a runner's (`raised_by_the_run`)."""
    _refused_when_run(tf.compat.v1.get_default_graph()).add(message)

    def fail(_):
        with tf.control_dependencies([tf.debugging.Assert(False, [message])]):
            return tf.constant(0)

    failure = tf.data.Dataset.from_tensors(0).map(fail)
    return tf.data.Dataset.zip((failure, dataset)).map(lambda _, element: element)


def _refused_when_run(graph) -> set:
    while getattr(graph, "outer_graph", None) is not None:
        graph = graph.outer_graph
    refused = getattr(graph, "_compat_refused_when_run", None)
    if refused is None:
        refused = graph._compat_refused_when_run = set()  # pylint: disable=protected-access
    return refused


def raised_by_the_run(graph, error) -> bool:
    """Whether `error` is one `fails_when_run` planted in `graph`: TF1 raises it from the
    consumer's run (its op rejects an attribute), not from a runner thread."""
    refused = getattr(graph, "_compat_refused_when_run", ())
    return any(message in error.message for message in refused)
