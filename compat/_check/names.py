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

from compat._check import apis
# The pieces live in private modules: _scopes (the scopes and blocks walk, for names whose
# meaning depends on where they are used) and _resolver (meaning at a use, and sites). This
# module is the pass over one file that drives them, and what the rest of the checker imports.
from compat._check._resolver import Resolver, call_fits, root_node
from compat._check._scopes import (IMPORT, VALUE, Def, Foreign, Walker, end_pos, import_meaning,
                                   is_tf)

# the checker's interface to this pass (call_fits is re-exported: tokens.py imports it here)
__all__ = ["Resolution", "resolve_module", "call_fits", "pulls_input"]


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
                        root = root_node(func)
                        owner = resolver.file_imports.get(root.id) if root is not None else None
                        if not isinstance(owner, Foreign):  # subprocess.run, asyncio.run
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

    resolver = Resolver(text, bound)
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
                meaning = import_meaning(alias.name if alias.asname else name)
                resolver.file_imports[name] = meaning
                single_binder[name] = node
                if is_tf(meaning) or (isinstance(meaning, Foreign) and name in attribute_roots):
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
                    meaning = Foreign("." * node.level + (module + "." if module else "")
                                      + alias.name)
                else:
                    meaning = import_meaning(f"{module}.{alias.name}")
                resolver.file_imports[name] = meaning
                single_binder[name] = node
                if is_tf(meaning) or (isinstance(meaning, Foreign) and name in attribute_roots):
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
                resolver.simple[name] = Def(name, scope, None, end_pos(binder), VALUE, payload)
            else:
                resolver.simple[name] = Def(name, scope, None, end_pos(binder), IMPORT,
                                            resolver.file_imports[name])
        else:
            flow.add(name)
    if flow:
        resolver.walker = Walker(frozenset(flow)).run(tree)

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
