"""TF1 queues (`tf.FIFOQueue`, `RandomShuffleQueue`, `PaddingFIFOQueue`, `PriorityQueue`,
`QueueBase`) that compile into the tf.data pipeline when they can.

Each shim queue *is* a `tf.queue` queue (a subclass, so `isinstance` checks and
`QueueBase.from_list` keep working) and decides at its first dequeue which of two things it is:

compiled
    Every enqueue op created so far computes its values from compat.v1 stages (producers,
    readers, other compiled queues), or from pure ops and is driven by a QueueRunner. Then the
    queue is one more tf.data stage and no thread runs: each enqueue op becomes a lifted map
    over its upstream stages (an op listed k times in a QueueRunner is a k-way parallel map;
    distinct enqueue ops are interleaved as they compute), a RandomShuffleQueue becomes
    `shuffle(capacity)` (the j-th output is one of the first j+capacity inputs, and the buffer
    drains at the end), `dequeue_many` becomes `batch(drop_remainder=True)` (`padded_batch` for
    PaddingFIFOQueue), `dequeue_up_to` becomes `batch`.

fed
    Anything else: values fed through placeholders, read from variables or from a fed queue,
    a PriorityQueue (its order depends on what is buffered at each dequeue, which tf.data cannot
    express), queues used with `from_list`, a dequeue created before any enqueue, and eager
    mode. Then the queue is the TF queue kernel itself: a bounded, closable buffer with exactly
    TF1's blocking and error semantics. Its kernels are asynchronous, so threads blocked in
    `sess.run(enqueue)` on a full queue do not occupy the session's inter-op thread pool (a
    `py_function` buffer would, and deadlocks with more blocked feeders than cores), and its
    errors are TF1's types (a `py_function` turns them into UnknownError). Its consumer side
    is also a tf.data source: a dataset that dequeues from the kernel (found by shared_name)
    one element per request, so compiled stages downstream (`tf.train.batch`, a compiled
    queue, a reader of a filename queue filled by hand) read it without threads of their own,
    and `as_dataset()` hands it to eager code and Keras. This is the only path that needs
    threads, and only the user's feeders or the runners of its own enqueue ops.

A compiled queue's `size()` stays 0 (nothing is buffered where a session could see it).
Several dequeue ops (or readers) of one compiled queue share its elements, each element to
one of them, as TF1's do (see `plan`).
"""
from __future__ import annotations

import hashlib
import uuid

import tensorflow as tf
from tensorflow.python.data.ops import map_op as _map_op
from tensorflow.python.framework import random_seed as _random_seed
from tensorflow.python.ops import data_flow_ops, gen_data_flow_ops

from compat._runtime import build_context, plan, pull_maps, stage_iterators
from compat._runtime.enqueue_ops import EnqueueOps
from compat._runtime.stage_queue import StageQueue

_COMPILED = "compiled"
_FED = "fed"


class _CompiledStream(StageQueue):
    """The compiled queue's elements, as a stage queue; pads batches for PaddingFIFOQueue."""

    def __init__(self, elements, dtypes, shapes, capacity, name, names, padded: bool,
                 element_shapes, reads_only: bool):
        super().__init__(elements, dtypes, shapes, capacity, name, names,
                         element_shapes=element_shapes, reads_only=reads_only)
        self._padded = padded

    def dequeue_many(self, n, name=None):
        if not self._padded:
            return super().dequeue_many(n, name)
        return self._register(lambda dataset: dataset.padded_batch(
            n, padded_shapes=tuple(self._shapes), drop_remainder=True), name or "dequeue_many")

    def dequeue_up_to(self, n, name=None):
        if not self._padded:
            return super().dequeue_up_to(n, name)
        return self._register(lambda dataset: dataset.padded_batch(
            n, padded_shapes=tuple(self._shapes)), name or "dequeue_up_to")


_QUEUE_KERNELS = ("FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2", "PriorityQueueV2")


def _kernel_shared_name(shared_name):
    """The shared_name to give a queue kernel.

    In graph mode every shim queue kernel gets one (a unique name when the user gave none):
    tf.data functions that consume a fed queue find the kernel by it, since a one-shot
    iterator's dataset cannot capture a queue handle. Each Session still has its own queue.
    """
    if tf.executing_eagerly():
        return shared_name
    return shared_name or f"compat_queue_{uuid.uuid4().hex}"


