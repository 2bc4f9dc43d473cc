"""Where each queue site stands in the migration, and which stages fail a CI run.

legacy: TF1 queues through TensorFlow itself (`import tensorflow.compat.v1 as tf`).
shim: the same APIs reached through `compat.v1` (what `compat-check --fix` leaves): they run
on tf.data underneath, still in a graph and a Session. An API the shim does not cover stays
legacy however it is reached.
bridged: inside a build function handed to `compat.to_dataset(build)` (or a function it
calls): the pipeline already comes out as a TF2 `tf.data.Dataset`. Such a function takes `tf`
as a parameter, which the resolver cannot see is `compat.v1`; `bridged_sites` resolves its
body again with that parameter bound to the shim, so its queue calls are found at all.
tf.data: a file using tf.data and no queue API, counted per file (it has no sites).
"""
from __future__ import annotations

import ast

from compat import _api_table as table
from compat._check.model import STAGE_BRIDGED, STAGE_LEGACY, STAGE_SHIM

FAIL_ON_CHOICES = ("legacy", "shim", "any")
# --fail-on X: the stages whose sites make the run exit 1. Ordered: each fails on more.
_FAILING = {"legacy": frozenset({STAGE_LEGACY}),
            "shim": frozenset({STAGE_LEGACY, STAGE_SHIM}),
            "any": frozenset({STAGE_LEGACY, STAGE_SHIM, STAGE_BRIDGED})}
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def failing_stages(fail_on: str) -> frozenset:
    return _FAILING[fail_on]


def _bridge_names(tree) -> tuple:
    """(names bound to compat.to_dataset, names bound to the compat package)."""
    direct, packages = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "compat" and not node.level:
            direct.update(a.asname or a.name for a in node.names if a.name == "to_dataset")
        elif isinstance(node, ast.Import):
            packages.update(a.asname or a.name for a in node.names if a.name == "compat")
    return direct, packages


def _is_bridge(func, direct, packages) -> bool:
    if isinstance(func, ast.Name):
        return func.id in direct
    return (isinstance(func, ast.Attribute) and func.attr == "to_dataset"
            and isinstance(func.value, ast.Name) and func.value.id in packages)


def _callee_name(node):
    """`build`, `self.build`, `functools.partial(build, ...)`: the function's name, or None."""
    if isinstance(node, ast.Call) and node.args and getattr(node.func, "attr",
                                                            getattr(node.func, "id", "")) == "partial":
        return _callee_name(node.args[0])
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def bridged_functions(tree) -> list:
    """(function or lambda node, handed to to_dataset itself) for what compat.to_dataset runs:
    the functions handed to it, then those they call by name (defined in this file),
    transitively."""
    direct, packages = _bridge_names(tree)
    if not direct and not packages:
        return []
    defined: dict = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined.setdefault(node.name, []).append(node)
    builds = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and _is_bridge(node.func, direct, packages):
            build = node.args[0]
            builds.extend([build] if isinstance(build, ast.Lambda)
                          else defined.get(_callee_name(build), ()))
    found, pending, seen = [], [(b, True) for b in builds], set()
    while pending:
        function, handed = pending.pop(0)
        if id(function) in seen:
            continue
        seen.add(id(function))
        found.append((function, handed))
        for node in ast.walk(function):
            if isinstance(node, ast.Call):
                pending.extend((f, False) for f in defined.get(_callee_name(node.func), ()))
    return found


def line_ranges(functions) -> tuple:
    return tuple((f.lineno, getattr(f, "end_lineno", f.lineno)) for f, _ in functions)


def _tf_parameter(function):
    """The parameter compat.to_dataset passes its tf in: the first, after self/cls."""
    params = function.args.posonlyargs + function.args.args
    if params and params[0].arg in ("self", "cls"):
        params = params[1:]
    return params[0].arg if params else None


def bridged_sites(functions, text: str, resolve_module) -> tuple:
    """Sites in bridged functions that take the shim as a parameter (`build(tf)`): the body
    resolved again with that parameter imported as `compat.v1`. to_dataset passes it to the
    function handed to it; a function that one calls is only taken to get it when its
    parameter has the same name (`read_and_decode(tf, ...)`), not `parse(serialized)`."""
    names = {_tf_parameter(f) for f, handed in functions if handed} | {"tf"}
    sites = []
    for function, handed in functions:
        name = _tf_parameter(function)
        if name is None or (not handed and name not in names):
            continue
        body = function.body if isinstance(function.body, list) else [ast.Expr(function.body)]
        binding = ast.Import(names=[ast.alias(name="compat.v1", asname=name)])
        module = ast.Module(body=[binding, *body], type_ignores=[])
        ast.copy_location(binding, function)
        ast.fix_missing_locations(module)
        sites.extend(resolve_module(module, text).sites)
    return tuple(sites)


def stage(site, bridged_lines) -> str:
    if any(first <= site.line <= last for first, last in bridged_lines):
        return STAGE_BRIDGED
    # an API the shim does not cover is not migrated by reaching it through compat.v1
    if site.via_shim and site.row.coverage != table.NOT_COVERED:
        return STAGE_SHIM
    return STAGE_LEGACY
