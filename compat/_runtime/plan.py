"""The pipeline plan: stages that stand for "the next element of this pipeline stage".

A TF1 queue stage (a producer's queue, a reader, a batching queue, a hand-built queue) is a
`Stage` here: a factory that builds the stage's elements as a `tf.data.Dataset`, plus the
tensors that user code sees, which are the `get_next()` of a one-shot iterator over that
dataset. Running those tensors in a Session pulls one element, exactly like a dequeue; a
one-shot iterator needs no initializer, so users' old init calls neither break nor are needed.

A later stage does not read an earlier stage's iterator: it asks `element_source` (module
`element_source`) for its inputs, which lifts the user's ops between the stages (see `lifting`) into a map over a fresh
copy of the upstream datasets. So the whole chain is one tf.data pipeline, and an earlier
stage's own iterator only runs if the user fetches its tensors directly.

Streams with several consumers. A TF1 queue hands each element to exactly one dequeue: two
batch calls on one reader's output, four preprocessing threads dequeuing one queue, several
readers of one filename queue split the elements between them, however fast each pulls.
A stream (a stage, or a producer's or compiled queue's elements) with one consumer is copied
into that consumer's pipeline (the fast path). When it gains a second consumer it becomes
*shared*: its elements come from one iterator found by a shared name (so each Session has
its own), and every consumer's pipeline, the stream's own get_next included, pulls one
element at a time from it. The stream's *owner* op creates that iterator, once per Session:
a one-shot iterator (which runs its dataset factory exactly once) whose factory makes the
shared iterator as a side effect. Every pipeline that pulls from a shared stream runs after
its owner (a control dependency), and consumers created before the stream became shared
are rebuilt (their iterators are pointed at freshly traced datasets). A stage with one consumer that copied it refuses a direct fetch of its own
tensors, which would otherwise see copies of the elements its consumer sees.

When pipelines are traced. A stage whose element spec is known without its dataset (a
reader's; a batch call's or a producer's dequeue, which is TF1's dequeue's; a compiled
queue's dequeue, of the enqueued values' shapes) is traced only when its graph is first run,
finalized or written out (`build_pending`, called through `graph_hooks`), and so are stages
whose consumers changed and the owners of shared streams: each pipeline is traced once, for
the consumers it finally has, and building a graph costs about what TF1's does. TF1's
construction errors are checked before (batching's arguments and shapes; lifting, which
refuses what cannot be computed in tf.data, runs when the consumer is counted), so they come
from the call TF1 raises them from. Stages whose spec only their dataset knows (padded and
sparse batches, a compiled PaddingFIFOQueue's batches) are traced as they are built.

The plan of a graph lives on the graph, so both are freed together.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Callable

import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2
from tensorflow.python.framework import func_graph as _func_graph
from tensorflow.python.ops import gen_dataset_ops
from tensorflow.python.data.util import structure as _structure
from tensorflow.python.data.util import traverse as _traverse
from tensorflow.python.framework import function as legacy_function

from compat._runtime import (build_context, cancellable_runs, dataset_factories, graph_hooks,
                             prepared_functions, pull_maps, session_runs, stage_iterators,
                             written_datasets)


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
    pulls_from_kernel: the dataset takes each element from a TF queue kernel when asked (a
        fed queue's dequeue), so its consumers share the elements without an owner.
    on_demand: whether the stage's own iterator must take elements only when run (no
        prefetch, which would strand elements that other dequeues of a shared queue should
        get): a bool, or a callable asked each time the stage is built.
    unit_map: for a stage each of whose elements is one function of one element of another
        dataset (a whole-file reader's: one record per file name): given the component
        indices a consumer reads, optionally builds that dataset and gives the function, or
        None where it cannot (or where the function's work would go unused and be pruned,
        losing TF1's errors); a consumer computing per element then reads and computes in
        one map (two parallel maps hand each element between threads twice: JPEG files
        decoded ~30% slower on 2 cores).
    reads_only: its elements come straight from files or constants (a reader's records, a
        producer's), with no user op or Session run upstream that could hold them up: a
        consumer may take them in turn with other such inputs (see `datasets.interleaved`).
    """

    dataset_factory: Callable[[], tf.data.Dataset]
    get_next_op: tf.Operation
    element_spec: object
    name: str
    part_factory: Callable[[tuple], tf.data.Dataset | None] | None = None
    pulls_from_kernel: bool = False
    on_demand: bool | Callable[[], bool] = False
    unit_map: Callable[[tuple], tuple[tf.data.Dataset, Callable] | None] | None = None
    reads_only: bool = False

    @property
    def iterator_op(self) -> tf.Operation:
        """The one-shot iterator the stage's get_next reads."""
        return self.get_next_op.inputs[0].op

    def encoded(self, element):
        """`element` as the flat tensor list that `get_next_op` outputs."""
        return _structure.to_tensor_list(self.element_spec, element)


