"""Hypothesis strategies for legacy TF1 input-pipeline configurations.

Typical property test (this is what the project's semantic suite is made of)::

    from hypothesis import given
    from compat import harness
    from compat.harness.strategies import pipeline_configs, build_pipeline

    @given(config=pipeline_configs())
    def test_shim_matches_tf1(config, tmp_path_factory):
        build = build_pipeline(config, tmp_path_factory.mktemp("data"))
        report = harness.compare(build, max_batches=200)
        assert report.equivalent, report.explain()

What is drawn (``PipelineConfig``; see its docstring for every field):

- producer kind: ``string_input_producer`` over files read by a reader, or in-memory
  ``range_input_producer`` / ``slice_input_producer`` / ``input_producer``
- reader and file kind: ``TFRecordReader`` on plain or GZIP TFRecord files, ``TextLineReader``
  on text files with header lines (``skip_header_lines``), ``FixedLengthRecordReader`` with
  header/footer bytes; 1-3 files of 0-12 records (at least one record in total)
- ``read``/``dequeue`` one at a time, or ``read_up_to(n)``/``dequeue_up_to(n)`` with
  ``enqueue_many=True``
- producer ``num_epochs`` (1-3, always set so the run ends), ``shuffle`` with or without seed,
  capacity
- batching function: ``batch``, ``shuffle_batch``, ``maybe_batch``, ``maybe_shuffle_batch``,
  ``batch_join``, ``shuffle_batch_join``; ``batch_size``, ``capacity``, ``min_after_dequeue``
  (always below capacity), ``num_threads`` (1-3) or ``join_readers`` (2-3),
  ``allow_smaller_final_batch``, ``dynamic_pad`` (non-shuffling batchers, with a
  variable-length component), ``keep_input`` as "index % k != 0", seeds
- graph seed (None or an int)

Every element is unique within an epoch, so multiset and window checks are meaningful.
Keyword arguments of ``pipeline_configs`` pin fields to a value or to a strategy, e.g.
``pipeline_configs(batcher="shuffle_batch", producer=st.sampled_from(["range", "string"]))``.

``build_pipeline(config, data_dir)`` writes the input files and returns ``build(tf)``.
Sizes are small on purpose: a draw runs in well under a second per side.

Importing this module needs hypothesis, not TensorFlow.
"""
from __future__ import annotations

from hypothesis import strategies as st

from compat._harness.pipelines import (BATCHERS, FILE_KINDS, PRODUCERS, PipelineConfig,
                                       build_pipeline, config_from_json, write_files)

__all__ = ["pipeline_configs", "file_layouts", "batching_options", "seeds", "build_pipeline",
           "PipelineConfig", "config_from_json", "write_files", "PRODUCERS", "FILE_KINDS",
           "BATCHERS"]


def seeds() -> st.SearchStrategy:
    """None (unseeded, TF1's default) or a small positive seed."""
    return st.one_of(st.none(), st.integers(1, 2**16))


def _pinned(value):
    return value if isinstance(value, st.SearchStrategy) else st.just(value)


@st.composite
def file_layouts(draw, file_kind=None):
    """Reader input: (file_kind, records_per_file, header_lines, header_bytes, footer_bytes)."""
    kind = draw(_pinned(file_kind) if file_kind is not None else st.sampled_from(FILE_KINDS))
    counts = draw(st.lists(st.integers(0, 12), min_size=1, max_size=3)
                  .filter(lambda c: sum(c) > 0))
    header_lines = draw(st.integers(0, 2)) if kind == "text" else 0
    header_bytes = draw(st.integers(0, 5)) if kind == "fixed_length" else 0
    footer_bytes = draw(st.integers(0, 5)) if kind == "fixed_length" else 0
    return kind, tuple(counts), header_lines, header_bytes, footer_bytes


@st.composite
def batching_options(draw, batcher=None):
    """Batching function and its flags, always a combination TF1 accepts."""
    batcher = draw(_pinned(batcher) if batcher is not None else st.sampled_from(BATCHERS))
    shuffles = "shuffle" in batcher
    batch_size = draw(st.integers(1, 6))
    min_after_dequeue = draw(st.integers(0, 8)) if shuffles else 0
    capacity = draw(st.integers(min_after_dequeue + 1, min_after_dequeue + batch_size + 12))
    joins = batcher.endswith("_join")
    return dict(
        batcher=batcher, batch_size=batch_size, capacity=capacity,
        min_after_dequeue=min_after_dequeue,
        num_threads=1 if joins else draw(st.sampled_from([1, 1, 2, 3])),
        join_readers=draw(st.integers(2, 3)) if joins else 1,
        allow_smaller_final_batch=draw(st.booleans()),
        dynamic_pad=False if shuffles else draw(st.booleans()),
        batch_seed=draw(seeds()) if shuffles else None,
        keep_modulo=draw(st.sampled_from([0, 2, 3])) if batcher.startswith("maybe") else 0)


@st.composite
def pipeline_configs(draw, **pinned):
    """A valid ``PipelineConfig``; keyword arguments pin fields (value or strategy)."""
    def pick(name, strategy):
        return draw(_pinned(pinned[name])) if name in pinned else draw(strategy)

    producer = pick("producer", st.sampled_from(PRODUCERS))
    if producer == "string":
        kind, counts, header_lines, header_bytes, footer_bytes = draw(
            file_layouts(pinned.get("file_kind")))
    else:
        kind, counts, header_lines, header_bytes, footer_bytes = (
            "tfrecord", (draw(st.integers(1, 20)),), 0, 0, 0)
    options = draw(batching_options(pinned.get("batcher")))
    for name in ("batch_size", "capacity", "min_after_dequeue", "num_threads", "join_readers",
                 "allow_smaller_final_batch", "dynamic_pad", "batch_seed", "keep_modulo"):
        if name in pinned:
            options[name] = draw(_pinned(pinned[name]))
    read_up_to = pick("read_up_to", st.sampled_from([0, 0, 2, 3]))
    if options["dynamic_pad"]:
        read_up_to = 0  # not generated together (TF1 needs explicit shapes for it)
    shuffle_producer = pick("shuffle_producer", st.booleans())
    config = PipelineConfig(
        producer=producer, file_kind=kind, records_per_file=counts, header_lines=header_lines,
        header_bytes=header_bytes, footer_bytes=footer_bytes, read_up_to=read_up_to,
        shuffle_producer=shuffle_producer,
        producer_seed=pick("producer_seed", seeds()) if shuffle_producer else None,
        num_epochs=pick("num_epochs", st.integers(1, 3)),
        producer_capacity=pick("producer_capacity", st.sampled_from([32, 4, 1])),
        graph_seed=pick("graph_seed", seeds()),
        **options)
    try:
        return config.validate()
    except ValueError:
        from hypothesis import assume
        assume(False)  # a pinned combination TF1 rejects: draw again
