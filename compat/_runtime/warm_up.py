"""One-time costs of TensorFlow's runtime that the shim's first pipeline would pay and TF1's
queues never do, paid on a thread of their own as soon as the shim's runtime loads, while
the program goes on building its graph.

TensorFlow checks every function added to a graph against its registry of ops; the first
lookup of a name that is no op copies the whole registry for a debug log (~7 ms, in C++,
without the GIL). TF1's queue pipelines add no function; the shim's first one would pay it
at its first stage.
"""
from __future__ import annotations

import threading

_started: list = []
_lock = threading.Lock()


def _warm() -> None:
    from tensorflow.python.framework import op_def_registry
    op_def_registry.get("CompatWarmUpNoSuchOp")


def start() -> None:
    """Start warming up, once per process (the thread is not a daemon: a program that ends
    at once waits the few milliseconds it takes rather than stopping it inside TF)."""
    with _lock:
        if _started:
            return
        thread = threading.Thread(target=_warm, name="compat-warm-up")
        _started.append(thread)
    thread.start()
