"""Repeated Session runs of a pipeline's graph skip the Python work they repeat.

Each `Session.run` works out again in Python what the same run worked out before: the
structure of the fetches, each feed's tensor, dtype and shape, the C handles of the feeds,
fetches and targets. For the runs TF1 input code repeats, that is most of the cost: ~120 us
to enqueue one example fed from Python, where the C run itself (`TF_SessionRun`, with the
Session's executors for those names made at the first run) takes ~20 us; fetching a batch
costs ~50 us less.

So, in a Session whose graph holds a shim pipeline, the second run of the same fetches with
the same feed keys keeps that work (`_PreparedRun`), and later runs of them only convert the
fed values and call the C run. TF's own `Session.run` still does everything else, and every
run it would reject or treat specially: fetches other than a tensor, an operation or a flat list, tuple or dict of them (also a fetched tensor that is
fed), feeds other than plain values for tensors, a value whose dtype or shape the feed's
tensor refuses, a graph grown since the Session was last extended with it (it must be
extended again, and its pipelines may still have to be built, see `graph_hooks`), a tensor
or op made unfeedable or unfetchable or a fed shape narrowed since the run was prepared, a
closed Session. Results and errors are those of `Session.run`: the same fetch mapper builds
the results, and failures go through the Session's own error rewriting (`_do_call`). Until
the streams of its batches of fed size are made (`stream_starts`), a Session's runs keep TF's
path, with a read of a stream no runner made explained.
"""
from __future__ import annotations

import functools
import threading

import numpy as np
from tensorflow.python.client import session as _session
from tensorflow.python.framework import dtypes as _dtypes
from tensorflow.python.framework import errors as _errors
from tensorflow.python.framework import ops as _ops
from tensorflow.python.framework import tensor as _tensor
from tensorflow.python.ops import session_ops as _session_ops
from tensorflow.python.util import compat as _compat

from compat._runtime import arguments, cancellable_runs

# A run seen this often is prepared: a run made once (an initializer, a Saver's restore)
# is not worth keeping.
_RUNS_BEFORE_PREPARED = 2
# Prepared runs kept per Session; runs beyond this keep TF's own path.
_MAX_PREPARED = 64
# Runs counted per Session before it stops noting new ones.
_MAX_COUNTED = 1024
_NOT_PREPARED = object()
# Feeds of these dtypes are numpy values converted as Session.run converts them (not
# resources, variants or the references of v1 variables).
_PLAIN_DTYPES = frozenset(_dtypes.as_dtype(name) for name in (
    "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
    "uint16", "uint32", "uint64", "bool", "string", "complex64", "complex128"))

_install_lock = threading.Lock()
_installed = []
_lock = threading.Lock()


def _feed_array_function():
    """Session.run's own conversion of one fed value: `np.asarray` where this TF's session
    uses it, else `numpy_compat.np_asarray`, in the form it has in this TF (whether it copies
    an array of the fed dtype differs between versions, and the C run may keep the array it
    is given) but with numpy's version read once, not twice per value (~5 us). Where that
    form does not give TF's own results on a set of probes, TF's own function is used."""
    numpy_compat = getattr(_session, "numpy_compat", None)
    if numpy_compat is None:
        return lambda value, dtype: np.asarray(value, dtype=dtype)
    own = numpy_compat.np_asarray
    if np.lib.NumpyVersion(np.__version__) < "2.0.0.dev0":
        return _checked(lambda value, dtype: np.asarray(value, dtype=dtype), own)
    probe = np.zeros(3, np.float32)
    copies = not np.shares_memory(own(probe, np.float32), probe)

    def as_array(value, dtype):
        if dtype is not None and np.issubdtype(dtype, np.number):
            array = np.asarray(value, order=None, copy=None)
            return array.astype(dtype) if copies else array.astype(dtype, copy=None)
        return np.asarray(value, dtype=dtype, order=None, copy=None)
    return _checked(as_array, own)


