"""Name resolution on the AST: which expressions really are TensorFlow's legacy APIs.

Bindings come from imports (any form, any nesting), simple aliases (`slim = tf.contrib.slim`)
and instances of table classes (`opt = tf.train.SyncReplicasOptimizer(...)`). Local
definitions shadow: a user's own `class Coordinator` or Python's `queue.Queue` never match.
A `tf` that nothing in the file binds is taken to be TensorFlow (snippets, notebooks).

Names bound once, by a module-level statement (the usual `import tensorflow as tf`), mean
the same everywhere. Any other name that can reach TensorFlow is followed through the file's
scopes and blocks: a use sees the bindings that may reach it (the nearest one that dominates
it, the ones in branches after that, the ones a loop carries round). When some of those are
TensorFlow and some are not, the name only *may* hold the legacy object: it is a site where
it is used the way the legacy object is (called with arguments the API accepts, or reached
through an attribute that is itself a table API), not where it is merely tested or passed on.

A distinctive legacy name (`FIFOQueue`, `shuffle_batch`, ...) reached through a module that
is imported but is not TensorFlow (a project's own `tfv1` alias module) is still a site,
marked unresolved so that the report can say so. `tf_slim` is read as tf.contrib.slim, and
`sv.start_queue_runners(sess)` on a Supervisor as tf.train.start_queue_runners.

A site in an `except` clause's types is marked in_except only when the try body runs the
input (a session run, an eval, a next element, a dequeue, a tensor the file batched): an
OutOfRangeError caught around a checkpoint lookup is not the end of an input pipeline.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from typing import Optional

from compat._check import apis, render
from compat._check.model import Site

_LOCAL = None  # a binding that is not TensorFlow


@dataclass(frozen=True)
class _Instance:
    row: object


@dataclass(frozen=True)
class _Foreign:
    """An import of a module that is not TensorFlow, by its dotted path (relative: '.x')."""
    path: str


def _dotted(node) -> Optional[list]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    parts.reverse()
    return parts


def _root_node(node):
    while isinstance(node, ast.Attribute):
        node = node.value
    return node if isinstance(node, ast.Name) else None


def _root_name(node):
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _chain_ids(node):
    """ids of a dotted chain's nodes: once the chain is a site, none of it is looked at again."""
    ids = []
    while isinstance(node, ast.Attribute):
        ids.append(id(node))
        node = node.value
    ids.append(id(node))
    return ids


def _import_meaning(module: str):
    path = apis.canonical(module)
    return path if apis.is_tensorflow(path) else _Foreign(path)


def _is_tf(meaning) -> bool:
    return isinstance(meaning, _Instance) or (isinstance(meaning, str)
                                              and apis.is_tensorflow(meaning))


def call_fits(row, call) -> bool:
    """Whether `call`'s arguments are ones the row's TF1 signature accepts."""
    if not row.params:
        return True
    names = [spec.partition("=")[0] for spec in row.params]
    if any(isinstance(arg, ast.Starred) for arg in call.args):
        return True
    if len(call.args) > len(names):
        return False
    if not all(kw.arg is None or kw.arg in names for kw in call.keywords):
        return False
    if any(kw.arg is None for kw in call.keywords):
        return True  # **kwargs may hold the rest
    given = set(names[:len(call.args)]) | {kw.arg for kw in call.keywords}
    return all(name in given for name, spec in zip(names, row.params) if "=" not in spec)


_BINDER_TYPES = frozenset({ast.Import, ast.ImportFrom, ast.Assign, ast.FunctionDef,
                           ast.AsyncFunctionDef, ast.ClassDef})
_DEFINITION_TYPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_TRY_TYPES = tuple(t for t in (ast.Try, getattr(ast, "TryStar", None)) if t is not None)
# calls in a try body that mean it runs graph tensors (or pulls the next element)
_RUN_METHODS = frozenset({"run", "partial_run", "eval", "evaluate", "get_value",
                          "batch_get_value", "dequeue", "dequeue_many", "dequeue_up_to",
                          "run_step"})


def pulls_input(name: str) -> bool:
    """A call of this name runs tensors or pulls an element: `sess.run`, `x.eval`,
    `it.get_next`, `next(it)`, `q.dequeue_many`, `self.evaluate` (tf.test), ..."""
    return name in _RUN_METHODS or "next" in name.lower()


