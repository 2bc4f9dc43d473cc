"""Frozen result types of a comparison, with ``explain()`` text and a JSON form."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

JSON_SCHEMA_VERSION = 1

# How many findings a level keeps; the count of the rest is still reported.
MAX_FINDINGS = 8


@dataclass(frozen=True)
class Finding:
    """One reason two streams differ, located as precisely as the level allows.

    kind:      short machine-readable label ("batch_count", "value", "missing", "extra",
               "duplicated", "misaligned", "window", "distribution", "error", ...)
    message:   one sentence a person can act on
    batch:     index of the first batch concerned, when there is one
    path:      path of the component inside the fetched structure, e.g. ``[0]['image']``
    legacy:    short rendering of the legacy value
    candidate: short rendering of the candidate value
    """

    kind: str
    message: str
    batch: int | None = None
    path: str | None = None
    legacy: str | None = None
    candidate: str | None = None

    def to_json(self) -> dict:
        return {name: getattr(self, name) for name in
                ("kind", "message", "batch", "path", "legacy", "candidate")}


@dataclass(frozen=True)
class LevelResult:
    """Outcome of one comparison level.

    A skipped level checked nothing: ``skipped`` is True, ``passed`` False (it is never
    counted as passed), and ``summary`` says why it could not be checked.
    """

    level: str
    passed: bool
    summary: str
    findings: tuple = ()
    omitted: int = 0          # findings beyond MAX_FINDINGS
    skipped: bool = False
    metrics: dict = field(default_factory=dict)
    # Large per-element data kept for plots (displacements); not part of JSON or equality.
    artifacts: dict = field(default_factory=dict, repr=False, compare=False)

    def explain(self) -> str:
        status = "NOT CHECKED" if self.skipped else ("ok" if self.passed else "FAILED")
        lines = [f"[{self.level}] {status}: {self.summary}"]
        for finding in self.findings:
            where = []
            if finding.batch is not None:
                where.append(f"batch {finding.batch}")
            if finding.path:
                where.append(f"component {finding.path}")
            prefix = f"  - ({', '.join(where)}) " if where else "  - "
            lines.append(prefix + finding.message)
            if finding.legacy is not None:
                lines.append(f"      legacy:    {finding.legacy}")
            if finding.candidate is not None:
                lines.append(f"      candidate: {finding.candidate}")
        if self.omitted:
            lines.append(f"  ... and {self.omitted} more finding(s)")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"level": self.level, "passed": self.passed, "skipped": self.skipped,
                "summary": self.summary, "findings": [f.to_json() for f in self.findings],
                "omitted": self.omitted, "metrics": _jsonable(self.metrics)}


def level_result(level, findings, ok_summary, fail_summary=None, **kwargs) -> LevelResult:
    """Build a LevelResult keeping the first MAX_FINDINGS findings."""
    findings = list(findings)
    passed = not findings
    summary = ok_summary if passed else (fail_summary or findings[0].message)
    return LevelResult(level, passed, summary, tuple(findings[:MAX_FINDINGS]),
                       max(0, len(findings) - MAX_FINDINGS), **kwargs)


def skipped(level, reason) -> LevelResult:
    return LevelResult(level, False, reason, skipped=True)


@dataclass(frozen=True)
class SideSummary:
    """What one side produced, without the data."""

    origin: str
    batches: int
    elements: int
    ended: str
    error: str = ""
    seconds: float = 0.0
    facts: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"origin": self.origin, "batches": self.batches, "elements": self.elements,
                "ended": self.ended, "error": self.error, "seconds": round(self.seconds, 3),
                "facts": _jsonable(self.facts)}


@dataclass(frozen=True)
class Report:
    """The answer of ``compare``.

    equivalent: at least one level was checked and every level checked passed
    mode:       the mode asked for ("auto", "exact", ...)
    levels:     the levels that were checked, in order (skipped ones are not among them)
    reason:     why these levels (for ``auto``: what in the legacy graph decided it)
    results:    one LevelResult per level (skipped ones too, each saying why)
    legacy, candidate: SideSummary of each side
    notes:      caveats worth knowing (unseeded random ops, truncation, golden provenance)
    """

    equivalent: bool
    mode: str
    levels: tuple
    reason: str
    results: tuple
    legacy: SideSummary
    candidate: SideSummary
    notes: tuple = ()
    # The streams themselves, for plots and debugging; not part of JSON or equality.
    streams: dict = field(default_factory=dict, repr=False, compare=False)

    def __bool__(self) -> bool:
        return self.equivalent

    def result(self, level: str) -> LevelResult:
        for result in self.results:
            if result.level == level:
                return result
        raise KeyError(f"level {level!r} did not run; ran {list(self.levels)}")

    @property
    def findings(self) -> tuple:
        return tuple(f for result in self.results for f in result.findings)

    @property
    def skipped(self) -> tuple:
        """(level, why) of every level that could not be checked."""
        return tuple((r.level, r.summary) for r in self.results if r.skipped)

    def verdict(self) -> str:
        """One line: the verdict, what was checked, what was not and why."""
        verdict = "EQUIVALENT" if self.equivalent else "NOT EQUIVALENT"
        checked = ", ".join(self.levels) or "nothing"
        line = f"{verdict} (checked: {checked})"
        if self.skipped:
            line += "; not checked: " + "; ".join(f"{level} ({why})"
                                                  for level, why in self.skipped)
        return line

    def explain(self) -> str:
        lines = [f"{self.verdict()}: {self.legacy.origin} vs {self.candidate.origin}",
                 f"mode {self.mode} -> levels {', '.join(self.levels) or '(none)'}: {self.reason}"]
        for name, side in (("legacy", self.legacy), ("candidate", self.candidate)):
            text = (f"{name}: {side.batches} batch(es), {side.elements} element(s), "
                    f"ended by {side.ended} in {side.seconds:.2f}s")
            if side.error:
                text += f"; error {side.error}"
            lines.append(text)
        for result in self.results:
            lines.append(result.explain())
        for note in self.notes:
            lines.append(f"note: {note}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"schema_version": JSON_SCHEMA_VERSION, "equivalent": self.equivalent,
                "verdict": self.verdict(),
                "mode": self.mode, "levels": list(self.levels), "reason": self.reason,
                "skipped": [{"level": level, "why": why} for level, why in self.skipped],
                "results": [r.to_json() for r in self.results],
                "legacy": self.legacy.to_json(), "candidate": self.candidate.to_json(),
                "notes": list(self.notes)}

    def to_json_text(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_json(), indent=indent, sort_keys=False)

    def plot(self, path) -> str:
        """Write a PNG of displacement histograms and batch timelines (needs matplotlib)."""
        from compat._harness.plot import plot_report
        return plot_report(self, path)


#: JSON schema of ``Report.to_json()`` (draft 2020-12), for consumers and tests.
REPORT_JSON_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["schema_version", "equivalent", "mode", "levels", "reason", "results",
                 "legacy", "candidate", "notes"],
    "properties": {
        "schema_version": {"const": JSON_SCHEMA_VERSION},
        "equivalent": {"type": "boolean"},
        "mode": {"type": "string"},
        "levels": {"type": "array", "items": {"enum": ["exact", "epochs", "window", "stats",
                                                       "run"]}},
        "reason": {"type": "string"},
        "verdict": {"type": "string"},
        "skipped": {"type": "array", "items": {
            "type": "object", "required": ["level", "why"],
            "properties": {"level": {"type": "string"}, "why": {"type": "string"}}}},
        "notes": {"type": "array", "items": {"type": "string"}},
        "results": {"type": "array", "items": {
            "type": "object",
            "required": ["level", "passed", "skipped", "summary", "findings", "omitted",
                         "metrics"],
            "properties": {
                "level": {"type": "string"}, "passed": {"type": "boolean"},
                "skipped": {"type": "boolean"}, "summary": {"type": "string"},
                "omitted": {"type": "integer", "minimum": 0},
                "metrics": {"type": "object"},
                "findings": {"type": "array", "items": {
                    "type": "object", "required": ["kind", "message"],
                    "properties": {"kind": {"type": "string"}, "message": {"type": "string"},
                                   "batch": {"type": ["integer", "null"]},
                                   "path": {"type": ["string", "null"]},
                                   "legacy": {"type": ["string", "null"]},
                                   "candidate": {"type": ["string", "null"]}}}}}}},
        "legacy": {"$ref": "#/$defs/side"},
        "candidate": {"$ref": "#/$defs/side"},
    },
    "$defs": {"side": {
        "type": "object",
        "required": ["origin", "batches", "elements", "ended", "error", "seconds", "facts"],
        "properties": {"origin": {"type": "string"}, "batches": {"type": "integer"},
                       "elements": {"type": "integer"},
                       "ended": {"enum": ["out_of_range", "max_batches", "timeout", "error",
                                          "golden"]},
                       "error": {"type": "string"}, "seconds": {"type": "number"},
                       "facts": {"type": "object"}}}},
}


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        return value.item()
    if isinstance(value, float) and value != value:
        return None
    return value
