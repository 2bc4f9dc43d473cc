"""SARIF 2.1.0 for code-scanning tools: one run, the table as the rule set."""
from __future__ import annotations

import json
import os
from urllib.parse import quote

from compat import __version__
from compat import _api_table as table
from compat._check import render as wording
from compat._check.model import COVERAGE_BLOCKS
from compat._check.rules import all_codes, tf2_blockers
from compat._check.summary import fails, is_migration_site, is_special_skip, printable_data

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {table.COVERED: "warning", table.PARTIAL: "warning", table.NOT_COVERED: "error",
           table.NOT_PIPELINE: "note", COVERAGE_BLOCKS: "error"}


def _rule(row) -> dict:
    return {
        "id": row.code,
        "name": row.name.replace(".", "_"),
        "shortDescription": {"text": f"tf.{row.name}: {row.coverage}"},
        "fullDescription": {"text": row.notes or f"tf.{row.name}"},
        "help": {"text": f"tf.data: {wording.tf_data(row) or '(none: keep as is)'}\n{row.notes}".strip()},
        "defaultConfiguration": {"level": _LEVELS[row.coverage]},
        "properties": {"coverage": row.coverage, "api": f"tf.{row.name}",
                       "tags": ["tensorflow", "migration"]},
    }


def _blocker_rule(code: str, name: str, text: str) -> dict:
    return {"id": code, "name": name, "shortDescription": {"text": text},
            "fullDescription": {"text": text + ": each finding says what to use instead"},
            "defaultConfiguration": {"level": _LEVELS[COVERAGE_BLOCKS]},
            "properties": {"coverage": COVERAGE_BLOCKS, "tags": ["tensorflow", "migration"]}}


def _uri(path: str) -> str:
    """Percent-encoded bytes of the path: right for file names that are not UTF-8 too."""
    try:
        raw = os.fsencode(path)
    except UnicodeError:
        raw = path.encode("utf-8", "backslashreplace")
    return quote(raw, safe="/:")


def _level(finding, fail_on: str) -> str:
    """The coverage's level for a site --fail-on fails on; a note for one it lets pass (a
    site already on the shim is progress, not an error, under the default)."""
    if is_migration_site(finding) and not fails(finding, fail_on):
        return "note"
    return _LEVELS[finding.coverage]


def _result(finding, rule_index, fail_on) -> dict:
    region = {"startLine": finding.line, "startColumn": finding.col,
              "endLine": max(finding.end_line, finding.line),
              "endColumn": max(finding.end_col, 1)}
    location = {"physicalLocation": {"artifactLocation": {"uri": _uri(finding.path),
                                                          "uriBaseId": "%SRCROOT%"},
                                     "region": region}}
    if finding.cell is not None:
        # SARIF has no notion of notebook cells: lines are relative to the named cell
        location["logicalLocations"] = [{"name": f"cell_{finding.cell}", "kind": "module"}]
    text = finding.message
    if finding.tf_data:
        text += f"\ntf.data: {finding.tf_data}"
    result = {
        "ruleId": finding.code,
        "ruleIndex": rule_index[finding.code],
        "level": _level(finding, fail_on),
        "message": {"text": text},
        "locations": [location],
        "properties": {"coverage": finding.coverage, "api": finding.api,
                       "tfData": finding.tf_data, "scan": finding.scan,
                       "stage": finding.stage},
    }
    if finding.cell is not None:
        result["properties"]["cell"] = finding.cell
    return result


def render(reports, summary, show_notes=False, statistics=False) -> str:
    codes = all_codes()
    rows = [row for row in table.ROWS if row.code in codes]
    rules = [_rule(row) for row in rows] + [_blocker_rule(*entry)
                                            for entry in tf2_blockers.DESCRIPTIONS]
    rule_index = {rule["id"]: index for index, rule in enumerate(rules)}
    notifications = []
    for report in reports:
        if not (report.problem or report.error):
            continue
        if report.error:  # could not be read: an error, exit status 2
            text = f"{report.path}: {report.error}"
        elif is_special_skip(report):
            text = f"{report.path}: {report.problem}"
        else:
            text = f"{report.problem}; scanned by tokens"
        notifications.append({
            "level": "error" if report.error else "warning",
            "message": {"text": text},
            "locations": [{"physicalLocation": {"artifactLocation": {
                "uri": _uri(report.path), "uriBaseId": "%SRCROOT%"}}}],
        })
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "compat-check",
                "version": __version__,
                "rules": rules,
            }},
            "invocations": [{
                "executionSuccessful": not summary.errors,
                "properties": {"failOn": summary.fail_on,
                               "stages": {"legacy": summary.legacy, "shim": summary.shim,
                                          "bridged": summary.bridged,
                                          "tf.data files": summary.tf_data_files}},
                "toolExecutionNotifications": notifications,
            }],
            "columnKind": "unicodeCodePoints",
            "results": [_result(f, rule_index, summary.fail_on)
                        for report in reports for f in report.findings],
        }],
    }
    return json.dumps(printable_data(log), indent=2, ensure_ascii=False) + "\n"
