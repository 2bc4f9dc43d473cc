"""Turning a site into words: the call as written, the coverage, the tf.data rewrite.

A rewrite is one line of Python that runs as printed under TF 2.x (`import tensorflow as tf`):
its names are the call's own argument source texts, the input it replaces (`dataset`, the
tf.data.Dataset of the examples the queue held; `filenames`, the dataset of what a reader's
queue held), or placeholders it defines itself. Template fields may carry a form, e.g.
`{tensors:struct}`, which derives from the argument's source text the expression the rewrite
needs (see `_FORMS`); tests/check/test_check_rewrites_run.py executes every template.
"""
from __future__ import annotations

import ast

from compat import _api_table as table

COVERAGE_PHRASES = {
    table.COVERED: "covered by compat.v1",
    table.PARTIAL: "partly covered by compat.v1: check the notes",
    table.NOT_COVERED: "not covered by compat.v1: needs manual work",
    table.NOT_PIPELINE: "not an input pipeline; keep as is",
}
_MAX_ARGS = 72


def _expression(source: str):
    try:
        return ast.parse(source.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return None


def _segment(source: str, node) -> str:
    return ast.get_source_segment(source.strip(), node) or ast.unparse(node)


def _elements(source: str):
    """The element source texts of a list or tuple display, else None."""
    node = _expression(source)
    if isinstance(node, (ast.List, ast.Tuple)) and not any(
            isinstance(elt, ast.Starred) for elt in node.elts):
        return [_segment(source, elt) for elt in node.elts]
    return None


def _atom(source: str) -> str:
    """`source`, parenthesized unless it is already one operand."""
    node = _expression(source)
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.List, ast.Tuple,
                         ast.Dict, ast.Constant)):
        return source.strip()
    return f"({source.strip()})"


def _tuple_display(items) -> str:
    return "(" + items[0] + ",)" if len(items) == 1 else "(" + ", ".join(items) + ")"


def _struct(source: str) -> str:
    """TF1's list/dict of tensors as a tf.data structure: a list becomes a tuple (tf.data
    would stack a list into one tensor), a dict stays a dict."""
    items = _elements(source)
    node = _expression(source)
    if items is not None and isinstance(node, ast.List):
        return _tuple_display(items) if items else "()"
    if isinstance(node, (ast.Tuple, ast.Dict)):
        return source.strip()
    value = _atom(source)
    return f"tuple({value}) if isinstance({value}, list) else {value}"


def _as_tuple(source: str) -> str:
    """A list of tensors (never a dict) as a tuple."""
    items = _elements(source)
    if items is not None:
        return _tuple_display(items) if items else "()"
    return f"tuple({source.strip()})"


def _first(source: str) -> str:
    """One tensor of the structure: every component has the same number of rows."""
    items = _elements(source)
    if items:
        return items[0]
    node = _expression(source)
    if isinstance(node, ast.Dict) and node.values and all(node.keys):
        return _segment(source, node.values[0])
    return f"tf.nest.flatten({source.strip()})[0]"


def _names(source: str):
    """The names of a list/tuple display of plain, distinct names (lambda parameters)."""
    node = _expression(source)
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts and all(
            isinstance(elt, ast.Name) for elt in node.elts):
        names = [elt.id for elt in node.elts]
        if len(set(names)) == len(names):
            return names
    return None


def _params(source: str) -> str:
    """Lambda parameters that receive one element: the tensors' own names when the call
    lists them (so an expression over them, like keep_input, reads the element), else
    `*example`."""
    names = _names(source)
    return ", ".join(names) if names else "*example"


def _example(source: str) -> str:
    """Inside a lambda taking `{x:params}`: the element as one structure."""
    names = _names(source)
    if names:
        return _tuple_display(names)
    return "example[0] if len(example) == 1 else example"


def _as_list(source: str) -> str:
    """Inside a lambda taking `{x:params}`: the element as TF1 passed it (a list or dict)."""
    names = _names(source)
    if names:
        return "[" + ", ".join(names) + "]"
    return "example[0] if isinstance(example[0], dict) else list(example)"


def _int(source: str) -> str:
    """An optional int whose None means 0."""
    return "0" if source.strip() == "None" else source.strip()


