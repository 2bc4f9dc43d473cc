"""The pipeline plan: stages that stand for "the next element of this pipeline stage".

A TF1 queue stage (a producer's queue, a reader, a batching queue, a hand-built queue) is a
`Stage` here: a factory that builds the stage's elements as a `tf.data.Dataset`, plus the
tensors that user code sees, which are the `get_next()` of a one-shot iterator over that
dataset. Running those tensors in a Session pulls one element, exactly like a dequeue; a
one-shot iterator needs no initializer, so users' old init calls neither break nor are needed.

A later stage does not read an earlier stage's iterator: it asks `element_dataset` for its
inputs, which lifts the user's ops between the stages (see `lifting`) into a map over a fresh
copy of the upstream datasets. So the whole chain is one tf.data pipeline, and an earlier
stage's own iterator only runs if the user fetches its tensors directly.
"""
from __future__ import annotations

import contextlib
import os
import weakref
from dataclasses import dataclass
from typing import Callable

import tensorflow as tf
from tensorflow.python.autograph.core import ag_ctx as _autograph_ctx
from tensorflow.python.data.util import structure as _structure
from tensorflow.python.framework import random_seed as _random_seed
from tensorflow.python.ops import control_flow_util as _control_flow_util

from compat._runtime import lifting


@dataclass(frozen=True)
class Stage:
    """One stage of the plan.

    dataset_factory: builds a fresh `tf.data.Dataset` of this stage's elements in the current
        graph (each consumer gets its own copy).
    get_next_op: the IteratorGetNext op whose outputs user code consumes; its outputs are the
        stage's elements encoded as a flat tensor list (`structure.to_tensor_list`).
    element_spec: the dataset's element spec.
    name: for error messages.
    part_factory: for a stage whose elements are tuples of plain tensors, optionally builds
        a dataset of only some of them: given component indices, a dataset of those
        components (a bare tensor for one), or None where it cannot save work.
    """

    dataset_factory: Callable[[], tf.data.Dataset]
    get_next_op: tf.Operation
    element_spec: object
    name: str
    part_factory: Callable[[tuple], tf.data.Dataset | None] | None = None

    def encoded(self, element):
        """`element` as the flat tensor list that `get_next_op` outputs."""
        return _structure.to_tensor_list(self.element_spec, element)


# Enough calls in flight to use every core; tf.data's AUTOTUNE cost ~20% on 2 cores here.
_PARALLEL_CALLS = max(2, min(os.cpu_count() or 1, 8))

_STAGES: "weakref.WeakKeyDictionary[tf.Graph, dict]" = weakref.WeakKeyDictionary()


def stage_of(op: tf.Operation) -> Stage | None:
    return _STAGES.get(op.graph, {}).get(op.name)


@contextlib.contextmanager
def seed_counter_preserved(graph: tf.Graph):
    """Keep ops the shim builds from advancing the graph's op-seed counter.

    With a graph seed set and no op seed, TF derives each random op's seed from a per-graph
    counter (`random_seed.get_seed`). TF1's queue functions advance it a fixed number of times;
    the shim advances it exactly as often (explicitly) and no more, so every later user op gets
    the seed it would get under TF1 and seeded pipelines stay bit-identical.
    """
    counters = _random_seed._graph_to_seed_dict  # pylint: disable=protected-access
    had = graph in counters
    saved = counters.get(graph)
    try:
        yield
    finally:
        if had:
            counters[graph] = saved
        else:
            counters.pop(graph, None)


def op_seeds(seed):
    """The (seed, seed2) pair TF1 derives for a random op created now with op seed `seed`.

    Advances the graph's op-seed counter exactly as the TF1 random op would. Zeros mean
    "nondeterministic", as in the raw kernels.
    """
    seed1, seed2 = _random_seed.get_seed(seed)
    return (seed1 or 0), (seed2 or 0)


def _without_autograph():
    """The shim's dataset functions are plain graph code (user ops are copied, not traced from
    Python), so autograph's source conversion would only cost build time."""
    return _autograph_ctx.ControlStatusCtx(status=_autograph_ctx.Status.DISABLED)


@contextlib.contextmanager
def _shim_control_flow_v2():
    """The shim's own conds and loops are v2 (If, While) under either TF behaviour: one
    compiled form for both, the one tf.data functions are built for. The user's ops are
    imported as they are, v1 control flow included (see `lifting`)."""
    saved = _control_flow_util.ENABLE_CONTROL_FLOW_V2
    _control_flow_util.ENABLE_CONTROL_FLOW_V2 = True
    try:
        yield
    finally:
        _control_flow_util.ENABLE_CONTROL_FLOW_V2 = saved


def register(dataset_factory: Callable[[], tf.data.Dataset], name: str, part_factory=None):
    """Create a stage; return the structure user code consumes (the iterator's next element).

    part_factory: see `Stage`."""
    graph = tf.compat.v1.get_default_graph()
    with seed_counter_preserved(graph), _without_autograph(), _shim_control_flow_v2():
        dataset = dataset_factory()
        iterator = tf.compat.v1.data.make_one_shot_iterator(dataset)
        element = iterator.get_next(name=name)
    flat = tf.nest.flatten(element, expand_composites=True)
    get_next_op = _get_next_op_of(flat)
    add_stage(Stage(dataset_factory, get_next_op, dataset.element_spec, name, part_factory))
    return element


