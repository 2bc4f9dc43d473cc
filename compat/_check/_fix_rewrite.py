"""What --fix changes in a file: its TensorFlow imports, switched to the compat.v1 shim.

Everything here works on one parsed module (libcst, so comments and formatting outside the
rewritten imports survive) and only decides what the new imports are; reading the file,
checking the result still parses and writing it are fix.py's business. An import is only
rewritten to a `compat.v1` module that tf.compat.v1 is known to have; the reasons for
leaving TensorFlow imports as they are collect in `ImportRewriter.skipped`.
"""
from __future__ import annotations

import ast
from typing import Optional

import libcst as cst
from libcst.helpers import get_full_name_for_node

from compat._check import apis

SHIM = "compat.v1"
# Private TF1 modules and the compat.v1 module that holds the same legacy names.
MODULE_EQUIVALENTS = {
    "tensorflow.python.training.input": "train",
    "tensorflow.python.training.training": "train",
    "tensorflow.python.ops.data_flow_ops": "queue",
    "tensorflow.python.training.queue_runner": "train.queue_runner",
    "tensorflow.python.training.queue_runner_impl": "train.queue_runner",
    "tensorflow.python.training.coordinator": "train",
    "tensorflow.python.ops.io_ops": "",
}
_PRIVATE_PREFIXES = ("tensorflow.python", "tensorflow.contrib", "tensorflow.core",
                     "tensorflow.lite", "tensorflow.tools")

# Modules of tf.compat.v1 (TF 1.15 and 2.x), relative to it: `compat.v1.<one of these>` is
# a module the shim proxies. Anything else (tensorflow.examples.tutorials.mnist, ...) is not
# known to exist under tf.compat.v1 and an import of it is left as is.
V1_MODULES = frozenset("""
    app audio autograph autograph.experimental bitwise compat compat.v1 config
    config.experimental config.optimizer config.threading data data.experimental debugging
    debugging.experimental distribute distribute.cluster_resolver distribute.experimental
    distributions dtypes errors experimental feature_column flags gfile graph_util image
    initializers io io.gfile keras keras.activations keras.applications keras.backend
    keras.callbacks keras.constraints keras.datasets keras.estimator keras.experimental
    keras.initializers keras.layers keras.losses keras.metrics keras.mixed_precision
    keras.models keras.optimizers keras.preprocessing keras.regularizers keras.utils
    keras.wrappers layers linalg lite logging lookup lookup.experimental losses manip math
    metrics mixed_precision nest nn nn.rnn_cell profiler python_io quantization queue ragged
    random random.experimental raw_ops resource_loader saved_model saved_model.builder
    saved_model.constants saved_model.experimental saved_model.loader saved_model.main_op
    saved_model.signature_constants saved_model.signature_def_utils
    saved_model.tag_constants saved_model.utils sets signal sparse spectral strings summary
    sysconfig test tpu tpu.experimental train train.experimental train.queue_runner user_ops
    version xla
""".split())
# Names under `tensorflow` that are not part of tf.compat.v1: never imported from the shim.
_NOT_IN_V1 = frozenset({"examples", "contrib", "python", "core", "tools", "compiler",
                        "include", "estimator", "optimizers", "autodiff"})


def _is_public_tf(module: str) -> bool:
    return apis.is_tensorflow(module) and not module.startswith(_PRIVATE_PREFIXES)


def _is_v2(module: str) -> bool:
    return any(module == root or module.startswith(root + ".")
               for root in ("tensorflow.compat.v2", "compat.v2"))


def _unresolvable(module: str, names=()) -> str:
    """Why `compat.v1.<module relative>` (and `names` from it) may not exist, or ""."""
    if _is_v2(module):
        return f"`{module}` is the TF2 API: compat.v1 does not replace it, left as is"
    rel = apis.relative(module)
    if rel and rel not in V1_MODULES:
        return (f"`{module}` left as is: tf.compat.v1 has no module {rel}, "
                f"so compat.v1.{rel} would not import")
    missing = sorted(name for name in names if not rel and name in _NOT_IN_V1)
    if missing:
        return (f"`from {module} import {', '.join(missing)}` left as is: "
                f"not part of tf.compat.v1")
    return ""


def _shim_module(module: str) -> str:
    """`tensorflow.train` -> `compat.v1.train` (public TensorFlow module paths only)."""
    rel = apis.relative(module)
    return SHIM + ("." + rel if rel else "")


def _members_used(module: str, references) -> set:
    prefix = apis.relative(module + "._")[:-1]  # normalised like the references are
    return {ref[len(prefix):].split(".")[0] for ref in references if ref.startswith(prefix)}