def _checked(as_array, own):
    """`as_array` where it agrees with `own` on every probe (values, dtype, shape, whether
    the result shares the fed array's memory), else `own`."""
    probes = [
        (np.arange(4, dtype=np.float64), np.float32), (np.arange(4, dtype=np.float32), np.float32),
        (np.arange(4, dtype=np.int64), np.int64), (np.arange(4, dtype=np.int32), np.int64),
        ([1, 2, 3], np.int32), ([[0.5, 1.5]], np.float16), (3, np.int64), (2.5, np.float32),
        (True, np.bool_), (np.array([True]), np.bool_), ("text", object), (b"bytes", object),
        (np.array([b"a", b"bc"], dtype=object), object), (["a", "b"], object),
        (np.uint8(7), np.uint8), (1 + 2j, np.complex64)]
    try:
        for value, dtype in probes:
            mine, theirs = as_array(value, dtype), own(value, dtype)
            if (type(mine) is not type(theirs) or mine.dtype != theirs.dtype
                    or mine.shape != theirs.shape or not np.array_equal(mine, theirs)
                    or (isinstance(value, np.ndarray)
                        and np.shares_memory(mine, value) != np.shares_memory(theirs, value))):
                return own
    except Exception:  # noqa: BLE001 - any difference keeps TF's own conversion
        return own
    return as_array


class _PreparedRun:
    """What `Session.run` works out for one run: how to build its results from the fetched
    values, the C handles of its fetches and targets, and per feed its C handle, numpy dtype
    and dims."""

    __slots__ = ("build_results", "fetches", "targets", "feeds", "refusals", "held")

    def __init__(self, fetch_handler, feeds, refusals, held):
        self.build_results = _results_builder(fetch_handler)
        self.fetches = [tensor._as_tf_output() for tensor in fetch_handler.fetches()]  # pylint: disable=protected-access
        self.targets = [op._c_op for op in fetch_handler.targets()]  # pylint: disable=protected-access
        # (tensor, its shape when prepared, C handle, numpy dtype, dims or None for an
        # unknown rank), in feed_dict's order
        self.feeds = [(feed, feed.shape, feed._as_tf_output(), feed.dtype.as_numpy_dtype,  # pylint: disable=protected-access
                       None if feed.shape.rank is None else tuple(feed.shape.as_list()))
                      for feed in feeds]
        self.refusals = refusals  # see `_refusals`
        self.held = held  # the fetch and feed objects whose ids make up the key

    def still_valid(self, graph) -> bool:
        """Whether what the Session checks at each run is still what it was when prepared:
        no tensor or op has been made unfeedable or unfetchable, no fed shape narrowed."""
        return (_refusals(graph) == self.refusals
                and all(feed.shape is shape for feed, shape, *_ in self.feeds))


class _SessionRuns:
    """One Session's runs: how often each ran, or what was prepared for it."""

    __slots__ = ("runs", "extended_version", "count", "reads_stages", "reads_version",
                 "coordinators", "stopped_stages")

    def __init__(self):
        self.runs: dict = {}  # key -> run count, _NOT_PREPARED, or a _PreparedRun
        # the graph's version when the Session was last extended with all of it
        self.extended_version = -1
        self.count = 0
        # key -> whether the run reads a pipeline stage, while the graph is at reads_version
        self.reads_stages: dict = {}
        self.reads_version = -1
        # the Coordinators start_queue_runners was given for this Session, and the stages
        # stopped by an error reported to them (see `_as_tf1_runner_error`)
        self.coordinators: list = []
        self.stopped_stages: dict = {}


def _results_builder(fetch_handler):
    """`fetch_handler.build_results`, without its per-fetch lookups of fed values and
    session handles where it has none (it was made without feeds; a fetched session handle
    keeps the handler's own path)."""
    # pylint: disable=protected-access
    if fetch_handler._fetch_handles or fetch_handler._feed_handles or fetch_handler._feeds:
        return fetch_handler.build_results
    mapper, is_op = fetch_handler._fetch_mapper, tuple(fetch_handler._ops)
    # pylint: enable=protected-access
    if not any(is_op):
        return lambda session, values: mapper.build_results(values)

    def build_results(session, values):
        values = iter(values)
        return mapper.build_results([None if op else next(values) for op in is_op])
    return build_results


def _refusals(graph):
    """How many tensors and ops `graph` refuses to feed and fetch (`prevent_feeding`,
    `prevent_fetching` only add to these)."""
    return (len(graph._unfeedable_tensors), len(graph._unfetchable_ops))  # pylint: disable=protected-access


