"""The computation between stages: what a consumer of stages (a batch call, an enqueue op,
a producer over computed tensors) reads and computes, as a dataset.

`element_source` lifts the user's ops from the stages they read (see `lifting`), counts the
consumer on each of those stages (see `plan.add_consumer`: consumers of one stream share
it), and gives the upstream elements and the computation apart, so a batch call may batch
the raw elements first and compute whole batches (`vectorize`).
"""
from __future__ import annotations

import contextlib
import functools
import os
from dataclasses import dataclass
from typing import Callable

import tensorflow as tf

from compat._runtime import build_context, datasets, lifting, shared_functions, vectorize
from compat._runtime.plan import add_consumer, consumed, owner_of, stage_count, stage_of


def _usable_cores() -> int:
    """The cores this process may run on, as TF's thread pools count them (its affinity
    mask: a process pinned to 2 of 16 cores gets 2)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


# Enough calls in flight to use every core; tf.data's AUTOTUNE cost ~20% on 2 cores here.
_PARALLEL_CALLS = max(2, min(_usable_cores(), 8))
# Calls in flight for a computation TF1 ran on several threads whose only state is random
# draws. Such calls (a chain of small ops, each handed from thread to thread) left the cores
# partly idle: CIFAR-style augmentation on 2 cores, 4 TF1 threads, read 11.4k, 12.2k, 13.3k
# and 14.3k images/s with 4, 6, 8 and 12 calls, for the same CPU time per image.
_CALLS_WITH_DRAWS = max(4, min(4 * _usable_cores(), 16))


@dataclass(frozen=True)
class FusedUnits:
    """What `compute` does over a stage's units: `element_of(unit)` (the stage's element),
    then `lifted.function` of it."""

    stage: object
    element_of: Callable
    lifted: lifting.Lifted


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
    function_without_inputs: for a computation that reads no stage, makes the function
              `compute` calls (see `lifting.function_without_inputs`).
    units:    where the upstream is a stage's units (see `_fused`): that stage, the function
              making a unit's element (`compute` applies it first) and the lifted
              computation; else None.
    dense:    every upstream component is a plain tensor (no sparse/ragged encodings), so
              upstream elements can be batched before computing.
    """

    upstream: tf.data.Dataset
    compute: Callable
    stateful: bool
    dense: bool
    lifted_ops: tuple
    lifted_outputs: tuple
    function_without_inputs: Callable | None = None
    units: FusedUnits | None = None

    def computed(self, finish: Callable | None = None, parallelism: int = 1) -> tf.data.Dataset:
        """The computed elements, in upstream order.

        finish: applied to each computed structure (e.g. shape checks).
        parallelism: calls TF1 ran at once (k runner threads); more where the computation
            is stateless, or keeps no state but random draws and k > 1 (`parallel_calls`),
            since order is kept either way.
        """
        # The user's ops stay in a function of their own (`lifting.called_as_function`),
        # which the Session's grappler rewrites as TF1's Session rewrites them (also for
        # integer and bool results: argmax(sign(x)) -> argmax(x), not(a < b) -> a >= b).
        compute = self.compute if finish is None else (lambda *args: finish(self.compute(*args)))
        with self.map_context():
            calls = self.parallel_calls(parallelism)
            if calls is None:
                return self.upstream.map(compute)  # one thread: stateful ops in TF1's order
            # deterministic=True keeps input order, which TF1 gives with one thread and is
            # one of its orders with several.
            return datasets.unless_identity(
                self.upstream.map(compute, num_parallel_calls=calls, deterministic=True),
                self.upstream)

    @contextlib.contextmanager
    def map_context(self):
        """Where the map computing the elements is made (see `computed`)."""
        per_element = (contextlib.nullcontext()
                       if vectorize.same_floats_on_one_device(self.lifted_ops)
                       else build_context.user_ops_per_element())
        if vectorize.adds_as_threads_split(self.lifted_ops):
            build_context.threads_as_tf1()
        # Autograph off also where a user's call (a queue's as_dataset()) maps outside the
        # shim's builds: the computation is graph code, and its conversion cache has mixed up
        # the shim's methods (TypeError from a converted `Stage.iterator_op`).
        with per_element, build_context.without_autograph():
            yield

    def parallel_calls(self, parallelism: int) -> int | None:
        """The calls `computed(parallelism=...)` runs at once; None: a plain map.

        Stateful calls as many as TF1's threads, but where their only state is random
        draws: with several threads TF1 gives each element whichever draws its thread takes
        first, so more calls at once change nothing TF1 fixes (the elements still come in
        order)."""
        if parallelism <= 1 and self.stateful:
            return None
        if not self.stateful:
            return max(parallelism, _PARALLEL_CALLS)
        if shared_functions.state_only_draws(self.lifted_ops, lifting.ORDER_FREE_TABLE_OPS):
            return max(parallelism, _CALLS_WITH_DRAWS)
        return parallelism


