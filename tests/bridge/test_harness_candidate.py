"""The harness takes a `compat.to_dataset` pipeline as its candidate (API and CLI)."""
import os
import subprocess
import sys

import pytest

import bridge_pipelines as pipelines
from compat import harness

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(300)]


@pytest.fixture
def paths(tmp_path):
    return pipelines.write_records(tmp_path, files=2, per_file=24)


def test_a_deterministic_pipeline_through_to_dataset_is_equivalent(paths):
    report = harness.compare(lambda tf: pipelines.ordered_batches(tf, paths, num_epochs=2),
                             candidate="to_dataset", max_batches=None)
    assert report.equivalent, report.explain()
    assert "to_dataset" in report.candidate.origin
    assert report.candidate.batches == 2 * 48 // 8


def test_a_to_dataset_candidate_that_loses_records_is_not_equivalent(paths):
    """The same candidate path must be able to fail: the to_dataset side reads one file less."""
    import compat

    def build(tf):
        return pipelines.ordered_batches(tf, paths, num_epochs=1)

    def fewer_files():
        return compat.to_dataset(pipelines.ordered_batches, paths[:1], num_epochs=1)

    report = harness.compare(build, candidate=fewer_files, max_batches=None)
    assert not report.equivalent


def test_the_cli_takes_to_dataset_as_candidate(tmp_path, paths):
    module = tmp_path / "legacy_input.py"
    module.write_text(
        "import bridge_pipelines\n"
        f"PATHS = {paths!r}\n"
        "def build(tf):\n"
        "    return bridge_pipelines.ordered_batches(tf, PATHS)\n")
    search_path = os.pathsep.join([os.path.dirname(pipelines.__file__),
                                   os.environ.get("PYTHONPATH", "")])
    result = subprocess.run(
        [sys.executable, "-m", "compat.harness", f"{module}:build", "--candidate", "to_dataset",
         "--max-batches", "0"],
        capture_output=True, text=True, timeout=240,
        env={**os.environ, "PYTHONPATH": search_path})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "EQUIVALENT" in result.stdout