def _fetch_key(fetches):
    kind = type(fetches)
    if kind is list or kind is tuple:
        return (kind, *map(id, fetches))
    if kind is dict:  # names of equal value and another type (1, True) are other results
        return (kind, *((type(name), name, id(value)) for name, value in fetches.items()))
    return (kind, id(fetches))


def _fetched(fetches):
    kind = type(fetches)
    if kind is list or kind is tuple:
        return list(fetches)
    if kind is dict:
        return list(fetches.values())
    return [fetches]


def _runnable(value, graph):
    return (isinstance(value, (_tensor.Tensor, _ops.Operation))
            and getattr(value, "graph", None) is graph)


def _feedable(feed, graph):
    return (isinstance(feed, _tensor.Tensor) and getattr(feed, "graph", None) is graph
            and graph.is_feedable(feed) and feed.dtype in _PLAIN_DTYPES)


def _prepare(graph, fetches, feed_dict):
    """The prepared run for these fetches and feeds, or None where TF's path must keep them."""
    fetched = _fetched(fetches)
    feeds = list(feed_dict) if feed_dict else []
    if not all(_runnable(value, graph) for value in fetched):
        return None
    if not all(_feedable(feed, graph) for feed in feeds):
        return None
    fed = {feed.ref() for feed in feeds}
    if any(isinstance(value, _tensor.Tensor) and value.ref() in fed for value in fetched):
        return None  # Session.run returns the fed value of a fetched tensor that is fed
    if type(fetches) is dict:
        fetches = dict(fetches)  # the handler keeps the names' view: not the caller's dict
    fetch_handler = _session._FetchHandler(graph, fetches, {})  # pylint: disable=protected-access
    if not fetch_handler.fetches() and not fetch_handler.targets():
        return None  # Session.run runs nothing; the C run would refuse to
    return _PreparedRun(fetch_handler, feeds, _refusals(graph), (fetched, feeds))


def _fits(shape, dims):
    if dims is None:
        return True
    return len(shape) == len(dims) and all(
        dim is None or dim == size for dim, size in zip(dims, shape))


def _feed_arrays(prepared, values, as_array):
    """The feeds as Session.run converts them ({C handle: array}), or None where it would
    not take the values as they are (it then raises, or treats them specially)."""
    arrays = {}
    for (_, _, output, dtype, dims), value in zip(prepared.feeds, values):
        if isinstance(value, (_tensor.Tensor, _session_ops.TensorHandle)):
            return None
        if isinstance(value, int) and _session._convert_to_numpy_obj(dtype, value) != value:  # pylint: disable=protected-access
            return None
        array = as_array(value, dtype)
        if not _fits(array.shape, dims):
            return None
        arrays[output] = array
    return arrays


def _run_prepared(session, prepared, feeds, options, run_metadata):
    """The C run, with run options and metadata passed as `Session.run` passes them."""
    c_api = _session.tf_session
    options_ptr = (c_api.TF_NewBufferFromString(_compat.as_bytes(options.SerializeToString()))
                   if options else None)
    run_metadata_ptr = c_api.TF_NewBuffer() if run_metadata else None

    def run():
        return c_api.TF_SessionRun_wrapper(session._session, options_ptr, feeds,  # pylint: disable=protected-access
                                           prepared.fetches, prepared.targets, run_metadata_ptr)
    try:
        results = prepared.build_results(session, session._do_call(run))  # pylint: disable=protected-access
        if run_metadata:
            run_metadata.ParseFromString(_compat.as_bytes(c_api.TF_GetBuffer(run_metadata_ptr)))
    finally:
        if run_metadata_ptr:
            c_api.TF_DeleteBuffer(run_metadata_ptr)
        if options:
            c_api.TF_DeleteBuffer(options_ptr)
    return results


