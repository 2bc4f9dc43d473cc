"""Name resolution on the AST: which expressions really are TensorFlow's legacy APIs.

Bindings come from imports (any form, any nesting), simple aliases (`slim = tf.contrib.slim`)
and instances of table classes (`opt = tf.train.SyncReplicasOptimizer(...)`). Local
definitions shadow: a user's own `class Coordinator` or Python's `queue.Queue` never match.
A `tf` that nothing in the file binds is taken to be TensorFlow (snippets, notebooks).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

from compat._check import apis, render
from compat._check.model import Site

_LOCAL = None  # a binding that is not TensorFlow


@dataclass(frozen=True)
class _Instance:
    row: object


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


_BINDER_TYPES = frozenset({ast.Import, ast.ImportFrom, ast.Assign, ast.FunctionDef,
                           ast.AsyncFunctionDef, ast.ClassDef})
_DEFINITION_TYPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


class _Resolver:
    """Final bindings of the module, then every reference resolved against them.

    Bindings are applied in source order, last one wins, file-wide: precise enough for
    module-level imports and aliases, and it keeps resolution to two linear passes.
    """

    def __init__(self, text: str, bound: set):
        self.lines = text.splitlines()
        self.bindings: dict = {}
        self.assume_tf = "tf" not in bound
        self.bound = bound
        self.star_modules: list = []   # `from tensorflow.x import *`
        self.sites: list = []
        self.references: set = set()
        self.except_types: set = set()  # ids of nodes inside `except <types>:`

    # --- bindings -------------------------------------------------------------------------
    def bind(self, node):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.bindings[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    self.bindings[top] = top
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            for alias in node.names:
                if node.level:  # relative imports are the project's own modules
                    self.bindings[alias.asname or alias.name] = _LOCAL
                elif alias.name == "*":
                    if apis.is_tensorflow(module):
                        self.star_modules.append(module)
                else:
                    self.bindings[alias.asname or alias.name] = f"{module}.{alias.name}"
        elif isinstance(node, ast.Assign):
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.bindings[node.targets[0].id] = self._meaning_of_value(node.value)
        else:
            self.bindings[node.name] = _LOCAL

    def _meaning_of_value(self, value):
        if isinstance(value, ast.Call):
            target = self.resolve(value.func)
            if isinstance(target, str):
                row = apis.row_for(target)
                if row is not None:
                    return _Instance(row)
            return _LOCAL
        target = self.resolve(value)
        return target if isinstance(target, str) and apis.is_tensorflow(target) else _LOCAL

    def interesting_names(self) -> frozenset:
        """Root names worth resolving: everything else cannot reach TensorFlow."""
        names = {name for name, meaning in self.bindings.items()
                 if isinstance(meaning, _Instance)
                 or (isinstance(meaning, str) and apis.is_tensorflow(meaning))}
        if self.assume_tf:
            names.add("tf")
        for module in self.star_modules:
            prefix = apis.relative(module) + "."
            names.update(key[len(prefix):].split(".")[0] for key in apis.INDEX
                         if key.startswith(prefix))
        return frozenset(names)

    # --- resolution -----------------------------------------------------------------------
    def _lookup(self, name: str):
        if name in self.bindings:
            return self.bindings[name], False
        if name not in self.bound:
            for module in self.star_modules:
                if apis.row_for(f"{module}.{name}") is not None:
                    return f"{module}.{name}", False
            if name == "tf" and self.assume_tf:
                return "tensorflow", True
        return _LOCAL, False

    def resolve(self, node, with_flag=False):
        parts = _dotted(node)
        if parts is None:
            return (None, False) if with_flag else None
        meaning, assumed = self._lookup(parts[0])
        if isinstance(meaning, _Instance):
            meaning = (meaning, parts[1]) if len(parts) == 2 else None
        elif isinstance(meaning, str):
            meaning = ".".join([meaning, *parts[1:]])
        return (meaning, assumed) if with_flag else meaning

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
        end_line = getattr(node, "end_lineno", None) or node.lineno
        end_col = getattr(node, "end_col_offset", None) or node.col_offset
        self.sites.append(Site(
            row=row, line=node.lineno, col=self._char_col(node.lineno, node.col_offset),
            end_line=end_line, end_col=self._char_col(end_line, end_col), written=written,
            arguments=arguments, call_args=call_args, member=member, assumed_tf=assumed,
            root=root, in_except=id(node) in self.except_types))

    def reference(self, node, call=None) -> bool:
        """Record `node` if it reaches TensorFlow; True when it became a site."""
        meaning, assumed = self.resolve(node, with_flag=True)
        if meaning is None:
            return False
        parts = _dotted(node)
        if isinstance(meaning, tuple):
            instance, member = meaning
            self._site(node, instance.row, member, call=call, member=member, root=parts[0])
            return True
        if not apis.is_tensorflow(meaning):
            return False
        self.references.add(apis.relative(meaning))
        row = apis.row_for(meaning)
        if row is None:
            return False
        self._site(node, row, ".".join(parts), call=call, assumed=assumed, root=parts[0])
        return True


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


@dataclass(frozen=True)
class Resolution:
    sites: tuple
    references: frozenset


def resolve_module(tree, text: str) -> Resolution:
    # one walk, reused: ast.walk is the bulk of the checker's time on large trees
    nodes = list(ast.walk(tree))
    binders = []
    bound = set()
    handler_types = []
    for node in nodes:
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is not ast.Load:
                bound.add(node.id)
            continue
        if kind in _BINDER_TYPES:
            binders.append(node)
            if kind in _DEFINITION_TYPES:
                bound.add(node.name)
        elif kind is ast.arg:
            bound.add(node.arg)
        elif kind is ast.alias:
            bound.add((node.asname or node.name).split(".")[0])
        elif kind is ast.ExceptHandler:
            if node.name:
                bound.add(node.name)
            if node.type is not None:
                handler_types.extend(ast.walk(node.type))
    binders.sort(key=lambda node: (node.lineno, node.col_offset))
    resolver = _Resolver(text, bound)
    resolver.except_types = {id(node) for node in handler_types}
    for node in binders:
        resolver.bind(node)
    interesting = resolver.interesting_names()
    if not interesting:
        return Resolution((), frozenset())

    done = set()
    # ast.walk yields parents before children: a call before its callee, `a.b.c` before `a.b`
    for node in nodes:
        kind = type(node)
        if kind is ast.Call:
            func = node.func
            if id(node) not in done and _root_name(func) in interesting \
                    and resolver.reference(func, call=node):
                done.update(_chain_ids(func))
        elif kind is ast.Attribute or kind is ast.Name:
            if type(node.ctx) is ast.Load and id(node) not in done \
                    and _root_name(node) in interesting and resolver.reference(node):
                done.update(_chain_ids(node))
    resolver.sites.sort(key=lambda site: (site.line, site.col))
    return Resolution(tuple(resolver.sites), frozenset(resolver.references))