# --- scopes and blocks, for names whose meaning depends on where they are used ----------------
class _Scope:
    __slots__ = ("kind", "parent", "defs", "globals", "nonlocals", "root")

    def __init__(self, kind, parent):
        self.kind = kind          # "module", "function", "class", "comprehension"
        self.parent = parent
        self.defs: dict = {}      # name -> [_Def] in source order
        self.globals: set = set()
        self.nonlocals: set = set()
        self.root = _Block(None, False)


class _Block:
    """A straight-line run of statements; a binding dominates later code of its block and of
    the blocks nested in it. Detached blocks (bindings whose time is unknown) dominate nothing."""
    __slots__ = ("parent", "loop", "detached")

    def __init__(self, parent, loop, detached=False):
        self.parent = parent
        self.loop = loop
        self.detached = detached

    def encloses(self, other) -> bool:
        if self.detached:
            return False
        block = other
        while block is not None:
            if block is self:
                return True
            block = block.parent
        return False

    def loops(self) -> set:
        found = set()
        block = self
        while block is not None:
            if block.loop:
                found.add(id(block))
            block = block.parent
        return found


_IMPORT, _VALUE, _OTHER = "import", "value", "other"
_END = (float("inf"), 0)


class _Def:
    __slots__ = ("name", "scope", "block", "pos", "kind", "payload")

    def __init__(self, name, scope, block, pos, kind, payload=None):
        self.name = name
        self.scope = scope
        self.block = block
        self.pos = pos
        self.kind = kind
        self.payload = payload  # the import's meaning, or the assigned value node


def _end(node):
    return (node.end_lineno or node.lineno, node.end_col_offset or 0)


def _start(node):
    return (node.lineno, node.col_offset)