def install() -> None:
    """Prepare the repeated runs of pipeline graphs (once per process)."""
    with _install_lock:
        if _installed:
            return
        _installed.append(True)
        as_array = _feed_array_function()
        original = _session.BaseSession.run

        @functools.wraps(original)
        def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
            graph = self._graph  # pylint: disable=protected-access
            if (self._closed or getattr(graph, "_compat_plan", None) is None  # pylint: disable=protected-access
                    or (feed_dict is not None and type(feed_dict) is not dict)):
                return original(self, fetches, feed_dict, options, run_metadata)
            state = _state_of(self)
            try:
                key = (_fetch_key(fetches), *map(id, feed_dict or ()))
            except TypeError:
                key = None
            if state.stopped_stages:
                _refuse_stopped_stages(state, graph, fetches)
            try:
                if cancellable_runs.may_wait(graph) and _reads_a_stage(state, key, graph,
                                                                       fetches):
                    return cancellable_runs.run(
                        self, lambda: run_here(self, state, key, fetches, feed_dict, options,
                                               run_metadata),
                        "its pipeline")
                return run_here(self, state, key, fetches, feed_dict, options, run_metadata)
            except _errors.OpError as error:
                raise _as_tf1_runner_error(self, state, graph, error, fetches) from None

        def run_here(self, state, key, fetches, feed_dict, options, run_metadata):
            graph = self._graph  # pylint: disable=protected-access
            starts = getattr(graph, "_compat_stream_starts", None)
            if starts is not None and not starts.settled(self):
                return starts.run(self, lambda: original(
                    self, fetches, feed_dict, options, run_metadata))
            if key is None:
                return original(self, fetches, feed_dict, options, run_metadata)
            prepared = state.runs.get(key)
            if type(prepared) is _PreparedRun and graph.version == state.extended_version:
                if not prepared.still_valid(graph):
                    state.runs.pop(key, None)
                else:
                    feeds = _feed_arrays(prepared, (feed_dict or {}).values(), as_array)
                    if feeds is not None:
                        return _run_prepared(self, prepared, feeds, options, run_metadata)
            result = original(self, fetches, feed_dict, options, run_metadata)
            if prepared is None or type(prepared) is int:
                _count_run(state, key, graph, fetches, feed_dict)
            return result

        original_close = _session.BaseSession.close

        @functools.wraps(original_close)
        def close(self):
            if "_compat_calls" not in self.__dict__ or not self._session or self._closed:  # pylint: disable=protected-access
                return original_close(self)
            self._closed = True  # pylint: disable=protected-access
            # The closure holds the Session: it is not deleted while its C session closes.
            return cancellable_runs.close(
                self, lambda: _session.tf_session.TF_CloseSession(self._session))  # pylint: disable=protected-access

        original_extend = _session.BaseSession._extend_graph  # pylint: disable=protected-access

        @functools.wraps(original_extend)
        def extend_graph(self):
            graph = self._graph  # pylint: disable=protected-access
            if getattr(graph, "_compat_plan", None) is None:
                return original_extend(self)
            version = graph.version
            original_extend(self)
            if graph.version == version:  # nothing built meanwhile: the Session has it all
                _state_of(self).extended_version = version
            return None

        _session.BaseSession.run = run
        _session.BaseSession.close = close
        _session.BaseSession._extend_graph = extend_graph  # pylint: disable=protected-access


def note_coordinator(session, coord) -> None:
    """`start_queue_runners(session, coord)` was called: TF1's runner threads of `session`
    report their errors to `coord`."""
    state = _state_of(session)
    if all(known is not coord for known in state.coordinators):
        state.coordinators.append(coord)


# How tf.data prefixes an error raised inside a dataset's function ("Error in user-defined
# function passed to MapDataset:2 transformation with iterator: Iterator::Root::...").
_FROM_A_PIPELINE_FUNCTION = "transformation with iterator:"


