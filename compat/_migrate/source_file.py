"""What the whole source file tells the migration: the legacy API each call reaches, its
module-level functions (helpers to inline), the names bound to TensorFlow; and the error a
construct the migration cannot follow raises."""
from __future__ import annotations

import ast
import re

from compat import _api_table as table
from compat._check import apis, names
from compat._migrate.statements import SourceLines

PRODUCERS = frozenset({"train.string_input_producer", "train.input_producer",
                       "train.range_input_producer", "train.slice_input_producer"})
READERS = frozenset({"TFRecordReader", "TextLineReader", "FixedLengthRecordReader",
                     "WholeFileReader"})
_PLAIN_BATCHINGS = ("train.batch", "train.shuffle_batch", "train.batch_join",
                    "train.shuffle_batch_join")
# The maybe_* forms batch what keep_input keeps: the same calls with a filter first.
BATCHINGS = frozenset(_PLAIN_BATCHINGS + tuple(a.replace("train.", "train.maybe_")
                                               for a in _PLAIN_BATCHINGS))
JOINS = frozenset(a for a in BATCHINGS if a.endswith("_join"))


def plain_batching(api: str) -> str:
    """`train.maybe_shuffle_batch` -> `train.shuffle_batch` (the others unchanged)."""
    return api.replace("train.maybe_", "train.")
HELPER_DEPTH = 4


class Unfollowable(Exception):
    def __init__(self, construct: str, line: int, advice: str):
        super().__init__(f"line {line}: {construct}: {advice}")
        self.construct, self.line, self.advice = construct, line, advice


def row(api: str):
    for found in table.ROWS:
        if found.name == api:
            return found
    raise KeyError(api)


def bind_arguments(api: str, call: ast.Call, text: str) -> dict:
    """The call's arguments by TF1 parameter name, as source text."""
    params = [p.split("=")[0] for p in row(api).params]
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


class SourceFile:
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
        if helper is None or depth > HELPER_DEPTH:
            return False
        if self.legacy_apis_in(helper):
            return True
        return any(isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name)
                   and sub.func.id != name and self.is_pipeline_helper(sub.func.id, depth + 1)
                   for sub in ast.walk(helper))



def is_summary(node, tf_names) -> bool:
    call = value_call(node) if isinstance(node, ast.Expr) else None
    if call is None or not isinstance(call.func, ast.Attribute):
        return False
    chain, value = [], call.func
    while isinstance(value, ast.Attribute):
        chain.append(value.attr)
        value = value.value
    return isinstance(value, ast.Name) and value.id in tf_names and "summary" in chain


def value_call(node):
    if isinstance(node, (ast.Assign, ast.Expr, ast.Return)) and isinstance(node.value, ast.Call):
        return node.value
    return None




def read_file(text: str):
    tree = ast.parse(text)
    return tree, SourceFile(tree, text)
