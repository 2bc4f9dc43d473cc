"""--fix / --diff: switch a file's TensorFlow imports to the shim, nothing else.

Concrete syntax trees (libcst) keep every comment and every byte of formatting outside the
rewritten import statements. A file is only rewritten when it has migration sites, parsed
as Python 3, and still parses after the edit; writes are atomic and keep the mode bits.
"""
from __future__ import annotations

import ast
import difflib
import os
import stat
import tempfile
from dataclasses import dataclass
from typing import Optional

import libcst as cst
from libcst.helpers import get_full_name_for_node

from compat._check import apis
from compat._check.model import SCAN_AST, Edit
from compat._check.summary import is_migration_site

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


def _is_public_tf(module: str) -> bool:
    return apis.is_tensorflow(module) and not module.startswith(_PRIVATE_PREFIXES)


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


def _names_bound_to_shim(source: bytes) -> set:
    """Local names the file already binds to compat.v1 (`import compat.v1 as tf`)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(a.asname for a in node.names if a.name == SHIM and a.asname)
        elif isinstance(node, ast.ImportFrom) and node.module == "compat" and not node.level:
            names.update(a.asname or a.name for a in node.names if a.name == "v1")
    return names


class _ImportRewriter(cst.CSTTransformer):
    def __init__(self, references, shim_names=frozenset()):
        self.references = references
        # a TF import under a name the file also binds to the shim is a deliberate A/B switch
        self.shim_names = shim_names
        self.changes: list = []
        self.skipped: list = []
        self._splits: dict = {}  # id(ImportFrom) -> replacement statements, one per line

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
                if apis.relative(module) == "" or _is_public_tf(module):
                    self.skipped.append(f"`import {module}` left as is (no alias to keep): "
                                        f"use `import {_shim_module(module)} as tf`")
                rewritten.append(alias)
                continue
            if _is_public_tf(module):
                if self._deliberate(module, asname):
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


def _add_disable_v2(module: cst.Module):
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


@dataclass(frozen=True)
class FixOutcome:
    edits: tuple
    diff: str
    summary: str


def plan(report) -> Optional[Edit]:
    """The rewrite for one checked file, or None when it needs none."""
    if not any(is_migration_site(f) for f in report.findings):
        return None
    if report.path.endswith(".ipynb"):
        return Edit(report.path, b"", b"", skipped=("notebooks are not rewritten",))
    if report.scan != SCAN_AST:
        return Edit(report.path, b"", b"",
                    skipped=(f"not rewritten: not valid Python 3 ({report.problem})",))
    with open(report.path, "rb") as handle:
        before = handle.read()
    try:
        module = cst.parse_module(before)
    except Exception as exc:  # libcst's parser is stricter in places than ast's
        return Edit(report.path, before, before, skipped=(f"not rewritten: libcst: {exc}",))
    rewriter = _ImportRewriter(report.references, _names_bound_to_shim(before))
    module = module.visit(rewriter)
    changes = list(rewriter.changes)
    uses_sessions = bool(report.references & apis.SESSION_APIS)
    if uses_sessions and apis.DISABLE_V2 not in report.references:
        module, alias = _add_disable_v2(module)
        if alias:
            changes.append(f"added {alias}.disable_v2_behavior() (the file uses Sessions)")
        else:
            rewriter.skipped.append("uses Sessions but has no `import compat.v1 as ...` to "
                                    "call disable_v2_behavior() on: add it by hand")
    after = module.bytes
    if after != before:
        try:
            ast.parse(after)
        except (SyntaxError, ValueError) as exc:  # never write a file we would break
            return Edit(report.path, before, before,
                        skipped=(f"not rewritten: the edit would not parse ({exc})",))
    return Edit(report.path, before, after, tuple(changes), tuple(rewriter.skipped))


def write_atomically(path: str, data: bytes) -> None:
    mode = stat.S_IMODE(os.stat(path).st_mode)
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".compat-check-", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _diff(edit: Edit) -> str:
    encoding = "utf-8"
    try:
        before = edit.before.decode(encoding)
        after = edit.after.decode(encoding)
    except UnicodeDecodeError:
        before, after = edit.before.decode("latin-1"), edit.after.decode("latin-1")
    return "".join(difflib.unified_diff(before.splitlines(keepends=True),
                                        after.splitlines(keepends=True),
                                        f"a/{edit.path}", f"b/{edit.path}"))


def apply(reports, write: bool) -> FixOutcome:
    edits = []
    for report in reports:
        try:
            edit = plan(report)
        except OSError as exc:
            edit = Edit(report.path, b"", b"", skipped=(f"not rewritten: {exc}",))
        if edit is not None:
            edits.append(edit)
    changed = [e for e in edits if e.after != e.before]
    if write:
        for edit in changed:
            write_atomically(edit.path, edit.after)
    verb = "Fixed" if write else "Would fix"
    lines = []
    for edit in edits:
        for change in edit.changes:
            lines.append(f"{edit.path}: {change}")
        for reason in edit.skipped:
            lines.append(f"{edit.path}: {reason}")
    lines.append(f"{verb} {len(changed)} file{'s' if len(changed) != 1 else ''}"
                 f" ({len(edits) - len(changed)} with migration sites left unchanged)")
    return FixOutcome(tuple(edits), "".join(_diff(e) for e in changed), "\n".join(lines))
