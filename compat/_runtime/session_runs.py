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
run it would reject or treat specially: run options or metadata, fetches other than a
tensor, an operation or a flat list, tuple or dict of them (also a fetched tensor that is
fed), feeds other than plain values for tensors, a value whose dtype or shape the feed's
tensor refuses, a graph grown since the Session last ran it (it must be extended, and its
pipelines may still have to be built, see `graph_hooks`), a closed Session. Results and
errors are those of `Session.run`: the same fetch handler builds the results, and failures
go through the Session's own error rewriting (`_do_call`).
"""
from __future__ import annotations

import functools
import threading

import numpy as np
from tensorflow.python.client import session as _session
from tensorflow.python.framework import dtypes as _dtypes
from tensorflow.python.framework import ops as _ops
from tensorflow.python.framework import tensor as _tensor
from tensorflow.python.ops import session_ops as _session_ops

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


def _numpy_2():
    return np.lib.NumpyVersion(np.__version__) >= "2.0.0.dev0"


def _feed_array_function():
    """Session.run's conversion of one fed value (`numpy_compat.np_asarray` where this TF's
    session uses it, plain `np.asarray` before), with numpy's version read once."""
    if not hasattr(_session, "numpy_compat") or not _numpy_2():
        return lambda value, dtype: np.asarray(value, dtype=dtype)

    def as_array(value, dtype):
        if dtype is not None and np.issubdtype(dtype, np.number):
            return np.asarray(value, order=None, copy=None).astype(dtype, copy=None)
        return np.asarray(value, dtype=dtype, order=None, copy=None)
    return as_array


class _PreparedRun:
    """What `Session.run` works out for one run: its fetch handler, the C handles of its
    fetches and targets, and per feed its C handle, numpy dtype and dims."""

    __slots__ = ("fetch_handler", "fetches", "targets", "feeds", "held")

    def __init__(self, fetch_handler, feeds, held):
        self.fetch_handler = fetch_handler
        self.fetches = [tensor._as_tf_output() for tensor in fetch_handler.fetches()]  # pylint: disable=protected-access
        self.targets = [op._c_op for op in fetch_handler.targets()]  # pylint: disable=protected-access
        # (C handle, numpy dtype, dims or None for an unknown rank), in feed_dict's order
        self.feeds = [(feed._as_tf_output(), feed.dtype.as_numpy_dtype,  # pylint: disable=protected-access
                       None if feed.shape.rank is None else tuple(feed.shape.as_list()))
                      for feed in feeds]
        self.held = held  # the fetch and feed objects whose ids make up the key


class _SessionRuns:
    """One Session's runs: how often each ran, or what was prepared for it."""

    __slots__ = ("runs", "graph_version", "count")

    def __init__(self):
        self.runs: dict = {}  # key -> run count, _NOT_PREPARED, or a _PreparedRun
        self.graph_version = -1  # the graph's version when TF's path last ran it
        self.count = 0


def _fetch_key(fetches):
    kind = type(fetches)
    if kind is list or kind is tuple:
        return (kind, *map(id, fetches))
    if kind is dict:
        return (kind, *((name, id(value)) for name, value in fetches.items()))
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
    fetch_handler = _session._FetchHandler(graph, fetches, {})  # pylint: disable=protected-access
    return _PreparedRun(fetch_handler, feeds, (fetched, feeds))


def _fits(shape, dims):
    if dims is None:
        return True
    return len(shape) == len(dims) and all(
        dim is None or dim == size for dim, size in zip(dims, shape))


def _feed_arrays(prepared, values, as_array):
    """The feeds as Session.run converts them ({C handle: array}), or None where it would
    not take the values as they are (it then raises, or treats them specially)."""
    arrays = {}
    for (output, dtype, dims), value in zip(prepared.feeds, values):
        if isinstance(value, (_tensor.Tensor, _session_ops.TensorHandle)):
            return None
        if isinstance(value, int) and _session._convert_to_numpy_obj(dtype, value) != value:  # pylint: disable=protected-access
            return None
        array = as_array(value, dtype)
        if not _fits(array.shape, dims):
            return None
        arrays[output] = array
    return arrays


def _run_prepared(session, prepared, feeds):
    def run():
        return _session.tf_session.TF_SessionRun_wrapper(
            session._session, None, feeds, prepared.fetches, prepared.targets, None)  # pylint: disable=protected-access
    results = session._do_call(run)  # pylint: disable=protected-access
    return prepared.fetch_handler.build_results(session, results)


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
            if (options is not None or run_metadata is not None or self._closed  # pylint: disable=protected-access
                    or getattr(graph, "_compat_plan", None) is None
                    or (feed_dict is not None and type(feed_dict) is not dict)):
                return original(self, fetches, feed_dict, options, run_metadata)
            state = self.__dict__.get("_compat_runs")
            if state is None:
                state = self.__dict__.setdefault("_compat_runs", _SessionRuns())
            try:
                key = (_fetch_key(fetches), *map(id, feed_dict or ()))
            except TypeError:
                return original(self, fetches, feed_dict, options, run_metadata)
            prepared = state.runs.get(key)
            if type(prepared) is _PreparedRun and graph.version == state.graph_version:
                feeds = _feed_arrays(prepared, (feed_dict or {}).values(), as_array)
                if feeds is not None:
                    return _run_prepared(self, prepared, feeds)
            version = graph.version
            result = original(self, fetches, feed_dict, options, run_metadata)
            if version == graph.version:
                state.graph_version = version  # TF's run extended the Session to it
            if type(prepared) is int or prepared is None:
                _count_run(state, key, prepared, graph, fetches, feed_dict)
            return result

        _session.BaseSession.run = run


def _count_run(state, key, runs, graph, fetches, feed_dict):
    runs = (runs or 0) + 1
    if runs < _RUNS_BEFORE_PREPARED:
        if len(state.runs) < _MAX_COUNTED:
            state.runs[key] = runs
        return
    with _lock:
        if type(state.runs.get(key)) is _PreparedRun:
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
