"""QueueRunner, add_queue_runner, start_queue_runners.

TF1's API and behaviour: one thread per listed enqueue op, the last thread to see a
"queue closed" error closes the queue, any other error goes to the Coordinator (which re-raises
it at `join`), and a coordinator stop cancels pending enqueues. Differences:

- Enqueue ops of a queue the shim compiled into the tf.data pipeline need no thread, so
  `create_threads` creates none for them (and `start_queue_runners` may return `[]`). A batch
  of fed size adds a runner of its own (`stream_starts.Starter`), one short thread.
- In eager mode the enqueue ops may be callables (`lambda: queue.enqueue(next_value())`),
  run in a loop by the threads exactly as `sess.run(enqueue_op)` would be.

The class subclasses TF's QueueRunner and keeps its private attributes (`_lock`,
`_runs_per_session`, `_exceptions_raised`, `_close_on_stop`, ...), because TF Estimator's
feeding runner subclasses it and overrides `_run` and `create_threads` on top of them.
"""
from __future__ import annotations

import threading
import weakref

import tensorflow as tf
from tensorflow.python.client import session as _session
from tensorflow.python.framework import errors
from tensorflow.python.platform import tf_logging as logging
from tensorflow.python.training import queue_runner_impl

from compat._runtime import session_runs

_QUEUE_RUNNERS = tf.compat.v1.GraphKeys.QUEUE_RUNNERS


class _EagerSession:
    """Stands for "no session" in the per-session bookkeeping of eager runners."""

    def run(self, fetch):
        return fetch() if callable(fetch) else None

    def make_callable(self, fetch):
        return fetch


_EAGER_SESSION = _EagerSession()


def _is_op_like(value) -> bool:
    return isinstance(value, (tf.Operation, tf.Tensor))


class QueueRunner(queue_runner_impl.QueueRunner):
    """Holds a list of enqueue operations for a queue, each to be run in a thread.

    Same constructor as TF1. In eager mode `enqueue_ops`, `close_op` and `cancel_op` are
    callables (close/cancel default to closing `queue`).
    """

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None,
                 import_scope=None):
        # TF's constructor refuses eager mode; this one supports it, so it does not call it.
        if queue_runner_def:
            if queue or enqueue_ops:
                raise ValueError("queue_runner_def and queue are mutually exclusive.")
            self._init_from_proto(queue_runner_def, import_scope=import_scope)
        else:
            self._init_from_args(queue=queue, enqueue_ops=enqueue_ops, close_op=close_op,
                                 cancel_op=cancel_op,
                                 queue_closed_exception_types=queue_closed_exception_types)
        self._lock = threading.Lock()
        self._runs_per_session = weakref.WeakKeyDictionary()
        self._exceptions_raised = []

    def _init_from_args(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                        queue_closed_exception_types=None):
        if not queue or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        enqueue_ops = list(enqueue_ops)
        eager = tf.executing_eagerly()
        for op in enqueue_ops:
            if eager and not callable(op):
                raise TypeError(
                    f"QueueRunner in eager mode: enqueue op {op!r} is a value, not something "
                    "to run again. Pass callables, e.g. lambda: queue.enqueue(next_value()).")
            if not eager and not _is_op_like(op) and not callable(op):
                raise TypeError(f"QueueRunner: enqueue op {op!r} must be a tf.Operation or "
                                "a tf.Tensor of the queue's graph.")
        if queue_closed_exception_types is not None:
            if (not isinstance(queue_closed_exception_types, tuple)
                    or not queue_closed_exception_types
                    or not all(isinstance(t, type) and issubclass(t, errors.OpError)
                               for t in queue_closed_exception_types)):
                raise TypeError("queue_closed_exception_types, when provided, must be a tuple "
                                "of tf.error types, but saw: %s" % (queue_closed_exception_types,))
        self._queue = queue
        self._enqueue_ops = enqueue_ops
        if close_op is None:
            # Eager: closing now would end the queue before it starts; close when asked.
            close_op = (lambda: queue.close()) if eager else queue.close()
        if cancel_op is None:
            cancel_op = ((lambda: queue.close(cancel_pending_enqueues=True)) if eager
                         else queue.close(cancel_pending_enqueues=True))
        self._close_op = close_op
        self._cancel_op = cancel_op
        self._queue_closed_exception_types = (tuple(queue_closed_exception_types)
                                              if queue_closed_exception_types
                                              else (errors.OutOfRangeError,))
        note = getattr(queue, "_note_queue_runner", None)
        if note is not None:
            note(enqueue_ops)

    # --- running --------------------------------------------------------------------------
    @staticmethod
    def _session_key(sess):
        return _EAGER_SESSION if sess is None else sess

    def _run(self, sess, enqueue_op, coord=None):
        """Run `enqueue_op` in a loop; the last runner to see the queue closed closes it."""
        sess = self._session_key(sess)
        decremented = False
        try:
            run_enqueue = enqueue_op if callable(enqueue_op) else sess.make_callable(enqueue_op)
            while True:
                if coord and coord.should_stop():
                    break
                try:
                    run_enqueue()
                except self._queue_closed_exception_types:  # pylint: disable=catching-non-exception
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        if self._runs_per_session[sess] == 0:
                            try:
                                sess.run(self._close_op)
                            except Exception as error:  # pylint: disable=broad-except
                                logging.vlog(1, "Ignored exception: %s", str(error))
                        return
        except Exception as error:  # pylint: disable=broad-except
            if coord:
                coord.request_stop(error)
            else:
                logging.error("Exception in QueueRunner: %s", str(error))
                with self._lock:
                    self._exceptions_raised.append(error)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, cancel_op, coord):
        """Cancel pending enqueues once the Coordinator requests a stop."""
        coord.wait_for_stop()
        try:
            self._session_key(sess).run(cancel_op)
        except Exception as error:  # pylint: disable=broad-except
            logging.vlog(1, "Ignored exception: %s", str(error))

    def _ops_needing_threads(self):
        """The enqueue ops that really run: a compiled queue's ops are its tf.data stage."""
        decide = getattr(self._queue, "_decide", None)
        is_compiled = getattr(self._queue, "_is_compiled_enqueue", None)
        if decide is None or is_compiled is None or tf.executing_eagerly():
            return list(self._enqueue_ops)
        # Starting threads fixes the queue's mode: a queue cannot be both compiled and fed.
        decide()
        return [op for op in self._enqueue_ops if not is_compiled(op)]

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """Create threads to run the enqueue ops for `sess` (TF1 semantics).

        Returns [] if threads created earlier for `sess` are still running, and for the ops of
        a queue compiled into the tf.data pipeline, which need no thread.
        """
        key = self._session_key(sess)
        enqueue_ops = self._ops_needing_threads()
        with self._lock:
            if self._runs_per_session.get(key, 0) > 0:
                return []
            self._runs_per_session[key] = len(enqueue_ops)
            self._exceptions_raised = []
        if not enqueue_ops:
            return []
        threads = []
        for op in enqueue_ops:
            op_name = getattr(op, "name", getattr(op, "__name__", "callable"))
            threads.append(threading.Thread(target=self._run, args=(sess, op, coord),
                                            name=f"QueueRunnerThread-{self.name}-{op_name}"))
        if coord:
            threads.append(threading.Thread(target=self._close_on_stop,
                                            args=(sess, self._cancel_op, coord),
                                            name=f"QueueRunnerThread-{self.name}-close_on_stop"))
        for thread in threads:
            if coord:
                coord.register_thread(thread)
            if daemon:
                thread.daemon = True
            if start:
                thread.start()
        return threads

    @property
    def name(self):
        queue_name = getattr(self._queue, "name", None)
        return queue_name if queue_name is not None else "queue"

    @staticmethod
    def from_proto(queue_runner_def, import_scope=None):
        """Returns a `QueueRunner` object created from `queue_runner_def`."""
        return QueueRunner(queue_runner_def=queue_runner_def, import_scope=import_scope)


