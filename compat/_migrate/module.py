"""A whole source file migrated: each legacy input function rewritten (or wrapped), the
imports switched to TensorFlow 2, the TF1 element spellings renamed, and a header saying
what was done."""
from __future__ import annotations

import ast
import os
import re
import textwrap

from compat._migrate import dataset_code, emit, spelling
from compat._migrate.source_file import plain_batching
from compat._migrate.recognize import (BATCHINGS, PRODUCERS, Unfollowable, read_file,
                                       recognize)
from compat._migrate.records import FunctionResult, MigrationResult, NotMigrated
from compat._migrate.statements import first_line, header

# What makes a function an input pipeline of its own.
PIPELINE_APIS = PRODUCERS | BATCHINGS | frozenset({
    "FIFOQueue", "RandomShuffleQueue", "PaddingFIFOQueue", "PriorityQueue",
    "train.maybe_batch", "train.maybe_shuffle_batch", "train.maybe_batch_join",
    "train.maybe_shuffle_batch_join"})
# Import lines that bind `tf` to TF1's API, and what a TF2 module imports instead.
_TF1_MODULES = ("tensorflow.compat.v1", "compat.v1")
_DISABLE_V2 = ("disable_v2_behavior", "disable_eager_execution", "disable_resource_variables",
               "disable_v2_tensorshape", "disable_control_flow_v2", "disable_tensor_equality")


def candidates(tree, file, wanted=()) -> list:
    """Module-level functions that build an input pipeline (a producer, a queue, a batching
    call), other than the helpers such functions call (a helper is inlined where it is
    called); a function named in `wanted` counts whoever calls it."""
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    building = [f for f in functions
                if any(api in PIPELINE_APIS for api, _ in file.legacy_apis_in(f))]
    called = {sub.func.id for function in building for sub in ast.walk(function)
              if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name)
              and sub.func.id != function.name}
    return [f for f in building if f.name not in called or f.name in wanted]


def _wrapper(function: ast.FunctionDef, text: str, module_name: str, reason: NotMigrated) -> str:
    signature = header(function, text.splitlines())
    params = [a.arg for a in function.args.args]
    call_args = ", ".join(params)
    if function.args.vararg:
        call_args += (", " if call_args else "") + f"*{function.args.vararg.arg}"
    if function.args.kwarg:
        call_args += (", " if call_args else "") + f"**{function.args.kwarg.arg}"
    advice = str(reason).replace('"', "'")
    body = [
        f'"""NOT MIGRATED by compat-migrate ({advice}).',
        "",
        "Runs the original function on the compat.v1 shim and hands its stream to TF2.",
        '"""',
        "import importlib",
        "import compat",
        "from compat.migrate import on_shim",
        f"legacy = importlib.import_module({module_name!r})",
        f"return compat.to_dataset(lambda tf: on_shim(legacy.{function.name})({call_args}))",
    ]
    return "\n".join(signature + ["    " + line if line else "" for line in body])


def _switch_imports(tree, text: str) -> str:
    """`import tensorflow.compat.v1 as tf` and friends -> `import tensorflow as tf`; the
    module-level `tf.disable_v2_behavior()` calls removed (the new module runs as TF2)."""
    lines = text.splitlines()
    edits = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names = []
            for alias in node.names:
                if alias.name in _TF1_MODULES or alias.name == "tensorflow":
                    names.append(f"tensorflow as {alias.asname or 'tensorflow'}")
                else:
                    names.append(alias.name + (f" as {alias.asname}" if alias.asname else ""))
            edits.append((node, "import " + ", ".join(names)))
        elif isinstance(node, ast.ImportFrom) and node.module in ("tensorflow.compat", "compat"):
            kept = [a for a in node.names if a.name != "v1"]
            new = [f"import tensorflow as {a.asname or 'v1'}" for a in node.names if a.name == "v1"]
            if kept:
                new.append(f"from {node.module} import " + ", ".join(
                    a.name + (f" as {a.asname}" if a.asname else "") for a in kept))
            edits.append((node, "\n".join(new)))
        elif (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
              and isinstance(node.value.func, ast.Attribute)
              and node.value.func.attr in _DISABLE_V2):
            edits.append((node, ""))
    for node, new in sorted(edits, key=lambda e: -e[0].lineno):
        indent = " " * node.col_offset
        replacement = [indent + line for line in new.splitlines()] if new else []
        lines[node.lineno - 1:node.end_lineno] = replacement
    return "\n".join(lines) + "\n"