def lifted(structure, what: str) -> lifting.Lifted:
    """The computation of `structure` as lifted from the graph, without building anything.

    A batch call lifts its entries up to three times (counting its consumers, asking whether
    they only read, building them) with no op made in between: the graph keeps its last lift
    while it has neither new ops nor new stages, the only things the result depends on."""
    leaves = tf.nest.flatten(structure)
    graph = getattr(leaves[0], "graph", None) if leaves else None
    if graph is None:
        return lifting.lift(structure, stage_of, what)
    key = (graph.version, stage_count(graph), what, repr(tf.nest.map_structure(id, structure)))
    recent = getattr(graph, "_compat_recent_lift", None)
    if recent is not None and recent[0] == key:
        return recent[1]
    found = lifting.lift(structure, stage_of, what)
    graph._compat_recent_lift = (key, found)  # pylint: disable=protected-access
    return found


# Ops that compute next to nothing: constants, identities, indexing (a slice_input_producer's
# gather), reshapes and casts.
_PASS_THROUGH = {"Const", "Identity", "IdentityN", "NoOp", "Snapshot", "Range", "Gather",
                 "GatherV2", "StridedSlice", "Slice", "Reshape", "ExpandDims", "Squeeze",
                 "Cast", "Shape", "Pack", "Unpack"}


def reads_only(structure, what: str) -> bool:
    """Whether `structure` comes straight from reads, without building anything: from stages
    that only read (see `plan.Stage.reads_only`), through none of the user's ops beyond
    `_PASS_THROUGH`."""
    found = lifted(structure, what)
    return (all(stage.reads_only for stage in found.sources)
            and all(op.type in _PASS_THROUGH for op in found.ops))


def source_stages(structure, what: str) -> tuple:
    """The stages the computation of `structure` reads, without building anything."""
    return lifted(structure, what).sources


def add_consumers(structure, what: str, consumer) -> None:
    """Count `consumer` as reading every stage the computation of `structure` reads.

    A consumer made of several computations built together (the entries of a `*_join`, the
    enqueue ops of one queue) must count all of them before building any: one that becomes
    shared half-way would leave the earlier ones with copies."""
    for stage in source_stages(structure, what):
        add_consumer(stage, consumer)


def element_source(structure, what: str, consumer, fuse_units=True) -> ElementSource:
    """Lift the computation of `structure` from the stages it reads (see `element_dataset`).

    consumer: a key naming the reader of those stages (see `add_consumer`): the same key
    for every build of the same TF1 enqueue op.
    fuse_units: where the one stage read offers a `unit_map`, the upstream is that map's
    dataset and the computation applies its function first (the stage's map folded into the
    consumer's); not for a computation that is to be vectorized, which would batch reads."""
    computation = lifted(structure, what)
    sources = computation.sources
    for stage in sources:
        add_consumer(stage, consumer)
    units = _unit_map_of(sources, computation.source_outputs_read) if fuse_units else None
    if units is not None:
        return _fused(computation, sources[0], *units)
    upstream, parts = [], []
    for stage, outputs_read in zip(sources, computation.source_outputs_read):
        dataset, part = _upstream_of(stage, outputs_read)
        upstream.append(dataset)
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
        return computation.function(encoded, probes, given, inline)

    dense = all(isinstance(spec, tf.TensorSpec)
                for spec in tf.nest.flatten(dataset.element_spec))
    made = None if sources else functools.partial(lifting.function_without_inputs, computation)
    return ElementSource(dataset, compute, computation.stateful, dense, computation.ops,
                         computation.outputs, made)


def _unit_map_of(sources, outputs_read):
    """The `unit_map` of the one stage read, when it is copied (not shared) and offers one
    for the components read."""
    if len(sources) != 1 or sources[0].unit_map is None:
        return None
    stage = sources[0]
    if stage.pulls_from_kernel or owner_of(stage) is not None:
        return None
    return stage.unit_map(outputs_read[0])


def _fused(lifted, stage, units: tf.data.Dataset, element_of: Callable) -> ElementSource:
    """The computation over the stage's units: each unit's element, then the user's ops."""
    def compute(unit, probes=(), given=(), inline=False):
        return lifted.function([stage.encoded(element_of(unit))], probes, given, inline)

    dense = all(isinstance(spec, tf.TensorSpec) for spec in tf.nest.flatten(units.element_spec))
    return ElementSource(units, compute, lifted.stateful, dense, lifted.ops, lifted.outputs,
                         units=FusedUnits(stage, element_of, lifted))


def _upstream_of(stage, outputs_read):
    """The stage's dataset as this consumer reads it, or only the components read when the
    stage can build just those: (dataset, indices of its components, or None for all)."""
    if stage.pulls_from_kernel or owner_of(stage) is not None:
        return consumed(stage, stage.dataset_factory), None
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


def element_dataset(structure, what: str, consumer) -> tf.data.Dataset:
    """A dataset whose elements are `structure` computed once per upstream element.

    `structure` is what the user passes to an enqueue/batch call: tensors (or SparseTensors,
    lists, dicts) computed by arbitrary ops from zero or more stages' outputs. The upstream
    stages are zipped (one element of each per computed element, as one TF1 enqueue run
    dequeues once from each input queue); with no upstream stage the computation repeats
    forever, as a TF1 enqueue of constants or random ops does.
    """
    return element_source(structure, what, consumer).computed()
