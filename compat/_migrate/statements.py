"""A function's statements as the migration sees them: source text, names read and bound.

`with tf.name_scope(...)` / `tf.variable_scope` / `tf.device` / `tf.control_dependencies`
blocks are transparent here: their statements are taken one by one (a tf.data pipeline has
no use for graph name scopes, and the statements may end up in different functions).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

# Context managers whose blocks the migration looks through (last attribute of the call).
_TRANSPARENT_BLOCKS = frozenset({"name_scope", "variable_scope", "device", "op_scope",
                                 "variable_op_scope", "control_dependencies"})


@dataclass(frozen=True)
class Statement:
    node: ast.stmt
    text: str            # the statement and its leading comments, dedented
    reads: frozenset     # names it loads
    binds: frozenset     # names it (re)binds, including objects whose attributes it sets
    source: str = ""     # the text the node's positions refer to (the file, or the code the
                         # migration wrote for it)
    at_line: int = 0     # for a statement the migration wrote: the line it stands for

    @property
    def line(self) -> int:
        return self.at_line or self.node.lineno

    def segment(self, node) -> str:
        return ast.get_source_segment(self.source, node)

    def targets(self, node=None) -> str:
        """The targets of this assignment (or of `node`, an assignment inside it), as written."""
        return " = ".join(self.segment(t) for t in (node or self.node).targets)


def _stored_base(target) -> set:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_stored_base(item) for item in target.elts)) if target.elts else set()
    if isinstance(target, ast.Starred):
        return _stored_base(target.value)
    if isinstance(target, (ast.Attribute, ast.Subscript)):
        node = target.value
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        return {node.id} if isinstance(node, ast.Name) else set()
    return set()


def bound_names(node) -> frozenset:
    names = set()
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
            for target in targets:
                names |= _stored_base(target)
        elif isinstance(sub, (ast.For, ast.comprehension)):
            names |= _stored_base(sub.target)
        elif isinstance(sub, ast.withitem) and sub.optional_vars is not None:
            names |= _stored_base(sub.optional_vars)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(sub.name)
        elif isinstance(sub, ast.NamedExpr):
            names |= _stored_base(sub.target)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in sub.names}
        elif isinstance(sub, ast.Expr) and isinstance(sub.value, ast.Call):
            # `image.set_shape(...)`: a method call changes the object it is called on
            func = sub.value.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                names.add(func.value.id)
    return frozenset(names)


def read_names(node) -> frozenset:
    return frozenset(sub.id for sub in ast.walk(node)
                     if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load))


def is_transparent_block(node, tf_names) -> bool:
    if not isinstance(node, ast.With):
        return False
    for item in node.items:
        call = item.context_expr
        if not isinstance(call, ast.Call) or item.optional_vars is not None:
            return False
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr in _TRANSPARENT_BLOCKS):
            return False
        root = func.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if not (isinstance(root, ast.Name) and root.id in tf_names):
            return False
    return True


class SourceLines:
    """The file's lines, for the text of statements."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.splitlines()

    def segment(self, node) -> str:
        """`node`'s lines with the comment lines right above it, dedented by its column."""
        first = node.lineno - 1
        while first > 0 and self.lines[first - 1].strip().startswith("#"):
            first -= 1
        indent = node.col_offset
        out = []
        for line in self.lines[first:node.end_lineno]:
            head = line[:indent]
            out.append(line[indent:] if not head.strip() else line.lstrip())
        return "\n".join(out)


def flatten(body, lines: SourceLines, tf_names) -> list:
    """The statements of `body` in order, looking through transparent blocks."""
    out = []
    for node in body:
        if is_transparent_block(node, tf_names):
            out.extend(flatten(node.body, lines, tf_names))
            continue
        out.append(Statement(node, lines.segment(node), read_names(node), bound_names(node),
                             lines.text))
    return out


def is_docstring(node) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def first_line(node) -> int:
    """The 0-based index of a definition's first line, its decorators included."""
    return (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1


def header(function, lines: list) -> list:
    """A function's lines up to its body (decorators and signature), dedented to column 0."""
    indent = function.col_offset
    return [line[indent:] if not line[:indent].strip() else line
            for line in lines[first_line(function):function.body[0].lineno - 1]]
