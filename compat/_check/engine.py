"""Checking files: one FileReport per file, whatever the file holds."""
from __future__ import annotations

import ast
import fnmatch
import os
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from typing import Iterable, Iterator

from compat._check import names, sources, stages, tokens
from compat._check.model import SCAN_AST, SCAN_SKIPPED, SCAN_TOKENS, FileReport
from compat._check.rules import RULES
from compat._check.rules._common import Context

SUFFIXES = (".py", ".pyw", ".ipynb")
DEFAULT_EXCLUDES = (".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "__pycache__",
                    "node_modules", ".eggs", "build", "dist", ".mypy_cache", ".pytest_cache",
                    "site-packages", ".ipynb_checkpoints")
# below this many files a process pool costs more than it saves
_PARALLEL_THRESHOLD = 400
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.I)


def _suppressed(text: str) -> dict:
    """{line: codes, or None for all} from `# noqa` / `# noqa: TFQ201,TFQ202` comments."""
    if "noqa" not in text.lower():
        return {}
    found = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = _NOQA.search(line)
        if match:
            codes = match.group("codes")
            found[number] = frozenset(re.split(r"[,\s]+", codes.upper())) if codes else None
    return found


def _unsuppressed(sites, text):
    suppressed = _suppressed(text)
    if not suppressed:
        return sites
    kept = []
    for site in sites:
        codes = suppressed.get(site.line, ())
        if codes is None or site.row.code in codes:
            continue
        kept.append(site)
    return tuple(kept)


def discover(paths: Iterable[str], excludes=(), on_error=None) -> list:
    """Files to check, sorted; explicit files are kept whatever their suffix.

    on_error: called with the OSError of a directory that cannot be listed (else skipped)."""
    patterns = tuple(excludes)
    found: list = []

    def excluded(path):
        name = os.path.basename(path)
        return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(path, p) for p in patterns)

    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path, onerror=on_error):
                dirs[:] = sorted(d for d in dirs if d not in DEFAULT_EXCLUDES
                                 and not excluded(os.path.join(root, d)))
                for name in sorted(files):
                    full = os.path.join(root, name)
                    if name.endswith(SUFFIXES) and not excluded(full):
                        found.append(full)
        else:
            found.append(path)
    return sorted(dict.fromkeys(found))


def display_path(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        rel = path
    if rel.startswith(".." + os.sep):
        rel = path
    return rel.replace(os.sep, "/")


def _analyse(path: str, data: bytes) -> FileReport:
    if path.endswith(".ipynb"):
        try:
            source = sources.notebook_source(data)
        except (ValueError, UnicodeDecodeError, AttributeError, TypeError) as exc:
            # still give it a result, like any file Python cannot parse
            source = sources.broken_notebook_source(data, str(exc))
    else:
        if not sources.may_use_tensorflow(data):
            return FileReport(path, scan=SCAN_SKIPPED)
        source = sources.decode(data)
    problem = source.problem
    tree = None
    if not problem:
        try:
            tree = ast.parse(source.text)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            problem = _describe_parse_error(exc)
    bridged = ()
    if tree is not None:
        resolution = names.resolve_module(tree, source.text)
        scan = SCAN_AST
        functions = stages.bridged_functions(tree)
        bridged = stages.line_ranges(functions)
        sites = _merged(resolution.sites,
                        stages.bridged_sites(functions, source.text, names.resolve_module))
    else:
        resolution = tokens.resolve(source.text)
        scan = SCAN_TOKENS
        sites = resolution.sites
    references = resolution.references
    sites = _unsuppressed(sites, source.text)
    context = Context(path=path, source=source, scan=scan, sites=sites, bridged=bridged,
                      tree=tree)
    findings = {}
    for rule in RULES:
        for finding in rule.check(context):
            findings.setdefault((finding.cell or 0, finding.line, finding.col, finding.code), finding)
    if resolution.unresolved:
        _explain_unresolved(findings, resolution.unresolved, source)
    ordered = tuple(findings[key] for key in sorted(findings))
    return FileReport(path, ordered, scan, problem, "", references)


def _merged(sites, extra) -> tuple:
    """`sites` and those of `extra` at positions `sites` does not already hold."""
    if not extra:
        return sites
    taken = {(s.line, s.col) for s in sites}
    added = {(s.line, s.col): s for s in extra if (s.line, s.col) not in taken}
    return tuple(sorted((*sites, *added.values()), key=lambda s: (s.line, s.col)))


def _explain_unresolved(findings: dict, unresolved, source) -> None:
    """Say so in the message of a finding reached through a module the checker could not
    resolve (`from mypkg.compat import tfv1; tfv1.FIFOQueue(...)`)."""
    notes = {}
    for (line, col), alias, module, name in unresolved:
        cell, cell_line = source.locate(line)
        notes[(cell or 0, cell_line, col + 1)] = (
            f" (`{alias}` is imported from {module}, which could not be resolved: "
            f"{name} is a TF1 legacy name, so it is taken to be TensorFlow's)")
    for key, finding in findings.items():
        note = notes.get(key[:3])
        if note is not None:
            findings[key] = replace(finding, message=finding.message + note)


def _describe_parse_error(exc) -> str:
    if isinstance(exc, SyntaxError):
        kind = type(exc).__name__
        where = f" at line {exc.lineno}" if exc.lineno else ""
        return f"{kind}: {exc.msg}{where}"
    return f"{type(exc).__name__}: {exc}"


def check_file(path: str) -> FileReport:
    shown = display_path(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        return FileReport(shown, scan=SCAN_SKIPPED, error=f"cannot read: {exc.strerror or exc}")
    try:
        return _analyse(shown, data)
    except Exception as exc:  # one bad file must not end the run; it is reported as an error
        return FileReport(shown, scan=SCAN_SKIPPED,
                          error=f"internal error: {type(exc).__name__}: {exc}")


def check_files(files: list, jobs: int = 0, progress=None) -> Iterator[FileReport]:
    """Reports in the order of `files`; `progress(done, total)` is called as they come."""
    total = len(files)
    jobs = jobs or os.cpu_count() or 1
    if jobs > 1 and total >= _PARALLEL_THRESHOLD:
        try:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                results = list(_with_progress(pool.map(check_file, files, chunksize=64),
                                              total, progress))
        except (OSError, NotImplementedError, BrokenProcessPool):
            pass  # no processes here (sandboxes, some CI runners): check in this one
        else:
            yield from results
            return
    yield from _with_progress(map(check_file, files), total, progress)


def _with_progress(reports, total, progress):
    for done, report in enumerate(reports, start=1):
        if progress is not None:
            progress(done, total)
        yield report


def stderr_progress(every: int = 250):
    """A progress callback printing to stderr, in place on a terminal."""
    interactive = sys.stderr.isatty()

    def report(done, total):
        if done % every and done != total:
            return
        end = "\r" if interactive and done != total else "\n"
        print(f"compat-check: {done}/{total} files", end=end, file=sys.stderr, flush=True)

    return report


def check_source(text: str, path: str = "example.py") -> FileReport:
    """Check source text as if it were the file `path` (tests, editors)."""
    return _analyse(path, text.encode("utf-8"))
