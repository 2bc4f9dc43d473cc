"""Reading files the way Python would, and falling back gracefully when it would not.

A source is plain text plus, for notebooks, a map from its lines back to cells. Before any
file is opened, `probe` makes sure it is a regular file of a sane size: a FIFO named `x.py`
would block the run forever, a device would never end, a 50 MB generated file costs gigabytes.
"""
from __future__ import annotations

import errno
import io
import json
import os
import re
import stat
import tokenize
from dataclasses import dataclass
from typing import Optional

# Any of these bytes must be present for a file to reach TensorFlow at all; files without
# them are reported clean without parsing, which keeps big trees fast.
_TF_SPELLINGS = (b"tensorflow", b"tf", b"compat")

_MAGIC = re.compile(r"^(\s*)[%!]")
_JSON_STRING = re.compile(r'"((?:\\.|[^"\\\n])*)"')


@dataclass(frozen=True)
class Source:
    text: str
    encoding: str = "utf-8"
    problem: str = ""                  # decoding trouble, reported with a token scan
    cell_lines: Optional[tuple] = None  # notebook: (cell number, line in cell) per line

    def locate(self, line: int) -> tuple:
        """(cell or None, line within it) for a 1-based line of `text`."""
        if self.cell_lines is None or not 0 < line <= len(self.cell_lines):
            return None, line
        return self.cell_lines[line - 1]


def may_use_tensorflow(data: bytes) -> bool:
    return any(spelling in data for spelling in _TF_SPELLINGS)


def decode(data: bytes) -> Source:
    """Decode like the interpreter (BOM, coding cookie, else UTF-8); never raise."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # undecodable first lines, unknown codec, BOM/cookie clash
        if "invalid or missing encoding declaration" in str(exc):
            problem = "not valid UTF-8 and no coding declaration; decoded as latin-1"
        else:
            problem = f"bad encoding declaration ({exc.msg}); decoded as latin-1"
        return Source(data.decode("latin-1"), "latin-1", problem)
    try:
        return Source(data.decode(encoding), encoding)
    except (UnicodeDecodeError, LookupError):
        return Source(data.decode("latin-1"), "latin-1",
                      f"not valid {encoding}; decoded as latin-1")


def notebook_source(data: bytes) -> Source:
    """Join a notebook's code cells into one text (cells share one namespace)."""
    notebook = json.loads(data.decode("utf-8-sig"))
    cells = notebook.get("cells")
    if cells is None:  # nbformat 3 kept cells inside worksheets
        cells = [cell for sheet in notebook.get("worksheets", ()) for cell in sheet.get("cells", ())]
    lines: list = []
    cell_lines: list = []
    for number, cell in enumerate(cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", cell.get("input", ""))
        if isinstance(source, list):
            source = "".join(source)
        cell_text = source.splitlines()
        if cell_text and cell_text[0].lstrip().startswith("%%"):
            continue  # a cell magic: the body is not Python
        for index, line in enumerate(cell_text, start=1):
            # IPython magics and shell escapes keep their line so positions stay right
            magic = _MAGIC.match(line)
            lines.append(magic.group(1) + "pass" if magic else line)
            cell_lines.append((number, index))
    return Source("\n".join(lines) + "\n", "utf-8", "", tuple(cell_lines))


def broken_notebook_source(data: bytes, reason: str) -> Source:
    """A notebook that is not valid JSON: its string literals, unquoted in place.

    Each literal stays on its own line of the file, so findings keep the file's line numbers.
    """
    raw = data.decode("utf-8", "replace")

    def unquote(match):
        try:
            text = json.loads(match.group())
        except ValueError:
            text = match.group(1)
        return " " + text.replace("\n", " ").replace("\r", " ") + " "

    return Source(_JSON_STRING.sub(unquote, raw), "utf-8",
                  f"not a valid notebook ({reason}); its strings scanned as text")


# --- the file system ------------------------------------------------------------------------

DEFAULT_MAX_FILE_SIZE = 5 * 1024 * 1024  # bytes; --max-file-size, 0 for no limit

_SPECIAL_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                  (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                  (stat.S_ISDIR, "a directory"))


class Unreadable(Exception):
    """The file cannot be checked: an error (exit status 2). The message says why."""


class NotRegular(Exception):
    """A FIFO, device or socket: skipped without being opened. The message says which."""


def special_kind(mode: int) -> str:
    """"a FIFO", "a socket", ... for anything but a regular file, else ""."""
    if stat.S_ISREG(mode):
        return ""
    return next((kind for test, kind in _SPECIAL_KINDS if test(mode)), "not a regular file")


def describe_os_error(exc: OSError, path: str) -> str:
    """Why `path` could not be read, in words (a symlink loop is not "no such file")."""
    if exc.errno == errno.ELOOP:
        return "symbolic link loop: the link cannot be resolved"
    if exc.errno == errno.ENOENT and os.path.islink(path):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return f"broken symbolic link (its target {target} does not exist)"
    return f"cannot read: {exc.strerror or exc}"


def too_large(size: int, limit: int) -> str:
    return (f"{size} bytes, over the {limit}-byte --max-file-size limit: not checked "
            "(raise --max-file-size, or --exclude the file)")


def _refuse_special(info: os.stat_result, max_size: int) -> None:
    kind = special_kind(info.st_mode)
    if kind:
        raise NotRegular(f"{kind}, not a regular file: skipped")
    if max_size and info.st_size > max_size:
        raise Unreadable(too_large(info.st_size, max_size))


def probe(path: str, max_size: int = DEFAULT_MAX_FILE_SIZE) -> os.stat_result:
    """stat() `path` (through symlinks) without opening it.

    Raises Unreadable (an error: missing target, symlink loop, too large, ...) or NotRegular
    (a FIFO, device or socket: to be skipped).
    """
    try:
        info = os.stat(path)
    except OSError as exc:
        raise Unreadable(describe_os_error(exc, path)) from None
    _refuse_special(info, max_size)
    return info


def read_regular(path: str, max_size: int = DEFAULT_MAX_FILE_SIZE) -> tuple:
    """(bytes, stat of the open file) of a regular file; Unreadable / NotRegular otherwise.

    Opened non-blocking, so a FIFO swapped in after `probe` cannot hang the run, and checked
    again on the open descriptor; never reads more than `max_size` + 1 bytes.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise Unreadable(describe_os_error(exc, path)) from None
    with open(fd, "rb", closefd=True) as handle:
        try:
            info = os.fstat(fd)
            _refuse_special(info, max_size)
            data = handle.read(max_size + 1) if max_size else handle.read()
        except OSError as exc:
            raise Unreadable(describe_os_error(exc, path)) from None
    if max_size and len(data) > max_size:
        raise Unreadable(too_large(len(data), max_size))
    return data, info