class _GraphPlan:
    """The stages of one graph and who consumes which stream (kept on the graph itself)."""

    def __init__(self):
        self.stages: dict[str, Stage] = {}  # get_next op name -> stage, in creation order
        self.streams: dict = {}  # stream key -> the stream (a Stage or a queue of stages)
        self.consumers: dict = {}  # stream key -> consumer keys
        self.owners: dict = {}  # stream key -> _Owner of a shared stream
        # what to trace before the graph is used: stage or owner key -> its build()
        self.unbuilt: dict = {}
        self.has_fed_queue = False  # see `may_wait_on_runs`


def _plan_of(graph, create=False) -> _GraphPlan | None:
    plan = getattr(graph, "_compat_plan", None)
    if plan is None and create:
        plan = _GraphPlan()
        graph._compat_plan = plan  # pylint: disable=protected-access
    return plan


def stage_count(graph) -> int:
    """How many stages `graph` has had registered (a registration only adds one)."""
    plan = _plan_of(graph)
    return 0 if plan is None else len(plan.stages)


def stage_of(op: tf.Operation) -> Stage | None:
    plan = _plan_of(op.graph)
    return None if plan is None else plan.stages.get(op.name)


def register(dataset_factory: Callable[[], tf.data.Dataset], name: str, part_factory=None,
             on_demand=False, element_spec=None, blocking=False, unit_map=None,
             reads_only=False):
    """Create a stage; return the structure user code consumes (the iterator's next element).

    part_factory, on_demand, unit_map, reads_only: see `Stage`. element_spec: the elements'
    spec, for a stage whose factory raises none of TF1's construction errors (those are
    checked before);
    given it, the dataset is traced only when a Session first runs the graph (see
    `build_pending`), once its consumers are known, and `blocking` says whether its get_next
    may wait on the Session's thread (see `stage_iterators.next_of`; only where no fed queue
    can be upstream, see `may_wait_on_runs`)."""
    graph = tf.compat.v1.get_default_graph()
    if element_spec is not None and _defers(graph):
        iterator = stage_iterators.unbuilt_iterator(graph, element_spec)
        element = stage_iterators.next_of(iterator, name, blocking=blocking)
        get_next_op = stage_iterators.get_next_op_of(
            tf.nest.flatten(element, expand_composites=True))
        stage = Stage(dataset_factory, get_next_op, element_spec, name, part_factory,
                      on_demand=on_demand, unit_map=unit_map, reads_only=reads_only)
        add_stage(stage)
        _rebuild(stage)
        return element
    with build_context.building(graph) as frame:
        dataset = _taken_as(dataset_factory(), on_demand)
        with tf.control_dependencies(_sorted_ops(frame.owners)):
            iterator = stage_iterators.one_shot_iterator(dataset)
            element = stage_iterators.next_of(iterator, name, blocking=not frame.waits_on_runs)
    flat = tf.nest.flatten(element, expand_composites=True)
    get_next_op = stage_iterators.get_next_op_of(flat)
    add_stage(Stage(dataset_factory, get_next_op, dataset.element_spec, name, part_factory,
                    on_demand=on_demand, unit_map=unit_map, reads_only=reads_only))
    return element


def note_fed_queue(graph) -> None:
    """Note that `graph` has a queue fed by Session runs (see `may_wait_on_runs`): its runs
    may wait on the feeder, where a closing Session must reach them (`cancellable_runs`)."""
    _plan_of(graph, create=True).has_fed_queue = True
    cancellable_runs.note_may_wait(graph)


