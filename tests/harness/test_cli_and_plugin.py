"""The command line (in process and ``python -m``) and the pytest plugin (in a subprocess)."""
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from compat.harness.__main__ import main

pytestmark = pytest.mark.needs_tf

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
EXAMPLE = str(HERE / "harness_pipelines.py")


def _env():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def test_cli_equivalent_exits_0(capsys, tf_v1):
    assert main([f"{EXAMPLE}:build_counting", "--candidate", "legacy"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("EQUIVALENT") and "[exact] ok" in out


def test_cli_broken_candidate_exits_1_and_writes_json(capsys, tmp_path, tf_v1):
    jsonschema = pytest.importorskip("jsonschema")
    json_path = tmp_path / "report.json"
    code = main([f"{EXAMPLE}:build_counting", "--candidate", f"{EXAMPLE}:dropped_element",
                 "--json", "--json-out", str(json_path)])
    assert code == 1
    printed = json.loads(capsys.readouterr().out)
    from compat import harness
    jsonschema.validate(printed, harness.REPORT_JSON_SCHEMA)
    assert printed == json.loads(json_path.read_text())
    assert printed["equivalent"] is False


def test_cli_record_then_replay(capsys, tmp_path, tf_v1):
    golden = tmp_path / "g.npz"
    assert main([f"{EXAMPLE}:build_counting", "--record", str(golden)]) == 0
    assert main([f"{EXAMPLE}:build_counting", "--replay", str(golden),
                 "--candidate", "legacy"]) == 0
    assert main([f"{EXAMPLE}:build_drop_remainder", "--replay", str(golden),
                 "--candidate", "legacy"]) == 2  # golden of another pipeline: refused
    assert "does not match" in capsys.readouterr().err


def test_cli_usage_errors_exit_2(capsys):
    assert main(["no_such_module_xyz:build"]) == 2
    assert main([f"{EXAMPLE}:no_such_function"]) == 2
    assert main([f"{EXAMPLE}:build_counting", "--mode", "bogus", "--candidate", "legacy"]) == 2


def test_python_dash_m_prints_report(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "compat.harness", f"{EXAMPLE}:build_shuffled", "--candidate",
         "legacy", "--max-batches", "20", "--plot", str(tmp_path / "p.png")],
        capture_output=True, text=True, env=_env(), cwd=str(tmp_path), timeout=300)
    assert "EQUIVALENT" in out.stdout and "levels epochs, window" in out.stdout
    if importlib.util.find_spec("matplotlib") is None:  # --plot is then a usage error
        assert out.returncode == 2 and "needs matplotlib" in out.stderr, out.stderr
    else:
        assert out.returncode == 0, out.stdout + out.stderr
        assert (tmp_path / "p.png").exists()


PLUGIN_TESTS = textwrap.dedent("""
    import sys
    sys.path.insert(0, {here!r})
    import pytest
    import tensorflow.compat.v1 as tf
    import harness_pipelines as p

    @pytest.mark.compat_equivalent(p.build_counting, candidate=tf)
    def test_marker_pass(compat_report):
        assert compat_report.levels == ("exact",)

    @pytest.mark.compat_equivalent(p.build_counting, candidate=p.dropped_element)
    def test_marker_fail():
        pass

    def test_fixture_pass(compat_harness):
        report = compat_harness.assert_equivalent(p.build_shuffled, candidate=tf)
        assert report.legacy.batches == 4  # --compat-max-batches

    def test_fixture_fail(compat_harness):
        compat_harness.assert_equivalent(p.build_counting, candidate=p.swapped_batches)
""")


def _plugin_installed() -> bool:
    """True when the package is installed, so pytest loads the plugin by its entry point."""
    from importlib.metadata import entry_points
    return any(ep.name == "compat_harness" for ep in entry_points(group="pytest11"))


def test_pytest_plugin_is_declared_as_entry_point():
    setup_cfg = (REPO / "setup.cfg").read_text()
    assert "compat_harness = compat.harness.pytest_plugin" in setup_cfg


def test_pytest_plugin_marker_and_fixture(tmp_path):
    (tmp_path / "test_uses_plugin.py").write_text(PLUGIN_TESTS.format(here=str(HERE)))
    load = [] if _plugin_installed() else ["-p", "compat.harness.pytest_plugin"]
    out = subprocess.run(
        [sys.executable, "-m", "pytest", *load, "-q",
         "-p", "no:cacheprovider", "--compat-max-batches", "4", "-rA",
         str(tmp_path / "test_uses_plugin.py")],
        capture_output=True, text=True, env=_env(), cwd=str(tmp_path), timeout=300)
    text = out.stdout + out.stderr
    assert "2 failed, 2 passed" in text, text
    assert "PASSED test_uses_plugin.py::test_marker_pass" in text
    assert "FAILED test_uses_plugin.py::test_marker_fail" in text
    assert "NOT EQUIVALENT" in text and "first difference in batch" in text
