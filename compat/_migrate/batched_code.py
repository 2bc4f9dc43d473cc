"""Element code rewritten to run on a whole batch of records at once, where that is safe.

A tf.data expert batches the raw records first and parses the batch: one `parse_example`
instead of a `parse_single_example` per record is several times faster (the shim does the
same inside its pipelines). The element code stays the user's, statement for statement; only
what must change for a batch dimension changes:

* `parse_single_example(x, spec)` -> `parse_example(x, spec)`;
* `t.set_shape([d, ...])` -> `t.set_shape([None, d, ...])`;
* `reshape(t, [d, ...])` -> `reshape(t, [-1, d, ...])`;
* `stack` / `concat` / `expand_dims` along axis a >= 0 -> along a + 1.

It applies only when every call in the code is one whose batched form gives each row what
the call gives each element (element-wise ops, parsing, decoding raw bytes or CSV lines),
and the code has no control flow; otherwise the element code runs per element, as written.
"""
from __future__ import annotations

import ast

# Calls (last attribute) that work row by row on a batch as they work on one element.
_ROW_WISE = frozenset({
    "cast", "decode_raw", "decode_csv", "equal", "not_equal", "greater", "greater_equal",
    "less", "less_equal", "logical_and", "logical_or", "logical_not", "add", "subtract",
    "multiply", "divide", "truediv", "floordiv", "maximum", "minimum", "abs", "negative",
    "sqrt", "square", "exp", "log", "sigmoid", "tanh", "identity", "to_float", "to_int32",
    "to_int64", "string_to_number", "to_number", "length", "one_hot", "clip_by_value",
    "round", "floor", "ceil", "sign", "pow", "where_v2", "FixedLenFeature", "constant",
    "convert_to_tensor", "zeros_like", "ones_like", "parse_single_example", "reshape",
    "set_shape", "get", "pop", "items", "keys", "values", "dict", "zip", "list", "tuple",
    "len", "int", "float", "str", "range", "min", "max", "stack", "concat", "expand_dims",
})


def _derived(function: ast.FunctionDef) -> set:
    """Names whose values come from the element (the parameters, and what is bound from them)."""
    derived = {a.arg for a in function.args.args}
    for statement in function.body:
        reads = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}
        if reads & derived:
            for node in ast.walk(statement):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    derived.add(node.id)
    return derived


def batched(element_code: str) -> str | None:
    """`element_code` (a function definition) rewritten for batches, or None."""
    try:
        tree = ast.parse(element_code)
    except SyntaxError:
        return None
    function = tree.body[0]
    derived = _derived(function)
    edits = []
    for node in ast.walk(function):
        if node is function:
            continue
        if isinstance(node, (ast.If, ast.For, ast.While, ast.Try, ast.With, ast.Lambda,
                             ast.FunctionDef, ast.ListComp, ast.DictComp, ast.IfExp)):
            return None
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(
                node.func, "id", None)
            if name not in _ROW_WISE:
                # A call on nothing the element gives (a feature spec, the CSV defaults)
                # is the same for a batch.
                if {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} & derived:
                    return None
                continue
            edit = _edit(node, name)
            if edit is False:
                return None
            if edit:
                edits.append(edit)
    lines = element_code.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    text = element_code
    for (line, col), new, drop in sorted(edits, key=lambda e: e[0], reverse=True):
        at = offsets[line - 1] + len(lines[line - 1].encode()[:col].decode())
        text = text[:at] + new + text[at + drop:]
    return text


def _edit(call: ast.Call, name: str):
    """((line, col), insert, characters replaced) for the call's batched form; None when it
    needs none; False when it has no batched form here."""
    if name == "parse_single_example":
        func = call.func
        if not isinstance(func, ast.Attribute):
            return False
        # the attribute name ends the func expression
        return ((func.end_lineno, func.end_col_offset - len(name)), "parse_example", len(name))
    if name == "set_shape":
        shape = call.args[0] if call.args else None
        return _leading(shape, "None")
    if name == "reshape":
        shape = call.args[1] if len(call.args) > 1 else next(
            (k.value for k in call.keywords if k.arg == "shape"), None)
        return _leading(shape, "-1")
    if name in ("stack", "concat", "expand_dims"):
        return _shifted_axis(call, name)
    return None


# The axis argument's position, and its default (None: required).
_AXIS = {"stack": (1, "0"), "concat": (1, None), "expand_dims": (1, None)}


def _shifted_axis(call: ast.Call, name: str):
    """An element's axis a >= 0 is the batch's a + 1 (a negative one counts from the end,
    the same in both)."""
    position, default = _AXIS[name]
    axis = call.args[position] if len(call.args) > position else next(
        (k.value for k in call.keywords if k.arg in ("axis", "dim")), None)
    if axis is None:
        if default is None:
            return False
        last = call.args[-1] if call.args else None
        if last is None or call.keywords:
            return False
        return ((last.end_lineno, last.end_col_offset), ", axis=1", 0)
    if not (isinstance(axis, ast.Constant) and isinstance(axis.value, int)):
        if (isinstance(axis, ast.UnaryOp) and isinstance(axis.op, ast.USub)
                and isinstance(axis.operand, ast.Constant)):
            return None  # from the end: unchanged
        return False
    if axis.value < 0:
        return None
    return ((axis.lineno, axis.col_offset), str(axis.value + 1),
            axis.end_col_offset - axis.col_offset)


def _leading(shape, dimension):
    if not isinstance(shape, (ast.List, ast.Tuple)):
        return False
    return ((shape.lineno, shape.col_offset + 1), f"{dimension}, " if shape.elts else dimension,
            0)
