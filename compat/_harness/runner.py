"""Run one side of a comparison in isolation.

Each side gets its own ``tf.Graph``, ``Session``, ``Coordinator`` and queue-runner threads, and
is torn down (coordinator stopped, threads joined, session closed) before the other side runs,
so one side can neither consume the other's queues nor share its random state.

Binding a pipeline function to a ``tf`` module is in ``_tf_binding``, describing the built graph
(``PipelineFacts``) in ``_graph_facts``; both are re-exported here, the module the rest of the
harness imports them from. ``run_side``, its error text and its thread teardown stay here so
that tests patching this module's names (``JOIN_GRACE_SECONDS``, ``ERROR_TEXT_LIMIT``,
``bind_tf``, ...) change what ``run_side`` does.

TensorFlow is imported inside functions only: ``compat.harness`` must import without it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from compat._harness._graph_facts import (UNKNOWN_IN_FLIGHT, PipelineFacts, ShuffleQueue,
                                          inspect_graph)
from compat._harness._tf_binding import (TF_ROOT_NAMES, V1_MODULE_NAMES, BuildError, bind_tf,
                                         legacy_module, shim_module, takes_tf_argument)
from compat._harness.streams import Stream, leaves, normalize


# --------------------------------------------------------------------------- running


@dataclass(frozen=True)
class SideRun:
    """One side's result: the stream, the graph facts and how long it took.

    notes: things about the run that are worth knowing but are no error of the pipeline
           (e.g. queue-runner threads that were slow to shut down after the last batch)
    module: the ``tf`` module the build ran under (None: a candidate run as it is); lets
           `compare` re-run the same build for this side's own input order
    """

    stream: Stream
    facts: PipelineFacts = field(default_factory=PipelineFacts)
    seconds: float = 0.0
    origin: str = ""
    notes: tuple = ()
    module: object = field(default=None, repr=False, compare=False)


def _flat_tensors(fetches):
    out = []
    for _, leaf in leaves(_structure_for_leaves(fetches)):
        if leaf is None:
            continue
        if hasattr(leaf, "indices") and hasattr(leaf, "values") and hasattr(leaf, "dense_shape"):
            out.extend([leaf.indices, leaf.values, leaf.dense_shape])
        else:
            out.append(leaf)
    return out


def _structure_for_leaves(fetches):
    if isinstance(fetches, dict):
        return {k: _structure_for_leaves(v) for k, v in fetches.items()}
    if isinstance(fetches, (list, tuple)) and not hasattr(fetches, "_fields"):
        return tuple(_structure_for_leaves(v) for v in fetches)
    return fetches


def run_side(fn, module=None, *, max_batches=None, graph_seed=None, timeout=120.0,
             origin="", dataset_candidate=False) -> SideRun:
    """Build ``fn`` in a fresh graph and pull batches until the input ends.

    module:   the ``tf`` the pipeline function is bound to (see ``bind_tf``); None calls ``fn``
              as it is (a candidate written against real TensorFlow)
    max_batches: stop after this many ``sess.run`` calls (None: until ``OutOfRangeError``)
    graph_seed: ``tf.set_random_seed`` value for the graph (None: unseeded, as TF1's default)
    timeout:  seconds for the whole side; a blocked pipeline ends with ``ended="timeout"``

    Errors raised while building or running are captured in the stream (``ended="error"``),
    never raised: a broken candidate is a finding, not a crash of the harness.
    """
    tf_real = legacy_module()
    tf = module if module is not None else tf_real
    origin = origin or getattr(module, "__name__", None) or _describe(fn)
    started = time.monotonic()
    graph = tf_real.Graph()
    facts = PipelineFacts()
    batches, timeline = [], []
    ended, error = "out_of_range", ""
    with graph.as_default():
        try:
            if graph_seed is not None:
                tf_real.set_random_seed(graph_seed)
            call = bind_tf(fn, module) if module is not None else (
                (lambda: fn(tf_real)) if takes_tf_argument(fn) else fn)
            fetches = call()
            fetches, init_ops = _as_fetches(fetches, tf_real)
            queue_runners = graph.get_collection(tf_real.GraphKeys.QUEUE_RUNNERS)
            facts = inspect_graph(graph, _flat_tensors(fetches), queue_runners)
        except Exception as exc:  # noqa: BLE001 - reported as the side's error
            return SideRun(Stream((), ended="error", error=_error_text(exc), origin=origin),
                           facts, time.monotonic() - started, origin, module=module)
        errors = tf_real.errors
        coord = None
        threads = []
        session = tf.Session(graph=graph)
        try:
            # The side's own module builds the initializers, so a shim can hook into them.
            session.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            for op in init_ops:
                session.run(op)
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=session, coord=coord) or []
            first = None
            while max_batches is None or len(batches) < max_batches:
                remaining = timeout - (time.monotonic() - started)
                if remaining <= 0:
                    ended = "timeout"
                    break
                options = tf_real.RunOptions(timeout_in_ms=max(1, int(remaining * 1000)))
                try:
                    value = session.run(fetches, options=options)
                except errors.OutOfRangeError:
                    ended = "out_of_range"
                    break
                except errors.DeadlineExceededError:
                    ended = "timeout"
                    break
                now = time.monotonic()
                first = now if first is None else first
                timeline.append(now - first)
                batches.append(normalize(value))
            else:
                ended = "max_batches"
        except Exception as exc:  # noqa: BLE001
            ended, error = "error", _error_text(exc)
        finally:
            side_notes = ()
            if coord is not None:
                coord.request_stop()
                # Threads still alive after the grace period are a note, never the side's
                # error; an exception a thread reported to the coordinator still is.
                exc, side_notes = _join_runner_threads(coord, threads, origin)
                if exc is not None and not error and not isinstance(exc, errors.OutOfRangeError):
                    ended, error = "error", _error_text(exc)
            session.close()
    batched = facts.batched if facts.batched is not None else _looks_batched(batches)
    stream = Stream(tuple(batches), batched=batched, ended=ended, error=error, origin=origin,
                    timeline=tuple(timeline), unpad=facts.padded)
    return SideRun(stream, facts, time.monotonic() - started, origin, side_notes, module)


def _as_fetches(value, tf):
    """Fetchable structure for the pipeline's output; a Dataset gets an iterator."""
    if _is_dataset(value):
        iterator = tf.data.make_initializable_iterator(value)
        return iterator.get_next(), [iterator.initializer]
    if isinstance(value, list):
        value = tuple(value)
    return value, []


def _is_dataset(value) -> bool:
    return type(value).__name__.endswith("Dataset") or any(
        cls.__name__ in ("DatasetV2", "DatasetV1") for cls in type(value).__mro__)


def _looks_batched(batches) -> bool:
    """Without a queue to inspect: batched when every leaf has the same leading dim."""
    if not batches:
        return True
    sizes = set()
    for _, leaf in leaves(batches[0]):
        if hasattr(leaf, "dense_shape"):
            sizes.add(int(leaf.dense_shape[0]) if leaf.dense_shape.size else -1)
        elif leaf.ndim == 0:
            return False
        else:
            sizes.add(leaf.shape[0])
    return len(sizes) == 1


def _error_text(exc) -> str:
    """``"<Type>: <root cause>"`` on one line, at most ``ERROR_TEXT_LIMIT`` characters.

    For a ``tf.errors.OpError`` the cause is its ``.message`` without TensorFlow's wrapping:
    the "Graph execution error:" header, the "Detected at node ... defined at (most recent
    call last):" blocks (their ``File ...`` lines, ``<stack traces unavailable>``, ``Node:``)
    and the "Original stack trace" part go; the op's own message and the ``[[{{node X}}]]``
    tags stay. An AutoGraph "in user code:" error keeps the error below its frames.
    Too long a text is cut inside the message, never in the type or the node tags.
    """
    name = type(exc).__name__
    message = getattr(exc, "message", None) if _is_op_error(exc) else None
    if not isinstance(message, str):
        try:
            message = str(exc)
        except Exception:  # noqa: BLE001 - an exception whose __str__ fails
            message = ""
    body, tags = _root_cause(message, name)
    return _fit(name, body, tags, ERROR_TEXT_LIMIT)


def _describe(fn) -> str:
    return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"


# --------------------------------------------------------------------------- teardown, errors

#: Seconds ``run_side`` gives the queue-runner threads to end after ``request_stop``. Threads
#: still running then are recorded in ``SideRun.notes``, never as the side's error.
JOIN_GRACE_SECONDS = 10.0

#: Longest error text ``_error_text`` returns.
ERROR_TEXT_LIMIT = 500

_STILL_RUNNING = "Coordinator stopped with threads still running"


def _join_runner_threads(coord, threads, origin=""):
    """Join the side's threads after ``request_stop``: (exception to report or None, notes).

    A thread that is merely slow to end (the machine is loaded, an enqueue is still being
    cancelled) says nothing about the stream, which is complete by now: it becomes a note.
    An exception a thread reported to the coordinator (``coord.request_stop(exc)``, e.g. a
    reader's ``NotFoundError``) is returned, as TF1's ``coord.join`` raises it first.
    """
    registered = getattr(coord, "_registered_threads", None) or ()
    watched = list(threads) + [t for t in registered if t not in threads]
    raised = None
    try:
        coord.join(threads, stop_grace_period_secs=JOIN_GRACE_SECONDS, ignore_live_threads=True)
    except RuntimeError as exc:
        if not str(exc).startswith(_STILL_RUNNING):  # a Coordinator raising it anyway
            raised = exc
    except Exception as exc:  # noqa: BLE001 - a thread's error, reported by the coordinator
        raised = exc
    stragglers = [getattr(t, "name", repr(t)) for t in watched
                  if getattr(t, "is_alive", lambda: False)()]
    if not stragglers:
        return raised, ()
    shown = ", ".join(stragglers[:5]) + (f" and {len(stragglers) - 5} more"
                                         if len(stragglers) > 5 else "")
    side = f"{origin}: " if origin else ""
    return raised, (f"{side}{len(stragglers)} queue-runner thread(s) still running "
                    f"{JOIN_GRACE_SECONDS:g} s after the last batch ({shown}); ignored: how "
                    "fast threads shut down is not part of the stream",)


def _is_op_error(exc) -> bool:
    return any(cls.__name__ == "OpError" and cls.__module__.startswith("tensorflow")
               for cls in type(exc).__mro__)


def _root_cause(message: str, type_name: str):
    """(message lines, ``[[...]]`` node tag lines) of an error message without the stack
    traces and headers TensorFlow wraps around it."""
    import re
    detected = re.compile(r"^Detected at node .* defined at \(most recent call last\):?$")
    frame = re.compile(r'^File ".*", line \d+')
    body, tags = [], []
    in_trace = False       # inside a "Detected at node" block
    frame_indent = None    # indentation of the last `File "...", line n` line
    for raw in message.replace("\r\n", "\n").split("\n"):
        line = raw.strip()
        indent = len(raw) - len(raw.lstrip())
        if line.startswith("Original stack trace for"):
            break
        if line in ("Graph execution error:", "in user code:"):
            continue
        if detected.match(line):
            in_trace, frame_indent = True, None
            continue
        if in_trace:
            if not line or indent or line == "<stack traces unavailable>" or \
                    line.startswith("Node: "):
                continue
            in_trace = False
        if frame.match(line):
            frame_indent = indent
            continue
        if frame_indent is not None:
            if not line or indent > frame_indent:
                continue  # the source line under a frame
            frame_indent = None
        if not line:
            continue
        if line.startswith("[[") and line.endswith("]]"):
            tags.append(re.sub(r"\s*\(defined at [^)]*\)\s*", "", line))
        else:
            body.append(line)
    if body and body[0].startswith(f"{type_name}: "):
        body[0] = body[0][len(type_name) + 2:]  # "in user code:" repeats the type
    return body, tags


def _fit(type_name: str, body, tags, limit: int) -> str:
    """One line ``Type: body [[tags]]``; when too long, the body is cut at a word boundary
    (the end of a long message is usually a dump of values), the type and tags are kept."""
    tail = " ".join(tags)
    if len(tail) > limit // 3:
        tail = tags[0][:limit // 3]
    text = " ".join(body)
    room = limit - len(type_name) - 2 - (len(tail) + 1 if tail else 0)
    if len(text) > room:
        cut = text[:max(0, room - 4)]
        if " " in cut[len(cut) // 2:]:
            cut = cut[:cut.rindex(" ")]
        text = cut.rstrip() + " ..."
    parts = [part for part in (text, tail) if part]
    return (f"{type_name}: " + " ".join(parts) if parts else type_name)[:limit]


__all__ = ["SideRun", "PipelineFacts", "ShuffleQueue", "run_side", "bind_tf", "inspect_graph",
           "legacy_module", "shim_module",
           # defined here before _tf_binding and _graph_facts were split off; still importable
           "BuildError", "V1_MODULE_NAMES", "TF_ROOT_NAMES", "UNKNOWN_IN_FLIGHT"]
