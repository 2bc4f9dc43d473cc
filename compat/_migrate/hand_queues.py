"""Queues a function builds by hand and fills with a QueueRunner, followed as batching.

    queue = tf.FIFOQueue(capacity, dtypes, shapes)        # or RandomShuffleQueue, PaddingFIFOQueue
    enqueue = queue.enqueue([image, label])               # element code's tensors (or enqueue_many)
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue] * threads))
    images, labels = queue.dequeue_many(batch_size)       # or dequeue_up_to, dequeue

is what `tf.train.batch` / `shuffle_batch` build themselves, so it becomes the same tf.data:
`dequeue_many(n)` a batch that drops the remainder (TF1 raises OutOfRange on a short one),
`dequeue_up_to(n)` one that keeps it, a PaddingFIFOQueue's a padded batch, a
RandomShuffleQueue's a shuffle of min(capacity, min_after_dequeue + 1) elements first, and
the runner's enqueue ops in parallel map calls. A queue whose enqueue reads no element (fed
from Python through placeholders) is reported with the generator to write instead.
"""
from __future__ import annotations

import ast

from compat._migrate.source_file import Unfollowable, bind_arguments, value_call
from compat._migrate.statements import Statement

HAND_QUEUES = frozenset({"FIFOQueue", "RandomShuffleQueue", "PaddingFIFOQueue"})
RUNNERS = frozenset({"train.QueueRunner", "train.add_queue_runner"})
_FED_FROM_PYTHON = ("a queue fed from Python (its enqueue reads placeholders, not a reader): "
                    "write the feeder as `tf.data.Dataset.from_generator(feeder, "
                    "output_signature=...)` yielding what it enqueued, then batch that dataset")


