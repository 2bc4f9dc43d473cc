"""TensorFlow's once-per-process registry export, paid on the second core.

The first time a process looks up a name that is not a registered op, TensorFlow's
`OpRegistry::LookUpSlow` exports its whole registry (every OpDef, sorted: ~7 ms here on TF
2.21, 17-18 ms on 2.15 and 2.18), for a debug log it prints only at verbosity 3. Adding a
function to a graph looks its name up so (an op may not share a function's name), so the
first tf.data function a process makes pays it: every shim pipeline, while its graph is
built or at its first Session run, where TF1's queues, which add no function, never do.

So when the shim's runtime loads (at the program's first `compat.v1` name, before it builds
its graph), a thread makes that first failed look-up through TF's C API (ctypes releases the
GIL for the call), on a core the main thread is not using. The export holds the registry's
lock, so op creation waits for it: it pays where the program does other work first (reading
flags, listing or loading data), as TF1 programs do between their imports and their graph.
Measured in fresh processes on TF 2.21 (12-16 pairs, medians of the paired differences):
PTB's first batch -10 to -11 ms, JPEG folder's -3 to -4 ms (more than the export's 7 ms for
PTB: the machine's noise is that large); a program with only Python-fed queues, which adds
no function, +4 and -6 ms in two runs. Best effort: where the C API is not found or not
loaded (another platform, another TF build), nothing is done and the first function pays as
before.
"""
from __future__ import annotations

import ctypes
import os
import threading

# A name no op has.
_MISSING_OP = b"CompatNoSuchOp_registry_warmup"
_LIBRARIES = ("libtensorflow_cc.so.2", "libtensorflow_cc.2.dylib")
NOT_FOUND = 5  # TF_Code of a failed look-up

_lock = threading.Lock()
_started = []
_threads: list = []


def _c_api(tf_lib_dir: str):
    """TF's C API library as TF loaded it; None if not found or not loaded (a second copy
    would register every op again)."""
    for name in _LIBRARIES:
        path = os.path.join(tf_lib_dir, name)
        if os.path.exists(path):
            library = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 0) | os.RTLD_LAZY)
            for function in ("TF_NewGraph", "TF_NewStatus", "TF_NewBuffer"):
                getattr(library, function).restype = ctypes.c_void_p
            library.TF_GraphGetOpDef.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                                 ctypes.c_void_p, ctypes.c_void_p]
            library.TF_GraphGetOpDef.restype = None
            library.TF_GetCode.argtypes = [ctypes.c_void_p]
            library.TF_GetCode.restype = ctypes.c_int
            for function in ("TF_DeleteGraph", "TF_DeleteStatus", "TF_DeleteBuffer"):
                getattr(library, function).argtypes = [ctypes.c_void_p]
                getattr(library, function).restype = None
            return library
    return None


def _prepared_look_up(tf_lib_dir: str):
    """A call making the look-up (an op no one registered, in a graph of its own) and
    returning its TF_Code, with its C handles made now, so that a thread running it has
    little Python to run; None where the C API was not found."""
    try:
        library = _c_api(tf_lib_dir)
    except (OSError, AttributeError):
        return None
    if library is None:
        return None
    graph, status, buffer = library.TF_NewGraph(), library.TF_NewStatus(), library.TF_NewBuffer()

    def look_up() -> int:
        try:
            library.TF_GraphGetOpDef(graph, _MISSING_OP, buffer, status)
            return library.TF_GetCode(status)
        finally:
            library.TF_DeleteBuffer(buffer)
            library.TF_DeleteStatus(status)
            library.TF_DeleteGraph(graph)

    return look_up


def look_up_missing_op(tf_lib_dir: str) -> int | None:
    """Make the look-up now: its TF_Code (NOT_FOUND), None where the C API was not found."""
    look_up = _prepared_look_up(tf_lib_dir)
    return None if look_up is None else look_up()


def _finish_before_fork() -> None:
    """A child forked during the export would inherit the registry's lock held (and wait on
    it at its first op look-up): a fork waits for the look-up (once; the export's time)."""
    with _lock:
        threads = list(_threads)
    for thread in threads:
        thread.join()


def start() -> None:
    """Make the first failed op look-up on a daemon thread, once per process. Never raises:
    it only moves a cost."""
    with _lock:
        if _started:
            return
        _started.append(True)
        try:
            import tensorflow as tf
            look_up = _prepared_look_up(tf.sysconfig.get_lib())
            if look_up is None:
                return
            if hasattr(os, "register_at_fork"):
                os.register_at_fork(before=_finish_before_fork)
            thread = threading.Thread(target=look_up, name="compat-registry-warmup",
                                      daemon=True)
            try:
                thread.start()
            except RuntimeError:  # no thread to be had: the handles are freed by looking up
                look_up()
                return
            _threads.append(thread)
        except Exception:  # pylint: disable=broad-except
            pass
