"""Reading files the way Python would, and falling back gracefully when it would not.

A source is plain text plus, for notebooks, a map from its lines back to cells.
"""
from __future__ import annotations

import io
import json
import re
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