class _Walker:
    """One iterative pass recording, for the tracked names only, every binding (with its scope,
    block and position) and the scope and block of every load."""

    def __init__(self, tracked):
        self.tracked = tracked
        self.uses: dict = {}  # id(ast.Name) -> (scope, block)
        self.raw: list = []
        self.module = _Scope("module", None)

    def run(self, tree):
        stack = [(tree, self.module, self.module.root)]
        handlers = self._HANDLERS
        tracked = self.tracked
        uses = self.uses
        while stack:
            node, scope, block = stack.pop()
            kind = type(node)
            if kind is ast.Name:
                if node.id in tracked:
                    if type(node.ctx) is ast.Load:
                        uses[id(node)] = (scope, block)
                    else:
                        self._def(node.id, scope, block, _end(node), _OTHER)
                continue
            handler = handlers.get(kind)
            if handler is not None:
                handler(self, node, scope, block, stack)
            else:
                for child in ast.iter_child_nodes(node):
                    stack.append((child, scope, block))
        self._finish()
        return self

    def _def(self, name, scope, block, pos, kind, payload=None):
        if name in self.tracked:
            self.raw.append(_Def(name, scope, block, pos, kind, payload))

    def _finish(self):
        for d in self.raw:
            scope = d.scope
            if d.name in scope.globals and scope is not self.module:
                d.scope, d.block = self.module, _Block(None, False, detached=True)
            elif d.name in scope.nonlocals:
                outer = scope.parent
                while outer is not None and outer.kind == "class":
                    outer = outer.parent
                if outer is not None:
                    d.scope, d.block = outer, _Block(None, False, detached=True)
            d.scope.defs.setdefault(d.name, []).append(d)
        for scope_defs in {id(d.scope): d.scope.defs for d in self.raw}.values():
            for defs in scope_defs.values():
                defs.sort(key=lambda d: d.pos)

    # --- statements and expressions that bind, open scopes or open blocks -------------------
    def _targets(self, target, scope, block, pos, stack, value=None):
        if isinstance(target, ast.Name):
            if value is not None:
                self._def(target.id, scope, block, pos, _VALUE, (value, scope, block))
            else:
                self._def(target.id, scope, block, pos, _OTHER)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._targets(element, scope, block, pos, stack)
        elif isinstance(target, ast.Starred):
            self._targets(target.value, scope, block, pos, stack)
        else:
            stack.append((target, scope, block))

    def _assign(self, node, scope, block, stack):
        stack.append((node.value, scope, block))
        pos = _end(node)
        for target in node.targets:
            self._targets(target, scope, block, pos, stack, value=node.value)

    def _ann_assign(self, node, scope, block, stack):
        stack.append((node.annotation, scope, block))
        if node.value is not None:
            stack.append((node.value, scope, block))
            self._targets(node.target, scope, block, _end(node), stack, value=node.value)
        elif not isinstance(node.target, ast.Name):
            stack.append((node.target, scope, block))

    def _aug_assign(self, node, scope, block, stack):
        stack.append((node.value, scope, block))
        self._targets(node.target, scope, block, _end(node), stack)

    def _named_expr(self, node, scope, block, stack):
        stack.append((node.value, scope, block))
        target_scope = scope
        while target_scope.kind == "comprehension":
            target_scope = target_scope.parent
        target_block = block if target_scope is scope else _Block(None, False, detached=True)
        self._def(node.target.id, target_scope, target_block, _end(node), _VALUE,
                  (node.value, scope, block))

    def _delete(self, node, scope, block, stack):
        for target in node.targets:
            self._targets(target, scope, block, _end(node), stack)

    def _import(self, node, scope, block, stack):
        pos = _end(node)
        for alias in node.names:
            if alias.asname:
                self._def(alias.asname, scope, block, pos, _IMPORT, _import_meaning(alias.name))
            else:
                top = alias.name.split(".")[0]
                self._def(top, scope, block, pos, _IMPORT, _import_meaning(top))

    def _import_from(self, node, scope, block, stack):
        pos = _end(node)
        module = node.module or ""
        for alias in node.names:
            if alias.name == "*":
                continue
            local = alias.asname or alias.name
            if node.level:
                meaning = _Foreign("." * node.level + (module + "." if module else "") + alias.name)
            else:
                meaning = _import_meaning(f"{module}.{alias.name}")
            self._def(local, scope, block, pos, _IMPORT, meaning)

    def _global(self, node, scope, block, stack):
        scope.globals.update(node.names)

    def _nonlocal(self, node, scope, block, stack):
        scope.nonlocals.update(node.names)

    def _arguments(self, args, scope, stack, outer, outer_block):
        for default in args.defaults:
            stack.append((default, outer, outer_block))
        for default in args.kw_defaults:
            if default is not None:
                stack.append((default, outer, outer_block))
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        if args.vararg:
            every.append(args.vararg)
        if args.kwarg:
            every.append(args.kwarg)
        for arg in every:
            if arg.annotation is not None:
                stack.append((arg.annotation, outer, outer_block))
            self._def(arg.arg, scope, scope.root, (0, 0), _OTHER)

    def _function(self, node, scope, block, stack):
        for decorator in node.decorator_list:
            stack.append((decorator, scope, block))
        if node.returns is not None:
            stack.append((node.returns, scope, block))
        self._def(node.name, scope, block, _start(node), _OTHER)
        inner = _Scope("function", scope)
        self._arguments(node.args, inner, stack, scope, block)
        for statement in node.body:
            stack.append((statement, inner, inner.root))

    def _lambda(self, node, scope, block, stack):
        inner = _Scope("function", scope)
        self._arguments(node.args, inner, stack, scope, block)
        stack.append((node.body, inner, inner.root))

    def _class(self, node, scope, block, stack):
        for child in (*node.decorator_list, *node.bases, *node.keywords):
            stack.append((child, scope, block))
        self._def(node.name, scope, block, _start(node), _OTHER)
        inner = _Scope("class", scope)
        for statement in node.body:
            stack.append((statement, inner, inner.root))

    def _comprehension(self, node, scope, block, stack):
        inner = _Scope("comprehension", scope)
        for index, generator in enumerate(node.generators):
            stack.append((generator.iter, scope if index == 0 else inner,
                          block if index == 0 else inner.root))
            stack.append((generator.target, inner, inner.root))
            for condition in generator.ifs:
                stack.append((condition, inner, inner.root))
        for field in ("elt", "key", "value"):
            child = getattr(node, field, None)
            if child is not None:
                stack.append((child, inner, inner.root))

    def _for(self, node, scope, block, stack):
        stack.append((node.iter, scope, block))
        body = _Block(block, True)
        stack.append((node.target, scope, body))
        for statement in node.body:
            stack.append((statement, scope, body))
        orelse = _Block(block, False)
        for statement in node.orelse:
            stack.append((statement, scope, orelse))

    def _while(self, node, scope, block, stack):
        body = _Block(block, True)
        stack.append((node.test, scope, body))
        for statement in node.body:
            stack.append((statement, scope, body))
        orelse = _Block(block, False)
        for statement in node.orelse:
            stack.append((statement, scope, orelse))

    def _if(self, node, scope, block, stack):
        stack.append((node.test, scope, block))
        for statements in (node.body, node.orelse):
            inner = _Block(block, False)
            for statement in statements:
                stack.append((statement, scope, inner))

    def _try(self, node, scope, block, stack):
        for statements in (node.body, node.orelse, node.finalbody):
            inner = _Block(block, False)
            for statement in statements:
                stack.append((statement, scope, inner))
        for handler in node.handlers:
            inner = _Block(block, False)
            if handler.type is not None:
                stack.append((handler.type, scope, inner))
            if handler.name:
                self._def(handler.name, scope, inner, _start(handler), _OTHER)
            for statement in handler.body:
                stack.append((statement, scope, inner))

    def _match(self, node, scope, block, stack):
        stack.append((node.subject, scope, block))
        for case in node.cases:
            inner = _Block(block, False)
            for child in ast.walk(case.pattern):
                name = getattr(child, "name", None) or getattr(child, "rest", None)
                if isinstance(name, str):
                    self._def(name, scope, inner, _end(child), _OTHER)
                if isinstance(child, ast.expr):
                    stack.append((child, scope, inner))
            if case.guard is not None:
                stack.append((case.guard, scope, inner))
            for statement in case.body:
                stack.append((statement, scope, inner))

    _HANDLERS = {
        ast.Assign: _assign, ast.AnnAssign: _ann_assign, ast.AugAssign: _aug_assign,
        ast.NamedExpr: _named_expr, ast.Delete: _delete, ast.Import: _import,
        ast.ImportFrom: _import_from, ast.Global: _global, ast.Nonlocal: _nonlocal,
        ast.FunctionDef: _function, ast.AsyncFunctionDef: _function, ast.Lambda: _lambda,
        ast.ClassDef: _class, ast.ListComp: _comprehension, ast.SetComp: _comprehension,
        ast.GeneratorExp: _comprehension, ast.DictComp: _comprehension, ast.For: _for,
        ast.AsyncFor: _for, ast.While: _while, ast.If: _if, ast.Try: _try,
    }
    if hasattr(ast, "TryStar"):
        _HANDLERS[ast.TryStar] = _try
    if hasattr(ast, "Match"):
        _HANDLERS[ast.Match] = _match


