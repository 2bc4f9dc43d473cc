"""--fix / --diff: switch a file's TensorFlow imports to the shim, nothing else.

Concrete syntax trees (libcst) keep every comment and every byte of formatting outside the
rewritten import statements. A file is only rewritten when it has migration sites, parsed
as Python 3, and still parses after the edit; an import is only rewritten to a `compat.v1`
module that tf.compat.v1 is known to have.

Writing is refused (and said why) rather than risked: when the project has its own top-level
`compat` module (`import compat.v1` would not reach the shim), when a symlink leads out of
the checked paths, when the file changed since it was read (mtime, size, inode and content
hash are compared right before the write), or when the file or its directory is read-only.
Symlinks are written through (the link stays a link); hard-linked files are rewritten in
place (the links stay one file); other files are replaced atomically, keeping their mode.
"""
from __future__ import annotations

import ast
import difflib
import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass
from typing import Optional

import libcst as cst
from libcst.helpers import get_full_name_for_node

from compat._check import apis, sources
from compat._check.engine import display_path
from compat._check.model import SCAN_AST, Edit
from compat._check.summary import is_migration_site, printable

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
    written: tuple = ()        # paths rewritten (or, for --diff, that would be)
    refused: tuple = ()        # (path, why): a rewrite was planned but not written

    @property
    def ok(self) -> bool:
        return not self.refused


@dataclass(frozen=True)
class _Read:
    """The file as --fix read it; compared again right before the file is written."""

    identity: tuple            # (st_dev, st_ino)
    size: int
    mtime_ns: int
    nlink: int
    digest: bytes

    @classmethod
    def of(cls, info, data: bytes) -> "_Read":
        return cls((info.st_dev, info.st_ino), info.st_size, info.st_mtime_ns, info.st_nlink,
                   hashlib.sha256(data).digest())


class _Refused(Exception):
    """A planned write that must not happen; the message says why."""


def _plan(report, max_size: int) -> tuple:
    """(Edit or None, _Read or None) for one checked file."""
    if not any(is_migration_site(f) for f in report.findings):
        return None, None
    if report.path.endswith(".ipynb"):
        return Edit(report.path, b"", b"", skipped=("notebooks are not rewritten",)), None
    if report.scan != SCAN_AST:
        return Edit(report.path, b"", b"",
                    skipped=(f"not rewritten: not valid Python 3 ({report.problem})",)), None
    try:
        before, info = sources.read_regular(report.path, max_size)
    except (sources.Unreadable, sources.NotRegular) as exc:
        return Edit(report.path, b"", b"", skipped=(f"not rewritten: {exc}",)), None
    read = _Read.of(info, before)
    try:
        module = cst.parse_module(before)
    except Exception as exc:  # libcst's parser is stricter in places than ast's
        return Edit(report.path, before, before,
                    skipped=(f"not rewritten: libcst: {exc}",)), read
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
                        skipped=(f"not rewritten: the edit would not parse ({exc})",)), read
    return Edit(report.path, before, after, tuple(changes), tuple(rewriter.skipped)), read


def plan(report, max_size: int = sources.DEFAULT_MAX_FILE_SIZE) -> Optional[Edit]:
    """The rewrite for one checked file, or None when it needs none."""
    return _plan(report, max_size)[0]


# --- where `import compat.v1` would really go --------------------------------------------

_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git", ".hg")
_SHIM_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # this `compat`


def _own_compat(directory: str) -> str:
    """`directory`/compat.py or `directory`/compat/__init__.py unless it is the shim itself."""
    module = os.path.join(directory, "compat.py")
    if os.path.isfile(module):
        return module
    package = os.path.join(directory, "compat")
    if os.path.isfile(os.path.join(package, "__init__.py")):
        try:
            if os.path.samefile(package, _SHIM_PACKAGE):
                return ""
        except OSError:
            pass
        return package
    return ""


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


class _ClashFinder:
    """Finds a project's own top-level `compat` module that would shadow the shim.

    Looked for next to the file and in every directory above it, up to the project root
    (the nearest directory with pyproject.toml, setup.py, setup.cfg, .git or .hg) or, when
    there is none, up to the path given on the command line.
    """

    def __init__(self, roots=None):
        self.roots = [os.path.abspath(r) if os.path.isdir(r)
                      else os.path.dirname(os.path.abspath(r)) for r in roots or ()]
        self._found: dict = {}
        self._limits: dict = {}

    def _limit(self, directory: str) -> str:
        if directory not in self._limits:
            current = directory
            while True:
                if any(os.path.lexists(os.path.join(current, m)) for m in _PROJECT_MARKERS):
                    limit = current
                    break
                parent = os.path.dirname(current)
                if parent == current:  # no project root: the path given, else the file's dir
                    given = [r for r in self.roots if _inside(directory, r)]
                    limit = min(given, key=len) if given else directory
                    break
                current = parent
            self._limits[directory] = limit
        return self._limits[directory]

    def _search(self, directory: str) -> str:
        limit = self._limit(directory)
        current = directory
        while True:
            if current not in self._found:
                self._found[current] = _own_compat(current)
            if self._found[current] or current == limit:
                return self._found[current]
            parent = os.path.dirname(current)
            if parent == current:
                return ""
            current = parent

    def clash(self, path: str) -> str:
        directories = dict.fromkeys((os.path.dirname(os.path.abspath(path)),
                                     os.path.dirname(os.path.realpath(path))))
        return next(filter(None, map(self._search, directories)), "")


def _link_outside(path: str, roots) -> str:
    """The real file when `path` goes through a symlink that leads out of `roots`, else ""."""
    real = os.path.realpath(path)
    if not roots or real == os.path.abspath(path):
        return ""
    if any(_inside(real, os.path.realpath(root)) for root in roots):
        return ""
    return real


