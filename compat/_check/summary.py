"""Counting a run: what the summary line, --statistics and the JSON summary say."""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass

from compat import _api_table as table
from compat._check.model import SCAN_SKIPPED, SCAN_TOKENS

_MANUAL_SHOWN = 3  # how many manual sites the summary line names before "..."
_FILES_SHOWN = 10  # token-scanned / failed files listed by name in the text summary


@dataclass(frozen=True)
class Summary:
    files_checked: int
    files_with_sites: int
    sites: int                 # migration sites (not-a-pipeline notes excluded)
    covered: int
    partial: int
    not_covered: int
    not_pipeline: int
    manual_locations: tuple    # ("TFQ301 at src/feed.py:88", ...) for partial/not covered
    token_scanned: tuple       # (path, problem) of files scanned by tokens
    errors: tuple              # (path, error): files or directories that could not be read
    skipped: tuple = ()        # (path, why): FIFOs, devices, sockets, never opened

    @property
    def has_findings(self) -> bool:
        return self.sites > 0


def is_migration_site(finding) -> bool:
    return finding.coverage != table.NOT_PIPELINE


def is_special_skip(report) -> bool:
    """A FIFO, device or socket that was skipped unopened (see sources.probe)."""
    return report.scan == SCAN_SKIPPED and bool(report.problem) and not report.error


def printable(text: str) -> str:
    """`text` as valid Unicode: file names that are not UTF-8 reach us as lone surrogates
    (os.fsdecode's surrogateescape); show their bytes as \\xNN instead of failing to encode."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return os.fsencode(text).decode("utf-8", "backslashreplace")
    except UnicodeError:  # surrogates that did not come from a file name
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def printable_data(value):
    """`printable` applied to every string in a JSON-like value (dict keys too)."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable_data(k): printable_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [printable_data(v) for v in value]
    return value


def summarize(reports) -> Summary:
    coverage = Counter()
    files_with_sites = 0
    manual = []
    for report in reports:
        sites = [f for f in report.findings if is_migration_site(f)]
        files_with_sites += bool(sites)
        for finding in report.findings:
            coverage[finding.coverage] += 1
            if finding.coverage in (table.PARTIAL, table.NOT_COVERED):
                manual.append(f"{finding.code} at {finding.location.rsplit(':', 1)[0]}")
    checked = [r for r in reports if not r.error and not is_special_skip(r)]
    return Summary(
        files_checked=len(checked), files_with_sites=files_with_sites,
        sites=sum(n for c, n in coverage.items() if c != table.NOT_PIPELINE),
        covered=coverage[table.COVERED], partial=coverage[table.PARTIAL],
        not_covered=coverage[table.NOT_COVERED], not_pipeline=coverage[table.NOT_PIPELINE],
        manual_locations=tuple(manual),
        token_scanned=tuple((r.path, r.problem) for r in reports if r.scan == SCAN_TOKENS),
        errors=tuple((r.path, r.error) for r in reports if r.error),
        skipped=tuple((r.path, r.problem) for r in reports if is_special_skip(r)))


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary_lines(summary: Summary) -> list:
    if summary.sites:
        parts = []
        if summary.covered:
            parts.append(f"{summary.covered} covered by the shim")
        if summary.partial:
            parts.append(f"{summary.partial} partly covered")
        if summary.not_covered:
            parts.append(f"{summary.not_covered} "
                         f"need{'s' if summary.not_covered == 1 else ''} manual work")
        text = (f"{_plural(summary.sites, 'legacy site')} in "
                f"{_plural(summary.files_with_sites, 'file')}: " + ", ".join(parts))
        if summary.manual_locations:
            shown = ", ".join(summary.manual_locations[:_MANUAL_SHOWN])
            more = len(summary.manual_locations) - _MANUAL_SHOWN
            text += f" ({shown}{f', and {more} more' if more > 0 else ''})"
    elif summary.errors:
        text = "No legacy queue APIs found in the files that could be read"
    else:
        text = "No legacy queue APIs found"
    lines = [text + f"; {_plural(summary.files_checked, 'file')} checked"]
    if summary.not_pipeline:
        lines.append(f"{_plural(summary.not_pipeline, 'site')} not an input pipeline "
                     "(SyncReplicasOptimizer): keep as is")
    if summary.token_scanned:
        lines.append(f"{_plural(len(summary.token_scanned), 'file')} not valid Python 3, "
                     "scanned by tokens (imports and dotted names only):")
        lines.extend(_listed(summary.token_scanned))
    if summary.skipped:
        lines.append(f"{_plural(len(summary.skipped), 'special file')} skipped (never opened):")
        lines.extend(_listed(summary.skipped))
    if summary.errors:
        lines.append(f"{_plural(len(summary.errors), 'path')} could not be checked (an error):")
        lines.extend(_listed(summary.errors))
    return lines


def _listed(pairs) -> list:
    lines = [f"  {path}: {reason}" for path, reason in pairs[:_FILES_SHOWN]]
    if len(pairs) > _FILES_SHOWN:
        lines.append(f"  ... and {len(pairs) - _FILES_SHOWN} more (--format json lists them all)")
    return lines


def statistics_lines(reports) -> list:
    rows = table.rows_by_code()
    counts = Counter(f.code for report in reports for f in report.findings)
    return [f"{count:5d}  {code}  {rows[code].name}  [{rows[code].coverage}]"
            for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]
