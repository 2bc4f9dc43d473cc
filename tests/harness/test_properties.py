"""Generated pipelines (``compat.harness.strategies``): legacy-vs-legacy always passes, and a
stream with one element corrupted is always flagged. Example counts follow the hypothesis
profile (tests/conftest.py: ci 10, dev 3, long 200)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from compat import harness
from compat.harness.strategies import (BATCHERS, PipelineConfig, build_pipeline,
                                       pipeline_configs, write_files)

pytestmark = pytest.mark.needs_tf


@pytest.fixture(scope="session")
def data_dirs(tmp_path_factory):
    """A fresh directory per generated pipeline (session-scoped: usable under @given)."""
    return lambda: tmp_path_factory.mktemp("pipeline")


@given(config=pipeline_configs())
def test_generated_pipeline_legacy_vs_legacy_is_equivalent(config, tf_v1, data_dirs):
    report = harness.compare(build_pipeline(config, data_dirs()), candidate=tf_v1,
                             max_batches=200)
    assert not report.legacy.error, report.explain()
    assert report.equivalent, f"{config}\n{report.explain()}"


@given(config=pipeline_configs(), cut=st.integers(1, 4))
def test_generated_pipeline_cut_at_max_batches_is_equivalent(config, cut, tf_v1, data_dirs):
    report = harness.compare(build_pipeline(config, data_dirs()), candidate=tf_v1,
                             max_batches=cut)
    assert report.equivalent, f"{config}\n{report.explain()}"


@given(config=pipeline_configs(batcher=st.sampled_from(["batch", "shuffle_batch"])),
       data=st.data())
def test_one_corrupted_element_is_always_flagged(config, data, tf_v1, data_dirs):
    from compat._harness.runner import run_side
    build = build_pipeline(config, data_dirs())
    legacy = run_side(build, tf_v1, max_batches=None)
    elements = legacy.stream.elements()
    if len(elements) < 2:
        return
    victim = data.draw(st.integers(0, len(elements) - 1), label="victim")
    candidate = _corrupt(legacy.stream, elements[victim])
    report = harness.compare(build, candidate=candidate, legacy=legacy, mode="auto")
    assert not report.equivalent, f"{config}\n{report.explain()}"


def _corrupt(stream, element):
    """Replace one element's 'value' component by a value no pipeline produces."""
    batches = list(stream.batches)
    batch = dict(batches[element.batch])
    value = np.array(batch["value"], copy=True)
    target = value[element.row] if stream.batched else value
    if value.dtype == object:
        replacement = b"corrupted"
    else:
        replacement = np.asarray(target).dtype.type(-12345)
    if stream.batched:
        value[element.row] = replacement
    else:
        value = np.asarray(replacement, dtype=value.dtype)
    batch["value"] = value
    batches[element.batch] = batch
    return stream.with_options(batches=tuple(batches), origin="corrupted")


def test_strategies_cover_every_producer_reader_and_batcher():
    seen = set()

    @given(config=pipeline_configs())
    def collect(config):
        seen.add(("producer", config.producer))
        seen.add(("batcher", config.batcher))
        if config.producer == "string":
            seen.add(("file", config.file_kind))

    from hypothesis import settings
    settings(max_examples=300, derandomize=True, database=None)(collect)()
    assert {b for k, b in seen if k == "batcher"} == set(BATCHERS)
    assert {p for k, p in seen if k == "producer"} == {"string", "range", "slice", "input"}
    assert {f for k, f in seen if k == "file"} == {"tfrecord", "tfrecord_gzip", "text",
                                                   "fixed_length"}


def test_pinned_fields_and_invalid_combinations_are_avoided():
    @given(config=pipeline_configs(batcher="shuffle_batch", num_threads=2, producer="range"))
    def check(config):
        assert config.batcher == "shuffle_batch" and config.num_threads == 2
        assert config.capacity > config.min_after_dequeue
        assert not config.dynamic_pad

    check()
    with pytest.raises(ValueError, match="min_after_dequeue"):
        PipelineConfig(batcher="shuffle_batch", capacity=4, min_after_dequeue=4).validate()


def test_written_files_are_readable_by_tf1_readers(tmp_path, tf_v1):
    """All four file kinds, read back by the real TF1 readers with headers/footers skipped."""
    for kind in ("tfrecord", "tfrecord_gzip", "text", "fixed_length"):
        config = PipelineConfig(producer="string", file_kind=kind, records_per_file=(3, 0, 2),
                                header_lines=2, header_bytes=3, footer_bytes=1,
                                batch_size=1, allow_smaller_final_batch=True)
        report = harness.compare(build_pipeline(config, tmp_path / kind), candidate=tf_v1)
        assert report.equivalent, report.explain()
        values = sorted(v.rstrip(b".")  # fixed-length records are padded with dots
                        for batch in report.streams["legacy"].batches for v in batch["value"])
        assert values == [b"f00r000", b"f00r001", b"f00r002", b"f02r000", b"f02r001"], kind
        assert write_files(config, tmp_path / f"{kind}-again")
