"""Where the shim cannot compile a part of a program, TF1's own implementation runs it.

A legacy call (a batch, a producer) whose inputs depend on what no tf.data pipeline can hold
- a queue that a third-party library built with TensorFlow itself (tf_slim's
`parallel_read`, `prefetch_queue`), a reader's read of such a queue, a placeholder fed per
run, a variable - is handed to `tensorflow.compat.v1` with the same arguments. Its queue is
then a TF queue and its runner a QueueRunner in the graph's collection, which
`start_queue_runners` starts and the Coordinator stops, as in TF1; compiled stages upstream
feed it (its enqueue op reads their tensors), and compiled stages downstream read it the same
way. A shim reader given a TF queue reads it with TF's reader of the same kind (`readers`).

In a graph that no Session will run (`compat.to_dataset`'s) nothing can run outside the
pipeline: there the shim still refuses, naming the op and the fix.
"""
from __future__ import annotations

import functools
import inspect

import tensorflow as tf

from compat._runtime import element_source, lifting


def without_session(graph: tf.Graph) -> None:
    """Note that no Session runs `graph` (`compat.to_dataset` builds in it): no TF1 runner
    thread could run a part the shim cannot compile."""
    graph._compat_without_session = True  # pylint: disable=protected-access


def _tensors_in(structure) -> list:
    """The graph tensors of `structure`, however nested (Python values are constants)."""
    return [value for value in tf.nest.flatten(structure, expand_composites=True)
            if isinstance(value, tf.Tensor)]


def runs_on_tf1(structure, what: str) -> bool:
    """Whether `structure`'s computation must run on TF1's queues: it cannot be lifted into
    a pipeline, and a Session will run the graph."""
    tensors = _tensors_in(structure)
    if not tensors or tf.executing_eagerly():
        return False
    if getattr(tensors[0].graph, "_compat_without_session", False):
        return False
    try:
        element_source.lifted(tensors, what)
    except lifting.LiftError:
        return True
    return False


def when_not_compilable(inputs_of):
    """Decorate a public legacy function: where the tensors `inputs_of(arguments)` gives
    (arguments: the call's bound arguments by name) cannot be compiled, call the function of
    the same name in `tensorflow.compat.v1.train` with the same arguments instead."""
    def decorate(function):
        signature = inspect.signature(function)

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            arguments = signature.bind(*args, **kwargs).arguments
            if runs_on_tf1(inputs_of(arguments), function.__name__):
                return getattr(tf.compat.v1.train, function.__name__)(*args, **kwargs)
            return function(*args, **kwargs)
        return wrapper
    return decorate
