"""The stream of a batch of fed size is made by a queue runner, as TF1's batch starts.

TF1's batch call adds a QueueRunner to the graph; its thread's first run prepares the
per-element ops once (the Session's grappler: ~60 ms for FaceNet's per-image ops, on 2
cores), and the main thread's fetches only dequeue. A batch of fed size (`fed_batches`) reads
a shared stream, whose iterator its owner op makes (`plan._Owner`: a one-shot iterator whose
dataset factory makes it). Read under a control dependency on that op, every run that reads
the batch reaches the stream's functions, and the Session's grappler prepares them again
for each new fetch signature (a training step, then one that also fetches a summary):
FaceNet's input, a second signature took 190-270 ms, against TF1's 14-19 ms.

So, in a graph a Session runs, the batch's read does not depend on the owner. The batch adds
a `Starter` to the QUEUE_RUNNERS collection, started wherever TF1 starts its runners
(`start_queue_runners`, Supervisor, MonitoredSession, `create_threads`):

1. on the starting thread, a small run locks the batch's mutex (the one its runs take in
   turn, see `fed_batches`) and keeps the lock in a queue: the batch's runs now wait, in the
   graph, without holding a thread;
2. the starter's thread runs the owner in a run of its own, whose grappler pass prepares the
   stream's functions, once per Session, then lets the lock go, as a failed run does too.
   A thread stopped before it ran lets the lock go unused.

A Session prepares one run at a time, so the first batch comes no sooner; each later fetch
signature that reads the batch no longer prepares the stream's functions (FaceNet's input:
56-88 ms for a second signature).

A read before the runners start fails, naming the fix, where TF1's batch would wait for its
runner for ever (`StreamStarts.run`, from `session_runs`); a read after the starter failed
raises the starter's error. Written out (`as_graph_def`, which meta graphs, `write_graph` and
`sess.graph_def` use), the read depends on the owner again, and the runner's enqueue op is
the owner's one-element marker stream, whose second run ends a TF QueueRunner's thread: the
graph runs in any process, the shim's or not. A meta graph exported node by node
(`export_meta_graph` with `clear_devices` or `export_scope` and no `graph_def`) keeps the read
as it is in the graph: read before its runner ran, it fails with TF's "iterator has not been
initialized".
"""
from __future__ import annotations

import functools
import threading
import weakref

import tensorflow as tf
from tensorflow.python.client import session as _session
from tensorflow.python.framework import errors
from tensorflow.python.framework import func_graph as _func_graph
from tensorflow.python.framework import ops as _ops
from tensorflow.python.ops import data_flow_ops, gen_dataset_ops, gen_resource_variable_ops
from tensorflow.python.platform import tf_logging as logging

from compat._runtime import queue_runner

_NOT_STARTED = (
    "compat.v1: {read} reads a batch whose size is fed ({batch}) before its queue runner "
    "started; TF1's batch would wait here for ever. Start the queue runners first: "
    "tf.train.start_queue_runners(sess=sess) (Supervisor and MonitoredSession start them).")
_STOPPED = ("compat.v1: {read} reads a batch whose size is fed ({batch}), whose queue runner "
            "was stopped (its Coordinator) before it made the batch's input stream.")
_install_lock = threading.Lock()
_installed: list = []


def applies(graph) -> bool:
    """Whether a stream's read in `graph` waits for a starter: in a graph a Session runs, not
    in a function's graph, which runs the owner as it reads."""
    return not isinstance(graph, _func_graph.FuncGraph)


class _Outcome:
    """One Session's run of a starter."""

    __slots__ = ("done", "error", "stopped")

    def __init__(self):
        self.done = threading.Event()
        self.error = None  # the run's exception
        self.stopped = False  # its Coordinator stopped before it ran

    @property
    def made(self) -> bool:
        """Whether the run made the stream."""
        return self.done.is_set() and self.error is None and not self.stopped


class _StartOps:
    """The ops of a stream's start (see the module docstring)."""

    def __init__(self, owner_op, mutex):
        spec = dict(output_types=[tf.int32], output_shapes=[[]])
        # What TF's own QueueRunner runs: the marker once, then OutOfRangeError.
        self.marker_next = gen_dataset_ops.iterator_get_next(
            owner_op.outputs[0], name="start_stream", **spec)[0].op
        hold_queue = data_flow_ops.FIFOQueue(-1, [tf.variant], shapes=[[]],
                                             name="start_stream_lock")
        self.hold = hold_queue.enqueue([gen_resource_variable_ops.mutex_lock(mutex)])
        held = hold_queue.dequeue()
        with tf.control_dependencies([held.op]):
            made = gen_dataset_ops.iterator_get_next(
                owner_op.outputs[0], name="start_stream_made", **spec)
        with tf.control_dependencies(made):
            self.start = gen_resource_variable_ops.consume_mutex_lock(held)
        self.held_count = hold_queue.size()
        self.release = hold_queue.dequeue().op  # the lock, let go unused


