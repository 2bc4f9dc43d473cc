"""Golden tests for text, json and sarif on the fixture tree; SARIF against the 2.1.0 schema.

Regenerate the golden files after an intended change with
    COMPAT_UPDATE_GOLDEN=1 pytest tests/check/test_check_formats.py
"""
import json
import os

import jsonschema
import pytest

from check_helpers import HERE, run_cli
from compat import __version__

GOLDEN = os.path.join(HERE, "golden")
SCHEMA_PATH = os.path.join(HERE, "data", "sarif-schema-2.1.0.json")


def _output(fmt: str) -> str:
    result = run_cli("--format", fmt, "--statistics", "--notes", "fixtures", cwd=HERE)
    assert result.returncode == 1, result.stderr
    return result.stdout.replace(f'"{__version__}"', '"<version>"')


@pytest.mark.parametrize("fmt,suffix", [("text", "txt"), ("json", "json"), ("sarif", "sarif")])
def test_golden(fmt, suffix):
    path = os.path.join(GOLDEN, f"fixtures.{suffix}")
    actual = _output(fmt)
    if os.environ.get("COMPAT_UPDATE_GOLDEN"):
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(actual)
    with open(path, encoding="utf-8") as handle:
        assert actual == handle.read()


@pytest.fixture(scope="module")
def sarif_validator():
    with open(SCHEMA_PATH, encoding="utf-8") as handle:
        schema = json.load(handle)
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())


def test_sarif_is_valid_against_the_2_1_0_schema(sarif_validator):
    log = json.loads(_output("sarif"))
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in sarif_validator.iter_errors(log)]
    assert errors == []
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    assert any("scanned by tokens" in n["message"]["text"]
               for n in run["invocations"][0]["toolExecutionNotifications"])


def test_sarif_for_a_clean_run_is_valid(sarif_validator, tmp_path):
    (tmp_path / "clean.py").write_text("x = 1\n")
    result = run_cli("--format", "sarif", str(tmp_path))
    assert result.returncode == 0
    log = json.loads(result.stdout)
    assert list(sarif_validator.iter_errors(log)) == []
    assert log["runs"][0]["results"] == []


def test_the_schema_rejects_invalid_sarif(sarif_validator):
    """The shipped schema is a real check, not a rubber stamp."""
    good = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [
        {"ruleId": "A1", "level": "warning", "message": {"text": "m"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a.py"},
                                             "region": {"startLine": 3, "startColumn": 1}}}]}]}]}
    assert list(sarif_validator.iter_errors(good)) == []
    bad_cases = [
        {"runs": []},                                             # no version
        {**good, "version": "2.0.0"},
        {"version": "2.1.0", "runs": [{"results": []}]},          # run without tool
        {"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]},  # driver without name
    ]
    result = good["runs"][0]["results"][0]
    for change in ({"level": "fatal"}, {"message": {}}, {"unknownProperty": 1},
                   {"locations": [{"physicalLocation": {"region": {"startLine": 0}}}]}):
        bad_cases.append({"version": "2.1.0", "runs": [
            {"tool": {"driver": {"name": "x"}}, "results": [{**result, **change}]}]})
    for bad in bad_cases:
        assert list(sarif_validator.iter_errors(bad)), bad


def test_json_document_shape():
    document = json.loads(_output("json"))
    assert set(document) == {"tool", "findings", "files", "summary", "statistics"}
    finding = document["findings"][0]
    assert {"path", "line", "col", "code", "api", "coverage", "message", "tf_data", "notes",
            "scan", "cell", "location"} <= set(finding)
    scans = {f["path"]: f["scan"] for f in document["files"]}
    assert scans["fixtures/py2_train.py"] == "tokens"
