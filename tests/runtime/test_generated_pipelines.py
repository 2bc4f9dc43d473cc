"""The shim against TF1 on generated pipelines: producers, readers, file kinds and every
batching function with its flags, drawn by `compat.harness.strategies`, compared at the
strongest level TF1 guarantees for each (harness mode "auto": exact when TF1 is
deterministic, else epochs + window (+ stats))."""
import pytest
from hypothesis import given

from compat import harness
from compat.harness.strategies import build_pipeline, pipeline_configs

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(900)]


@pytest.fixture(scope="session")
def data_dirs(tmp_path_factory):
    return lambda: tmp_path_factory.mktemp("generated")


@given(config=pipeline_configs())
def test_generated_pipeline_shim_matches_tf1(config, data_dirs):
    report = harness.compare(build_pipeline(config, data_dirs()), mode="auto", max_batches=200)
    assert not report.legacy.error, report.explain()
    assert report.equivalent, f"{config}\n{report.explain()}"
