"""TensorFlow's once-per-process registry export, paid on the second core.

The first time a process looks up a name that is not a registered op, TensorFlow's
`OpRegistry::LookUpSlow` exports its whole registry (every OpDef, sorted: ~7 ms here), for
a debug log it prints only at verbosity 3. Adding a function to a graph looks its name up so
(an op may not share a function's name), so the first tf.data function a process makes pays
it: every shim pipeline, while its graph is built or at its first Session run, where TF1's
queues, which add no function, never do.

So when the shim's runtime loads (at the program's first `compat.v1` name, before it builds
its graph), a thread makes that first failed look-up through TF's C API (ctypes releases the
GIL for the call), on a core the main thread is not using. The export holds the registry's
lock, so op creation waits for it: it pays where the program does other work first (reading
flags, listing or loading data), as TF1 programs do between their imports and their graph.
Measured in fresh processes (12-16 pairs, medians of the paired differences): PTB's first
batch -10 to -11 ms, JPEG folder's -3 to -4 ms; a program with only Python-fed queues, which
adds no function, +4 and -6 ms in two runs (the machine's noise). Best effort: where the C API is not found
(another platform, a TF build without the library), nothing is done and the first function
pays as before.
"""
from __future__ import annotations

import ctypes
import os
import threading

# A name no op has.
_MISSING_OP = b"CompatNoSuchOp_registry_warmup"
_LIBRARIES = ("libtensorflow_cc.so.2", "libtensorflow_cc.2.dylib")

_started = []
_threads: list = []


def _c_api(tf_lib_dir: str):
    """TF's C API library, loaded where TF loaded it (None if not found)."""
    for name in _LIBRARIES:
        path = os.path.join(tf_lib_dir, name)
        if os.path.exists(path):
            library = ctypes.CDLL(path)
            for function in ("TF_NewGraph", "TF_NewStatus", "TF_NewBuffer"):
                getattr(library, function).restype = ctypes.c_void_p
            library.TF_GraphGetOpDef.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                                 ctypes.c_void_p, ctypes.c_void_p]
            for function in ("TF_DeleteGraph", "TF_DeleteStatus", "TF_DeleteBuffer"):
                getattr(library, function).argtypes = [ctypes.c_void_p]
            return library
    return None


def look_up_missing_op(tf_lib_dir: str, wait: bool = True) -> bool:
    """Look up an op no one registered, in a graph of its own, through the C API; on a
    daemon thread unless `wait`. False where the C API was not found."""
    try:
        library = _c_api(tf_lib_dir)
    except (OSError, AttributeError):
        return False
    if library is None:
        return False
    # Made here, so that the thread needs the GIL only to start: it then waits in the
    # look-up, without the GIL, from its first line.
    graph, status, buffer = library.TF_NewGraph(), library.TF_NewStatus(), library.TF_NewBuffer()

    def look_up():
        try:
            library.TF_GraphGetOpDef(graph, _MISSING_OP, buffer, status)  # NOT_FOUND, as meant
        finally:
            library.TF_DeleteBuffer(buffer)
            library.TF_DeleteStatus(status)
            library.TF_DeleteGraph(graph)

    if wait:
        look_up()
    else:
        thread = threading.Thread(target=look_up, name="compat-registry-warmup", daemon=True)
        thread.start()
        _threads.append(thread)
    return True


def _finish_before_fork() -> None:
    """A child forked during the export would inherit the registry's lock held (and wait on
    it at its first op look-up): a fork waits for the look-up (at most ~7 ms, once)."""
    for thread in _threads:
        thread.join()


def start() -> None:
    """Make the first failed op look-up on a daemon thread, once per process. Never raises:
    it only moves a cost."""
    if _started:
        return
    _started.append(True)
    try:
        import tensorflow as tf
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(before=_finish_before_fork)
        look_up_missing_op(tf.sysconfig.get_lib(), wait=False)
    except Exception:  # pylint: disable=broad-except
        pass