def may_wait_on_runs(graph) -> bool:
    """Whether a stage built now could read a queue that Session runs fill: whether the graph
    has one yet (a stage's upstream is built before it; queues are fed or compiled at their
    first dequeue). A stage built to block that does read one fails at its trace."""
    plan = _plan_of(graph)
    return plan is not None and plan.has_fed_queue


def _defers(graph) -> bool:
    """Whether pipelines of `graph` are traced when it is first used (see `graph_hooks`),
    rather than as they are built: in a graph a Session runs, not in a function's graph,
    which is traced once, now."""
    return not isinstance(graph, _func_graph.FuncGraph)


def build_pending(graph) -> None:
    """Trace the graph's pipelines not traced yet (or traced before their consumers were all
    known). Called before the graph runs, is finalized or written out (`graph_hooks`)."""
    plan = _plan_of(graph)
    if plan is None or not plan.unbuilt:
        return
    was_finalized = graph.finalized
    if was_finalized:
        graph._unsafe_unfinalize()  # pylint: disable=protected-access
    try:
        with graph.as_default(), graph.control_dependencies(None), \
                tf.compat.v1.name_scope(None):
            while plan.unbuilt:
                _, build = plan.unbuilt.popitem()
                build()
    finally:
        if was_finalized:
            graph.finalize()


def add_stage(stage: Stage) -> None:
    """Enter a stage whose consumer op already exists (e.g. a fed queue's dequeue)."""
    _plan_of(stage.get_next_op.graph, create=True).stages[stage.get_next_op.name] = stage


def _sorted_ops(ops):
    return sorted(ops, key=lambda op: op.name)


def _build_when_used(graph, key, build: Callable[[], None]) -> None:
    """Run `build` before `graph` is first used (see `build_pending`; a later call with the
    same key replaces it), or now in a function's graph."""
    if _defers(graph):
        _plan_of(graph).unbuilt[key] = build
    else:
        build()


def _rebuild(stage: Stage) -> None:
    """Point the stage's iterator at its dataset traced anew (consumers changed), when the
    graph is next used."""
    _build_when_used(stage.get_next_op.graph, _stream_key(stage), lambda: _build_stage(stage))


def _refused(stage: Stage) -> bool:
    """Whether the stage's one consumer copies its elements, so that its own iterator must
    refuse to yield them (no dataset is traced for it)."""
    key = _stream_key(stage)
    plan = _plan_of(stage.get_next_op.graph)
    return key not in plan.owners and len(plan.consumers.get(key, ())) == 1


def _build_stage(stage: Stage) -> None:
    graph = stage.get_next_op.graph
    if _refused(stage):
        stage_iterators.refuse_direct_fetches(stage.iterator_op)
        return
    # In the name scope it was created in (a batch call's), as when traced at once.
    scope = stage.name if stage.name.endswith("/") else None
    with build_context.building(graph) as frame, tf.compat.v1.name_scope(scope):
        dataset = _own_dataset(stage)
        factory = dataset_factories.of_dataset(dataset)
    if frame.waits_on_runs and stage.get_next_op.type == "IteratorGetNextSync":
        raise AssertionError(f"{stage.name}: built to block, now reads a fed queue")
    built, declared = (tf.nest.flatten(spec) for spec in (dataset.element_spec,
                                                            stage.element_spec))
    if len(built) != len(declared) or not all(
            part.is_compatible_with(want) for part, want in zip(built, declared)):
        raise AssertionError(f"{stage.name}: built {dataset.element_spec}, declared "
                             f"{stage.element_spec}")
    stage.iterator_op._set_attr("dataset_factory", factory)  # pylint: disable=protected-access
    _run_after(frame.owners, [stage.iterator_op, stage.get_next_op])


def _run_after(owner_ops, ops) -> None:
    for op in ops:
        missing = [owner for owner in _sorted_ops(owner_ops)
                   if owner is not op and owner not in op.control_inputs]
        if missing:
            op._add_control_inputs(missing)  # pylint: disable=protected-access


def _own_dataset(stage: Stage) -> tf.data.Dataset:
    """What the stage's own iterator yields: its elements (pulled from the shared iterator
    when shared), unless one consumer copies them."""
    plan = _plan_of(stage.get_next_op.graph)
    key = _stream_key(stage)
    if key in plan.owners:
        dataset = pulled(plan.owners[key])
    else:
        dataset = stage.dataset_factory()
    return _taken_as(dataset, stage.on_demand)


