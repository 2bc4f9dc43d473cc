"""Run one side of a comparison in isolation and describe its graph.

Each side gets its own ``tf.Graph``, ``Session``, ``Coordinator`` and queue-runner threads, and
is torn down (coordinator stopped, threads joined, session closed) before the other side runs,
so one side can neither consume the other's queues nor share its random state.

TensorFlow is imported inside functions only: ``compat.harness`` must import without it.
"""
from __future__ import annotations

import dataclasses
import inspect
import time
import types
from dataclasses import dataclass, field

from compat._harness.streams import Stream, leaves, normalize

#: ``__name__`` of the modules that a legacy pipeline may use as ``tf``.
V1_MODULE_NAMES = frozenset({"tensorflow.compat.v1", "tensorflow._api.v2.compat.v1", "compat.v1"})
TF_ROOT_NAMES = frozenset({"tensorflow"})

_QUEUE_TYPES = {"FIFOQueueV2", "FIFOQueue", "RandomShuffleQueueV2", "RandomShuffleQueue",
                "PaddingFIFOQueueV2", "PaddingFIFOQueue", "PriorityQueueV2", "PriorityQueue"}
_BATCH_DEQUEUE_TYPES = {"QueueDequeueManyV2", "QueueDequeueUpToV2", "QueueDequeueMany",
                        "QueueDequeueUpTo"}
_DEQUEUE_TYPES = _BATCH_DEQUEUE_TYPES | {"QueueDequeueV2", "QueueDequeue"}
_SEEDED_RANDOM_PREFIXES = ("Random", "TruncatedNormal", "Multinomial", "StatelessRandom")


class BuildError(Exception):
    """The pipeline function could not be called with the given ``tf`` module."""


# --------------------------------------------------------------------------- binding ``tf``


def legacy_module():
    import tensorflow.compat.v1 as tf_v1
    return tf_v1


def shim_module():
    import compat.v1 as shim
    return shim


def _is_v1_module(value) -> bool:
    return isinstance(value, types.ModuleType) and value.__name__ in V1_MODULE_NAMES


class _RootWithV1:
    """Stands in for ``import tensorflow as tf`` so that ``tf.compat.v1`` is the chosen module."""

    def __init__(self, root, v1):
        self._root, self._v1 = root, v1
        self.compat = types.SimpleNamespace(v1=v1)

    def __getattr__(self, name):
        return getattr(self._root, name)


