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


def bound_names(tree) -> set:
    """Every name the module binds anywhere (for the bare-`tf` rule)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


class _Resolver(ast.NodeVisitor):
    def __init__(self, text: str, final: Optional[dict], bound: set):
        self.lines = text.splitlines()
        self.bindings: dict = {}
        self.final = final or {}       # bindings at the end of pass one, for forward uses
        self.assume_tf = "tf" not in bound
        self.bound = bound
        self.star_modules: list = []   # `from tensorflow.x import *`
        self.recording = final is not None
        self.sites: list = []
        self.references: set = set()

    # --- bindings -------------------------------------------------------------------------
    def visit_Import(self, node):
        for alias in node.names:
            if alias.asname:
                self.bindings[alias.asname] = alias.name
            else:
                top = alias.name.split(".")[0]
                self.bindings[top] = top

    def visit_ImportFrom(self, node):
        module = node.module or ""
        if node.level:  # relative imports are the project's own modules
            for alias in node.names:
                self.bindings[alias.asname or alias.name] = _LOCAL
            return
        for alias in node.names:
            if alias.name == "*":
                if apis.is_tensorflow(module):
                    self.star_modules.append(module)
                continue
            self.bindings[alias.asname or alias.name] = f"{module}.{alias.name}"

    def _bind_definition(self, node):
        self.bindings[node.name] = _LOCAL

    def visit_FunctionDef(self, node):
        self._bind_definition(node)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self._bind_definition(node)
        self.generic_visit(node)

    def visit_Assign(self, node):
        self.visit(node.value)
        for target in node.targets:
            self.visit(target)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            self.bindings[node.targets[0].id] = self._meaning_of_value(node.value)

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

    # --- resolution -----------------------------------------------------------------------
    def _lookup(self, name: str):
        if name in self.bindings:
            return self.bindings[name], False
        if name in self.final:
            return self.final[name], False
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
        if isinstance(meaning, str) and apis.is_tensorflow(meaning):
            meaning = ".".join([meaning, *parts[1:]])
        elif isinstance(meaning, _Instance) and len(parts) == 2:
            meaning = (meaning, parts[1])
        elif isinstance(meaning, str):
            meaning = ".".join([meaning, *parts[1:]])  # not TF, but keep it for aliasing
        else:
            meaning = None
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
        end_line = getattr(node, "end_lineno", node.lineno) or node.lineno
        end_col = getattr(node, "end_col_offset", node.col_offset) or node.col_offset
        self.sites.append(Site(
            row=row, line=node.lineno, col=self._char_col(node.lineno, node.col_offset),
            end_line=end_line, end_col=self._char_col(end_line, end_col), written=written,
            arguments=arguments, call_args=call_args, member=member, assumed_tf=assumed,
            root=root))

    def _reference(self, node, call=None) -> bool:
        """Record `node` if it reaches TensorFlow; True when it was a table site."""
        meaning, assumed = self.resolve(node, with_flag=True)
        if meaning is None:
            return False
        parts = _dotted(node)
        if isinstance(meaning, tuple):
            instance, member = meaning
            if self.recording:
                self._site(node, instance.row, member, call=call, member=member, root=parts[0])
            return False
        if not apis.is_tensorflow(meaning):
            return False
        if self.recording:
            self.references.add(apis.relative(meaning))
        row = apis.row_for(meaning)
        if row is None:
            return False
        if self.recording:
            self._site(node, row, ".".join(parts), call=call, assumed=assumed, root=parts[0])
        return True

    def visit_Call(self, node):
        if isinstance(node.func, (ast.Name, ast.Attribute)) and _dotted(node.func):
            if self._reference(node.func, call=node):
                for child in (*node.args, *node.keywords):
                    self.visit(child)
                return
            if isinstance(self.resolve(node.func), tuple):
                for child in (*node.args, *node.keywords):
                    self.visit(child)
                return
        self.generic_visit(node)

    def visit_Attribute(self, node):
        if isinstance(node.ctx, ast.Load) and _dotted(node) is not None:
            if self._reference(node):
                return
            # the longest prefix is the one to report: `tf.train.Coordinator.request_stop`
            self.visit(node.value)
            return
        self.generic_visit(node)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            self._reference(node)


@dataclass(frozen=True)
class Resolution:
    sites: tuple
    references: frozenset


def resolve_module(tree, text: str) -> Resolution:
    bound = bound_names(tree)
    first = _Resolver(text, None, bound)
    first.visit(tree)
    second = _Resolver(text, first.bindings, bound)
    second.star_modules = list(first.star_modules)
    second.visit(tree)
    return Resolution(tuple(second.sites), frozenset(second.references))