@dataclass(frozen=True)
class _Root:
    meaning: object
    may: bool = False        # some bindings reaching the use are TensorFlow, some are not
    assumed: bool = False    # an unbound `tf`
    alias: bool = False      # bound by an assignment (`reader = tf.TFRecordReader`), not an import


_NOTHING = _Root(_LOCAL)


class _Resolver:
    def __init__(self, text: str, bound: dict):
        self.lines = text.splitlines()
        self.bound = bound                # name -> number of bindings in the whole file
        self.assume_tf = "tf" not in bound
        self.star_modules: list = []      # `from tensorflow.x import *`
        self.file_imports: dict = {}      # name -> meaning of its last import, file-wide
        self.simple: dict = {}            # name -> its only binding, a module-level statement
        self.walker: Optional[_Walker] = None
        self.meanings: dict = {}          # id(_Def) -> meaning (memo; None while computing)
        self.sites: list = []
        self.site_nodes: list = []        # the node each site was made from (same order)
        self.site_calls: set = set()      # ids of calls whose callee is a site
        self.unresolved: dict = {}        # id(site node) -> (alias, module path, leaf)
        self.references: set = set()
        self.compared: set = set()        # ids of `x is None` operands
        self.chief_names: set = set()     # names assigned `opt.get_chief_queue_runner()`
        self.handler_types: dict = {}     # id(node in an `except` clause's types) -> try node

    # --- meanings -----------------------------------------------------------------------
    def _meaning_of_def(self, d):
        if d.kind == _IMPORT:
            return d.payload
        if d.kind != _VALUE:
            return _LOCAL
        key = id(d)
        if key in self.meanings:
            return self.meanings[key] if self.meanings[key] is not None else _LOCAL
        self.meanings[key] = None  # a cycle through this binding resolves to nothing
        value = d.payload[0]
        meaning = _LOCAL
        if isinstance(value, ast.Call):
            target = self.resolve(value.func)
            if isinstance(target, str) and apis.is_tensorflow(target):
                row = apis.row_for(target)
                if row is not None:
                    meaning = _Instance(row)
        else:
            target = self.resolve(value)
            if isinstance(target, str) and apis.is_tensorflow(target):
                meaning = target
            elif isinstance(target, _Foreign):
                meaning = target
            elif isinstance(target, _Instance):
                meaning = target
        self.meanings[key] = meaning
        return meaning

    def _fallback(self, name: str) -> _Root:
        """A name no enclosing scope binds: a file-wide import, a star import, or bare `tf`."""
        if name in self.file_imports:
            return _Root(self.file_imports[name])
        if name not in self.bound:
            for module in self.star_modules:
                if apis.row_for(f"{module}.{name}") is not None:
                    return _Root(f"{module}.{name}")
            if name == "tf" and self.assume_tf:
                return _Root("tensorflow", assumed=True)
        return _NOTHING

    def root(self, node) -> _Root:
        name = node.id
        if name in self.simple:
            d = self.simple[name]
            return _Root(self._meaning_of_def(d), alias=d.kind == _VALUE)
        context = self.walker.uses.get(id(node)) if self.walker is not None else None
        if context is None:
            return self._fallback(name)
        reaching = self._reaching(name, *context, _start(node))
        if reaching is None:
            return self._fallback(name)
        meanings = [self._meaning_of_def(d) for d in reaching]
        tf_like = [i for i, m in enumerate(meanings) if _is_tf(m)]
        if tf_like:
            return _Root(meanings[tf_like[0]], may=len(tf_like) != len(meanings),
                         alias=reaching[tf_like[0]].kind == _VALUE)
        foreign = [m for m in meanings if isinstance(m, _Foreign)]
        if foreign:
            return _Root(foreign[0], may=len(foreign) != len(meanings))
        return _NOTHING

    def _reaching(self, name, scope, block, pos):
        """The bindings of `name` that may reach a use, in source order; None when no scope
        around the use binds it."""
        found = scope
        first = True
        while found is not None:
            if name in found.globals:
                found = self.walker.module
                break
            if (first or found.kind != "class") and name in found.defs \
                    and name not in found.nonlocals:
                break
            first = False
            found = found.parent
        if found is None or name not in found.defs:
            return None
        defs = found.defs[name]
        if found is not scope:  # a free name: whatever the enclosing scope ends up holding
            pos, block = _END, found.root
        reaching = []
        for d in reversed(defs):
            if d.pos >= pos:
                continue
            reaching.append(d)
            if d.block.encloses(block):
                break
        loops = block.loops()
        if loops:
            reaching.extend(d for d in defs if d.pos >= pos and d.block.loops() & loops)
        if not reaching:
            if found.kind != "module":
                return []  # used before any binding: unbound local
            reaching = list(defs)  # module code out of order (notebooks): any of them
        reaching.sort(key=lambda d: d.pos)
        return reaching

    def resolve(self, node):
        """The meaning of a dotted expression: a TF path, an instance's member, a foreign path."""
        parts = _dotted(node)
        if parts is None:
            return None
        root = self.root(_root_node(node))
        return self._extend(root.meaning, parts)

    @staticmethod
    def _extend(meaning, parts):
        if isinstance(meaning, _Instance):
            return meaning if len(parts) == 1 else None
        if isinstance(meaning, str):
            return apis.canonical(".".join([meaning, *parts[1:]]))
        if isinstance(meaning, _Foreign):
            return _Foreign(".".join([meaning.path, *parts[1:]]))
        return None

    # --- sites ---------------------------------------------------------------------------
    def _char_col(self, line: int, byte_col: int) -> int:
        if 0 < line <= len(self.lines):
            text = self.lines[line - 1]
            if not text.isascii():
                return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))
        return byte_col

    def _site(self, node, row, written, call=None, member="", assumed=False, root=""):
        arguments = None
        call_args = ""
        if call is not None:
            positional = []
            for arg in call.args:
                if isinstance(arg, ast.Starred):
                    break  # later positions are unknown
                positional.append(ast.unparse(arg))
            keywords = [(kw.arg, ast.unparse(kw.value)) for kw in call.keywords]
            arguments = render.name_arguments(row, positional, keywords)
            call_args = ", ".join(
                [ast.unparse(arg) for arg in call.args]
                + [f"{kw.arg}={ast.unparse(kw.value)}" if kw.arg else f"**{ast.unparse(kw.value)}"
                   for kw in call.keywords])
            self.site_calls.add(id(call))
        end_line = getattr(node, "end_lineno", None) or node.lineno
        end_col = getattr(node, "end_col_offset", None) or node.col_offset
        self.sites.append(Site(
            row=row, line=node.lineno, col=self._char_col(node.lineno, node.col_offset),
            end_line=end_line, end_col=self._char_col(end_line, end_col), written=written,
            arguments=arguments, call_args=call_args, member=member, assumed_tf=assumed,
            root=root))
        self.site_nodes.append(node)

    def reference(self, node, call=None) -> bool:
        """Record `node` if it reaches TensorFlow; True when it became a site."""
        parts = _dotted(node)
        if parts is None:
            return False
        root = self.root(_root_node(node))
        meaning = root.meaning
        if isinstance(meaning, _Instance):
            if len(parts) != 2 or (root.may and call is None):
                return False
            member = parts[1]
            row = apis.member_row(meaning.row, member)
            if row is not None and call is not None and self._starts_chief_runner(call):
                row = None  # SyncReplicasOptimizer's token runner: not an input pipeline
            if row is not None:  # `sv.start_queue_runners(sess)`: the API under another name
                self._site(node, row, ".".join(parts), call=call, member=member, root=parts[0])
            else:
                self._site(node, meaning.row, member, call=call, member=member, root=parts[0])
            return True
        if isinstance(meaning, _Foreign):
            return self._foreign_reference(node, parts, meaning, call)
        if not isinstance(meaning, str):
            return False
        full = self._extend(meaning, parts)
        if not apis.is_tensorflow(full):
            return False
        self.references.add(apis.relative(full))
        row = apis.row_for(full)
        if row is None:
            return False
        if len(parts) == 1:
            if id(node) in self.compared:
                return False  # `reader is None`: a test, not a use
            caught = id(node) in self.handler_types  # `except OORE:`, OORE an alias
            if root.alias and call is None and not caught:
                return False  # the alias passed on: its assignment is the site
            if root.may and not caught and (call is None or not call_fits(row, call)):
                return False
        self._site(node, row, ".".join(parts), call=call, assumed=root.assumed, root=parts[0])
        return True

    def _starts_chief_runner(self, call) -> bool:
        """`sv.start_queue_runners(sess, [chief_queue_runner])`: the explicit runner list
        (second argument) holds SyncReplicasOptimizer's chief queue runner (a name assigned
        `opt.get_chief_queue_runner()` in this file, or any name saying `chief`)."""
        runners = call.args[1] if len(call.args) > 1 else next(
            (kw.value for kw in call.keywords if kw.arg == "queue_runners"), None)
        if runners is None:
            return False
        for node in ast.walk(runners):
            if isinstance(node, ast.Name) and (node.id in self.chief_names
                                               or "chief" in node.id.lower()):
                return True  # assigned here, or passed in under the usual name
            if isinstance(node, ast.Attribute) and node.attr == apis.CHIEF_RUNNER:
                return True
        return False

    def _foreign_reference(self, node, parts, meaning, call) -> bool:
        if len(parts) < 2 or apis.is_lookalike_package(meaning.path):
            return False
        row = apis.distinctive_row(parts[1:])
        if row is None or (call is not None and not call_fits(row, call)):
            return False
        self._site(node, row, ".".join(parts), call=call, root=parts[0])
        self.unresolved[id(node)] = (parts[0], meaning.path.lstrip("."), parts[-1])
        return True


