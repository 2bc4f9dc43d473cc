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
import re
from dataclasses import dataclass, field

from compat import _api_table as table
from compat._check import apis, names
from compat._migrate.statements import SourceLines, Statement, flatten, read_names, bound_names

PRODUCERS = frozenset({"train.string_input_producer", "train.input_producer",
                       "train.range_input_producer", "train.slice_input_producer"})
READERS = frozenset({"TFRecordReader", "TextLineReader", "FixedLengthRecordReader",
                     "WholeFileReader"})
BATCHINGS = frozenset({"train.batch", "train.shuffle_batch", "train.batch_join",
                       "train.shuffle_batch_join"})
_HELPER_DEPTH = 4

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


class Unfollowable(Exception):
    def __init__(self, construct: str, line: int, advice: str):
        super().__init__(f"line {line}: {construct}: {advice}")
        self.construct, self.line, self.advice = construct, line, advice


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

    @property
    def batchings(self) -> tuple:
        if self.batching is None:
            return ()
        if isinstance(self.batching, BatchChoice):
            return self.batching.branches
        return (self.batching,)


def _row(api: str):
    for row in table.ROWS:
        if row.name == api:
            return row
    raise KeyError(api)


def bind_arguments(api: str, call: ast.Call, text: str) -> dict:
    """The call's arguments by TF1 parameter name, as source text."""
    params = [p.split("=")[0] for p in _row(api).params]
    bound = {}
    for index, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred) or index >= len(params):
            raise Unfollowable(f"{api}(*...)", call.lineno,
                               "write the arguments out (compat-migrate follows named and "
                               "positional arguments only)")
        bound[params[index]] = ast.get_source_segment(text, arg)
    for keyword in call.keywords:
        if keyword.arg is None:
            raise Unfollowable(f"{api}(**...)", call.lineno, "write the keyword arguments out")
        bound[keyword.arg] = ast.get_source_segment(text, keyword.value)
    return bound


_TF_PARAMETER = re.compile(r"(\bdef\s+\w+\s*\(\s*)tf\b(?=\s*[,)])")


class _File:
    """What the whole file tells about its functions: the API at each call position, the
    module-level function definitions (helpers to inline), and the names bound to TF."""

    def __init__(self, tree: ast.Module, text: str):
        self.tree, self.text = tree, text
        self.lines = SourceLines(text)
        # A function taking TensorFlow as its parameter (`def build(tf, ...)`, the harness's
        # and the benchmarks' convention) uses it as the module: resolved as if it were one.
        analysed = _TF_PARAMETER.sub(lambda m: m.group(1) + "t_", text)
        resolution = names.resolve_module(ast.parse(analysed) if analysed != text else tree,
                                          analysed)
        self.api_at = {(site.line, site.col, site.end_line, site.end_col):
                       apis.relative(site.row.name) or site.row.name
                       for site in resolution.sites if not site.member}
        self.functions = {node.name: node for node in tree.body
                          if isinstance(node, ast.FunctionDef)}
        self.tf_names = {alias.asname or alias.name.split(".")[0]
                         for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                         for alias in node.names
                         if "tensorflow" in (getattr(node, "module", None) or alias.name)
                         or (getattr(node, "module", "") or alias.name).startswith("compat")}
        self.tf_names.add("tf")
        # line of a batch_join over reader copies -> how many copies (source text)
        self.joins: dict = {}

    def api_of(self, call) -> str | None:
        if not isinstance(call, ast.Call):
            return None
        func = call.func
        return self.api_at.get((func.lineno, func.col_offset, func.end_lineno,
                                func.end_col_offset))

    def legacy_apis_in(self, node) -> list:
        found = []
        for sub in ast.walk(node):
            api = self.api_of(sub)
            if api is not None:
                found.append((api, sub))
        return found

    def is_pipeline_helper(self, name: str, depth: int = 0) -> bool:
        helper = self.functions.get(name)
        if helper is None or depth > _HELPER_DEPTH:
            return False
        if self.legacy_apis_in(helper):
            return True
        return any(isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name)
                   and sub.func.id != name and self.is_pipeline_helper(sub.func.id, depth + 1)
                   for sub in ast.walk(helper))


def _is_summary(node, tf_names) -> bool:
    call = _value_call(node) if isinstance(node, ast.Expr) else None
    if call is None or not isinstance(call.func, ast.Attribute):
        return False
    chain, value = [], call.func
    while isinstance(value, ast.Attribute):
        chain.append(value.attr)
        value = value.value
    return isinstance(value, ast.Name) and value.id in tf_names and "summary" in chain


def _value_call(node):
    if isinstance(node, (ast.Assign, ast.Expr, ast.Return)) and isinstance(node.value, ast.Call):
        return node.value
    return None


def _statement(code: str, line: int, lines: SourceLines) -> Statement:
    """A statement the migration writes itself (a helper's parameter bound to its argument)."""
    node = ast.parse(code).body[0]
    # Its positions refer to `code`, not to the file (see `_Splitter._take`).
    return Statement(node, code, read_names(node), bound_names(node), code, line)


