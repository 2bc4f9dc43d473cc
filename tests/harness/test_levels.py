"""The comparison levels on their own, on plain numpy streams (no TensorFlow needed)."""
import numpy as np
import pytest

from compat import harness
from compat._harness.golden import load_stream, save_stream


def batches(rows, size, **extra):
    """Batches of {"index": ..., "label": ...} dicts cut from a flat list of indices."""
    out = []
    for k in range(0, len(rows), size):
        chunk = np.array(rows[k:k + size], dtype=np.int64)
        out.append({"index": chunk, "label": (chunk * 7 % 10).astype(np.int32), **extra})
    return out


def test_exact_passes_identical_and_locates_first_difference():
    legacy = batches(list(range(10)), 4)
    assert harness.exact(legacy, batches(list(range(10)), 4)).passed
    changed = batches(list(range(10)), 4)
    changed[1]["label"] = changed[1]["label"].copy()
    changed[1]["label"][2] = 99
    result = harness.exact(legacy, changed)
    assert not result.passed
    first = result.findings[0]
    assert (first.kind, first.batch, first.path) == ("value", 1, "['label']")
    assert "1 of 4 value(s) differ; first at index (2,)" in first.message


def test_exact_reports_dtype_shape_structure_and_count():
    legacy = [np.arange(3, dtype=np.int32)]
    assert harness.exact(legacy, [np.arange(3, dtype=np.int64)]).findings[0].kind == "dtype"
    assert harness.exact(legacy, [np.arange(4, dtype=np.int32)]).findings[0].kind == "shape"
    assert harness.exact(legacy, [(np.arange(3, dtype=np.int32),)]).findings[0].kind == \
        "structure"
    doubled = harness.exact(legacy, legacy * 2)
    assert [f.kind for f in doubled.findings] == ["batch_count", "elements"]
    assert doubled.metrics["extra_elements"] == 3


def test_exact_float_bits_and_tolerance():
    a = [np.array([0.1, np.nan], np.float32)]
    b = [np.array([np.nextafter(np.float32(0.1), np.float32(1)), np.nan], np.float32)]
    assert harness.exact(a, a).passed  # NaN equals NaN bit for bit
    assert not harness.exact(a, b).passed
    assert harness.exact(a, b, rtol=1e-6).passed


def test_epochs_detects_period_of_shuffled_epochs():
    rng = np.random.default_rng(0)
    rows = [int(x) for _ in range(3) for x in rng.permutation(10)]
    stream = harness.as_stream(batches(rows, 4))
    assert harness.detect_epoch_size(stream) == 10
    other = [int(x) for _ in range(3) for x in rng.permutation(10)]
    assert harness.epochs(stream, batches(other, 4), epoch_size=10).passed
    # moving one element across an epoch boundary keeps the run's multiset, not the epochs'
    moved = list(other)
    moved[9], moved[10] = moved[10], moved[9]
    moved_result = harness.epochs(stream, batches(moved, 4), epoch_size=10)
    if moved[9] != moved[10]:
        assert not moved_result.passed
    assert harness.epochs(stream, batches(moved, 4)).passed  # per run


def test_epochs_unbatched_streams_and_duplicates():
    legacy = harness.as_stream([np.int64(i) for i in range(5)], batched=False)
    dup = harness.as_stream([np.int64(i) for i in (0, 1, 1, 3, 4)], batched=False)
    result = harness.epochs(legacy, dup)
    assert {f.kind for f in result.findings} == {"missing", "duplicated"}


def test_window_with_source_index_flags_elements_from_too_far_ahead():
    order = list(range(20))
    ok = order[2:5] + order[0:2] + order[5:]
    assert harness.window(batches(ok, 5), capacity=3, source_index="['index']").passed
    far = [10] + [i for i in order if i != 10]
    result = harness.window(batches(far, 5), capacity=3, source_index="['index']")
    assert not result.passed
    assert "came from input #10" in result.findings[0].message


def test_window_with_source_stream_matches_repeats_greedily():
    source = batches(list(range(5)) * 2, 5)  # two epochs of the same elements
    output = batches([1, 0, 2, 3, 4, 0, 1, 2, 3, 4], 5)
    assert harness.window(output, 2, source=source).passed
    extra = batches([1, 0, 2, 3, 4, 0, 1, 2, 3, 3], 5)  # 3 three times: one too many
    assert "extra" in {f.kind for f in harness.window(extra, 2, source=source).findings}


def test_window_skipped_without_input_order():
    result = harness.window(batches([0, 1], 2), 5)
    assert result.skipped and not result.passed  # checked nothing, so never a pass


def test_ks_two_sample():
    rng = np.random.default_rng(1)
    d, p = harness.ks_two_sample(rng.normal(size=500), rng.normal(size=500))
    assert d < 0.12 and p > 0.001
    d, p = harness.ks_two_sample(rng.normal(size=500), rng.normal(1.0, size=500))
    assert d > 0.3 and p < 1e-10


def _shuffled(rng, n, buffer):
    """Output order of a shuffle buffer of ``buffer`` elements over inputs 0..n-1."""
    pending, out, it = [], [], iter(range(n))
    for x in it:
        pending.append(x)
        if len(pending) >= buffer:
            out.append(pending.pop(rng.integers(len(pending))))
    while pending:
        out.append(pending.pop(rng.integers(len(pending))))
    return out


def test_stats_flags_weaker_shuffle_only_in_direction_less():
    rng = np.random.default_rng(2)
    legacy = batches(_shuffled(rng, 600, 50), 10)
    same = batches(_shuffled(rng, 600, 50), 10)
    weak = batches(_shuffled(rng, 600, 3), 10)
    strong = batches(_shuffled(rng, 600, 300), 10)
    kwargs = dict(source_index="['index']")
    assert harness.stats(legacy, same, **kwargs).passed
    assert not harness.stats(legacy, weak, **kwargs).passed
    assert not harness.stats(legacy, strong, **kwargs).passed
    assert harness.stats(legacy, strong, direction="less", **kwargs).passed
    assert not harness.stats(legacy, weak, direction="less", **kwargs).passed
    with pytest.raises(ValueError):
        harness.stats(legacy, same, direction="up", **kwargs)


def test_tf1_minimum_reference_never_flags_bigger_buffers():
    rng = np.random.default_rng(3)
    reference = harness.tf1_minimum_displacements(600, 20, 600)
    assert len(reference) == 5 * 600
    kwargs = dict(source_index="['index']", reference=reference, direction="less")
    for buffer in (21, 40, 120):  # TF1 queues between min_after_dequeue+1 and capacity
        run = batches(_shuffled(rng, 600, buffer), 10)
        assert harness.stats(run, run, **kwargs).passed
    flagged = harness.stats(run, batches(_shuffled(rng, 600, 2), 10), **kwargs)
    assert not flagged.passed and "shuffles less" in flagged.findings[0].message


def test_stream_file_roundtrip_without_tensorflow(tmp_path):
    original = harness.as_stream([
        {"s": np.array([b"", b"a\x00b", "é".encode()], dtype=object),
         "f": np.array([[1.5], [np.nan], [-0.0]], np.float32),
         "sp": harness.SparseValue(np.array([[0, 1], [2, 0]], np.int64),
                                   np.array([3, 4], np.int32), np.array([3, 2], np.int64))},
    ])
    save_stream(tmp_path / "s.npz", original, {"format_version": 1})
    loaded, meta = load_stream(tmp_path / "s.npz")
    assert meta == {"format_version": 1}
    assert harness.exact(original, loaded).passed
    assert loaded.batches[0]["s"].tolist() == [b"", b"a\x00b", "é".encode()]