@dataclass(frozen=True)
class Resolution:
    sites: tuple
    references: frozenset
    # ((line, col), alias, module path, legacy name) of sites reached through an import that
    # is not TensorFlow (positions as in the sites: 1-based line, 0-based character column)
    unresolved: tuple = ()


def _runs_pipeline(body, resolver, runner_functions, tensor_names) -> bool:
    """Whether a try body runs graph tensors: `sess.run(...)`, `x.eval()`, `it.get_next()`,
    `next(it)`, a call of this file's function that does (one level), a tensor this file
    dequeued or batched, or a `yield` (a context manager around the consuming block)."""
    for statement in body:
        for node in ast.walk(statement):
            kind = type(node)
            if kind is ast.Call:
                func = node.func
                if isinstance(func, ast.Attribute):
                    if pulls_input(func.attr):
                        root = _root_node(func)
                        owner = resolver.file_imports.get(root.id) if root is not None else None
                        if not isinstance(owner, _Foreign):  # subprocess.run, asyncio.run
                            return True
                    if func.attr in runner_functions:
                        return True
                elif isinstance(func, ast.Name) and (func.id in runner_functions
                                                     or pulls_input(func.id)):
                    return True
            elif kind is ast.Name and node.id in tensor_names and type(node.ctx) is ast.Load:
                return True
            elif kind is ast.Yield:
                return True  # a context manager's try: the with-block consumes the input
    return False