def _module_is_replaceable(module: str, references) -> tuple:
    """(ok, reason): every attribute the file uses on `module` exists in its equivalent."""
    target = MODULE_EQUIVALENTS[module]
    for member in sorted(_members_used(module, references) - {""}):
        row = apis.row_for(f"{module}.{member}")
        wanted = f"{target}.{member}" if target else member
        if row is None or wanted not in row.shim_paths:
            short = module.rsplit(".", 1)[1]
            return False, (f"{short}.{member} has no compat.v1.{wanted} equivalent: "
                           f"import of {module} left as is")
    return True, ""


def _name_targets(module: str, name: str) -> set:
    row = apis.row_for(f"{module}.{name}")
    if row is None:
        return set()
    return {path.rpartition(".")[0] for path in row.shim_paths
            if path.rpartition(".")[2] == name}


def _statement(code: str):
    return cst.parse_statement(code).body[0]


def _alias_code(name: str, asname: Optional[str]) -> str:
    return f"{name} as {asname}" if asname and asname != name else name


def names_bound_to_shim(source: bytes) -> set:
    """Local names the file already binds to compat.v1 (`import compat.v1 as tf`)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(a.asname for a in node.names if a.name == SHIM and a.asname)
        elif isinstance(node, ast.ImportFrom) and node.module == "compat" and not node.level:
            names.update(a.asname or a.name for a in node.names if a.name == "v1")
    return names


class ImportRewriter(cst.CSTTransformer):
    def __init__(self, references, shim_names=frozenset()):
        self.references = references
        # a TF import under a name the file also binds to the shim is a deliberate A/B switch
        self.shim_names = shim_names
        self.changes: list = []
        self.skipped: list = []
        self._splits: dict = {}  # id(ImportFrom) -> replacement statements, one per line

    def on_visit(self, node) -> bool:
        # imports are statements: no expression holds one, and not descending into them keeps
        # a 400-term `'a' + 'a' + ...` or 150 nested calls from exhausting the recursion limit
        if isinstance(node, cst.BaseExpression):
            return False
        return super().on_visit(node)

    def leave_SimpleStatementLine(self, original, updated):
        if len(updated.body) == 1 and id(updated.body[0]) in self._splits:
            lines = [cst.parse_statement(code + "\n")
                     for code in self._splits[id(updated.body[0])]]
            lines[0] = lines[0].with_changes(leading_lines=updated.leading_lines)
            lines[-1] = lines[-1].with_changes(trailing_whitespace=updated.trailing_whitespace)
            return cst.FlattenSentinel(lines)
        return self._split_inline(updated)

    def leave_SimpleStatementSuite(self, original, updated):
        return self._split_inline(updated)

    def _split_inline(self, updated):
        """`a; from x import m1, m2` and `if c: from ...`: keep one line, use semicolons."""
        if not any(id(small) in self._splits for small in updated.body):
            return updated
        body = []
        for small in updated.body:
            if id(small) not in self._splits:
                body.append(small)
                continue
            parts = [_statement(code) for code in self._splits[id(small)]]
            separator = cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" "))
            body.extend(part.with_changes(semicolon=separator) for part in parts[:-1])
            body.append(parts[-1].with_changes(semicolon=small.semicolon))
        return updated.with_changes(body=body)

    def _deliberate(self, module, local) -> bool:
        if local in self.shim_names:
            self.skipped.append(f"`{module}` imported as {local} next to `compat.v1 as "
                                f"{local}`: an A/B switch, left as is")
            return True
        return False

    def _note(self, before, after):
        self.changes.append(f"{before} -> {after}")

    def leave_Import(self, original, updated):
        rewritten = []
        changed = False
        for alias in updated.names:
            module = get_full_name_for_node(alias.name) or ""
            asname = alias.asname.name.value if alias.asname else None
            if not apis.is_tensorflow(module) or module.startswith(SHIM):
                rewritten.append(alias)
                continue
            if asname is None:
                if apis.relative(module) == "" or (_is_public_tf(module)
                                                    and not _unresolvable(module)):
                    self.skipped.append(f"`import {module}` left as is (no alias to keep): "
                                        f"use `import {_shim_module(module)} as tf`")
                rewritten.append(alias)
                continue
            if _is_public_tf(module):
                if self._deliberate(module, asname):
                    rewritten.append(alias)
                    continue
                reason = _unresolvable(module)
                if reason:
                    self.skipped.append(reason)
                    rewritten.append(alias)
                    continue
                new = _shim_module(module)
                rewritten.append(alias.with_changes(name=cst.parse_expression(new)))
                self._note(f"import {module} as {asname}", f"import {new} as {asname}")
                changed = True
            elif module in MODULE_EQUIVALENTS and len(updated.names) == 1:
                ok, reason = _module_is_replaceable(module, self.references)
                if not ok:
                    self.skipped.append(reason)
                    return updated
                new = self._module_import(MODULE_EQUIVALENTS[module], asname)
                self._note(f"import {module} as {asname}", new)
                return _statement(new).with_changes(semicolon=updated.semicolon)
            else:
                rewritten.append(alias)
                if module.startswith("tensorflow.contrib"):
                    self.skipped.append(f"{module}: tf.contrib is gone in TF2, rewrite by hand")
        return updated.with_changes(names=rewritten) if changed else updated

    @staticmethod
    def _module_import(target: str, local: str) -> str:
        if not target:
            return f"import {SHIM} as {local}"
        package, _, leaf = f"{SHIM}.{target}".rpartition(".")
        return f"from {package} import {_alias_code(leaf, local)}"

    def leave_ImportFrom(self, original, updated):
        if updated.relative or updated.module is None:
            return updated
        module = get_full_name_for_node(updated.module) or ""
        if not apis.is_tensorflow(module) or module.startswith(SHIM):
            return updated
        if isinstance(updated.names, cst.ImportStar):
            self.skipped.append(f"`from {module} import *` left as is")
            return updated
        names = [(get_full_name_for_node(a.name), a.asname.name.value if a.asname else None)
                 for a in updated.names]
        if _is_public_tf(module):
            reason = _unresolvable(module, [n for n, _ in names])
            if reason:
                self.skipped.append(reason)
                return updated
            if module == "tensorflow.compat":
                if [n for n, _ in names] != ["v1"]:
                    self.skipped.append(f"from {module} import ... left as is")
                    return updated
                if self._deliberate(module, names[0][1] or "v1"):
                    return updated
                new_module = "compat"
            else:
                new_module = _shim_module(module)
            self._note(f"from {module} import ...", f"from {new_module} import ...")
            return updated.with_changes(module=cst.parse_expression(new_module))
        # private module paths: whole modules, or names from them
        if all(f"{module}.{name}" in MODULE_EQUIVALENTS for name, _ in names):
            statements = []
            for name, asname in names:
                full = f"{module}.{name}"
                ok, reason = _module_is_replaceable(full, self.references)
                if not ok:
                    self.skipped.append(reason)
                    return updated
                statements.append(self._module_import(MODULE_EQUIVALENTS[full], asname or name))
            self._note(f"from {module} import {', '.join(_alias_code(*n) for n in names)}",
                       "; ".join(statements))
            if len(statements) == 1:
                return _statement(statements[0]).with_changes(semicolon=updated.semicolon)
            # one statement per module: the enclosing line is split in leave_SimpleStatementLine
            self._splits[id(updated)] = statements
            return updated
        targets = None
        for name, _ in names:
            found = _name_targets(module, name)
            targets = found if targets is None else targets & found
        if not targets:
            self.skipped.append(f"from {module} import {', '.join(n for n, _ in names)}: "
                                "no single compat.v1 module holds these names, left as is")
            return updated
        preferred = MODULE_EQUIVALENTS.get(module)
        target = preferred if preferred in targets else sorted(targets, key=len)[0]
        new_module = SHIM + ("." + target if target else "")
        self._note(f"from {module} import ...", f"from {new_module} import ...")
        return updated.with_changes(module=cst.parse_expression(new_module))


def _shim_alias(statement) -> Optional[str]:
    """The name a top-level statement binds to compat.v1, if it does."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    for small in statement.body:
        if isinstance(small, cst.Import):
            for alias in small.names:
                if get_full_name_for_node(alias.name) == SHIM and alias.asname:
                    return alias.asname.name.value
        elif isinstance(small, cst.ImportFrom) and not small.relative and small.module:
            if get_full_name_for_node(small.module) == "compat" and \
                    not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    if get_full_name_for_node(alias.name) == "v1":
                        return alias.asname.name.value if alias.asname else "v1"
    return None


def _is_import_line(statement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)


def add_disable_v2(module: cst.Module):
    """Insert `<alias>.disable_v2_behavior()` after the import block holding the shim import."""
    body = list(module.body)
    for index, statement in enumerate(body):
        alias = _shim_alias(statement)
        if alias is None and isinstance(statement, cst.Try):
            alias = next(filter(None, map(_shim_alias, statement.body.body)), None)
        if alias is None:
            continue
        end = index
        while end + 1 < len(body) and _is_import_line(body[end + 1]):
            end += 1
        body.insert(end + 1, cst.parse_statement(f"{alias}.disable_v2_behavior()\n"))
        return module.with_changes(body=body), alias
    return module, None