def _rebuild_in_function(kernel_op: tf.Operation) -> tf.Tensor:
    """A handle to the queue kernel `kernel_op`, created inside the function being built."""
    name, attrs = pull_maps.kernel_in_function(kernel_op)
    graph = tf.compat.v1.get_default_graph()
    op = graph._create_op_internal(  # pylint: disable=protected-access
        kernel_op.type, [], dtypes=[kernel_op.outputs[0].dtype], attrs=attrs,
        op_def=kernel_op.op_def, name=name)
    return op.outputs[0]


def _shaped(dequeue_from, shapes):
    """`dequeue_from(handle)`, its outputs given `shapes` (as the queue declares them)."""
    def dequeue(handle):
        outputs = dequeue_from(handle)
        for output, shape in zip(outputs, shapes):
            output.set_shape(shape)
        return outputs
    return dequeue


class QueueBase(data_flow_ops.QueueBase):
    """TF1's `tf.QueueBase` (see the module docstring for compiled vs fed)."""

    def __init__(self, dtypes, shapes, names, queue_ref):
        super().__init__(dtypes, shapes, names, queue_ref)
        self._init_shim(capacity=None, compilable=False)

    # --- shim state -----------------------------------------------------------------------
    def _init_shim(self, capacity, compilable, padded=False, shuffle=False):
        self._capacity = capacity
        self._eager = tf.executing_eagerly()
        self._graph = None if self._eager else tf.compat.v1.get_default_graph()
        self._compilable_kind = compilable
        self._padded = padded
        self._shuffle = shuffle
        self._enqueues = EnqueueOps(self.name)
        self._mode = None
        self._why_fed = ""
        self._stream: _CompiledStream | None = None

    @property
    def compiled(self) -> bool:
        """True when this queue was compiled into the tf.data pipeline (no runner threads)."""
        return self._mode == _COMPILED

    def _record_enqueue(self, op, many):
        if self._eager:
            return
        if self._mode == _COMPILED:
            raise ValueError(
                f"queue {self.name!r}: enqueue op {op.name!r} was created after the queue's "
                "first dequeue, which compiled the queue into the tf.data pipeline from the "
                f"enqueue ops that existed then ({self._enqueues.names()})."
                " Create all enqueue ops of a queue before its first dequeue.")
        self._enqueues.record(op, many)

    def _note_queue_runner(self, enqueue_ops):
        """Called by QueueRunner: these ops are run by runner threads (one per listing)."""
        self._enqueues.note_queue_runner(enqueue_ops)

    def _is_compiled_enqueue(self, op) -> bool:
        return self._mode == _COMPILED and self._enqueues.includes(op)

    def _force_fed(self, reason):
        if self._mode == _COMPILED:
            raise ValueError(
                f"queue {self.name!r} was already compiled into the tf.data pipeline by an "
                f"earlier dequeue, so it cannot be used {reason}. Call {reason} before any "
                "dequeue from this queue.")
        self._mode = _FED
        self._why_fed = reason
        if self._graph is not None:
            plan.note_fed_queue(self._graph)

    def _decide(self):
        """Fix this queue's mode at its first dequeue (see the module docstring)."""
        if self._mode is not None:
            return
        reason = self._fed_reason()
        if reason:
            self._force_fed(reason)
            return
        self._mode = _COMPILED
        self._enqueues.add_consumers()
        self._stream = _CompiledStream(
            self._compiled_elements, self._dtypes, self._shapes, self._capacity,
            self.name, self._names, self._padded, self._enqueued_shapes(),
            self._enqueues.reads_only())

    def _enqueued_shapes(self):
        """Each component's shape as every enqueue op gives it (merged with the queue's),
        for the dequeue's static shape: what its dataset's elements have, known without
        tracing it. TF1's dequeue has only the queue's shapes; the shim's as specific as
        the enqueued values (~15% more images/s for an Inception-style eval input, whose
        crop and parse ops are built for a known rank)."""
        return self._enqueues.enqueued_shapes(self._shapes)

    def _fed_reason(self) -> str:
        if self._eager:
            return "eager execution"
        if not self._compilable_kind:
            return f"{type(self).__name__} has no tf.data equivalent"
        if not self._enqueues:
            return "a dequeue was created before any enqueue op"
        return self._enqueues.not_compilable_reason()

    def _compiled_elements(self) -> tf.data.Dataset:
        """The queue's element stream (tuples of components); built in the current graph."""
        elements = self._enqueues.elements(self._shapes, self._stream.reads_only)
        if self._shuffle:
            seed = self._shuffle_seed()
            # A seeded queue replays its order in every new pipeline, as in every new Session
            # (e.g. each iteration of `compat.to_dataset`).
            elements = elements.shuffle(self._capacity, seed=seed,
                                        reshuffle_each_iteration=seed is None)
        return elements

    def _shuffle_seed(self):
        seed, seed2 = (self.queue_ref.op.get_attr("seed"), self.queue_ref.op.get_attr("seed2"))
        if seed == 0 and seed2 == 0:
            return None  # TF1: nondeterministic
        return seed2 or seed

    def _compiled_consumer(self):
        """The compiled stream; each dequeue op (or reader, or as_dataset()) made from it is
        one more consumer, and consumers share its elements as TF1's dequeues do."""
        return self._stream

    def _compiled_result(self, element):
        tensors = list(element) if isinstance(element, (tuple, list)) else [element]
        return self._dequeue_return_value(tensors)

    # --- TF1 QueueBase API ----------------------------------------------------------------
    @staticmethod
    def from_list(index, queues):
        """A queue that dequeues from `queues[index]`, `index` chosen at run time.

        The listed queues stay TF queue kernels filled by their runner threads, since the
        choice between them is made per `sess.run`.
        """
        for queue in queues if isinstance(queues, list) else ():
            if isinstance(queue, QueueBase):
                queue._force_fed("with QueueBase.from_list")  # pylint: disable=protected-access
        selected = data_flow_ops.QueueBase.from_list(index, queues)
        return QueueBase(selected.dtypes, selected.shapes, selected.names, selected.queue_ref)

    def enqueue(self, vals, name=None):
        op = super().enqueue(vals, name=name)
        self._record_enqueue(op, many=False)
        return op

    def enqueue_many(self, vals, name=None):
        op = super().enqueue_many(vals, name=name)
        self._record_enqueue(op, many=True)
        return op

    def _components(self, dequeued):
        if self._names:
            return [dequeued[name] for name in self._names]
        return list(dequeued) if isinstance(dequeued, (list, tuple)) else [dequeued]

    def _kernel_findable(self) -> bool:
        """Whether tf.data functions can find this queue's kernel by its shared_name (not so
        for a `from_list` selection, whose kernel is chosen at run time)."""
        kernel_op = self.queue_ref.op
        return kernel_op.type in _QUEUE_KERNELS and bool(kernel_op.get_attr("shared_name"))

    def _fed_dataset(self, dequeue_from) -> tf.data.Dataset | None:
        """A dataset of `dequeue_from(kernel handle)` results, each taken when requested;
        None when the kernel cannot be found by name."""
        if not self._kernel_findable():
            return None
        build_context.waits_on_session_runs()
        kernel_op = self.queue_ref.op

        def dequeue_in_function(_):
            return tuple(dequeue_from(_rebuild_in_function(kernel_op)))

        # preserve_cardinality=False: the dequeue's OutOfRangeError (closed and drained)
        # ends the dataset, as it ends a TF1 consumer loop, instead of becoming an error.
        return _map_op._MapDataset(  # pylint: disable=protected-access
            tf.data.Dataset.from_tensors(0).repeat(), dequeue_in_function,
            preserve_cardinality=False)

    def _fed_dequeues(self, spec) -> tf.data.Dataset | None:
        """`_fed_dataset` of one-element dequeues whose components are `spec` (a tuple of
        TensorSpecs, shapes as the queue declares them), its map written where it can be
        (`pull_maps.dequeued`)."""
        if not self._kernel_findable():
            return None
        dequeue = _shaped(lambda handle: gen_data_flow_ops.queue_dequeue_v2(handle, self._dtypes),
                          [part.shape for part in spec])
        build_context.waits_on_session_runs()
        return pull_maps.dequeued(self.queue_ref.op, spec, lambda: self._fed_dataset(dequeue))

    def _fed_stage(self, dequeued, dequeue_from, what):
        """Make a fed queue's dequeue op a plan stage, so that compiled stages downstream
        (tf.train.batch, a compiled queue, a reader) consume the queue through tf.data.
        dequeue_from(handle): the dequeue to make in tf.data's function; None for one
        element per dequeue."""
        components = self._components(dequeued)
        if not self._kernel_findable():
            return dequeued
        spec = tuple(tf.TensorSpec(component.shape, component.dtype) for component in components)
        if dequeue_from is None:
            elements = lambda: self._fed_dequeues(spec)  # noqa: E731
        else:
            dequeue = _shaped(dequeue_from, [component.shape for component in components])
            elements = lambda: self._fed_dataset(dequeue)  # noqa: E731
        plan.add_stage(plan.Stage(elements, components[0].op, spec, f"{self.name} {what}",
                                  pulls_from_kernel=True))
        return dequeued

    def dequeue(self, name=None):
        if self._eager:
            return super().dequeue(name=name)
        self._decide()
        if self._mode == _FED:
            return self._fed_stage(super().dequeue(name=name), None, "dequeue")
        return self._compiled_result(self._compiled_consumer().dequeue(name or f"{self._name}_Dequeue"))

    def dequeue_many(self, n, name=None):
        if self._eager:
            return super().dequeue_many(n, name=name)
        self._decide()
        if self._mode == _FED:
            dequeued = super().dequeue_many(n, name=name)
            count = tf.get_static_value(n)
            if count is None:
                return dequeued
            return self._fed_stage(
                dequeued,
                lambda handle: gen_data_flow_ops.queue_dequeue_many_v2(handle, count,
                                                                       self._dtypes),
                "dequeue_many")
        return self._compiled_result(
            self._compiled_consumer().dequeue_many(n, name or f"{self._name}_DequeueMany"))

    def dequeue_up_to(self, n, name=None):
        if self._eager:
            return super().dequeue_up_to(n, name=name)
        self._decide()
        if self._mode == _FED:
            dequeued = super().dequeue_up_to(n, name=name)
            count = tf.get_static_value(n)
            if count is None:
                return dequeued
            return self._fed_stage(
                dequeued,
                lambda handle: gen_data_flow_ops.queue_dequeue_up_to_v2(handle, count,
                                                                        self._dtypes),
                "dequeue_up_to")
        return self._compiled_result(
            self._compiled_consumer().dequeue_up_to(n, name or f"{self._name}_DequeueUpTo"))

    # --- consumers that are tf.data ---------------------------------------------------------
    def as_dataset(self) -> tf.data.Dataset:
        """This queue's stream as a `tf.data.Dataset`, one queue element per dataset element.

        Each element is what `dequeue()` returns (a tensor, a tuple of tensors, or a dict when
        the queue has `names`). The dataset ends where `dequeue()` would raise
        OutOfRangeError: when the queue is closed and drained. Use it to hand a queue to
        eager code or Keras: `model.fit(queue.as_dataset().batch(32))`.

        For a compiled queue this is one more consumer of its stream (see `plan.add_consumer`).
        For a fed queue each element is one dequeue, done when the element is requested (no
        prefetch), so other consumers of the queue share its elements as in TF1.
        """
        if not self._eager:
            self._decide()
        if self._mode == _COMPILED:
            elements = self._compiled_consumer().new_consumer()()
        elif self._eager or not self._kernel_findable():
            def dequeue_one(_):
                return tuple(self._components(data_flow_ops.QueueBase.dequeue(self)))

            elements = _map_op._MapDataset(  # pylint: disable=protected-access
                tf.data.Dataset.from_tensors(0).repeat(), dequeue_one,
                preserve_cardinality=False)
        else:
            elements = self._fed_dataset(
                lambda handle: gen_data_flow_ops.queue_dequeue_v2(handle, self._dtypes))
        # Dequeue exactly when asked: a prefetched element would vanish from size() and be
        # stranded when the consumer stops.
        elements = elements.with_options(stage_iterators.on_demand_options())
        if self._names:
            return elements.map(lambda *parts: dict(zip(self._names, parts)))
        if len(self._dtypes) == 1:
            return elements.map(lambda *parts: parts[0])
        return elements

    def new_consumer(self):
        """For compat.v1 readers: a factory of the elements one more consumer sees."""
        if self._eager:
            raise RuntimeError(f"queue {self.name!r}: readers need graph mode; in eager code "
                               "read files with tf.data (TFRecordDataset, TextLineDataset).")
        self._decide()
        if self._mode == _FED:
            if not self._kernel_findable():
                raise TypeError(
                    f"a compat.v1 reader cannot read queue {self.name!r}: it selects its queue "
                    "at run time (QueueBase.from_list), which a tf.data pipeline cannot follow. "
                    "Read each queue with its own reader.")
            single = len(self._dtypes) == 1
            return lambda: self._fed_dataset(
                lambda handle: gen_data_flow_ops.queue_dequeue_v2(handle, self._dtypes)
            ).map(lambda *parts: parts[0] if single else parts)
        return self._compiled_consumer().new_consumer()