def add_stage(stage: Stage) -> None:
    """Enter a stage whose consumer op already exists (e.g. a fed queue's dequeue)."""
    _STAGES.setdefault(stage.get_next_op.graph, {})[stage.get_next_op.name] = stage


def _get_next_op_of(flat_tensors) -> tf.Operation:
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


@dataclass(frozen=True)
class ElementSource:
    """The inputs of a per-element computation, and the computation, kept apart.

    upstream: dataset of the raw upstream elements (zipped when there are several stages).
    compute:  map function turning one upstream element (as `Dataset.map` passes it) into the
              computed structure; `compute(*args, probes=tensors)` returns the values of
              those tensors of the lifted subgraph instead; `compute(*args, given=pairs)` takes
              (tensor, value) pairs as already computed; `inline=True` creates the ops in the
              current graph (for pfor) rather than in a function of their own.
    lifted_ops: the user's ops the computation re-creates.
    lifted_outputs: the user's tensors it computes, flattened (composites expanded).
    stateful: whether compute keeps state between calls (see `lifting.Lifted`).
    dense:    every upstream component is a plain tensor (no sparse/ragged encodings), so
              upstream elements can be batched before computing.
    """

    upstream: tf.data.Dataset
    compute: Callable
    stateful: bool
    dense: bool
    lifted_ops: tuple
    lifted_outputs: tuple

    def computed(self, finish: Callable | None = None, parallelism: int = 1) -> tf.data.Dataset:
        """The computed elements, in upstream order.

        finish: applied to each computed structure (e.g. shape checks).
        parallelism: calls TF1 ran at once (k runner threads); up to the core count is used
            anyway when the computation is stateless, since order is kept either way.
        """
        compute = self.compute if finish is None else (lambda *args: finish(self.compute(*args)))
        if parallelism <= 1 and self.stateful:
            return self.upstream.map(compute)  # one thread: stateful ops run in TF1's order
        # deterministic=True keeps input order, which TF1 gives with one thread and is one
        # of its orders with several.
        calls = parallelism if self.stateful else max(parallelism, _PARALLEL_CALLS)
        return self.upstream.map(compute, num_parallel_calls=calls, deterministic=True)


def source_stages(structure, what: str) -> tuple:
    """The stages the computation of `structure` reads, without building anything."""
    return lifting.lift(structure, stage_of, what).sources


def element_source(structure, what: str, shares=None) -> ElementSource:
    """Lift the computation of `structure` from the stages it reads (see `element_dataset`).

    shares: {stage: (consumers, index)} for stages this computation shares with others that
    run beside it (the entries of a `*_join`): as TF1's enqueue ops take turns dequeuing from
    one queue, consumer `index` reads every `consumers`-th element of that stage.
    """
    lifted = lifting.lift(structure, stage_of, what)
    sources = lifted.sources
    shares = shares or {}
    upstream, parts = [], []
    for stage, outputs_read in zip(sources, lifted.source_outputs_read):
        dataset, part = _upstream_of(stage, outputs_read)
        upstream.append(_shared(dataset, shares.get(stage)))
        parts.append(part)
    if sources:
        dataset = upstream[0] if len(upstream) == 1 else tf.data.Dataset.zip(tuple(upstream))
    else:
        dataset = tf.data.Dataset.from_tensors(0).repeat()

    def compute(*args, probes=(), given=(), inline=False):
        if len(sources) == 1:
            # map() unpacks a tuple element into positional arguments; pack it back.
            args = (args if isinstance(upstream[0].element_spec, tuple) else args[0],)
        encoded = [stage.encoded(element) if part is None else _placed(element, part, stage)
                   for stage, element, part in zip(sources, args, parts)]
        return lifted.function(encoded, probes, given, inline)

    dense = all(isinstance(spec, tf.TensorSpec)
                for spec in tf.nest.flatten(dataset.element_spec))
    return ElementSource(dataset, compute, lifted.stateful, dense, lifted.ops, lifted.outputs)


def _upstream_of(stage, outputs_read):
    """The stage's dataset, or only the components read when the stage can build just those:
    (dataset, indices of its components, or None for the whole element)."""
    if stage.part_factory is not None and 0 < len(outputs_read) < len(stage.element_spec):
        dataset = stage.part_factory(outputs_read)
        if dataset is not None:
            return dataset, outputs_read
    return stage.dataset_factory(), None


def _placed(element, part, stage):
    """A part of an element as the flat list `stage.encoded` gives, unread components None."""
    encoded = [None] * len(stage.element_spec)
    for index, component in zip(part, element if len(part) > 1 else (element,)):
        encoded[index] = component
    return encoded


def _shared(dataset, share):
    return dataset if share is None else dataset.shard(*share)


def element_dataset(structure, what: str) -> tf.data.Dataset:
    """A dataset whose elements are `structure` computed once per upstream element.

    `structure` is what the user passes to an enqueue/batch call: tensors (or SparseTensors,
    lists, dicts) computed by arbitrary ops from zero or more stages' outputs. The upstream
    stages are zipped (one element of each per computed element, as one TF1 enqueue run
    dequeues once from each input queue); with no upstream stage the computation repeats
    forever, as a TF1 enqueue of constants or random ops does.
    """
    return element_source(structure, what).computed()
