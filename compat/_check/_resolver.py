"""From a use of a name to its meaning, and from a reference to a site.

The Resolver answers what a dotted expression means where it is written (a module-level
binding directly, any other through the scopes walk) and records the references that reach
TensorFlow's legacy APIs as sites, including members of tracked instances (a Supervisor's
`start_queue_runners`, a SyncReplicasOptimizer's chief queue runner).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

from compat._check import apis, render
from compat._check._scopes import (END, IMPORT, LOCAL, VALUE, Foreign, Instance, Walker,
                                   is_tf, start_pos)
from compat._check.model import Site


def dotted(node) -> Optional[list]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    parts.reverse()
    return parts


def root_node(node):
    while isinstance(node, ast.Attribute):
        node = node.value
    return node if isinstance(node, ast.Name) else None


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


@dataclass(frozen=True)
class _Root:
    meaning: object
    may: bool = False        # some bindings reaching the use are TensorFlow, some are not
    assumed: bool = False    # an unbound `tf`
    alias: bool = False      # bound by an assignment (`reader = tf.TFRecordReader`), not an import


_NOTHING = _Root(LOCAL)


class Resolver:
    def __init__(self, text: str, bound: dict):
        self.lines = text.splitlines()
        self.bound = bound                # name -> number of bindings in the whole file
        self.assume_tf = "tf" not in bound
        self.star_modules: list = []      # `from tensorflow.x import *`
        self.file_imports: dict = {}      # name -> meaning of its last import, file-wide
        self.simple: dict = {}            # name -> its only binding, a module-level statement
        self.walker: Optional[Walker] = None
        self.meanings: dict = {}          # id(Def) -> meaning (memo; None while computing)
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
        if d.kind == IMPORT:
            return d.payload
        if d.kind != VALUE:
            return LOCAL
        key = id(d)
        if key in self.meanings:
            return self.meanings[key] if self.meanings[key] is not None else LOCAL
        self.meanings[key] = None  # a cycle through this binding resolves to nothing
        value = d.payload[0]
        meaning = LOCAL
        if isinstance(value, ast.Call):
            target = self.resolve(value.func)
            if isinstance(target, str) and apis.is_tensorflow(target):
                row = apis.row_for(target)
                if row is not None:
                    meaning = Instance(row, apis.is_shim(target))
        else:
            target = self.resolve(value)
            if isinstance(target, str) and apis.is_tensorflow(target):
                meaning = target
            elif isinstance(target, Foreign):
                meaning = target
            elif isinstance(target, Instance):
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
            return _Root(self._meaning_of_def(d), alias=d.kind == VALUE)
        context = self.walker.uses.get(id(node)) if self.walker is not None else None
        if context is None:
            return self._fallback(name)
        reaching = self._reaching(name, *context, start_pos(node))
        if reaching is None:
            return self._fallback(name)
        meanings = [self._meaning_of_def(d) for d in reaching]
        tf_like = [i for i, m in enumerate(meanings) if is_tf(m)]
        if tf_like:
            return _Root(meanings[tf_like[0]], may=len(tf_like) != len(meanings),
                         alias=reaching[tf_like[0]].kind == VALUE)
        foreign = [m for m in meanings if isinstance(m, Foreign)]
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
            pos, block = END, found.root
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
        parts = dotted(node)
        if parts is None:
            return None
        root = self.root(root_node(node))
        return self._extend(root.meaning, parts)

    @staticmethod
    def _extend(meaning, parts):
        if isinstance(meaning, Instance):
            return meaning if len(parts) == 1 else None
        if isinstance(meaning, str):
            return apis.canonical(".".join([meaning, *parts[1:]]))
        if isinstance(meaning, Foreign):
            return Foreign(".".join([meaning.path, *parts[1:]]))
        return None

    # --- sites ---------------------------------------------------------------------------
    def _char_col(self, line: int, byte_col: int) -> int:
        if 0 < line <= len(self.lines):
            text = self.lines[line - 1]
            if not text.isascii():
                return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))
        return byte_col

    def _site(self, node, row, written, call=None, member="", assumed=False, root="",
              via_shim=False):
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
            root=root, via_shim=via_shim))
        self.site_nodes.append(node)

    def reference(self, node, call=None) -> bool:
        """Record `node` if it reaches TensorFlow; True when it became a site."""
        parts = dotted(node)
        if parts is None:
            return False
        root = self.root(root_node(node))
        meaning = root.meaning
        if isinstance(meaning, Instance):
            if len(parts) != 2 or (root.may and call is None):
                return False
            member = parts[1]
            row = apis.member_row(meaning.row, member)
            if row is not None and call is not None and self._starts_chief_runner(call):
                row = None  # SyncReplicasOptimizer's token runner: not an input pipeline
            if row is not None:  # `sv.start_queue_runners(sess)`: the API under another name
                self._site(node, row, ".".join(parts), call=call, member=member, root=parts[0],
                           via_shim=meaning.via_shim)
            else:
                self._site(node, meaning.row, member, call=call, member=member, root=parts[0],
                           via_shim=meaning.via_shim)
            return True
        if isinstance(meaning, Foreign):
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
        self._site(node, row, ".".join(parts), call=call, assumed=root.assumed, root=parts[0],
                   via_shim=apis.is_shim(meaning))
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
