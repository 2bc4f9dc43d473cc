"""Whether a planned rewrite may be written at all, before any write is attempted.

Refused (for --fix and --diff alike) when the file changed while it was being checked, when
the project has its own top-level `compat` module (`import compat.v1` would not reach the
shim), or when a symlink leads out of the checked paths.
"""
from __future__ import annotations

import os

from compat._check._fix_write import ReadSnapshot
from compat._check.engine import display_path
from compat._check.model import Edit

_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git", ".hg")


def _own_compat(directory: str, shim_package: str) -> str:
    """`directory`/compat.py or `directory`/compat/__init__.py unless it is the shim itself."""
    module = os.path.join(directory, "compat.py")
    if os.path.isfile(module):
        return module
    package = os.path.join(directory, "compat")
    if os.path.isfile(os.path.join(package, "__init__.py")):
        try:
            if os.path.samefile(package, shim_package):
                return ""
        except OSError:
            pass
        return package
    return ""


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


class ClashFinder:
    """Finds a project's own top-level `compat` module that would shadow the shim.

    Looked for next to the file and in every directory above it, up to the project root
    (the nearest directory with pyproject.toml, setup.py, setup.cfg, .git or .hg) or, when
    there is none, up to the path given on the command line.
    """

    def __init__(self, roots, shim_package: str):
        self.roots = [os.path.abspath(r) if os.path.isdir(r)
                      else os.path.dirname(os.path.abspath(r)) for r in roots or ()]
        self.shim_package = shim_package  # the shim's own package is never a clash
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
                self._found[current] = _own_compat(current, self.shim_package)
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


def refusal(edit: Edit, read: ReadSnapshot, roots, clashes: ClashFinder, checked) -> str:
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