_READER_DATASETS = {
    "TFRecordReader": "tf.data.TFRecordDataset",
    "TextLineReader": "tf.data.TextLineDataset",
    "WholeFileReader": "(lambda f: tf.data.Dataset.from_tensors(tf.io.read_file(f)))",
}


def _reader_dataset(source: str) -> str:
    """The tf.data dataset class that reads what a TF1 reader class reads."""
    last = source.strip().rpartition(".")[2]
    return _READER_DATASETS.get(last, "tf.data.TFRecordDataset")


_FORMS = {
    "struct": _struct, "tuple": _as_tuple, "first": _first, "params": _params,
    "example": _example, "aslist": _as_list, "int": _int, "atom": _atom,
    "reader_dataset": _reader_dataset,
}


class _Source(str):
    """An argument's source text; `{name:form}` renders a form derived from it."""

    def __format__(self, spec):
        if not spec:
            return str(self)
        try:
            form = _FORMS[spec]
        except KeyError:
            raise ValueError(f"unknown template form {spec!r}; known: {sorted(_FORMS)}") from None
        return form(str(self))


class _Unknown(str):
    def __format__(self, spec):
        return str(self)


class _Placeholders(dict):
    """Template fields the row does not declare stay visible instead of raising."""

    def __missing__(self, key):
        return _Unknown("{" + key + "}")


def _literal(source: str):
    """(True, value) when `source` is a Python literal, else (False, None)."""
    try:
        return True, ast.literal_eval(source.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


def _negate(source: str) -> str:
    is_literal, value = _literal(source)
    if is_literal:
        return str(not value)
    return f"not ({source})" if " " in source else f"not {source}"


def holds(source: str, expected: str) -> bool:
    """Whether an argument's source text meets a `tf_data_when` condition.

    "True"/"False" test a literal's truth value, as TF1 tests `if enqueue_many:` while it
    builds the graph; "None" a literal None; `table.EXPR` an argument that is no literal
    (decided only when the user's program runs); anything else is compared as text."""
    is_literal, value = _literal(source)
    if expected == table.EXPR:
        return not is_literal
    if expected in ("True", "False"):
        return is_literal and bool(value) == (expected == "True")
    if expected == "None":
        return is_literal and value is None
    return source.strip() == expected


def _one_line(source: str) -> str:
    """An argument written over several lines, on one (the rewrite is one line)."""
    if "\n" not in source:
        return source
    node = _expression(source)
    return ast.unparse(node) if node is not None else " ".join(source.split())


def template_values(row, arguments) -> dict:
    given = dict(arguments or ())
    values = _Placeholders()
    for spec in row.params:
        name, has_default, default = spec.partition("=")
        # a required argument the call does not show renders as its own name
        values[name] = _Source(_one_line(given.get(name, default if has_default else name)))
        values["not_" + name] = _Source(_negate(values[name]))
    return values


def template(row, values) -> str:
    """The row's template that applies to these values (the first matching alternative)."""
    for conditions, alternative in row.tf_data_when:
        if all(param in values and holds(values[param], source)
               for param, source in conditions):
            return alternative
    return row.tf_data


def tf_data(row, arguments=None) -> str:
    values = template_values(row, arguments)
    return template(row, values).format_map(values)


def name_arguments(row, positional, keywords) -> tuple:
    """((param, source), ...) from positional and keyword argument sources."""
    names = [spec.partition("=")[0] for spec in row.params]
    pairs = list(zip(names, positional))
    pairs.extend((key, value) for key, value in keywords if key)
    return tuple(pairs)


def api_spelling(row) -> str:
    return "tf." + row.name


def message(site) -> str:
    row = site.row
    if site.member:
        text = f"{site.written}() on {api_spelling(row)}"
    else:
        text = site.written
        if site.arguments is not None:
            args = site.call_args
            if len(args) > _MAX_ARGS:
                args = args[:_MAX_ARGS - 3].rstrip() + "..."
            text += f"({args})"
        if site.written != api_spelling(row):
            text += f" [{api_spelling(row)}]"
    text += " — " + COVERAGE_PHRASES[row.coverage]
    if site.assumed_tf:
        text += " (`tf` is never imported here: assumed to be TensorFlow)"
    return text
