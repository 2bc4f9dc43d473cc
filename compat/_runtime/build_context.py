"""The context the shim builds datasets in, and what building one finds out about it.

`building(graph)` is entered around every trace of a stage's dataset: in the graph, with the
graph's op-seed counter left as TF1 would leave it, autograph off, the shim's own control
flow v2 and its own dataset functions prepared for one device; it yields a `Frame` that the
trace fills (the shared streams it pulls from, whether it waits on Session runs).
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import threading

import tensorflow as tf
from tensorflow.python.autograph.core import ag_ctx as _autograph_ctx
from tensorflow.python.framework import random_seed as _random_seed
from tensorflow.python.ops import control_flow_util as _control_flow_util

from compat._runtime import dataset_functions


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


def without_autograph():
    """The shim's dataset functions are plain graph code (user ops are copied, not traced from
    Python), so autograph's source conversion would only cost build time."""
    return _autograph_ctx.ControlStatusCtx(status=_autograph_ctx.Status.DISABLED)


@contextlib.contextmanager
def shim_control_flow(v2: bool):
    """The form of the shim's own conds and loops, under either TF behaviour.

    v2 (If, While) in what the shim builds for tf.data: one compiled form for both
    behaviours, the one tf.data functions are built for. v1 (Switch, Merge, Enter, Exit)
    where it adds a loop to the user's own graph (`fed_batches`): those ops run in the
    Session's executor as they are, where a While and its If would be functions the first
    run makes, lowers and optimizes (FaceNet's first batch came ~80 ms later). A
    tf.function's graph builds v2 either way. The user's ops are imported as they are, v1
    control flow included (see `lifting`)."""
    saved = _control_flow_util.ENABLE_CONTROL_FLOW_V2
    _control_flow_util.ENABLE_CONTROL_FLOW_V2 = v2
    try:
        yield
    finally:
        _control_flow_util.ENABLE_CONTROL_FLOW_V2 = saved


_build_frames = threading.local()


class Frame:
    """What building one dataset found out about it."""

    def __init__(self):
        self.owners: set = set()  # the owners of shared streams it pulls from (see `pulled`)
        # whether its elements can wait for a Session run (a fed queue's enqueue, see
        # `waits_on_session_runs`)
        self.waits_on_runs = False
        # whether tf.data functions traced now are prepared for one device (see
        # `_install_one_device_functions`)
        self.one_device_functions = True
        self.repeatable_order = False  # see `repeatable_order`
        # whether its per-element functions add floats as TF1's Session's threads split them
        # (see `threads_as_tf1`)
        self.threads_as_tf1 = False


@contextlib.contextmanager
def building(graph):
    """Build a stage's dataset: yields its `Frame`, filled as the dataset is built."""
    frames = _build_frames.__dict__.setdefault("frames", [])
    frames.append(Frame())
    frames[-1].one_device_functions = (
        not getattr(graph, "_compat_functions_as_tf_makes_them", False)
        and (len(frames) == 1 or frames[-2].one_device_functions))
    frames[-1].repeatable_order = (getattr(graph, "_compat_repeatable_order", False)
                                   or (len(frames) > 1 and frames[-2].repeatable_order))
    try:
        with graph.as_default(), seed_counter_preserved(graph), without_autograph(), \
                shim_control_flow(v2=True):
            yield frames[-1]
    finally:
        frame = frames.pop()
        if frames and frame.waits_on_runs:
            frames[-1].waits_on_runs = True
        if frames and frame.threads_as_tf1:
            frames[-1].threads_as_tf1 = True


def waits_on_session_runs() -> None:
    """Note that the dataset being built takes elements from a queue kernel that Session runs
    fill (a fed queue): its consumers must not hold a Session's threads while they wait."""
    frames = _build_frames.__dict__.get("frames")
    if frames:
        frames[-1].waits_on_runs = True


def threads_as_tf1() -> None:
    """Note that the dataset being built computes floats whose last bits depend on how many
    threads add them (see `vectorize.adds_as_threads_split`): its pipeline must let its ops
    use the device's intra-op threads as TF1's Session does (`stage_iterators.with_pipeline_
    options`)."""
    frames = _build_frames.__dict__.get("frames")
    if frames:
        frames[-1].threads_as_tf1 = True


def threads_as_tf1_now() -> bool:
    frames = _build_frames.__dict__.get("frames")
    return bool(frames) and frames[-1].threads_as_tf1


def pulls_from(owner_op: tf.Operation, waits_on_runs: bool) -> None:
    """Note that the dataset being built pulls from a shared stream created by `owner_op`."""
    frames = _build_frames.__dict__.get("frames")
    if frames:
        frames[-1].owners.add(owner_op)
        frames[-1].waits_on_runs |= waits_on_runs


@contextlib.contextmanager
def user_ops_per_element():
    """Trace the tf.data functions that run the user's ops element by element inside: they
    keep TF's multi-device preparation, whose graph passes (oneDNN's kernel rewrites among
    them) give those ops the kernels TF1's Session gives them, so floats stay TF1's."""
    frames = _build_frames.__dict__.get("frames")
    if not frames:
        yield
        return
    saved = frames[-1].one_device_functions
    frames[-1].one_device_functions = False
    try:
        yield
    finally:
        frames[-1].one_device_functions = saved


