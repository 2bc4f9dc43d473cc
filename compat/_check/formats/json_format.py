"""A JSON document: every finding, every file that was not parsed normally, the summary.

Always valid UTF-8: the bytes of a file name that is not UTF-8 are shown as \\xNN.
"""
from __future__ import annotations

import dataclasses
import json

from compat import __version__
from compat._check.model import SCAN_AST
from compat._check.summary import printable_data, statistics_lines


def _finding(finding) -> dict:
    record = dataclasses.asdict(finding)
    record["location"] = finding.location
    return record


def render(reports, summary, show_notes=False, statistics=False) -> str:
    document = {
        "tool": {"name": "compat-check", "version": __version__},
        "findings": [_finding(f) for report in reports for f in report.findings],
        "files": [
            {"path": r.path, "scan": r.scan, "problem": r.problem, "error": r.error,
             "findings": len(r.findings),
             "migratable": [{"function": f, "line": n} for f, n in r.migratable]}
            for r in reports if r.findings or r.scan != SCAN_AST or r.error or r.problem],
        "summary": dataclasses.asdict(summary),
    }
    if not summary.skipped:  # only there when a FIFO, device or socket was skipped
        del document["summary"]["skipped"]
    counts = document["summary"]
    counts["stages"] = {"legacy": counts.pop("legacy"), "shim": counts.pop("shim"),
                        "bridged": counts.pop("bridged"),
                        "tf.data": counts.pop("tf_data_files")}  # tf.data: files, not sites
    if statistics:
        document["statistics"] = statistics_lines(reports)
    return json.dumps(printable_data(document), indent=2, ensure_ascii=False) + "\n"