_EAGER_RUNNERS: dict = {}


def add_queue_runner(qr, collection=_QUEUE_RUNNERS):
    """Adds a `QueueRunner` to a collection in the graph (eager: to a process-wide list)."""
    if tf.executing_eagerly():
        _EAGER_RUNNERS.setdefault(collection, []).append(qr)
    else:
        tf.compat.v1.add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=_QUEUE_RUNNERS):
    """Starts the threads of all queue runners collected in the graph; returns them.

    Runners whose queues compiled into the tf.data pipeline start no thread, so the list is
    empty when nothing is fed from Python, but for a batch of fed size's runner, whose one
    thread makes the batch's stream and ends (`stream_starts`). In eager mode `sess` must be
    None and the runners are those added with `add_queue_runner` while eager.
    """
    if tf.executing_eagerly():
        if sess is not None:
            raise ValueError("start_queue_runners: eager execution is enabled, so there is no "
                             f"session to run in; pass sess=None, not {sess!r}.")
        runners = _EAGER_RUNNERS.get(collection, [])
        threads = []
        for runner in runners:
            threads.extend(runner.create_threads(None, coord=coord, daemon=daemon, start=start))
        return threads
    if sess is None:
        sess = tf.compat.v1.get_default_session()
        if not sess:
            raise ValueError("Cannot start queue runners: No default session is registered. "
                             "Use `with sess.as_default()` or pass an explicit session to "
                             "tf.start_queue_runners(sess=sess)")
    if not isinstance(sess, _session.SessionInterface):
        # Monitored sessions start their own runners (TF1 returns [] for them too).
        if sess.__class__.__name__ in ("MonitoredSession", "SingularMonitoredSession"):
            return []
        raise TypeError("sess must be a `tf.Session` object. Given class: {}".format(
            sess.__class__))
    if coord is not None:
        session_runs.note_coordinator(sess, coord)
    with sess.graph.as_default():
        threads = []
        for runner in tf.compat.v1.get_collection(collection):
            threads.extend(runner.create_threads(sess, coord=coord, daemon=daemon,
                                                 start=start))
    return threads


__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]