def functions_as_tf_makes_them(graph: tf.Graph) -> None:
    """Leave the tf.data functions of pipelines built in `graph` as TF makes them (for
    `compat.to_dataset`, whose datasets leave the graph: TF's static dataset optimizations,
    which a user's iteration applies, reject functions prepared for one device)."""
    graph._compat_functions_as_tf_makes_them = True  # pylint: disable=protected-access


def repeatable_order(graph: tf.Graph) -> None:
    """Make the pipelines built in `graph` give the same order on every iteration wherever
    the order depends on nothing but seeds (for `compat.to_dataset`: a seeded pipeline gives
    the same elements every time, which the tf.data service's data sharding relies on, each
    worker keeping its share of what it computes). In a Session the shim takes what TF1
    takes in thread-timing order as it is ready (see `datasets.interleaved`)."""
    graph._compat_repeatable_order = True  # pylint: disable=protected-access


def epochs_split_by_row(graph: tf.Graph) -> None:
    """Make the producers built in `graph` give their epochs as one list of rows where they
    can (for `compat.to_dataset`: the tf.data service's dynamic sharding then hands out a
    file at a time, not a whole epoch; see `producers`)."""
    graph._compat_epochs_split_by_row = True  # pylint: disable=protected-access


def epochs_split_by_row_now() -> bool:
    return getattr(tf.compat.v1.get_default_graph(), "_compat_epochs_split_by_row", False)


def repeatable_order_now() -> bool:
    frames = _build_frames.__dict__.get("frames")
    return bool(frames) and frames[-1].repeatable_order


def _building_now() -> bool:
    return bool(_build_frames.__dict__.get("frames"))


def one_device_functions_now() -> bool:
    """Whether tf.data functions made now are prepared for one device (see
    `_install_one_device_functions`)."""
    frames = _build_frames.__dict__.get("frames")
    return bool(frames) and frames[-1].one_device_functions


def makes_dataset_functions() -> bool:
    """Whether the shim makes the tf.data functions of the dataset being built now
    (`dataset_functions`), rather than TF's own path."""
    from tensorflow.python.data.ops import structured_function
    return (_building_now() and dataset_functions.can_trace({}) and getattr(
        structured_function.StructuredFunctionWrapper, "_compat_one_device", False))


def _install_one_device_functions() -> None:
    """Prepare the shim's own tf.data functions on one device.

    tf.data prepares a function carrying `experimental_ints_on_device` (as TF's own
    prefetch-to-device functions do) on the device that runs it, without the multi-device
    path and its grappler pass with the Session's options, which was most of a pipeline's
    first run (MNIST example: first run ~105 -> ~65 ms). Kept on the multi-device path: the
    functions that run the user's ops element by element (`user_ops_per_element`), unless
    those ops give TF1's floats either way (`vectorize.same_floats_on_one_device`). A batch
    computed whole (`vectorize`) holds only ops whose every kernel rounds each element
    exactly as TF1's (one correctly rounded operation, or none), and the user's ops in any
    function still get the rewrites of TF1's Session: they sit in functions of their own that
    the Session's grappler optimizes (`lifting.called_as_function`). Lifting drops device
    requests, so every op runs on the pipeline's device either way. TF's injected prefetch,
    whose pass over a pipeline's functions rejects such functions, is off in the shim's
    pipelines (`stage_iterators.with_pipeline_options`). Wrapped once per process;
    tf.data functions traced outside the shim's builds (the user's own) are left as TF makes
    them, and so are those of `compat.to_dataset` (prepared as TF prepares them, though traced
    by `dataset_functions` as in every shim build: the same FunctionDefs).
    """
    from tensorflow.python.data.ops import structured_function
    wrapper_class = structured_function.StructuredFunctionWrapper
    if getattr(wrapper_class, "_compat_one_device", False):
        return
    original = wrapper_class.__init__
    parameters = list(inspect.signature(original).parameters)
    if parameters[9:11] != ["use_legacy_function", "defun_kwargs"]:
        return  # a TF whose wrapper takes other arguments: its functions stay as TF makes them

    @functools.wraps(original)
    def init(self, *args, **kwargs):
        # Only where use_legacy_function/defun_kwargs come as keywords (at most 8 positional
        # arguments), as every tf.data caller passes them; legacy functions take no such
        # attribute.
        if (one_device_functions_now() and len(args) <= 8
                and not kwargs.get("use_legacy_function")):
            kwargs["defun_kwargs"] = {**(kwargs.get("defun_kwargs") or {}),
                                      "experimental_ints_on_device": True}
        if _building_now() and len(args) <= 8 and dataset_functions.can_trace(kwargs):
            dataset_functions.trace(self, *args, **kwargs)
        else:
            original(self, *args, **kwargs)

    wrapper_class.__init__ = init
    wrapper_class._compat_one_device = True  # pylint: disable=protected-access


_install_one_device_functions()