def _header(path: str, results, kept) -> str:
    lines = [f"# Migrated from {os.path.basename(path)} by compat-migrate: legacy TF1 queue input",
             "# functions rewritten as tf.data, for TensorFlow 2 (no compat import needed by the",
             "# migrated functions). Each keeps its name and parameters and returns a",
             "# tf.data.Dataset whose elements are what the legacy function returned per run."]
    done = [r.name for r in results if r.migrated]
    if done:
        lines.append("# Migrated: " + ", ".join(done) + ".")
    for result in results:
        if not result.migrated:
            lines.append(f"# NOT migrated: {result.name} ({result.reason}); it runs the "
                         "original through compat.to_dataset.")
    for result in results:
        for note in result.notes:
            lines.append(f"# {result.name}, {note}.")
    for spelled, why in kept:
        lines.append(f"# Kept TF1's {spelled} (under tf.compat.v1): {why}.")
    if any("TextLineReader" in r.apis for r in results):
        lines.append("# TextLineDataset strips every '\\r' ending a line; TF1's TextLineReader "
                     "strips one.")
    wrapped = []
    for line in lines:
        wrapped.extend(textwrap.wrap(line, width=96, subsequent_indent="#   ",
                                     break_on_hyphens=False) or [line])
    return "\n".join(wrapped) + "\n"


def rewritable(text: str) -> tuple:
    """(name, line) of each input function in `text` that compat-migrate rewrites as tf.data
    (no TensorFlow needed: what the checker reports)."""
    tree, file = read_file(text)
    found = []
    for function in candidates(tree, file):
        try:
            emit.function_source(recognize(function, file), text)
        except Unfollowable:
            continue
        found.append((function.name, function.lineno))
    return tuple(found)


def migrate_source(text: str, path: str = "<source>", functions=None,
                   module_name: str | None = None) -> MigrationResult:
    tree, file = read_file(text)
    module_name = module_name or os.path.splitext(os.path.basename(path))[0]
    chosen = candidates(tree, file, wanted=functions or ())
    if functions:
        wanted = set(functions)
        missing = wanted - {f.name for f in chosen}
        if missing:
            raise LookupError(f"no legacy input function named {', '.join(sorted(missing))} "
                              f"in {path} (found: {', '.join(f.name for f in chosen) or 'none'})")
        chosen = [f for f in chosen if f.name in wanted]
    results, replacements, inlined = [], {}, set()
    for function in chosen:
        params = tuple(a.arg for a in function.args.args)
        try:
            pipeline = recognize(function, file)
            replacements[function] = emit.function_source(pipeline, text)
            inlined |= _helpers_called(function, file)
            deterministic = _deterministic(pipeline)
            notes = tuple(f"line {s.line}: a tf.summary call on the pipeline's tensors is left "
                          "out (tf.data keeps no summary collection): write it in the "
                          "training loop" for s in pipeline.summaries)
            results.append(FunctionResult(function.name, function.lineno, True, params,
                                          apis=tuple(pipeline.apis),
                                          deterministic=deterministic, notes=notes))
        except Unfollowable as error:
            reason = NotMigrated(error.construct, error.line, error.advice)
            replacements[function] = _wrapper(function, text, module_name, reason)
            results.append(FunctionResult(function.name, function.lineno, False, params,
                                          reason=reason))
    new_text = _replace_functions(tree, text, replacements, _unused_helpers(
        tree, file, inlined, replacements))
    new_tree = ast.parse(new_text)
    new_text = _switch_imports(new_tree, new_text)
    new_text, kept = spelling.to_tf2(new_text)
    output = _header(path, results, kept) + re.sub(r"\n{4,}", "\n\n\n", new_text)
    return MigrationResult(path, output, tuple(results), kept)


def _helpers_called(function, file) -> set:
    called = set()
    for sub in ast.walk(function):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) \
                and file.is_pipeline_helper(sub.func.id):
            called.add(sub.func.id)
            called |= _helpers_called(file.functions[sub.func.id], file)
    return called


def _unused_helpers(tree, file, inlined, replacements) -> set:
    """Inlined helpers nothing else calls once their callers are replaced: they took a queue
    or built a batch, which the new module has no use for."""
    kept_functions = [n for n in tree.body if n not in replacements]
    used = set()
    for node in kept_functions:
        if isinstance(node, ast.FunctionDef) and node.name in inlined:
            continue
        used |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return {name for name in inlined if name not in used}


def _replace_functions(tree, text, replacements, dropped) -> str:
    lines = text.splitlines()
    edits = []
    for node in tree.body:
        if node in replacements:
            edits.append((node, replacements[node]))
        elif isinstance(node, ast.FunctionDef) and node.name in dropped:
            edits.append((node, None))
    for node, new in sorted(edits, key=lambda e: -e[0].lineno):
        lines[first_line(node):node.end_lineno] = new.splitlines() if new is not None else []
    return "\n".join(lines) + "\n"


def _deterministic(pipeline) -> bool:
    """Whether TF1 itself gives one order, whatever the arguments: no shuffle (or one with
    an op seed), one thread."""
    source = pipeline.source
    if dataset_code.truth(dataset_code.argument(source, "shuffle")) is not False:
        try:  # an op seed makes TF1's permutations fixed (under any graph seed)
            if not isinstance(dataset_code.literal(dataset_code.argument(source, "seed")), int):
                return False
        except (ValueError, SyntaxError):
            return False
    for batching in pipeline.batchings:
        if plain_batching(batching.api) != "train.batch" or \
                dataset_code.threads_of(batching).strip() != "1":
            return False
    return True