def _inline(file: _File, statements: list, depth: int = 0) -> list:
    """`statements` with each call of a same-file helper that builds part of the pipeline
    replaced by the helper's statements (parameters bound first, its return assigned)."""
    out = []
    for statement in statements:
        joined = _reader_copies(file, statement, out)
        if joined is not None:
            copies_of, element, listed = joined
            if listed is not None:
                out.remove(listed)
            out.extend(_inline(file, [element], depth + 1))
            out.append(statement)
            file.joins[statement.line] = copies_of
            continue
        call = _value_call(statement.node)
        helper = (file.functions.get(call.func.id)
                  if call is not None and isinstance(call.func, ast.Name) else None)
        if helper is None or not file.is_pipeline_helper(helper.name):
            out.append(statement)
            continue
        if depth > _HELPER_DEPTH:
            raise Unfollowable(f"{helper.name}(...)", statement.line,
                               "helpers nested this deep are not followed: inline one level")
        out.extend(_inline(file, _helper_statements(file, helper, call, statement), depth + 1))
    return out


JOINS = frozenset({"train.batch_join", "train.shuffle_batch_join"})
JOINED_ELEMENT = "joined_element"


def _reader_copies(file: _File, statement: Statement, earlier: list):
    """For `batch_join([helper(queue) for _ in range(n)], ...)` (or a list of n such calls,
    or a name an earlier statement bound to one): (n as source text, a statement binding
    `joined_element` to one helper call, the earlier statement or None); else None."""
    call = _value_call(statement.node)
    if statement.at_line or file.api_of(call) not in JOINS:
        return None
    tensors = call.args[0] if call.args else next(
        (k.value for k in call.keywords if k.arg == "tensors_list"), None)
    listed = None
    if isinstance(tensors, ast.Name):
        for before in reversed(earlier):
            if tensors.id in before.binds:
                node = before.node
                if (isinstance(node, ast.Assign) and len(node.targets) == 1
                        and isinstance(node.targets[0], ast.Name)):
                    listed, tensors = before, node.value
                    statement = before
                break
        if listed is None:
            return None
    if isinstance(tensors, ast.ListComp) and len(tensors.generators) == 1:
        loop = tensors.generators[0]
        if not (isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name)
                and loop.iter.func.id == "range" and len(loop.iter.args) == 1 and not loop.ifs):
            return None
        one, copies = tensors.elt, statement.segment(loop.iter.args[0])
    elif isinstance(tensors, ast.List) and tensors.elts and len(
            {ast.dump(e) for e in tensors.elts}) == 1:
        one, copies = tensors.elts[0], str(len(tensors.elts))
    else:
        return None
    if not (isinstance(one, ast.Call) and isinstance(one.func, ast.Name)
            and file.is_pipeline_helper(one.func.id)):
        return None
    return copies, _statement(f"{JOINED_ELEMENT} = {statement.segment(one)}", statement.line,
                              file.lines), listed


def _helper_statements(file: _File, helper: ast.FunctionDef, call: ast.Call,
                       statement: Statement) -> list:
    arguments = helper.args
    if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.posonlyargs:
        raise Unfollowable(f"{helper.name}(...)", statement.line,
                           "a helper with *args, **kwargs or keyword-only parameters is not "
                           "inlined: give it plain parameters")
    params = [a.arg for a in arguments.args]
    defaults = dict(zip(params[len(params) - len(arguments.defaults):], arguments.defaults))
    given = {}
    for param, arg in zip(params, call.args):
        given[param] = statement.segment(arg)
    for keyword in call.keywords:
        if keyword.arg is None:
            raise Unfollowable(f"{helper.name}(**...)", statement.line, "pass the arguments by name")
        given[keyword.arg] = statement.segment(keyword.value)
    for param in params:
        if param not in given:
            if param not in defaults:
                raise Unfollowable(f"{helper.name}(...)", statement.line,
                                   f"argument {param!r} is missing")
            given[param] = ast.get_source_segment(file.text, defaults[param])
    body = helper.body[1:] if _is_docstring(helper.body[0]) else helper.body
    inner = flatten(body, file.lines, file.tf_names)
    returns = [s for s in inner if isinstance(s.node, ast.Return)]
    if any(isinstance(sub, ast.Return) for s in inner if not isinstance(s.node, ast.Return)
           for sub in ast.walk(s.node)) or len(returns) > 1 or (
               returns and returns[0] is not inner[-1]):
        raise Unfollowable(f"{helper.name}(...)", helper.lineno,
                           "a helper is inlined only when it returns once, at its end")
    _check_no_clash(file, helper, inner, statement)
    line = statement.line
    bound = [_statement(f"{param} = {given[param]}", line, file.lines)
             for param in params if given[param] != param]
    tail = []
    if returns:
        value = ast.get_source_segment(file.text, returns[0].node.value) \
            if returns[0].node.value is not None else "None"
        inner = inner[:-1]
        node = statement.node
        if isinstance(node, ast.Return):
            tail = [_statement(f"return {value}", line, file.lines)]
        elif isinstance(node, ast.Assign):
            targets = " = ".join(statement.segment(t) for t in node.targets)
            if targets != value:
                tail = [_statement(f"{targets} = {value}", line, file.lines)]
    return bound + inner + tail


