"""--fix / --diff: switch a file's TensorFlow imports to the shim, nothing else.

Concrete syntax trees (libcst) keep every comment and every byte of formatting outside the
rewritten import statements. A file is only rewritten when it has legacy sites, parsed
as Python 3, and still parses after the edit; an import is only rewritten to a `compat.v1`
module that tf.compat.v1 is known to have.

Writing is refused (and said why) rather than risked: when the project has its own top-level
`compat` module (`import compat.v1` would not reach the shim), when a symlink leads out of
the checked paths, when the file changed since it was read (mtime, size, inode and content
hash are compared right before the write), or when the file is read-only. A read-only
directory refuses the whole run before anything is written: all of a run's files or none.
A file that cannot be rewritten (libcst cannot parse it, or it nests deeper than the rewriter
can walk) is named and skipped; the others are still fixed.
Symlinks are written through (the link stays a link); hard-linked files are rewritten in
place (the links stay one file); other files are replaced atomically, keeping their mode.

The parts live in private modules: _fix_rewrite (the new imports), _fix_targets (refusals
decided before writing) and _fix_write (the unchanged-since-read checks and the writes).
This module plans each file's edit and applies them; other modules import only this one.
"""
from __future__ import annotations

import ast
import difflib
import os
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from compat._check import apis, sources
from compat._check._fix_rewrite import (MODULE_EQUIVALENTS, SHIM, V1_MODULES, ImportRewriter,
                                        add_disable_v2, names_bound_to_shim)
from compat._check._fix_targets import ClashFinder, refusal
from compat._check._fix_write import (ReadSnapshot, WriteRefused, read_only_directory,
                                      write_atomically, write_checked)
from compat._check.engine import display_path
from compat._check.model import SCAN_AST, STAGE_LEGACY, Edit
from compat._check.summary import is_migration_site, printable

# SHIM, MODULE_EQUIVALENTS, V1_MODULES, write_checked and write_atomically were defined here
# before the split and stay importable from here.
__all__ = ["FixOutcome", "MODULE_EQUIVALENTS", "SHIM", "V1_MODULES", "apply", "plan",
           "write_atomically", "write_checked"]

# This `compat` package: a project's directory holding it has no clash. Defined here and
# handed to ClashFinder so that one name says where the shim is (tests point it elsewhere).
_SHIM_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass(frozen=True)
class FixOutcome:
    edits: tuple
    diff: str
    summary: str
    written: tuple = ()        # paths rewritten (or, for --diff, that would be)
    refused: tuple = ()        # (path, why): a rewrite was planned but not written

    @property
    def ok(self) -> bool:
        return not self.refused


def _legacy(finding) -> bool:
    return is_migration_site(finding) and finding.stage == STAGE_LEGACY


def _plan(report, max_size: int) -> tuple:
    """(Edit or None, ReadSnapshot or None) for one checked file."""
    if not any(_legacy(f) for f in report.findings):
        return None, None  # nothing, or every site already on the shim: nothing to rewrite
    if report.path.endswith(".ipynb"):
        return Edit(report.path, b"", b"", skipped=("notebooks are not rewritten",)), None
    if report.scan != SCAN_AST:
        return Edit(report.path, b"", b"",
                    skipped=(f"not rewritten: not valid Python 3 ({report.problem})",)), None
    try:
        before, info = sources.read_regular(report.path, max_size)
    except (sources.Unreadable, sources.NotRegular) as exc:
        return Edit(report.path, b"", b"", skipped=(f"not rewritten: {exc}",)), None
    read = ReadSnapshot.of(info, before)
    try:
        module = cst.parse_module(before)
    except Exception as exc:  # libcst's parser is stricter in places than ast's
        return Edit(report.path, before, before,
                    skipped=(f"not rewritten: libcst: {exc}",)), read
    try:
        return _rewrite(report, module, before, read)
    except (RecursionError, MemoryError) as exc:  # nesting beyond what libcst can walk
        return Edit(report.path, before, before,
                    skipped=(f"not rewritten: too deeply nested for the rewriter "
                             f"({type(exc).__name__}): switch its imports to compat.v1 by "
                             f"hand",)), read


def _rewrite(report, module, before: bytes, read) -> tuple:
    rewriter = ImportRewriter(report.references, names_bound_to_shim(before))
    module = module.visit(rewriter)
    changes = list(rewriter.changes)
    uses_sessions = bool(report.references & apis.SESSION_APIS)
    if uses_sessions and apis.DISABLE_V2 not in report.references:
        module, alias = add_disable_v2(module)
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
                        skipped=(f"not rewritten: the edit would not parse ({exc})",)), read
    return Edit(report.path, before, after, tuple(changes), tuple(rewriter.skipped)), read


def plan(report, max_size: int = sources.DEFAULT_MAX_FILE_SIZE) -> Optional[Edit]:
    """The rewrite for one checked file, or None when it needs none."""
    return _plan(report, max_size)[0]


# --- applying every planned edit --------------------------------------------------------