def _taken_as(dataset, on_demand) -> tf.data.Dataset:
    """The dataset as a stage's iterator takes it: with the shim's pipeline options, and
    taking elements only when asked if `on_demand` (see `Stage`) says so."""
    dataset = stage_iterators.with_pipeline_options(dataset)
    if on_demand() if callable(on_demand) else on_demand:
        return written_datasets.with_options(dataset, stage_iterators.on_demand_options())
    return dataset


# --- streams with several consumers --------------------------------------------------------
def _stream_key(stream):
    if isinstance(stream, Stage):
        return ("stage", stream.get_next_op.name)
    return ("queue", id(stream))


def add_consumer(stream, consumer) -> None:
    """Count `consumer` (any hashable key; the same key again counts once) as reading
    `stream`: a Stage, or a queue whose `all_elements()` builds its stream.

    A second consumer makes the stream shared (see the module docstring)."""
    if isinstance(stream, Stage) and stream.pulls_from_kernel:
        return
    graph = (stream.get_next_op.graph if isinstance(stream, Stage)
             else tf.compat.v1.get_default_graph())
    plan = _plan_of(graph, create=True)
    key = _stream_key(stream)
    consumers = plan.consumers.setdefault(key, set())
    if consumer in consumers:
        return
    consumers.add(consumer)
    plan.streams[key] = stream
    if len(consumers) == 2:
        plan.owners[key] = _Owner.create(stream, graph)
        _rebuild_all(plan)
    elif len(consumers) == 1 and isinstance(stream, Stage):
        _rebuild(stream)  # its own iterator now refuses direct fetches


def retrace(graph) -> None:
    """Trace every pipeline of the graph anew (a stage's factory now builds something else,
    e.g. a reader whose counters were asked for after its consumers were built)."""
    plan = _plan_of(graph)
    if plan is not None:
        _rebuild_all(plan)


def _rebuild_all(plan: _GraphPlan) -> None:
    for owner in list(plan.owners.values()):
        owner.rebuild()
    for stage in list(plan.stages.values()):
        if not stage.pulls_from_kernel:
            _rebuild(stage)


def _all_elements(stream) -> tf.data.Dataset:
    return stream.dataset_factory() if isinstance(stream, Stage) else stream.all_elements()


def _declared_spec(stream):
    """The spec of a stream's elements when known without tracing it, else None."""
    if isinstance(stream, Stage):
        return stream.element_spec
    declared = getattr(stream, "element_spec", None)
    return declared() if callable(declared) else None