def _is_docstring(node) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def _check_no_clash(file, helper, inner, statement) -> None:
    """A helper's local names must not be names the caller uses for something else."""
    caller = next(f for f in file.functions.values()
                  if f.lineno <= statement.line <= f.end_lineno) if file.functions else None
    if caller is None:
        return
    helper_names = set().union(*(s.binds for s in inner)) if inner else set()
    helper_names |= {a.arg for a in helper.args.args}
    caller_names = set()
    for sub in ast.walk(caller):
        if isinstance(sub, ast.Name):
            caller_names.add(sub.id)
        elif isinstance(sub, ast.arg):
            caller_names.add(sub.arg)
    targets = bound_names(statement.node)
    clash = sorted((helper_names & caller_names) - targets - {"_"}
                   - {a.arg for a in helper.args.args if _passes_same_name(statement.node, a.arg)})
    if clash:
        raise Unfollowable(f"{helper.name}(...)", statement.line,
                           f"the helper's names {', '.join(clash)} are also used by "
                           f"{caller.name}: rename them in one of the two before migrating")


def _passes_same_name(node, param) -> bool:
    call = _value_call(node)
    return call is not None and any(
        isinstance(a, ast.Name) and a.id == param for a in call.args) or (
        call is not None and any(k.arg == param and isinstance(k.value, ast.Name)
                                 and k.value.id == param for k in call.keywords))


def recognize(function: ast.FunctionDef, file: _File) -> Pipeline:
    pipeline = Pipeline(function)
    body = function.body[1:] if function.body and _is_docstring(function.body[0]) else function.body
    statements = _inline(file, flatten(body, file.lines, file.tf_names))
    _Splitter(pipeline, file).split(statements)
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
    def __init__(self, pipeline: Pipeline, file: _File):
        self.p, self.file = pipeline, file
        self.queues: set = set()
        self.readers: set = set()
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
        call = _value_call(node)
        # A statement the migration wrote (at_line set) reaches no legacy API itself.
        api = None if statement.at_line else self.file.api_of(call)
        if api is not None:
            p.apis.append(api)
        if api in PRODUCERS:
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
        call = _value_call(node)
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
        targets = " = ".join(ast.get_source_segment(statement.source, t) for t in node.targets)
        p.read = Read(call.func.attr, count, targets, statement.line)
        p.element_names |= bound_names(node)

    def _producer_dequeued(self, statement) -> bool:
        """`x = tf.train.range_input_producer(...).dequeue()`: the producer and its read in
        one statement."""
        node = statement.node
        call = _value_call(node)
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
        p.source_targets = " = ".join(statement.segment(t) for t in node.targets)
        p.element_names |= bound_names(node)
        return True

    def _is_dequeue(self, node) -> bool:
        call = _value_call(node)
        return (isinstance(node, ast.Assign) and call is not None and not call.args
                and isinstance(call.func, ast.Attribute) and call.func.attr == "dequeue"
                and isinstance(call.func.value, ast.Name) and call.func.value.id in self.queues)

    def _dequeue(self, statement) -> None:
        p, node = self.p, statement.node
        if p.read is not None or p.dequeued:
            raise Unfollowable("a second dequeue", statement.line,
                               "one read of the producer is followed per function")
        p.dequeued = True
        p.source_targets = " = ".join(ast.get_source_segment(statement.source, t)
                                      for t in node.targets)
        p.element_names |= bound_names(node)

    def _batching(self, statement, call, api) -> None:
        p, node = self.p, statement.node
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
            p.batch_targets = " = ".join(ast.get_source_segment(statement.source, t)
                                         for t in node.targets)
            self.batch_names |= bound_names(node)
        else:
            raise Unfollowable(p.batching.api if isinstance(p.batching, Call) else "batch",
                               statement.line, "assign or return the batch")

    def _batch_choice(self, statement) -> bool:
        node = statement.node
        if not isinstance(node, ast.If) or len(node.body) != 1 or len(node.orelse) != 1:
            return False
        calls = [_value_call(branch[0]) for branch in (node.body, node.orelse)]
        found = [self.file.api_of(c) for c in calls]
        if not all(api in BATCHINGS for api in found):
            return False
        kinds = [type(branch[0]) for branch in (node.body, node.orelse)]
        texts = [" = ".join(ast.get_source_segment(statement.source, t) for t in b[0].targets)
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
        if _is_summary(statement.node, self.file.tf_names):
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


def read_file(text: str):
    tree = ast.parse(text)
    return tree, _File(tree, text)