def _diff(edit: Edit) -> str:
    encoding = "utf-8"
    try:
        before = edit.before.decode(encoding)
        after = edit.after.decode(encoding)
    except UnicodeDecodeError:
        before, after = edit.before.decode("latin-1"), edit.after.decode("latin-1")
    path = printable(edit.path)
    return "".join(difflib.unified_diff(before.splitlines(keepends=True),
                                        after.splitlines(keepends=True),
                                        f"a/{path}", f"b/{path}"))


def _files(count: int) -> str:
    return f"{count} file{'s' if count != 1 else ''}"


def _read_only_directory(edits) -> str:
    """Why no file of the run may be written, or "": a directory that --fix would write in is
    read-only. Found before any write: the run writes all of its files or none of them (a
    tree half on the shim is worse than one left as it was)."""
    for edit in edits:
        directory = os.path.dirname(os.path.realpath(edit.path))
        if read_only_directory(directory):
            return (f"not written: {display_path(directory)} is read-only, and --fix writes "
                    f"all of a run's files or none (make it writable, or --exclude it)")
    return ""


def _nothing_left(migrated: int) -> str:
    if not migrated:
        return "Nothing to fix: no legacy TF1 queue site found"
    return (f"Nothing left to fix: the queue sites in {_files(migrated)} are already on the "
            f"shim (compat.v1) or bridged by compat.to_dataset; the next step is tf.data "
            f"(compat-migrate, or the tf.data rewrite printed for each site)")


def apply(reports, write: bool, *, roots=None, max_file_size: int = sources.DEFAULT_MAX_FILE_SIZE,
          checked=None) -> FixOutcome:
    """Plan every rewrite, then write each one that is still safe to write (if `write`).

    `roots`: the paths given on the command line (where symlinks may lead, where to stop
    looking for a project's own `compat`); `checked`: {report path: os.stat_result} taken
    before the files were checked, to notice files changed since.
    """
    planned = []
    for report in reports:
        try:
            edit, read = _plan(report, max_file_size)
        except OSError as exc:
            edit, read = Edit(report.path, b"", b"", skipped=(f"not rewritten: {exc}",)), None
        except Exception as exc:  # one file must not end the run: named, skipped, the rest fixed
            edit, read = Edit(report.path, b"", b"", skipped=(
                f"not rewritten: internal error ({type(exc).__name__}: {exc}): switch its "
                f"imports to compat.v1 by hand",)), None
        if edit is not None:
            planned.append((edit, read))
    clashes = ClashFinder(roots, _SHIM_PACKAGE)
    owners: dict = {}          # (st_dev, st_ino) -> the path it was first planned under
    done, refused, lines = [], [], []
    linked = 0
    entries = []               # (edit, read, notes, why it is refused or "")
    for edit, read in planned:
        notes = [f"{edit.path}: {reason}" for reason in edit.skipped]
        if edit.after == edit.before:
            entries.append((None, None, notes, ""))
            continue
        if read.identity in owners:
            linked += 1
            entries.append((None, None, [f"{edit.path}: the same file as "
                                         f"{owners[read.identity]} (a link to it): rewritten "
                                         "once"], ""))
            continue
        owners[read.identity] = edit.path
        entries.append((edit, read, notes, refusal(edit, read, roots, clashes, checked)))
    locked = write and _read_only_directory(
        [edit for edit, _, _, why in entries if edit is not None and not why])
    for edit, read, notes, reason in entries:
        if edit is None:
            lines.extend(notes)
            continue
        if not reason and locked:
            reason = locked
        elif not reason and write:
            try:
                write_checked(edit.path, edit.after, read)
            except WriteRefused as exc:
                reason = str(exc)
        if reason:
            refused.append((edit.path, reason))
            lines.append(f"{edit.path}: refused: {reason}")
        else:
            done.append(edit)
            lines.extend(f"{edit.path}: {change}" for change in edit.changes)
        lines.extend(notes)
    unchanged = len(planned) - len(done) - len(refused) - linked
    verb, refuse = ("Fixed", "refused") if write else ("Would fix", "would refuse")
    migrated = sum(1 for r in reports if any(is_migration_site(f) for f in r.findings)
                   and not any(_legacy(f) for f in r.findings))
    if not planned:
        lines.append(_nothing_left(migrated))
    elif not done and not refused and not linked:  # all planned, none rewritable: say so
        lines.append(f"Nothing left that --fix can rewrite: {_files(unchanged)} with legacy "
                     f"sites {'needs' if unchanged == 1 else 'need'} a hand edit (the reasons "
                     f"above)" + (f"; {_files(migrated)} already on the shim or bridged"
                                  if migrated else ""))
    else:
        total = f"{verb} {_files(len(done))} ({unchanged} with legacy sites left unchanged)"
        if refused:
            total += f"; {refuse} {_files(len(refused))}, see above"
        if migrated:
            total += f"; {_files(migrated)} already on the shim or bridged"
        lines.append(total)
    return FixOutcome(tuple(e for e, _ in planned), "".join(_diff(e) for e in done),
                      printable("\n".join(lines)), tuple(e.path for e in done), tuple(refused))
