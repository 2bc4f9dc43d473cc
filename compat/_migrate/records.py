"""Frozen results of a migration: what was rewritten, what was not and why."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NotMigrated:
    """Why a function was left on the shim: the construct, where it is, and what to do."""

    construct: str
    line: int
    advice: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.construct}: {self.advice}"


@dataclass(frozen=True)
class FunctionResult:
    """One legacy input function of the source file."""

    name: str
    line: int
    migrated: bool
    parameters: tuple = ()          # the function's parameter names, kept by the rewrite
    reason: NotMigrated | None = None
    apis: tuple = ()                # the legacy APIs the function used, canonical spelling
    deterministic: bool = True      # whether TF1 gives one order (harness level "exact")
    notes: tuple = ()               # what the rewrite left out or changed, and why


@dataclass(frozen=True)
class MigrationResult:
    """A source file migrated: the new module's text and a record per input function."""

    path: str
    output: str
    functions: tuple = ()
    tf1_values_kept: tuple = ()     # (TF1 spelling, why it was kept) for each such choice

    @property
    def migrated(self) -> tuple:
        return tuple(f for f in self.functions if f.migrated)

    @property
    def not_migrated(self) -> tuple:
        return tuple(f for f in self.functions if not f.migrated)
