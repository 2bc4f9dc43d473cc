"""Frozen result records shared by the scanners, the rules, the formats and the fixer."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from compat._api_table import ApiRow

SCAN_AST = "ast"
SCAN_TOKENS = "tokens"
SCAN_SKIPPED = "skipped"  # no TensorFlow spelling anywhere in the bytes: nothing to resolve

# Where a site stands in the migration, from untouched to done (see compat/_check/stages.py).
STAGE_LEGACY = "legacy"        # TF1 queues through TensorFlow itself
STAGE_SHIM = "shim"            # reached through `compat.v1`: runs on tf.data underneath
STAGE_BRIDGED = "bridged"      # inside a build function handed to compat.to_dataset
STAGE_TF_DATA = "tf.data"      # a file on plain tf.data, no queue API left (counted per file)
STAGES = (STAGE_LEGACY, STAGE_SHIM, STAGE_BRIDGED, STAGE_TF_DATA)
# The coverage of a TF1 construct outside the queue table that stops the program on TF 2.x
# whatever the shim does (tf.contrib, tf.layers under Keras 3): rules/tf2_blockers.py.
COVERAGE_BLOCKS = "stops on TF 2.x"


@dataclass(frozen=True)
class Site:
    """One place where source code reaches a row of the mapping table."""

    row: ApiRow
    line: int
    col: int                   # 0-based, in characters
    end_line: int
    end_col: int
    written: str               # the spelling in the source, e.g. "tf_input.batch"
    arguments: Optional[tuple] = None  # ((param, source text), ...) when the site is a call
    call_args: str = ""        # the call's arguments as written, for the message
    member: str = ""           # "get_chief_queue_runner" when reached through an instance
    assumed_tf: bool = False   # `tf` is used but never bound: assumed to be TensorFlow
    root: str = ""             # the local name the resolution started from
    in_except: bool = False    # part of an `except ...:` clause's exception types
    via_shim: bool = False     # resolved through `compat.v1` (the file's tf is the shim)


@dataclass(frozen=True)
class Finding:
    path: str
    line: int                  # 1-based
    col: int                   # 1-based, in characters
    end_line: int
    end_col: int
    code: str
    api: str                   # canonical spelling, "tf.train.batch"
    coverage: str
    message: str
    tf_data: str
    notes: str
    scan: str = SCAN_AST
    cell: Optional[int] = None  # 1-based notebook cell, lines are relative to it
    stage: str = STAGE_LEGACY

    @property
    def location(self) -> str:
        if self.cell is None:
            return f"{self.path}:{self.line}:{self.col}"
        return f"{self.path}:cell_{self.cell}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Edit:
    """A whole-file rewrite proposed by --fix/--diff."""

    path: str
    before: bytes
    after: bytes
    changes: tuple = ()        # human-readable list of what changed
    skipped: tuple = ()        # what was left alone, and why


@dataclass(frozen=True)
class FileReport:
    path: str
    findings: tuple = ()
    scan: str = SCAN_AST
    problem: str = ""          # why the file was not parsed as Python 3 (token scan)
    error: str = ""            # internal error or unreadable file
    references: frozenset = field(default_factory=frozenset)  # every TF api path used
    migratable: tuple = ()     # (function, line) of input functions compat-migrate rewrites
