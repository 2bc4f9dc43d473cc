"""A legacy input function's pipeline, read from its statements.

The function's statements (helpers called with a queue or with the element, defined in the
same file, are inlined first) are split by data flow:

* the producer (`string_input_producer`, ...), the reader and its `read`: the element source;
* element code: every statement that reads an element value (directly or through a name it
  bound): it becomes the map function;
* one batching call (or an `if` choosing between two): the batching;
* code on the batch's outputs, and the `return`: a map over batches;
* everything else (feature specs, constants, prints): stays in the function, before the
  dataset is built.

What cannot be followed raises `Unfollowable` with the construct, its line and what to do.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from compat._migrate.hand_queues import HandQueues
from compat._migrate.inlining import JOINED_ELEMENT, inline
from compat._migrate.source_file import (BATCHINGS, JOINS, PRODUCERS, READERS, SourceFile,
                                         Unfollowable, bind_arguments, is_summary, read_file,
                                         value_call)
from compat._migrate.statements import Statement, bound_names, flatten, is_docstring

__all__ = ["Pipeline", "Call", "Read", "BatchChoice", "recognize", "read_file", "Unfollowable",
           "PRODUCERS", "READERS", "BATCHINGS"]

_ADVICE = {
    "FIFOQueue": "a hand-built queue is not followed yet. Fed from Python (placeholders and "
                 "enqueue): write the feeder as `tf.data.Dataset.from_generator(feeder, "
                 "output_signature=...)` yielding what it enqueued; filled by ops: keep the "
                 "function on the shim (`compat.to_dataset`)",
    "RandomShuffleQueue": "a hand-built shuffle queue is not followed yet: keep the function "
                          "on the shim (`compat.to_dataset`)",
    "PaddingFIFOQueue": "a hand-built padding queue is not followed yet: keep the function "
                        "on the shim (`compat.to_dataset`)",
    "train.QueueRunner": "threads that run enqueue ops are not followed yet: keep the function "
                         "on the shim (`compat.to_dataset`)",
}
_DEFAULT_ADVICE = ("not followed by compat-migrate yet: keep the function on the shim "
                   "(`compat.to_dataset`), or rewrite this part by hand from the checker's template")



@dataclass
class Call:
    api: str
    node: ast.Call
    args: dict            # parameter -> source text, as written
    line: int


@dataclass
class Read:
    method: str           # "read" or "read_up_to"
    count: str | None     # read_up_to's num_records
    targets: str          # the assignment's targets as written
    line: int


@dataclass
class BatchChoice:
    test: str
    branches: tuple       # (Call, Call): the batching of the true and the false branch


@dataclass
class Pipeline:
    function: ast.FunctionDef
    outside: list = field(default_factory=list)
    source: Call | None = None
    source_targets: str = ""        # slice_input_producer's / a dequeue's targets
    dequeued: bool = False          # elements are the producer queue's own (q.dequeue())
    reader: Call | None = None
    read: Read | None = None
    element: list = field(default_factory=list)
    element_names: set = field(default_factory=set)
    batching: Call | BatchChoice | None = None
    batch_targets: str = ""
    post: list = field(default_factory=list)
    returned: str | None = None
    apis: list = field(default_factory=list)
    summaries: list = field(default_factory=list)   # tf.summary calls left out
    copies: str | None = None       # a join's reader copies (source text)
    helpers: tuple = ()             # source of the module's functions the element code calls

    @property
    def batchings(self) -> tuple:
        if self.batching is None:
            return ()
        if isinstance(self.batching, BatchChoice):
            return self.batching.branches
        return (self.batching,)


def recognize(function: ast.FunctionDef, file: SourceFile) -> Pipeline:
    pipeline = Pipeline(function)
    body = function.body[1:] if function.body and is_docstring(function.body[0]) else function.body
    statements = inline(file, flatten(body, file.lines, file.tf_names))
    _Splitter(pipeline, file).split(statements)
    called = {sub.func.id for statement in pipeline.element for sub in ast.walk(statement.node)
              if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name)}
    pipeline.helpers = tuple(ast.get_source_segment(file.text, file.functions[name])
                             for name in sorted(called) if name in file.functions)
    if pipeline.source is None:
        raise Unfollowable(function.name, function.lineno,
                           "no producer (string_input_producer, slice_input_producer, ...) "
                           "found: nothing to migrate")
    if pipeline.returned is None:
        raise Unfollowable(function.name, function.lineno,
                           "the function returns nothing: compat-migrate rewrites functions "
                           "that return their batch (or element)")
    return pipeline


class _Splitter:
    def __init__(self, pipeline: Pipeline, file: SourceFile):
        self.p, self.file = pipeline, file
        self.queues: set = set()
        self.readers: set = set()
        self.hand = HandQueues(file)
        self.batch_names: set = set()

    def split(self, statements) -> None:
        for statement in statements:
            self._take(statement)

    def _refuse_apis(self, statement: Statement, allowed=()) -> None:
        if statement.at_line:
            return
        for api, node in self.file.legacy_apis_in(statement.node):
            if api not in allowed:
                raise Unfollowable(api, node.lineno, _ADVICE.get(api, _DEFAULT_ADVICE))

    def _take(self, statement: Statement) -> None:
        p, node = self.p, statement.node
        call = value_call(node)
        # A statement the migration wrote (at_line set) reaches no legacy API itself.
        api = None if statement.at_line else self.file.api_of(call)
        if api is not None:
            p.apis.append(api)
        if self.hand.take(statement, api, p.element_names):
            return
        dequeued = self.hand.dequeue(statement)
        if dequeued is not None:
            self._hand_batching(statement, call, *dequeued)
        elif api in PRODUCERS:
            self._producer(statement, call, api)
        elif api in READERS:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)) or p.reader is not None:
                raise Unfollowable(api, statement.line, "one reader, assigned to a name, is "
                                   "followed per function")
            self._refuse_apis(statement, (api,))
            p.reader = Call(api, call, bind_arguments(api, call, statement.source), statement.line)
            self.readers.add(node.targets[0].id)
        elif self._is_read(node):
            self._read(statement)
        elif self._is_dequeue(node):
            self._dequeue(statement)
        elif self._producer_dequeued(statement):
            pass
        elif api in BATCHINGS:
            self._batching(statement, call, api)
        elif self._batch_choice(statement):
            pass
        elif isinstance(node, ast.Return):
            self._return(statement)
        else:
            self._plain(statement)

    def _producer(self, statement, call, api) -> None:
        p, node = self.p, statement.node
        if p.source is not None:
            raise Unfollowable(api, statement.line,
                               "a second producer in one function is not followed")
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            raise Unfollowable(api, statement.line, "assign the producer to a name")
        self._refuse_apis(statement, (api,))
        p.source = Call(api, call, bind_arguments(api, call, statement.source), statement.line)
        target = node.targets[0]
        if api == "train.slice_input_producer":
            p.source_targets = ast.get_source_segment(statement.source, target)
            p.element_names |= bound_names(node)
        elif isinstance(target, ast.Name):
            self.queues.add(target.id)
        else:
            raise Unfollowable(api, statement.line, "assign the producer's queue to one name")

    def _is_read(self, node) -> bool:
        call = value_call(node)
        if not (isinstance(node, ast.Assign) and call is not None
                and isinstance(call.func, ast.Attribute)
                and call.func.attr in ("read", "read_up_to")):
            return False
        reader = call.func.value
        if isinstance(reader, ast.Name):
            return reader.id in self.readers
        return self.file.api_of(reader) in READERS  # `tf.TFRecordReader().read(queue)`

    def _read(self, statement) -> None:
        p, node = self.p, statement.node
        call = node.value
        made = call.func.value
        if isinstance(made, ast.Call):  # the reader made where it reads
            if p.reader is not None:
                raise Unfollowable(self.file.api_of(made), statement.line,
                                   "one reader is followed per function")
            api = self.file.api_of(made)
            p.apis.append(api)
            p.reader = Call(api, made, bind_arguments(api, made, statement.source),
                            statement.line)
        if p.read is not None:
            raise Unfollowable("a second read", statement.line,
                               "several reads in one function (batch_join's copies) are "
                               "followed only through a helper called once per copy")
        queue = call.args[0] if call.args else next(
            (k.value for k in call.keywords if k.arg == "queue"), None)
        if not (isinstance(queue, ast.Name) and queue.id in self.queues):
            raise Unfollowable(f"{statement.segment(call.func)}", statement.line,
                               "the reader must read the producer's queue of this function")
        count = None
        if call.func.attr == "read_up_to":
            arg = call.args[1] if len(call.args) > 1 else next(
                (k.value for k in call.keywords if k.arg == "num_records"), None)
            count = ast.get_source_segment(statement.source, arg)
        targets = statement.targets()
        p.read = Read(call.func.attr, count, targets, statement.line)
        p.element_names |= bound_names(node)

    def _producer_dequeued(self, statement) -> bool:
        """`x = tf.train.range_input_producer(...).dequeue()`: the producer and its read in
        one statement."""
        node = statement.node
        call = value_call(node)
        if (statement.at_line or not isinstance(node, ast.Assign) or call is None or call.args
                or not isinstance(call.func, ast.Attribute) or call.func.attr != "dequeue"):
            return False
        inner = call.func.value
        api = self.file.api_of(inner)
        if api not in PRODUCERS or api == "train.slice_input_producer":
            return False
        p = self.p
        if p.source is not None:
            raise Unfollowable(api, statement.line,
                               "a second producer in one function is not followed")
        p.apis.append(api)
        p.source = Call(api, inner, bind_arguments(api, inner, statement.source), statement.line)
        p.dequeued = True
        p.source_targets = statement.targets()
        p.element_names |= bound_names(node)
        return True

    def _is_dequeue(self, node) -> bool:
        call = value_call(node)
        return (isinstance(node, ast.Assign) and call is not None and not call.args
                and isinstance(call.func, ast.Attribute) and call.func.attr == "dequeue"
                and isinstance(call.func.value, ast.Name) and call.func.value.id in self.queues)

    def _dequeue(self, statement) -> None:
        p, node = self.p, statement.node
        if p.read is not None or p.dequeued:
            raise Unfollowable("a second dequeue", statement.line,
                               "one read of the producer is followed per function")
        p.dequeued = True
        p.source_targets = statement.targets()
        p.element_names |= bound_names(node)

    def _hand_batching(self, statement, call, api, arguments) -> None:
        if self.p.batching is not None:
            raise Unfollowable("a second batching", statement.line,
                               "one batching (a batch call or a hand-built queue) is followed")
        self.p.batching = Call(api, call, arguments, statement.line)
        self._after_batching(statement)

    def _batching(self, statement, call, api) -> None:
        p = self.p
        if p.batching is not None:
            raise Unfollowable(api, statement.line, "a second batching call is not followed")
        self._refuse_apis(statement, (api,))
        batching = Call(api, call, bind_arguments(api, call, statement.source), statement.line)
        if api in JOINS:
            if statement.line not in self.file.joins:
                raise Unfollowable(api, statement.line, "a join is followed over copies of one "
                                   "reading helper: `[read(queue) for _ in range(n)]`")
            p.copies = self.file.joins[statement.line]
            batching.args["tensors_list"] = JOINED_ELEMENT
        p.batching = batching
        self._after_batching(statement)

    def _after_batching(self, statement) -> None:
        p, node = self.p, statement.node
        if isinstance(node, ast.Return):
            p.returned = "__batch__"
        elif isinstance(node, ast.Assign):
            p.batch_targets = statement.targets()
            self.batch_names |= bound_names(node)
        else:
            raise Unfollowable(p.batching.api if isinstance(p.batching, Call) else "batch",
                               statement.line, "assign or return the batch")

    def _batch_choice(self, statement) -> bool:
        node = statement.node
        if not isinstance(node, ast.If) or len(node.body) != 1 or len(node.orelse) != 1:
            return False
        calls = [value_call(branch[0]) for branch in (node.body, node.orelse)]
        found = [self.file.api_of(c) for c in calls]
        if not all(api in BATCHINGS for api in found):
            return False
        kinds = [type(branch[0]) for branch in (node.body, node.orelse)]
        texts = [statement.targets(b[0])
                 if isinstance(b[0], ast.Assign) else "" for b in (node.body, node.orelse)]
        if kinds[0] is not kinds[1] or texts[0] != texts[1] or any(a.endswith("_join") for a in found):
            raise Unfollowable("if/else between batchings", statement.line,
                               "both branches must assign (or return) the same names")
        branches = tuple(Call(api, c, bind_arguments(api, c, statement.source), c.lineno)
                         for api, c in zip(found, calls))
        if self.p.batching is not None:
            raise Unfollowable(found[0], statement.line, "a second batching call is not followed")
        self.p.apis.extend(found)
        self.p.batching = BatchChoice(ast.get_source_segment(statement.source, node.test), branches)
        self._after_batching(Statement(node.body[0], "", statement.reads, statement.binds,
                                       statement.source))
        return True

    def _return(self, statement) -> None:
        p = self.p
        if p.returned is not None:
            raise Unfollowable("return", statement.line, "one return, at the end, is followed")
        self._refuse_apis(statement)
        value = statement.node.value
        p.returned = ast.get_source_segment(statement.source, value) if value is not None else "None"
        if p.batching is not None:
            p.post.append(statement)
        else:
            p.element.append(statement)

    def _plain(self, statement) -> None:
        p = self.p
        self._refuse_apis(statement)
        if is_summary(statement.node, self.file.tf_names):
            # tf.data keeps no summary collection: a summary of the batch is written where
            # the training loop has a writer and a step.
            p.summaries.append(statement)
            return
        if statement.reads & (self.queues | self.readers):
            raise Unfollowable("a queue or reader used outside its read", statement.line,
                               "compat-migrate follows queues that are only read: keep the "
                               "function on the shim (`compat.to_dataset`)")
        if p.returned is not None:
            raise Unfollowable("code after the return", statement.line, "remove it")
        if statement.reads & self.batch_names:
            p.post.append(statement)
            self.batch_names |= statement.binds
        elif statement.reads & p.element_names:
            if p.batching is not None:
                raise Unfollowable("element code after the batching", statement.line,
                                   "it reads the element, not the batch: move it before the batch")
            p.element.append(statement)
            p.element_names |= statement.binds
        else:
            p.outside.append(statement)