class HandQueues:
    """What the function's hand-built queues are, as its statements say."""

    def __init__(self, file):
        self.file = file
        self.built = {}        # queue name -> (kind, arguments)
        self.enqueues = {}     # enqueue op name -> (queue name, tensors text, many, line)
        self.threads = {}      # queue name -> runner's op count (source text)

    def take(self, statement: Statement, api, element_names) -> bool:
        """Record `statement` if it builds, fills or runs a hand-built queue."""
        node, call = statement.node, value_call(statement.node)
        if api in HAND_QUEUES:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)):
                raise Unfollowable(api, statement.line, "assign the queue to a name")
            self.built[node.targets[0].id] = (api, bind_arguments(api, call, statement.source))
            return True
        if api in RUNNERS:
            self._runner(statement, call, api, element_names)
            return True
        method = self._queue_method(call)
        if method in ("enqueue", "enqueue_many"):
            if not isinstance(node, ast.Assign) or len(node.targets) != 1 \
                    or not isinstance(node.targets[0], ast.Name):
                raise Unfollowable(f"queue.{method}", statement.line,
                                   "assign the enqueue op to a name, run by a QueueRunner")
            arg = call.args[0] if call.args else next(
                (k.value for k in call.keywords if k.arg == "vals"), None)
            if arg is None:
                raise Unfollowable(f"queue.{method}", statement.line, "pass what it enqueues")
            if not statement.reads & element_names:
                raise Unfollowable(f"{self.built[call.func.value.id][0]} fed from Python",
                                   statement.line, _FED_FROM_PYTHON)
            self.enqueues[node.targets[0].id] = (call.func.value.id, statement.segment(arg),
                                                 method == "enqueue_many", statement.line)
            return True
        return False

    def _queue_method(self, call):
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name) and call.func.value.id in self.built):
            return call.func.attr
        return None

    def _runner(self, statement, call, api, element_names) -> None:
        if api == "train.add_queue_runner":
            inner = call.args[0] if call.args else None
            if isinstance(inner, ast.Call) and self.file.api_of(inner) == "train.QueueRunner":
                self._runner(statement, inner, "train.QueueRunner", element_names)
            return  # adding a runner built earlier: its threads are recorded already
        for sub in ast.walk(call):  # an enqueue op made in the runner's arguments
            if self._queue_method(sub) in ("enqueue", "enqueue_many") and not (
                    {n.id for n in ast.walk(sub) if isinstance(n, ast.Name)} & element_names):
                raise Unfollowable(f"{self.built[sub.func.value.id][0]} fed from Python",
                                   statement.line, _FED_FROM_PYTHON)
        arguments = bind_arguments(api, call, statement.source)
        queue = ast.parse(arguments.get("queue", "None"), mode="eval").body
        ops = ast.parse(arguments.get("enqueue_ops", "None"), mode="eval").body
        if not (isinstance(queue, ast.Name) and queue.id in self.built):
            raise Unfollowable("train.QueueRunner", statement.line,
                               "the runner must run a queue this function builds")
        count = _op_count(ops, self.enqueues)
        if count is None:
            raise Unfollowable("train.QueueRunner", statement.line,
                               "its enqueue ops are followed as `[enqueue_op] * threads` (one "
                               "op of this function's queue, any number of copies)")
        self.threads[queue.id] = count

    def dequeue(self, statement: Statement):
        """For `x = queue.dequeue_many(n)` (or dequeue_up_to, dequeue) of a queue built here:
        (batching api, its arguments, whether it shuffles); else None."""
        node, call = statement.node, value_call(statement.node)
        method = self._queue_method(call)
        if method not in ("dequeue", "dequeue_many", "dequeue_up_to"):
            return None
        name = call.func.value.id
        kind, built = self.built[name]
        fills = [(op, e) for op, e in self.enqueues.items() if e[0] == name]
        if len(fills) != 1 or name not in self.threads:
            raise Unfollowable(f"{kind}.{method}", statement.line,
                               "followed when one enqueue op, run by a QueueRunner of this "
                               "function, fills the queue")
        _, tensors, many, _ = fills[0][1]
        arguments = {"tensors": tensors, "enqueue_many": str(many),
                     "num_threads": self.threads[name]}
        if method == "dequeue":
            arguments["batch_size"] = "None"
        else:
            arguments["batch_size"] = statement.segment(call.args[0]) if call.args else next(
                statement.segment(k.value) for k in call.keywords if k.arg == "n")
            arguments["allow_smaller_final_batch"] = str(method == "dequeue_up_to")
        if kind == "RandomShuffleQueue":
            arguments.update(capacity=built["capacity"],
                             min_after_dequeue=built["min_after_dequeue"],
                             seed=built.get("seed", "None"))
            api = "train.shuffle_batch"
        else:
            arguments["dynamic_pad"] = str(kind == "PaddingFIFOQueue")
            api = "train.batch"
        if not isinstance(node, (ast.Assign, ast.Return)):
            raise Unfollowable(f"{kind}.{method}", statement.line,
                               "assign or return what it dequeues")
        return api, arguments


def _op_count(ops, enqueues):
    """`[op] * n` -> "n"; `[op, op]` -> "2"; `[op for _ in range(n)]` -> "n"; else None."""
    if isinstance(ops, ast.BinOp) and isinstance(ops.op, ast.Mult):
        listed, count = (ops.left, ops.right) if isinstance(ops.left, ast.List) else \
            (ops.right, ops.left)
        if isinstance(listed, ast.List) and len(listed.elts) == 1 and isinstance(
                listed.elts[0], ast.Name) and listed.elts[0].id in enqueues:
            return ast.unparse(count)
    if isinstance(ops, ast.List) and ops.elts and all(
            isinstance(e, ast.Name) and e.id in enqueues for e in ops.elts) and len(
                {e.id for e in ops.elts}) == 1:
        return str(len(ops.elts))
    if (isinstance(ops, ast.ListComp) and isinstance(ops.elt, ast.Name)
            and ops.elt.id in enqueues and len(ops.generators) == 1):
        loop = ops.generators[0].iter
        if isinstance(loop, ast.Call) and isinstance(loop.func, ast.Name) \
                and loop.func.id == "range" and len(loop.args) == 1:
            return ast.unparse(loop.args[0])
    return None
