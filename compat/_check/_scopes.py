"""Scopes and blocks: which bindings of a name may reach a given use of it.

Used for the names whose meaning depends on where they are used (bound more than once, or
not at module level); names.py settles the rest without a walk. The meanings a binding can
carry live here too, because an import's meaning is fixed when the walk records it.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from compat._check import apis

LOCAL = None  # a binding that is not TensorFlow


@dataclass(frozen=True)
class Instance:
    row: object
    via_shim: bool = False     # made by a `compat.v1` class: its methods are the shim's too


@dataclass(frozen=True)
class Foreign:
    """An import of a module that is not TensorFlow, by its dotted path (relative: '.x')."""
    path: str


def import_meaning(module: str):
    path = apis.canonical(module)
    return path if apis.is_tensorflow(path) else Foreign(path)


def is_tf(meaning) -> bool:
    return isinstance(meaning, Instance) or (isinstance(meaning, str)
                                             and apis.is_tensorflow(meaning))


# --- scopes and blocks, for names whose meaning depends on where they are used ----------------
class _Scope:
    __slots__ = ("kind", "parent", "defs", "globals", "nonlocals", "root")

    def __init__(self, kind, parent):
        self.kind = kind          # "module", "function", "class", "comprehension"
        self.parent = parent
        self.defs: dict = {}      # name -> [Def] in source order
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


IMPORT, VALUE, _OTHER = "import", "value", "other"
END = (float("inf"), 0)


class Def:
    __slots__ = ("name", "scope", "block", "pos", "kind", "payload")

    def __init__(self, name, scope, block, pos, kind, payload=None):
        self.name = name
        self.scope = scope
        self.block = block
        self.pos = pos
        self.kind = kind
        self.payload = payload  # the import's meaning, or the assigned value node


def end_pos(node):
    return (node.end_lineno or node.lineno, node.end_col_offset or 0)


def start_pos(node):
    return (node.lineno, node.col_offset)


class Walker:
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
                        self._def(node.id, scope, block, end_pos(node), _OTHER)
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
            self.raw.append(Def(name, scope, block, pos, kind, payload))

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
                self._def(target.id, scope, block, pos, VALUE, (value, scope, block))
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
        pos = end_pos(node)
        for target in node.targets:
            self._targets(target, scope, block, pos, stack, value=node.value)

    def _ann_assign(self, node, scope, block, stack):
        stack.append((node.annotation, scope, block))
        if node.value is not None:
            stack.append((node.value, scope, block))
            self._targets(node.target, scope, block, end_pos(node), stack, value=node.value)
        elif not isinstance(node.target, ast.Name):
            stack.append((node.target, scope, block))

    def _aug_assign(self, node, scope, block, stack):
        stack.append((node.value, scope, block))
        self._targets(node.target, scope, block, end_pos(node), stack)

    def _named_expr(self, node, scope, block, stack):
        stack.append((node.value, scope, block))
        target_scope = scope
        while target_scope.kind == "comprehension":
            target_scope = target_scope.parent
        target_block = block if target_scope is scope else _Block(None, False, detached=True)
        self._def(node.target.id, target_scope, target_block, end_pos(node), VALUE,
                  (node.value, scope, block))

    def _delete(self, node, scope, block, stack):
        for target in node.targets:
            self._targets(target, scope, block, end_pos(node), stack)

    def _import(self, node, scope, block, stack):
        pos = end_pos(node)
        for alias in node.names:
            if alias.asname:
                self._def(alias.asname, scope, block, pos, IMPORT, import_meaning(alias.name))
            else:
                top = alias.name.split(".")[0]
                self._def(top, scope, block, pos, IMPORT, import_meaning(top))

    def _import_from(self, node, scope, block, stack):
        pos = end_pos(node)
        module = node.module or ""
        for alias in node.names:
            if alias.name == "*":
                continue
            local = alias.asname or alias.name
            if node.level:
                meaning = Foreign("." * node.level + (module + "." if module else "") + alias.name)
            else:
                meaning = import_meaning(f"{module}.{alias.name}")
            self._def(local, scope, block, pos, IMPORT, meaning)

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
        self._def(node.name, scope, block, start_pos(node), _OTHER)
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
        self._def(node.name, scope, block, start_pos(node), _OTHER)
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
        self._loop(node, node.target, scope, block, stack)

    def _while(self, node, scope, block, stack):
        self._loop(node, node.test, scope, block, stack)

    @staticmethod
    def _loop(node, head, scope, block, stack):
        """A loop's head (a for target, a while test) and body run in a block that repeats;
        its else clause in one that does not."""
        body = _Block(block, True)
        stack.append((head, scope, body))
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
                self._def(handler.name, scope, inner, start_pos(handler), _OTHER)
            for statement in handler.body:
                stack.append((statement, scope, inner))

    def _match(self, node, scope, block, stack):
        stack.append((node.subject, scope, block))
        for case in node.cases:
            inner = _Block(block, False)
            for child in ast.walk(case.pattern):
                name = getattr(child, "name", None) or getattr(child, "rest", None)
                if isinstance(name, str):
                    self._def(name, scope, inner, end_pos(child), _OTHER)
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