class _Owner:
    """The op that creates a shared stream's iterator (see the module docstring)."""

    def __init__(self, stream, init_op, shared_name, element_spec):
        self.stream = stream
        self.init_op = init_op
        self.shared_name = shared_name
        self.element_spec = element_spec
        self.waits_on_runs = False  # see `build_context.Frame`

    @classmethod
    def create(cls, stream, graph):
        shared_name = f"compat_stream_{uuid.uuid4().hex}"
        spec = _declared_spec(stream)
        if spec is not None and _defers(graph):
            # Traced when the graph is first used (the caller schedules `rebuild`): its
            # consumers need only the spec now. A stream built so far reads a fed queue
            # only if the graph has one (a stream's upstream exists before it).
            stand_in = stage_iterators.unbuilt_iterator(graph, tf.TensorSpec([], tf.int32),
                                                        name="shared_stream")
            owner = cls(stream, stand_in._iterator_resource.op, shared_name, spec)  # pylint: disable=protected-access
            owner.waits_on_runs = may_wait_on_runs(graph)
            return owner
        with build_context.building(graph) as frame:
            dataset = _all_elements(stream)
            init_op = cls._initializer(dataset, shared_name)
        _run_after(frame.owners, [init_op])
        owner = cls(stream, init_op, shared_name, dataset.element_spec)
        owner.waits_on_runs = frame.waits_on_runs
        return owner

    @staticmethod
    def _initializer(dataset, shared_name) -> tf.Operation:
        """A one-shot iterator over nothing, whose factory makes `dataset`'s iterator under
        `shared_name` (a one-shot iterator runs its factory once per Session)."""
        return gen_dataset_ops.one_shot_iterator(
            dataset_factory=_Owner._factory(dataset, shared_name), output_types=[tf.int32],
            output_shapes=[[]], name="shared_stream").op

    @staticmethod
    def _factory(dataset, shared_name):
        """The initializer's dataset factory (see `dataset_factories.making_shared_iterator`)."""
        dataset = stage_iterators.with_pipeline_options(dataset)
        made = dataset_factories.making_shared_iterator(dataset, shared_name)
        if made is not None:
            return made
        types = _structure.get_flat_tensor_types(dataset.element_spec)
        shapes = _structure.get_flat_tensor_shapes(dataset.element_spec)

        # Where its ops cannot be copied: as make_one_shot_iterator copies them, and its error.
        @legacy_function.Defun(
            capture_by_value=True,
            allowlisted_stateful_ops=_traverse.obtain_capture_by_value_ops(dataset))
        def make_shared_iterator():
            handle = gen_dataset_ops.iterator_v2(shared_name=shared_name, container="",
                                                 output_types=types, output_shapes=shapes)
            made = gen_dataset_ops.make_iterator(dataset._variant_tensor, handle)  # pylint: disable=protected-access
            with tf.control_dependencies([made]):
                return tf.data.Dataset.from_tensors(tf.constant(0))._variant_tensor  # pylint: disable=protected-access

        make_shared_iterator.add_to_graph(tf.compat.v1.get_default_graph())
        return make_shared_iterator

    def rebuild(self) -> None:
        _build_when_used(self.init_op.graph, ("owner", self.shared_name), self.build)

    def build(self) -> None:
        graph = self.init_op.graph
        with build_context.building(graph) as frame:
            factory = self._factory(_all_elements(self.stream), self.shared_name)
        if frame.waits_on_runs and not self.waits_on_runs:
            raise AssertionError(f"shared stream {self.shared_name}: now reads a fed queue")
        self.init_op._set_attr("dataset_factory", attr_value_pb2.AttrValue(  # pylint: disable=protected-access
            func=attr_value_pb2.NameAttrList(name=factory.name)))
        _run_after(frame.owners, [self.init_op])


def owner_of(stream) -> _Owner | None:
    """The owner of a shared stream, or None while the stream is copied by its consumer."""
    graph = (stream.get_next_op.graph if isinstance(stream, Stage)
             else tf.compat.v1.get_default_graph())
    plan = _plan_of(graph)
    return None if plan is None else plan.owners.get(_stream_key(stream))


def consumed(stream, copy: Callable[[], tf.data.Dataset]) -> tf.data.Dataset:
    """The stream as one consumer sees it: pulled from its shared iterator when shared, else
    copied (`copy()`)."""
    owner = owner_of(stream)
    return copy() if owner is None else pulled(owner)


def pulled(owner: _Owner) -> tf.data.Dataset:
    """The shared stream's elements, each taken from its iterator when this dataset is asked
    for one; ends where the stream ends."""
    build_context.pulls_from(owner.init_op, owner.waits_on_runs)
    return pull_maps.pulled(iterator_attrs(owner), owner.element_spec)


class _Stream:
    """A stream that is no stage of its own (see `shared_stream`)."""

    def __init__(self, elements: Callable[[], tf.data.Dataset], name: str):
        self.all_elements = elements
        self.name = name


def shared_stream(elements: Callable[[], tf.data.Dataset], name: str) -> _Owner:
    """A stream read only by pulling from its shared iterator (see `pulled`), e.g. by a
    batch whose size is fed on each run (`fed_batches`)."""
    graph = tf.compat.v1.get_default_graph()
    plan = _plan_of(graph, create=True)
    stream = _Stream(elements, name)
    key = _stream_key(stream)
    plan.streams[key] = stream
    owner = plan.owners[key] = _Owner.create(stream, graph)
    return owner


def iterator_attrs(owner: _Owner) -> dict:
    """The attributes that find a shared stream's iterator (an `iterator_v2` op's)."""
    spec = owner.element_spec
    return dict(shared_name=owner.shared_name, container="",
                output_types=_structure.get_flat_tensor_types(spec),
                output_shapes=_structure.get_flat_tensor_shapes(spec))


graph_hooks.install(build_pending, prepared_functions.prepare)
session_runs.install()