def takes_tf_argument(fn) -> bool:
    """True for ``build(tf)``; False for ``build()`` using a module-level ``tf``."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return bool(positional) and positional[0].default is inspect.Parameter.empty


def bind_tf(fn, module):
    """A zero-argument callable that runs the pipeline function ``fn`` against ``module``.

    ``build(tf)`` is called with the module. A function using a module-level ``tf`` (or any
    other global bound to ``tensorflow.compat.v1``/``compat.v1``, or ``import tensorflow`` used
    as ``tf.compat.v1``) runs on a *copy* of its globals where those names point at ``module``;
    functions defined in the same module are rebound to the copy too, so helpers called from
    the pipeline function see the same ``tf``. The real module globals are never modified,
    which is what keeps the two sides of a comparison isolated.
    """
    if takes_tf_argument(fn):
        return lambda: fn(module)
    if not isinstance(fn, types.FunctionType):
        return fn
    old = fn.__globals__
    new = dict(old)
    swapped = False
    for name, value in old.items():
        if _is_v1_module(value):
            new[name] = module
            swapped = True
        elif isinstance(value, types.ModuleType) and value.__name__ in TF_ROOT_NAMES:
            new[name] = _RootWithV1(value, module)
            swapped = True
    for name, value in old.items():
        if isinstance(value, types.FunctionType) and value.__globals__ is old:
            new[name] = _rebind(value, new)
    if not swapped and "tf" not in new:
        new["tf"] = module  # the function names `tf` without any module-level binding yet
    return _rebind(fn, new)


def _rebind(fn, new_globals):
    clone = types.FunctionType(fn.__code__, new_globals, fn.__name__, fn.__defaults__,
                               fn.__closure__)
    clone.__kwdefaults__ = fn.__kwdefaults__
    clone.__dict__.update(fn.__dict__)
    return clone


# --------------------------------------------------------------------------- graph facts


@dataclass(frozen=True)
class ShuffleQueue:
    name: str
    capacity: int
    min_after_dequeue: int
    enqueue_threads: int


@dataclass(frozen=True)
class PipelineFacts:
    """What the legacy graph tells about the guarantees TF1 gives for this pipeline.

    batched:            the fetched tensors come from ``dequeue_many``/``dequeue_up_to``
                        (None when no queue dequeue feeds them)
    shuffle_queues:     every ``RandomShuffleQueue`` (``shuffle_batch*`` or hand-built)
    max_enqueue_threads: most enqueue ops of any QueueRunner (``num_threads``, ``*_join`` lists)
    joins:              some QueueRunner has several *distinct* enqueue ops (``*_join``)
    padded:             a ``PaddingFIFOQueue`` (``dynamic_pad=True``) is involved
    unseeded_shuffles:  ``RandomShuffle`` ops without seeds (producers with ``shuffle=True``
                        and no graph/op seed): their order differs from run to run
    unseeded_random_ops: other stateful random ops without seeds (data augmentation)
    window_capacity:    sum of the shuffle queues' capacities (the ``window`` bound)
    window_slack:       extra reordering allowed by parallel enqueue threads
    drops_remainder:    the output is a ``dequeue_many`` (``allow_smaller_final_batch=False``):
                        elements left over at the end are dropped
    """

    batched: bool | None = None
    shuffle_queues: tuple = ()
    max_enqueue_threads: int = 0
    joins: bool = False
    padded: bool = False
    unseeded_shuffles: tuple = ()
    unseeded_random_ops: tuple = ()
    window_capacity: int = 0
    window_slack: int = 0
    queue_count: int = 0
    drops_remainder: bool = False

    @property
    def deterministic(self) -> bool:
        """TF1 produces the same stream every run: the ``exact`` level applies."""
        return not self.shuffle_queues and self.max_enqueue_threads <= 1 and not self.joins \
            and not self.unseeded_shuffles

    @property
    def epochs_separable(self) -> bool:
        """Elements of one epoch are never mixed with another's (no queue mixes them)."""
        return not self.shuffle_queues and self.max_enqueue_threads <= 1 and not self.joins

    def to_json(self) -> dict:
        return {
            "batched": self.batched,
            "shuffle_queues": [dataclasses.asdict(q) for q in self.shuffle_queues],
            "max_enqueue_threads": self.max_enqueue_threads,
            "joins": self.joins,
            "padded": self.padded,
            "unseeded_shuffles": list(self.unseeded_shuffles),
            "unseeded_random_ops": list(self.unseeded_random_ops),
            "window_capacity": self.window_capacity,
            "window_slack": self.window_slack,
            "queue_count": self.queue_count,
            "drops_remainder": self.drops_remainder,
        }

    @classmethod
    def from_json(cls, data: dict) -> "PipelineFacts":
        data = dict(data)
        data["shuffle_queues"] = tuple(ShuffleQueue(**q) for q in data.get("shuffle_queues", ()))
        data["unseeded_shuffles"] = tuple(data.get("unseeded_shuffles", ()))
        data["unseeded_random_ops"] = tuple(data.get("unseeded_random_ops", ()))
        return cls(**data)


def _attr(op, name, default=0):
    try:
        return op.get_attr(name)
    except (ValueError, TypeError):
        return default


def inspect_graph(graph, fetch_tensors, queue_runners) -> PipelineFacts:
    ops = graph.get_operations()
    queues = {op.name: op for op in ops if op.type in _QUEUE_TYPES}
    threads_by_queue = {}
    joins = False
    slack = 0
    for runner in queue_runners:
        queue = getattr(runner, "queue", None)
        queue_op = getattr(queue, "op", None) if queue is not None else None
        queue_name = queue_op.name if queue_op is not None else getattr(queue, "name", "")
        enqueue_ops = list(getattr(runner, "enqueue_ops", []) or [])
        threads_by_queue[queue_name] = threads_by_queue.get(queue_name, 0) + len(enqueue_ops)
        if len({id(op) for op in enqueue_ops}) > 1:
            joins = True
        for op in enqueue_ops[1:]:
            slack += _in_flight(op, queue_op)
    shuffle_queues = tuple(
        ShuffleQueue(name, int(_attr(op, "capacity", -1)), int(_attr(op, "min_after_dequeue")),
                     threads_by_queue.get(name, 0))
        for name, op in sorted(queues.items()) if op.type.startswith("RandomShuffleQueue"))
    unseeded_shuffles = tuple(op.name for op in ops if op.type == "RandomShuffle"
                              and not _attr(op, "seed") and not _attr(op, "seed2")
                              and not _single_item(op))
    unseeded_random = tuple(op.name for op in ops if op.type != "RandomShuffle"
                            and op.type not in _QUEUE_TYPES
                            and op.type.startswith(_SEEDED_RANDOM_PREFIXES)
                            and not op.type.startswith("StatelessRandom")
                            and "seed" in [a.name for a in op.op_def.attr]
                            and not _attr(op, "seed") and not _attr(op, "seed2"))
    dequeue = _upstream_dequeue(fetch_tensors)
    batched = None if dequeue is None else dequeue.type in _BATCH_DEQUEUE_TYPES
    padded = any(op.type.startswith("PaddingFIFOQueue") for op in queues.values())
    capacity = sum(max(q.capacity, 0) for q in shuffle_queues)
    return PipelineFacts(
        batched=batched, shuffle_queues=shuffle_queues,
        max_enqueue_threads=max(threads_by_queue.values(), default=0), joins=joins,
        padded=padded, unseeded_shuffles=unseeded_shuffles, unseeded_random_ops=unseeded_random,
        window_capacity=capacity, window_slack=slack, queue_count=len(queues),
        drops_remainder=dequeue is not None and "DequeueMany" in dequeue.type)