def _refusal(edit: Edit, read: _Read, roots, clashes: _ClashFinder, checked) -> str:
    """Why the planned rewrite must not be written at all (--fix and --diff alike), or ""."""
    seen = (checked or {}).get(edit.path)
    if seen is not None and ((seen.st_dev, seen.st_ino), seen.st_size, seen.st_mtime_ns) != (
            read.identity, read.size, read.mtime_ns):
        return "the file changed while it was being checked: run compat-check again"
    own = clashes.clash(edit.path)
    if own:
        return (f"{display_path(own)} is this project's own `compat` module, so "
                f"`import compat.v1` would import it instead of the shim: rename it (or edit "
                f"the imports by hand) and run --fix again")
    outside = _link_outside(edit.path, roots)
    if outside:
        return (f"a symbolic link to {outside}, outside the checked paths: not written "
                f"through (check that file itself to fix it)")
    return ""


# --- writing ---------------------------------------------------------------------------------

def _verify(target: str, read: _Read) -> None:
    """Raise _Refused unless `target` is still exactly what was read."""
    try:
        info = os.stat(target)
    except OSError as exc:
        raise _Refused(f"not written: {sources.describe_os_error(exc, target)}") from None
    if (info.st_dev, info.st_ino) != read.identity:
        raise _Refused("replaced since it was read: not written (run compat-check again)")
    if (info.st_size, info.st_mtime_ns) != (read.size, read.mtime_ns):
        raise _Refused("changed since it was read: not written (run compat-check again)")
    try:
        data, _ = sources.read_regular(target, 0)
    except (sources.Unreadable, sources.NotRegular) as exc:
        raise _Refused(f"not written: {exc}") from None
    if hashlib.sha256(data).digest() != read.digest:
        raise _Refused("its content changed since it was read: not written "
                       "(run compat-check again)")


def _read_only(path: str, access: int) -> bool:
    """No write bit at all (read-only on purpose, even for root), or not writable by us."""
    return not os.stat(path).st_mode & 0o222 or not os.access(path, access)


def _check_writable(target: str) -> None:
    try:
        if _read_only(target, os.W_OK):
            raise _Refused("the file is read-only: not written")
        directory = os.path.dirname(target)
        if _read_only(directory, os.W_OK | os.X_OK):
            raise _Refused(f"its directory {directory} is read-only: not written")
    except OSError as exc:
        raise _Refused(f"not written: {exc.strerror or exc}") from None


def _write_in_place(target: str, data: bytes, read: _Read) -> None:
    """Overwrite the file itself, so that every hard link to it sees the new content."""
    fd = os.open(target, os.O_RDWR | getattr(os, "O_BINARY", 0))
    with open(fd, "r+b", closefd=True) as handle:
        info = os.fstat(fd)
        current = handle.read()
        if ((info.st_dev, info.st_ino), info.st_size, info.st_mtime_ns) != (
                read.identity, read.size, read.mtime_ns) or \
                hashlib.sha256(current).digest() != read.digest:
            raise _Refused("changed since it was read: not written (run compat-check again)")
        handle.seek(0)
        handle.write(data)
        handle.truncate()
        handle.flush()
        os.fsync(fd)


def _replace(target: str, data: bytes, read: _Read) -> None:
    """Write a temporary file next to `target` and rename it over `target`."""
    info = os.stat(target)
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".compat-check-",
                                         suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, stat.S_IMODE(info.st_mode))
        if hasattr(os, "chown") and (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
            try:
                os.chown(temporary, info.st_uid, info.st_gid)
            except OSError:
                pass  # not permitted: the file becomes ours, as any editor would make it
        _verify(target, read)  # the last moment before the rename
        os.replace(temporary, target)
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise


def write_checked(path: str, data: bytes, read: _Read) -> None:
    """Write `data` over `path` if it is unchanged since `read`; raise _Refused otherwise.

    Symlinks are written through (the link stays a link), hard-linked files in place.
    """
    target = os.path.realpath(path)
    _verify(target, read)
    _check_writable(target)
    try:
        if read.nlink > 1:
            _write_in_place(target, data, read)
        else:
            _replace(target, data, read)
    except OSError as exc:
        raise _Refused(f"not written: {exc.strerror or exc}") from None


def write_atomically(path: str, data: bytes) -> None:
    """Replace `path` (through symlinks) with `data`, keeping its mode; no change checks."""
    with open(path, "rb") as handle:
        before = handle.read()
    info = os.stat(path)
    _replace(os.path.realpath(path), data, _Read.of(info, before))


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
        if edit is not None:
            planned.append((edit, read))
    clashes = _ClashFinder(roots)
    owners: dict = {}          # (st_dev, st_ino) -> the path it was first planned under
    done, refused, lines = [], [], []
    linked = 0
    for edit, read in planned:
        notes = [f"{edit.path}: {reason}" for reason in edit.skipped]
        if edit.after == edit.before:
            lines.extend(notes)
            continue
        if read.identity in owners:
            linked += 1
            lines.append(f"{edit.path}: the same file as {owners[read.identity]} "
                         "(a link to it): rewritten once")
            continue
        owners[read.identity] = edit.path
        reason = _refusal(edit, read, roots, clashes, checked)
        if not reason and write:
            try:
                write_checked(edit.path, edit.after, read)
            except _Refused as exc:
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
    total = f"{verb} {_files(len(done))} ({unchanged} with migration sites left unchanged)"
    if refused:
        total += f"; {refuse} {_files(len(refused))}, see above"
    lines.append(total)
    return FixOutcome(tuple(e for e, _ in planned), "".join(_diff(e) for e in done),
                      printable("\n".join(lines)), tuple(e.path for e in done), tuple(refused))
