"""A call before a graph is first run, finalized or serialized, and one before a Session
extends its copy of the graph.

The shim traces some pipelines only once the whole graph is known (see
`plan.build_pending`): when a Session runs the graph (any `run`, `make_callable`, including
the runs of MonitoredSession and queue runner threads), when the graph is finalized (after
which nothing can be added), or when it is written out (`as_graph_def`, which
`export_meta_graph` and `write_graph` use). Functions the Session would optimize at every
new run are optimized once, just before a Session extends with them
(`prepared_functions`), which needs that Session's options. TensorFlow has no public hook
there, so the three methods are wrapped, once per process; the wrappers add only a dict
lookup to a graph with nothing pending.
"""
from __future__ import annotations

import functools
import threading
from typing import Callable

from tensorflow.python.client import session as _session
from tensorflow.python.framework import ops as _ops

_lock = threading.RLock()
_installed: list = []
_active = threading.local()


def install(before_use: Callable[[_ops.Graph], None],
            before_extend: Callable[[_ops.Graph, _session.BaseSession], None]) -> None:
    """Call `before_use(graph)` before `graph` is run, finalized or serialized, and then
    `before_extend(graph, session)` before `session` extends its copy of the graph."""
    with _lock:
        if _installed:
            return
        _installed.append(before_use)

        def prepared(graph, session=None):
            if getattr(_active, "graph", None) is graph:
                return  # before_use itself serializes or runs: nothing more to prepare
            with _lock:
                _active.graph = graph
                try:
                    before_use(graph)
                    if session is not None:
                        before_extend(graph, session)
                finally:
                    _active.graph = None

        def wrap(owner, method, graph_of, with_session=False):
            original = getattr(owner, method)

            @functools.wraps(original)
            def wrapper(self, *args, **kwargs):
                graph = graph_of(self)
                if getattr(graph, "_compat_plan", None) is not None:
                    prepared(graph, self if with_session else None)
                return original(self, *args, **kwargs)
            setattr(owner, method, wrapper)

        wrap(_session.BaseSession, "_extend_graph", lambda session: session.graph,
             with_session=True)
        wrap(_ops.Graph, "finalize", lambda graph: graph)
        wrap(_ops.Graph, "as_graph_def", lambda graph: graph)
