"""record/replay of golden streams: roundtrip, use as the legacy side, refusal on mismatch."""
import json
import zipfile

import numpy as np
import pytest

from compat import harness

pytestmark = pytest.mark.needs_tf


@pytest.fixture
def golden_path(tmp_path):
    return tmp_path / "golden.npz"


def test_roundtrip_keeps_every_leaf_bit_for_bit(pipelines, golden_path):
    recorded = harness.record(pipelines.build_sparse, golden_path, config={"rows": 6})
    replayed = harness.replay(golden_path, build=pipelines.build_sparse, config={"rows": 6})
    result = harness.exact(recorded.stream, replayed.stream)
    assert result.passed, result.explain()
    first = replayed.stream.batches[0]
    assert isinstance(first[0], harness.SparseValue)
    assert first[1]["pair"][0].tolist() == [b"0", b"1", b"2", b"3"]
    assert replayed.stream.batched and replayed.stream.ended == "out_of_range"


def test_file_is_compressed_npz_with_json_metadata_and_no_pickle(pipelines, golden_path):
    harness.record(pipelines.build_counting, golden_path, graph_seed=3, config={"k": 1})
    with zipfile.ZipFile(golden_path) as archive:
        assert all(info.compress_type == zipfile.ZIP_DEFLATED for info in archive.infolist())
    with np.load(golden_path, allow_pickle=False) as data:
        meta = json.loads(bytes(data["__metadata__"]).decode())
    import tensorflow as tf
    assert meta["tf_version"] == tf.__version__
    assert meta["graph_seed"] == 3 and meta["config"] == {"k": 1}
    assert meta["build"]["qualname"] == "build_counting"
    assert meta["facts"]["batched"] is True


def test_replayed_golden_is_the_legacy_side_of_compare(pipelines, tf_v1, golden_path):
    harness.record(pipelines.build_counting, golden_path, max_batches=1000)
    golden = harness.replay(golden_path, build=pipelines.build_counting)
    report = harness.compare(pipelines.build_counting, candidate=tf_v1, legacy=golden)
    assert report.equivalent, report.explain()
    assert report.levels == ("exact",)  # auto mode works from the recorded graph facts
    assert any("golden" in note for note in report.notes)
    broken = harness.compare(pipelines.build_counting, candidate=pipelines.dropped_element,
                             legacy=golden)
    assert not broken.equivalent


def test_refuses_golden_of_another_build(pipelines, golden_path):
    harness.record(pipelines.build_counting, golden_path)
    with pytest.raises(harness.GoldenMismatchError, match="qualname"):
        harness.replay(golden_path, build=pipelines.build_drop_remainder)


def test_refuses_mismatched_seed_config_max_batches_and_tf_version(pipelines, golden_path):
    harness.record(pipelines.build_counting, golden_path, graph_seed=1, max_batches=3,
                   config={"epochs": 2})
    with pytest.raises(harness.GoldenMismatchError, match="graph_seed"):
        harness.replay(golden_path, graph_seed=2)
    with pytest.raises(harness.GoldenMismatchError, match="config"):
        harness.replay(golden_path, config={"epochs": 3})
    with pytest.raises(harness.GoldenMismatchError, match="max_batches"):
        harness.replay(golden_path, max_batches=4)
    with pytest.raises(harness.GoldenMismatchError, match="tf_version"):
        harness.replay(golden_path, tf_version="1.15")
    golden = harness.replay(golden_path, graph_seed=1, max_batches=3, config={"epochs": 2})
    with pytest.raises(harness.GoldenMismatchError, match="max_batches"):
        harness.compare(pipelines.build_counting, legacy=golden, graph_seed=1, max_batches=5)


def test_refuses_to_record_a_failing_run(pipelines, golden_path):
    with pytest.raises(RuntimeError, match="ValueError"):
        harness.record(pipelines.build_bad_capacity, golden_path)
    assert not golden_path.exists()