def _runner_functions(nodes) -> set:
    names = set()
    for node in nodes:
        if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef):
            for child in ast.walk(node):
                if type(child) is ast.Call and isinstance(child.func, ast.Attribute) \
                        and pulls_input(child.func.attr):
                    names.add(node.name)
                    break
    return names


def _assigned_names(target):
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _assigned_names(element)
    elif isinstance(target, ast.Starred):
        yield from _assigned_names(target.value)


def resolve_module(tree, text: str) -> Resolution:
    # one walk, reused: ast.walk is the bulk of the checker's time on large trees
    nodes = list(ast.walk(tree))
    binders = []
    bound: dict = {}
    tries = []
    attribute_roots = set()   # names that some `name.<distinctive legacy name>` starts from
    compared = set()
    distinctive = apis.DISTINCTIVE_ATTRIBUTES
    for node in nodes:
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is not ast.Load:
                bound[node.id] = bound.get(node.id, 0) + 1
            continue
        if kind is ast.Attribute:
            if node.attr in distinctive:
                root = _root_name(node)
                if root is not None:
                    attribute_roots.add(root)
            continue
        if kind in _BINDER_TYPES:
            binders.append(node)
            if kind in _DEFINITION_TYPES:
                bound[node.name] = bound.get(node.name, 0) + 1
        elif kind is ast.arg:
            bound[node.arg] = bound.get(node.arg, 0) + 1
        elif kind is ast.alias:
            name = (node.asname or node.name).split(".")[0]
            bound[name] = bound.get(name, 0) + 1
        elif kind is ast.ExceptHandler:
            if node.name:
                bound[node.name] = bound.get(node.name, 0) + 1
        elif kind in _TRY_TYPES:
            tries.append(node)
        elif kind is ast.Compare:
            if any(type(op) in (ast.Is, ast.IsNot) for op in node.ops):
                compared.update(id(operand) for operand in (node.left, *node.comparators))
    binders.sort(key=lambda node: (node.lineno, node.col_offset))

    resolver = _Resolver(text, bound)
    resolver.compared = compared
    for node in tries:
        for handler in node.handlers:
            if handler.type is not None:
                for child in ast.walk(handler.type):
                    resolver.handler_types[id(child)] = node
    module_level = {id(statement) for statement in tree.body}
    # names that may reach TensorFlow: imports of it, aliases of those (to a fixpoint)
    candidates = set()
    single_binder = {}
    aliases = []
    for node in binders:
        kind = type(node)
        if kind is ast.Import:
            for alias in node.names:
                name = alias.asname or alias.name.split(".")[0]
                meaning = _import_meaning(alias.name if alias.asname else name)
                resolver.file_imports[name] = meaning
                single_binder[name] = node
                if _is_tf(meaning) or (isinstance(meaning, _Foreign) and name in attribute_roots):
                    candidates.add(name)
        elif kind is ast.ImportFrom:
            module = node.module or ""
            for alias in node.names:
                if alias.name == "*":
                    if not node.level and apis.is_tensorflow(apis.canonical(module)):
                        resolver.star_modules.append(apis.canonical(module))
                    continue
                name = alias.asname or alias.name
                if node.level:
                    meaning = _Foreign("." * node.level + (module + "." if module else "")
                                       + alias.name)
                else:
                    meaning = _import_meaning(f"{module}.{alias.name}")
                resolver.file_imports[name] = meaning
                single_binder[name] = node
                if _is_tf(meaning) or (isinstance(meaning, _Foreign) and name in attribute_roots):
                    candidates.add(name)
        elif kind is ast.Assign:
            value = node.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                    and value.func.attr == apis.CHIEF_RUNNER:
                for target in node.targets:
                    resolver.chief_names.update(_assigned_names(target))
            if isinstance(value, ast.Call):
                # only a call of a table class can make an instance worth following
                value = value.func
                last = value.attr if isinstance(value, ast.Attribute) else \
                    getattr(value, "id", None)
                if last not in apis.LEAVES:
                    value = None
            root = _root_name(value) if value is not None else None
            for target in node.targets:
                if isinstance(target, ast.Name):
                    single_binder[target.id] = node
                    if root is not None:
                        aliases.append((target.id, root))
    if resolver.assume_tf:
        candidates.add("tf")
    for module in resolver.star_modules:
        prefix = apis.relative(module) + "."
        candidates.update(key[len(prefix):].split(".")[0] for key in apis.INDEX
                          if key.startswith(prefix))
    changed = True
    while changed:
        changed = False
        for target, root in aliases:
            if root in candidates and target not in candidates:
                candidates.add(target)
                changed = True
    if not candidates:
        return Resolution((), frozenset())

    # a name bound once, by a module-level import or alias, means the same everywhere
    flow = set()
    for name in candidates:
        count = bound.get(name, 0)
        binder = single_binder.get(name)
        if count == 0:
            continue
        if count == 1 and binder is not None and id(binder) in module_level:
            scope = None
            if isinstance(binder, ast.Assign):
                payload = (binder.value, scope, None)
                resolver.simple[name] = _Def(name, scope, None, _end(binder), _VALUE, payload)
            else:
                resolver.simple[name] = _Def(name, scope, None, _end(binder), _IMPORT,
                                             resolver.file_imports[name])
        else:
            flow.add(name)
    if flow:
        resolver.walker = _Walker(frozenset(flow)).run(tree)

    done = set()
    # ast.walk yields parents before children: a call before its callee, `a.b.c` before `a.b`
    for node in nodes:
        kind = type(node)
        if kind is ast.Call:
            func = node.func
            if id(node) not in done and _root_name(func) in candidates:
                if resolver.reference(func, call=node):
                    done.update(_chain_ids(func))
                else:  # judged as a callee (argument shape included): not again without
                    done.add(id(func))
        elif kind is ast.Attribute or kind is ast.Name:
            if type(node.ctx) is ast.Load and id(node) not in done \
                    and _root_name(node) in candidates and resolver.reference(node):
                done.update(_chain_ids(node))

    sites = _mark_handlers(resolver, binders, nodes)
    order = sorted(range(len(sites)), key=lambda i: (sites[i].line, sites[i].col))
    unresolved = tuple(
        ((sites[i].line, sites[i].col), *resolver.unresolved[id(resolver.site_nodes[i])])
        for i in order if id(resolver.site_nodes[i]) in resolver.unresolved)
    return Resolution(tuple(sites[i] for i in order), frozenset(resolver.references),
                      unresolved)


def _mark_handlers(resolver, binders, nodes) -> list:
    """Sites in an `except` clause's types get in_except when the try body runs a pipeline."""
    sites = resolver.sites
    in_types = resolver.handler_types
    if not in_types or not sites:
        return sites
    hits = [i for i, node in enumerate(resolver.site_nodes) if id(node) in in_types]
    if not hits:
        return sites
    tensor_names = set()
    for node in binders:
        if type(node) is ast.Assign and isinstance(node.value, ast.Call) \
                and id(node.value) in resolver.site_calls:
            for target in node.targets:
                tensor_names.update(_assigned_names(target))
    runner_functions = _runner_functions(nodes)
    verdicts = {}
    sites = list(sites)
    for i in hits:
        try_node = in_types[id(resolver.site_nodes[i])]
        if id(try_node) not in verdicts:
            verdicts[id(try_node)] = _runs_pipeline(try_node.body, resolver, runner_functions,
                                                    tensor_names)
        if verdicts[id(try_node)]:
            sites[i] = replace(sites[i], in_except=True)
    return sites