def _single_item(shuffle_op) -> bool:
    """Shuffling one filename (the usual single-file producer) cannot change the order."""
    try:
        dim = shuffle_op.inputs[0].shape[0]
    except (IndexError, ValueError, TypeError):
        return False
    return dim is not None and int(dim) <= 1


_SINGLE_READS = {"QueueDequeueV2", "QueueDequeue", "ReaderReadV2", "ReaderRead"}
_MANY_READS = {"QueueDequeueUpToV2", "QueueDequeueManyV2", "QueueDequeueUpTo",
               "QueueDequeueMany", "ReaderReadUpToV2", "ReaderReadUpTo"}
UNKNOWN_IN_FLIGHT = 10**6


def _in_flight(enqueue_op, queue_op) -> int:
    """Elements one extra enqueue thread can hold back (and so reorder) at a time: what one run
    of its enqueue op pulls from upstream (1 for ``read``/``dequeue``, n for ``read_up_to(n)``
    or ``dequeue_up_to(n)``, whatever ``keep_input`` masking happens in between)."""
    if enqueue_op is None or not hasattr(enqueue_op, "type"):
        return 1
    if "EnqueueMany" not in enqueue_op.type:
        return 1
    read = _first_upstream([t.op for t in enqueue_op.inputs[1:]],
                           lambda op: op.type in _SINGLE_READS or op.type in _MANY_READS)
    if read is not None:
        if read.type in _SINGLE_READS:
            return 1
        count = _constant(read.inputs[-1])
        return count if count is not None else UNKNOWN_IN_FLIGHT
    try:
        dim = enqueue_op.inputs[1].shape[0]
        if dim is not None:
            return int(dim)
    except (IndexError, ValueError, TypeError):
        pass
    return UNKNOWN_IN_FLIGHT


def _constant(tensor):
    try:
        from tensorflow.python.framework import tensor_util
        value = tensor_util.constant_value(tensor)
    except Exception:  # noqa: BLE001 - not a constant we can read
        return None
    return None if value is None else int(value)


def _upstream_dequeue(fetch_tensors):
    """The nearest queue dequeue op feeding the fetched tensors (breadth first)."""
    return _first_upstream([t.op for t in fetch_tensors if hasattr(t, "op")],
                           lambda op: op.type in _DEQUEUE_TYPES)


def _first_upstream(start_ops, matches):
    """Breadth first from `start_ops` through op inputs: the nearest op that `matches`."""
    seen, frontier = set(), list(start_ops)
    while frontier:
        next_frontier = []
        for op in frontier:
            if op.name in seen:
                continue
            seen.add(op.name)
            if matches(op):
                return op
            next_frontier.extend(t.op for t in op.inputs)
        frontier = next_frontier
    return None


# --------------------------------------------------------------------------- running


@dataclass(frozen=True)
class SideRun:
    """One side's result: the stream, the graph facts and how long it took.

    notes: things about the run that are worth knowing but are no error of the pipeline
           (e.g. queue-runner threads that were slow to shut down after the last batch)
    """

    stream: Stream
    facts: PipelineFacts = field(default_factory=PipelineFacts)
    seconds: float = 0.0
    origin: str = ""
    notes: tuple = ()


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
                           facts, time.monotonic() - started, origin)
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
    return SideRun(stream, facts, time.monotonic() - started, origin, side_notes)


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
           "legacy_module", "shim_module"]
