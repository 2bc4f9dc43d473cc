"""Counting a run: what the summary line, --statistics and the JSON summary say."""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass

from compat import _api_table as table
from compat._check import stages
from compat._check.model import (COVERAGE_BLOCKS, SCAN_SKIPPED, SCAN_TOKENS, STAGE_BRIDGED, STAGE_LEGACY,
                                 STAGE_SHIM, STAGES)

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
    legacy: int = 0            # sites per stage (see compat/_check/stages.py)
    shim: int = 0
    bridged: int = 0
    tf_data_files: int = 0     # files on plain tf.data with no queue API left
    fail_on: str = "legacy"
    failing: int = 0           # findings in a stage --fail-on fails on: they make exit 1
    not_pipeline_kinds: tuple = ()  # what the not_pipeline sites are, for the summary line
    blockers: int = 0          # tf.contrib / tf.layers uses: stop the program on TF 2.x

    @property
    def has_findings(self) -> bool:
        return self.failing > 0


def is_migration_site(finding) -> bool:
    """A queue API site to migrate (not SyncReplicasOptimizer's, not a TF 2.x blocker)."""
    return finding.coverage not in (table.NOT_PIPELINE, COVERAGE_BLOCKS)


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


def _uses_tf_data(report) -> bool:
    return any(path == "data" or path.startswith("data.") for path in report.references)


def fails(finding, fail_on: str) -> bool:
    """Whether this finding makes the run exit 1 under --fail-on."""
    return finding.stage in stages.failing_stages(fail_on)


def _not_pipeline_kinds(reports) -> tuple:
    codes = {f.code for r in reports for f in r.findings if not is_migration_site(f)}
    kinds = []
    if any(code.startswith("TFQ421") for code in codes):
        kinds.append("SyncReplicasOptimizer")
    if any(code.startswith("TFQ30") for code in codes):
        kinds.append("queues holding model state")
    return tuple(kinds)


def summarize(reports, fail_on: str = "legacy") -> Summary:
    coverage = Counter()
    staged = Counter()
    files_with_sites = 0
    manual = []
    for report in reports:
        sites = [f for f in report.findings if is_migration_site(f)]
        files_with_sites += bool(sites)
        staged.update(f.stage for f in sites)
        for finding in report.findings:
            coverage[finding.coverage] += 1
            if finding.coverage in (table.PARTIAL, table.NOT_COVERED):
                manual.append(f"{finding.code} at {finding.location.rsplit(':', 1)[0]}")
    checked = [r for r in reports if not r.error and not is_special_skip(r)]
    return Summary(
        files_checked=len(checked), files_with_sites=files_with_sites,
        sites=sum(n for c, n in coverage.items() if c not in (table.NOT_PIPELINE,
                                                               COVERAGE_BLOCKS)),
        covered=coverage[table.COVERED], partial=coverage[table.PARTIAL],
        not_covered=coverage[table.NOT_COVERED], not_pipeline=coverage[table.NOT_PIPELINE],
        manual_locations=tuple(manual),
        token_scanned=tuple((r.path, r.problem) for r in reports if r.scan == SCAN_TOKENS),
        errors=tuple((r.path, r.error) for r in reports if r.error),
        skipped=tuple((r.path, r.problem) for r in reports if is_special_skip(r)),
        legacy=staged[STAGE_LEGACY], shim=staged[STAGE_SHIM], bridged=staged[STAGE_BRIDGED],
        tf_data_files=sum(1 for r in reports if not r.findings and _uses_tf_data(r)),
        fail_on=fail_on, not_pipeline_kinds=_not_pipeline_kinds(reports),
        blockers=coverage[COVERAGE_BLOCKS],
        failing=coverage[COVERAGE_BLOCKS] + sum(  # a blocker fails whatever --fail-on says
            1 for r in reports for f in r.findings if is_migration_site(f) and fails(f, fail_on)))


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _stage_line(summary: Summary) -> str:
    parts = [f"{summary.legacy} legacy (TF1 queues)", f"{summary.shim} on the shim (compat.v1)",
             f"{summary.bridged} bridged by compat.to_dataset"]
    text = "by stage: " + ", ".join(parts)
    if summary.tf_data_files:
        text += f"; {_plural(summary.tf_data_files, 'file')} on plain tf.data"
    return text


def _fail_line(summary: Summary) -> str:
    chosen = stages.failing_stages(summary.fail_on)
    failing = " or ".join(stage for stage in STAGES if stage in chosen)
    staged = summary.failing - summary.blockers
    if not summary.failing:
        return f"--fail-on {summary.fail_on}: no {failing} site, nothing fails the run"
    parts = []
    if staged:
        parts.append(f"{_plural(staged, 'site')} at stage {failing}")
    if summary.blockers:
        parts.append(f"{_plural(summary.blockers, 'TF 2.x blocker')} (any --fail-on)")
    verb = "fails" if summary.failing == 1 else "fail"
    return f"--fail-on {summary.fail_on}: {' and '.join(parts)} {verb} the run"


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
        text = (f"{_plural(summary.sites, 'queue API site')} in "
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
    if summary.sites or summary.tf_data_files:
        lines.append(_stage_line(summary))
    if summary.blockers:
        lines.append(f"{_plural(summary.blockers, 'use')} of tf.contrib or tf.layers "
                     f"(TFQ901, TFQ902) {'stops' if summary.blockers == 1 else 'stop'} the "
                     "program on TF 2.x whatever compat does: "
                     "the shim's coverage alone does not make these files run")
    if summary.sites or summary.blockers:
        lines.append(_fail_line(summary))
    if summary.not_pipeline:
        lines.append(f"{_plural(summary.not_pipeline, 'site')} not an input pipeline "
                     f"({', '.join(summary.not_pipeline_kinds)}): keep as is")
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
    names = {code: (row.name, row.coverage) for code, row in rows.items()}
    names.update((f.code, (f.api[len("tf."):], f.coverage))  # codes outside the table
                 for report in reports for f in report.findings if f.code not in rows)
    return [f"{count:5d}  {code}  {names[code][0]}  [{names[code][1]}]"
            for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]