class Starter(queue_runner.QueueRunner):
    """The queue runner of a batch of fed size: locks the batch, then one thread runs the
    stream's owner and lets the lock go."""

    def __init__(self, queue, start_ops: _StartOps, batch_name: str):
        no_op = tf.no_op(name="start_stream_done")
        super().__init__(queue=queue, enqueue_ops=[start_ops.marker_next], close_op=no_op,
                         cancel_op=no_op)
        self.batch_name = batch_name
        self._start_ops = start_ops
        self._outcomes = weakref.WeakKeyDictionary()

    def outcome(self, session):
        return self._outcomes.get(session)

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """Lock the batch and create (and start) the thread that makes its stream for
        `sess`, once per Session; [] when it was made already or its thread is running."""
        if sess is None or tf.executing_eagerly():
            return super().create_threads(sess, coord=coord, daemon=daemon, start=start)
        with self._lock:
            outcome = self._outcomes.get(sess)
            if outcome is not None and (outcome.made or not outcome.done.is_set()):
                return []
            outcome = self._outcomes[sess] = _Outcome()
        try:
            sess.run(self._start_ops.hold)
        except Exception as error:
            outcome.error = error
            outcome.done.set()
            raise
        thread = threading.Thread(target=self._run, args=(sess, outcome, coord),
                                  name=f"QueueRunnerThread-{self.name}-start_stream")
        if coord:
            coord.register_thread(thread)
        thread.daemon = daemon
        if start:
            thread.start()
        return [thread]

    def _run(self, sess, outcome, coord=None):  # pylint: disable=arguments-renamed
        started = False
        try:
            if coord is not None and coord.should_stop():
                outcome.stopped = True
            else:
                sess.run(self._start_ops.start)
                started = True
        except Exception as error:  # pylint: disable=broad-except
            outcome.error = error
            if coord:
                coord.request_stop(error)
        finally:
            try:
                # A run that failed before it took the lock leaves it held.
                if not started and sess.run(self._start_ops.held_count):
                    sess.run(self._start_ops.release)
            except Exception as error:  # pylint: disable=broad-except
                logging.vlog(1, "Ignored exception: %s", str(error))
            outcome.done.set()


class StreamStarts:
    """A graph's starters, and the reads that need them."""

    def __init__(self):
        self.starters: list[Starter] = []
        self.reads: dict = {}  # the read op's name -> the owner op's name

    def settled(self, session) -> bool:
        return session.__dict__.get("_compat_streams_made") == len(self.starters)

    def run(self, session, call):
        """`call()` (a run of `session`), its error explained where it read a stream that no
        starter made."""
        outcomes = [starter.outcome(session) for starter in self.starters]
        if all(outcome is not None and outcome.made for outcome in outcomes):
            session.__dict__["_compat_streams_made"] = len(self.starters)
        try:
            return call()
        except errors.FailedPreconditionError as error:
            raise self._explained(session, error) from None

    def _explained(self, session, error):
        if "has not been initialized" not in (error.message or ""):
            return error
        read = f"Session.run ({error.op.name if error.op is not None else 'a fetch'})"
        for starter in self.starters:
            outcome = starter.outcome(session)
            if outcome is not None and outcome.error is not None:
                return outcome.error
            if outcome is None or outcome.stopped:
                template = _STOPPED if outcome is not None else _NOT_STARTED
                return errors.FailedPreconditionError(
                    error.node_def, error.op,
                    template.format(read=read, batch=starter.batch_name))
        return error


def read_when_started(read_op: tf.Operation, owner_op: tf.Operation, queue, mutex,
                      batch_name: str) -> None:
    """Note that `read_op` reads the stream `owner_op` makes, with no control dependency on
    it, under `mutex`; add the stream's `Starter` to QUEUE_RUNNERS."""
    graph = read_op.graph
    starts = getattr(graph, "_compat_stream_starts", None)
    if starts is None:
        starts = graph._compat_stream_starts = StreamStarts()  # pylint: disable=protected-access
    with graph.as_default(), graph.control_dependencies(None), \
            tf.compat.v1.colocate_with(owner_op):
        starter = Starter(queue, _StartOps(owner_op, mutex), batch_name)
        queue_runner.add_queue_runner(starter)
    starts.starters.append(starter)
    starts.reads[read_op.name] = owner_op.name


def _depending_reads(graph, graph_def) -> None:
    """Give each stream read in `graph_def` its control dependency on its owner."""
    starts = getattr(graph, "_compat_stream_starts", None)
    if starts is None or not starts.reads:
        return
    for node in graph_def.node:
        owner = starts.reads.get(node.name)
        if owner is not None and "^" + owner not in node.input:
            node.input.append("^" + owner)


def install() -> None:
    """Wrap `as_graph_def` (reads written out depend on their owners) and `make_callable`
    (a callable's error explained as a run's), once per process."""
    with _install_lock:
        if _installed:
            return
        _installed.append(True)
        as_graph_def = _ops.Graph.as_graph_def

        @functools.wraps(as_graph_def)
        def written_out(self, *args, **kwargs):
            graph_def = as_graph_def(self, *args, **kwargs)
            _depending_reads(self, graph_def)
            return graph_def

        make_callable = _session.BaseSession.make_callable

        @functools.wraps(make_callable)
        def explaining_callable(self, fetches, *args, **kwargs):
            run = make_callable(self, fetches, *args, **kwargs)
            starts = getattr(self._graph, "_compat_stream_starts", None)  # pylint: disable=protected-access
            if starts is None or starts.settled(self):
                return run

            @functools.wraps(run)
            def explained(*call_args, **call_kwargs):
                if starts.settled(self):
                    return run(*call_args, **call_kwargs)
                return starts.run(self, lambda: run(*call_args, **call_kwargs))
            return explained

        _ops.Graph.as_graph_def = written_out
        _session.BaseSession.make_callable = explaining_callable


install()