def _as_tf1_runner_error(session, state, graph, error, fetches):
    """The error a run that read a failing pipeline stage gets, as in TF1.

    TF1 computes a stage's elements in its runner threads: an error there (a missing file, a
    corrupt record, a py_func that raises) goes to the Coordinator given to
    `start_queue_runners`, which stops the runners and closes the queues, so the consumer's
    run gets OutOfRangeError and `coord.join()` re-raises the error. The shim computes them
    in the run itself: with such a Coordinator, the error goes to it and the run (and every
    later one reading that stage) gets OutOfRangeError; without one it is raised by the run
    (TF1's consumer would wait forever on a queue nobody closes)."""
    stages = graph._compat_plan.stages  # pylint: disable=protected-access
    if (isinstance(error, (_errors.OutOfRangeError, _errors.CancelledError))
            or not state.coordinators):
        return error
    if arguments.raised_by_the_run(graph, error):
        return error
    op = getattr(error, "op", None)
    name = getattr(op, "name", None)
    if name not in stages:
        # An error from inside a stage's pipeline functions (a py_func the pipeline copied)
        # names the op that failed there, or none: the stage is the one the run reads. Any
        # other error (the run's deadline, an op the run itself runs) fails the run as in
        # TF1.
        fetched = _fetched_values(fetches)
        if (_FROM_A_PIPELINE_FUNCTION not in error.message
                or (name is not None and cancellable_runs.reads_a_stage(fetched, {name}))):
            return error
        name = next((stage for stage in stages
                     if cancellable_runs.reads_a_stage(fetched, {stage})), None)
        if name is None:
            return error
        op = graph.get_operation_by_name(name)
    for coord in state.coordinators:
        coord.request_stop(error)
    stage = stages[name]
    message = (f"{stage.name} is closed and has insufficient elements: its input failed "
               f"with {type(error).__name__}, reported to the Coordinator (coord.join() "
               f"raises it)")
    state.stopped_stages[name] = message
    return _errors.OutOfRangeError(None, op, message)


def _refuse_stopped_stages(state, graph, fetches) -> None:
    """Raise TF1's OutOfRangeError for a run reading a stage stopped by an error (see
    `_as_tf1_runner_error`): TF1's queue stays closed."""
    for name, message in state.stopped_stages.items():
        if cancellable_runs.reads_a_stage(_fetched_values(fetches), {name}):
            raise _errors.OutOfRangeError(None, graph.get_operation_by_name(name), message)


def _reads_a_stage(state, key, graph, fetches) -> bool:
    """Whether the run reads a pipeline stage through tf.data (see `cancellable_runs`),
    worked out once per run while the graph does not change."""
    if state.reads_version != graph.version:
        state.reads_stages.clear()
        state.reads_version = graph.version
    reads = None if key is None else state.reads_stages.get(key)
    if reads is None:
        # Stages read through tf.data's iterators; a fed queue's own dequeue is TF's kernel,
        # which a closing Session cancels itself.
        iterators = {name for name, stage in graph._compat_plan.stages.items()  # pylint: disable=protected-access
                     if stage.get_next_op.type in ("IteratorGetNext", "IteratorGetNextSync")}
        reads = cancellable_runs.reads_a_stage(_fetched_values(fetches), iterators)
        if key is not None and len(state.reads_stages) < _MAX_COUNTED:
            state.reads_stages[key] = reads
    return reads


def _fetched_values(fetches) -> list:
    """The tensors and ops (or names) `fetches` holds, however nested."""
    if isinstance(fetches, (list, tuple)):
        return [value for part in fetches for value in _fetched_values(part)]
    if isinstance(fetches, dict):
        return [value for part in fetches.values() for value in _fetched_values(part)]
    return [fetches]


def _state_of(session) -> _SessionRuns:
    state = session.__dict__.get("_compat_runs")
    if state is None:
        state = session.__dict__.setdefault("_compat_runs", _SessionRuns())
    return state


def _count_run(state, key, graph, fetches, feed_dict):
    with _lock:
        runs = state.runs.get(key)
        if runs is not None and type(runs) is not int:
            return  # prepared meanwhile by another thread, or not to be prepared
        runs = (runs or 0) + 1
        if runs < _RUNS_BEFORE_PREPARED:
            if len(state.runs) < _MAX_COUNTED:
                state.runs[key] = runs
            return
        prepared = None
        if state.count < _MAX_PREPARED:
            try:
                prepared = _prepare(graph, fetches, feed_dict)
            except Exception:  # noqa: BLE001 - TF's own path still runs them
                prepared = None
        if prepared is None:
            state.runs[key] = _NOT_PREPARED
        else:
            state.runs[key] = prepared
            state.count += 1


def prepared_runs(session) -> int:
    """How many runs `session` has prepared (none in a Session of a graph without a shim
    pipeline)."""
    state = session.__dict__.get("_compat_runs")
    return 0 if state is None else state.count