class FIFOQueue(QueueBase, data_flow_ops.FIFOQueue):
    """TF1's `tf.FIFOQueue`."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        data_flow_ops.FIFOQueue.__init__(self, capacity, dtypes, shapes=shapes, names=names,
                                         shared_name=_kernel_shared_name(shared_name), name=name)
        self._init_shim(capacity=capacity, compilable=True)


class PaddingFIFOQueue(QueueBase, data_flow_ops.PaddingFIFOQueue):
    """TF1's `tf.PaddingFIFOQueue`: `dequeue_many` pads each component to the batch maximum."""

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None,
                 name="padding_fifo_queue"):
        data_flow_ops.PaddingFIFOQueue.__init__(self, capacity, dtypes, shapes, names=names,
                                                shared_name=_kernel_shared_name(shared_name), name=name)
        self._init_shim(capacity=capacity, compilable=True, padded=True)


class RandomShuffleQueue(QueueBase, data_flow_ops.RandomShuffleQueue):
    """TF1's `tf.RandomShuffleQueue`. Compiled, it is `shuffle(capacity)`: min_after_dequeue
    only delays TF1's first dequeue and is not a window bound, so it has no tf.data analogue."""

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None,
                 seed=None, shared_name=None, name="random_shuffle_queue"):
        # TF1's constructor, except that the kernel's shared_name may be the shim's own: the
        # seed pair is derived from the user's arguments (get_seed exactly once, as in TF1).
        dtypes = data_flow_ops._as_type_list(dtypes)  # pylint: disable=protected-access
        shapes = data_flow_ops._as_shape_list(shapes, dtypes)  # pylint: disable=protected-access
        names = data_flow_ops._as_name_list(names, dtypes)  # pylint: disable=protected-access
        seed1, seed2 = _random_seed.get_seed(seed)
        if seed1 is None and seed2 is None:
            seed1, seed2 = 0, 0
        elif seed is None and shared_name is not None:
            string = (str(seed1) + shared_name).encode("utf-8")
            seed2 = int(hashlib.md5(string).hexdigest()[:8], 16) & 0x7FFFFFFF
        queue_ref = gen_data_flow_ops.random_shuffle_queue_v2(
            component_types=dtypes, shapes=shapes, capacity=capacity,
            min_after_dequeue=min_after_dequeue, seed=seed1, seed2=seed2,
            shared_name=data_flow_ops._shared_name(_kernel_shared_name(shared_name)),  # pylint: disable=protected-access
            name=name)
        data_flow_ops.QueueBase.__init__(self, dtypes, shapes, names, queue_ref)
        self._init_shim(capacity=capacity, compilable=True, shuffle=True)
        self._min_after_dequeue = min_after_dequeue


class PriorityQueue(QueueBase, data_flow_ops.PriorityQueue):
    """TF1's `tf.PriorityQueue`. Always a TF queue kernel fed by threads: which element
    comes next depends on what is buffered at each dequeue."""

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None,
                 name="priority_queue"):
        data_flow_ops.PriorityQueue.__init__(self, capacity, types, shapes=shapes, names=names,
                                             shared_name=_kernel_shared_name(shared_name), name=name)
        self._init_shim(capacity=capacity, compilable=False)


__all__ = ["QueueBase", "FIFOQueue", "PaddingFIFOQueue", "RandomShuffleQueue", "PriorityQueue"]
