"""Session runs that `Session.close()` cancels at once, as it cancels TF1's blocked dequeues.

TF1's dequeue waits in a queue kernel, which a closing Session cancels: the run blocked on it
returns CancelledError at once (the watchdog pattern: another thread closes the Session to
stop a training loop that hangs). A compiled stage's run waits in tf.data's iterator instead,
for the element being computed, and neither a closing Session nor a run timeout reaches that
wait: with a `py_func` that sleeps the run returned when it woke; with one that never returns,
never.

So in a graph whose pipelines may wait for longer than their own computation (a `py_func`, a
queue fed from Python: `may_wait`), a run that reads a stage runs its C call on a worker thread
of the Session, and its caller waits for the result where `close()` can wake it: the caller
gets TF1's CancelledError at once, and the worker finishes (or stays blocked) on its own, its
result dropped. A closing Session with such calls still in flight closes its C session on a
thread of its own, so `close()` returns at once too. Other graphs, and runs that read no stage
(a Python feeder's enqueue, which TF's own queue kernel cancels), keep the caller's thread:
the hand-over costs ~30-50 us a run.
"""
from __future__ import annotations

import atexit
import queue
import threading
import time
import weakref

import tensorflow as tf


def note_may_wait(graph) -> None:
    """Note that pipelines of `graph` may wait for longer than their own computation."""
    graph._compat_runs_may_wait = True  # pylint: disable=protected-access


def may_wait(graph) -> bool:
    return getattr(graph, "_compat_runs_may_wait", False)


def reads_a_stage(fetched, stage_op_names) -> bool:
    """Whether running `fetched` (tensors and ops) runs one of the ops named (a stage's
    get_next), directly or through what it depends on."""
    stack = [getattr(value, "op", value) for value in fetched]
    seen = set()
    while stack:
        op = stack.pop()
        if not isinstance(op, tf.Operation):
            return True  # a fetch named by a string, or another kind: assume it may wait
        if op.name in seen:
            continue
        seen.add(op.name)
        if op.name in stage_op_names:
            return True
        stack.extend(tensor.op for tensor in op.inputs)
        stack.extend(op.control_inputs)
    return False


class _Call:
    __slots__ = ("call", "done", "finished", "result", "error", "cancelled", "__weakref__")

    def __init__(self, call):
        self.call, self.done = call, threading.Event()
        self.finished = threading.Event()
        self.cancelled = False
        self.result = self.error = None


# Calls whose callers a closing Session released while their C run went on.
_abandoned = weakref.WeakSet()
# How long the interpreter's exit waits for them (see `_finish_abandoned`).
_EXIT_WAIT_S = 30.0


@atexit.register
def _finish_abandoned() -> None:
    """Wait (up to _EXIT_WAIT_S) for runs whose callers were released to end: a `py_func`
    still running in one of TensorFlow's threads as the interpreter finalizes aborts the
    process. TF1's close would have waited for them."""
    deadline = time.monotonic() + _EXIT_WAIT_S
    for job in list(_abandoned):
        job.finished.wait(max(0.0, deadline - time.monotonic()))


class _SessionCalls:
    """A Session's calls waited for where close() can wake the caller, and its idle
    workers."""

    def __init__(self):
        self.lock = threading.Lock()
        self.waiting: set = set()
        self.idle: list = []  # inboxes of idle workers
        self.closed = False


def _calls_of(session) -> _SessionCalls:
    calls = session.__dict__.get("_compat_calls")
    if calls is None:
        calls = session.__dict__.setdefault("_compat_calls", _SessionCalls())
    return calls


def _work(calls: _SessionCalls, inbox: queue.SimpleQueue) -> None:
    while True:
        job = inbox.get()
        try:
            job.result = job.call()
        except BaseException as error:  # noqa: BLE001 - re-raised in the caller's thread
            job.error = error
        job.finished.set()
        job.done.set()
        job = None
        with calls.lock:
            if calls.closed:
                return
            calls.idle.append(inbox)


def run(session, call, stage_name: str):
    """`call()` (a C run of `session`) on a worker thread; raises TF1's CancelledError at
    once if the Session is closed while it runs."""
    calls = _calls_of(session)
    job = _Call(call)
    with calls.lock:
        calls.waiting.add(job)
        inbox = calls.idle.pop() if calls.idle else None
    if inbox is None:
        inbox = queue.SimpleQueue()
        threading.Thread(target=_work, args=(calls, inbox), daemon=True,
                         name="compat_session_run").start()
    inbox.put(job)
    try:
        job.done.wait()
    finally:
        with calls.lock:
            calls.waiting.discard(job)
    if job.cancelled and not job.finished.is_set():
        raise tf.errors.CancelledError(
            None, None, f"Dequeue operation was cancelled: the Session was closed while this "
            f"run waited for the next element of {stage_name}")
    if job.error is not None:
        error, job.error = job.error, None
        raise error
    return job.result


def close(session, close_c_session) -> None:
    """Close `session`: wake every caller still waiting (they raise CancelledError), and
    close the C session (`close_c_session()`), on a thread of its own if calls are still in
    flight (TF's close would wait for them)."""
    calls = session.__dict__.get("_compat_calls")
    if calls is None:
        close_c_session()
        return
    with calls.lock:
        calls.closed = True
        in_flight = [job for job in calls.waiting if not job.finished.is_set()]
        for job in in_flight:
            job.cancelled = True
            _abandoned.add(job)
            job.done.set()
        for inbox in calls.idle:
            inbox.put(_Call(lambda: None))  # wakes the idle worker, which then ends
        calls.idle.clear()
    if in_flight:
        threading.Thread(target=close_c_session, daemon=True,
                         name="compat_session_close").start()
    else:
        close_c_session()
