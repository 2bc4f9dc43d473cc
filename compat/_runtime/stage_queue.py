"""`StageQueue`: what the shim returns where TF1 returned a queue filled by a runner thread.

Its contents are a tf.data stream (for a producer: the epochs of its input). Every consumer
(a `dequeue*` call, or a reader's `read`) is a separate pipeline stage. Consumers of one TF1
queue split its elements between them, each element to the one that asks first: a queue
with one consumer is copied into that consumer's pipeline; with several, each pulls from
one shared iterator over the stream (`plan.add_consumer`).
"""
from __future__ import annotations

from typing import Callable

import tensorflow as tf
from tensorflow.python.ops import data_flow_ops
from tensorflow.python.training import queue_runner_impl

from compat._runtime import plan


class StageQueue:
    def __init__(self, elements: Callable[[], tf.data.Dataset], dtypes, shapes, capacity: int,
                 name: str, names=None, bare_elements=False, element_shapes=None,
                 reads_only=False, static_rows=None):
        """bare_elements: the elements are single tensors of `dtypes[0]` and `shapes[0]` (a
        producer's), not tuples of components. element_shapes: the elements' shapes where
        more is known than the queue's `shapes` (see `element_spec`). reads_only: the
        elements come straight from files or constants (see `plan.Stage.reads_only`).
        static_rows: a callable giving the values the stream's elements are drawn from, where
        the graph fixes them (a producer's list of file names), else None (see
        `known_rows`)."""
        self._elements = elements
        self._bare_elements = bare_elements
        self._dtypes = list(dtypes)
        self._shapes = [tf.TensorShape(shape) for shape in shapes]
        self._element_shapes = [tf.TensorShape(shape)
                                for shape in (element_shapes or self._shapes)]
        self._names = names
        self._capacity = capacity
        self._name = name
        self._consumers = 0
        self.reads_only = reads_only
        self._static_rows = static_rows
        self._tf_queue = None  # see `queue_ref`

    # --- the TF1 QueueBase surface -------------------------------------------------------
    @property
    def name(self):
        return self._name

    @property
    def dtypes(self):
        return self._dtypes

    @property
    def shapes(self):
        return self._shapes

    @property
    def names(self):
        return self._names

    @property
    def queue_ref(self):
        """The handle of a TF queue holding this queue's elements, for TensorFlow's own ops
        on it (a reader of TensorFlow's, a library's dequeue): see `_as_tf_queue`."""
        if self._tf_queue is None:
            self._tf_queue = self._as_tf_queue()
        return self._tf_queue.queue_ref

    def _as_tf_queue(self):
        """A TF FIFOQueue of this queue's capacity, filled with its elements by a runner
        thread (a QueueRunner in the graph's collection, started by start_queue_runners), as
        TF1's runner fills TF1's queue; closed when the elements end."""
        queue = data_flow_ops.FIFOQueue(self._capacity, self._dtypes, shapes=self._shapes,
                                        names=self._names, name=f"{self._name}_tf_queue")
        element = self.dequeue()
        enqueue = queue.enqueue(element)
        queue_runner_impl.add_queue_runner(queue_runner_impl.QueueRunner(queue, [enqueue]))
        return queue

    def dequeue(self, name=None):
        return self._register(lambda dataset: dataset, name or "dequeue", ())

    def dequeue_many(self, n, name=None):
        return self._register(lambda dataset: dataset.batch(n, drop_remainder=True),
                              name or "dequeue_many", (tf.get_static_value(n),))

    def dequeue_up_to(self, n, name=None):
        return self._register(lambda dataset: dataset.batch(n), name or "dequeue_up_to",
                              (None,))

    def size(self, name=None):
        # Nothing is buffered between stages where the user could see it; report empty.
        return tf.constant(0, tf.int32, name=name or "size")

    def is_closed(self, name=None):
        return tf.constant(False, name=name or "is_closed")

    def close(self, cancel_pending_enqueues=False, name=None):
        del cancel_pending_enqueues
        return tf.no_op(name=name or "close")

    # --- for the shim's stages -------------------------------------------------------------
    def known_rows(self):
        """The values the elements are drawn from (a numpy array), where the graph fixes them
        (a producer of a constant list of file names), else None: a hint for readers, which
        choose how to read from the files' sizes (see `readers`)."""
        return None if self._static_rows is None else self._static_rows()

    def new_consumer(self) -> Callable[[], tf.data.Dataset]:
        """A factory of the elements that one more consumer of this queue sees."""
        self._consumers += 1
        plan.add_consumer(self, self._consumers)
        return lambda: plan.consumed(self, self._elements)

    def all_elements(self) -> tf.data.Dataset:
        """The whole stream (for the shared iterator of a queue with several consumers)."""
        return self._elements()

    def element_spec(self, batch_dimensions=()):
        """The spec of the stream's elements (with `batch_dimensions` in front): the queue's
        dtypes, and its shapes or the `element_shapes` given. Each element is a tuple of the
        components, or the one tensor of `bare_elements`."""
        specs = tuple(tf.TensorSpec(tf.TensorShape(batch_dimensions).concatenate(shape), dtype)
                      for dtype, shape in zip(self._dtypes, self._element_shapes))
        return specs[0] if self._bare_elements else specs

    def _register(self, transform, name, batch_dimensions=None):
        elements = self.new_consumer()
        # The dequeue's spec is known, so the stage is traced when the graph first runs, with
        # the other stages (see `plan.register`); not so for a padded batch, whose shapes
        # only its dataset knows.
        spec = None if batch_dimensions is None else self.element_spec(batch_dimensions)
        graph = tf.compat.v1.get_default_graph()
        # A dequeue of a queue that others dequeue too takes elements only when run.
        return plan.register(lambda: transform(elements()), name,
                             on_demand=lambda: plan.owner_of(self) is not None,
                             element_spec=spec, blocking=not plan.may_wait_on_runs(graph),
                             reads_only=self.reads_only)
