"""The mapping table as data: invariants, the generated guide, and (with TF) the shim."""
import importlib
import os
import re

import pytest

from check_helpers import ROOT
from compat import _api_table as table
from compat._check import apis, guide, render

CODE = re.compile(r"^TFQ[1-4]\d\d$")


def test_codes_are_unique_and_stable_shape():
    codes = [row.code for row in table.ROWS]
    assert len(codes) == len(set(codes))
    assert all(CODE.match(code) for code in codes)
    assert len({row.name for row in table.ROWS}) == len(table.ROWS)


def test_rows_are_complete():
    for row in table.ROWS:
        assert row.coverage in (table.COVERED, table.PARTIAL, table.NOT_COVERED, table.NOT_PIPELINE)
        assert row.notes, row.name
        assert row.tf_data or row.coverage == table.NOT_PIPELINE, row.name
        if row.shim_paths:
            assert row.shim_paths[0] == row.name
            assert row.impl.startswith("compat._runtime.")
        for spec in row.params:
            assert re.match(r"^[a-z_]+(=.+)?$", spec), (row.name, spec)


def test_templates_only_use_declared_parameters():
    for row in table.ROWS:
        params = {spec.partition("=")[0] for spec in row.params}
        params |= {"not_" + p for p in params}
        templates = [row.tf_data] + [template for _, template in row.tf_data_when]
        for template in templates:
            used = set(re.findall(r"{(\w+)}", template))
            assert used <= params, (row.name, used - params)
        for conditions, _ in row.tf_data_when:
            assert {param for param, _ in conditions} <= params
        assert "{" not in render.tf_data(row), row.name


def test_every_spelling_resolves_to_its_row():
    for row in table.ROWS:
        for spelling in (row.name, *row.shim_paths):
            assert apis.row_for("tensorflow." + spelling) is row
            assert apis.row_for("tensorflow.compat.v1." + spelling) is row
            assert apis.row_for("compat.v1." + spelling) is row
        for alias in row.aliases:
            full = alias if alias.startswith("tensorflow.") else "tensorflow." + alias
            assert apis.row_for(full) is row, alias


def test_issue_list_is_in_the_table():
    names = set(table.rows_by_name())
    required = {
        "FIFOQueue", "RandomShuffleQueue", "PaddingFIFOQueue", "PriorityQueue", "QueueBase",
        "QueueBase.from_list", "train.QueueRunner", "train.add_queue_runner",
        "train.start_queue_runners", "train.Coordinator", "train.LooperThread",
        "train.string_input_producer", "train.slice_input_producer", "train.range_input_producer",
        "train.input_producer", "train.limit_epochs", "train.match_filenames_once",
        "train.batch", "train.shuffle_batch", "train.batch_join", "train.shuffle_batch_join",
        "train.maybe_batch", "train.maybe_shuffle_batch", "train.maybe_batch_join",
        "train.maybe_shuffle_batch_join", "TFRecordReader", "TextLineReader",
        "FixedLengthRecordReader", "WholeFileReader", "IdentityReader", "LMDBReader",
        "ReaderBase", "errors.OutOfRangeError", "train.Supervisor",
        "train.MonitoredTrainingSession", "contrib.slim.queues",
        "contrib.slim.prefetch_queue.prefetch_queue", "train.SyncReplicasOptimizer",
    }
    assert required <= names
    assert table.rows_by_name()["train.SyncReplicasOptimizer"].coverage == table.NOT_PIPELINE


def test_shim_overrides_shape_is_unchanged():
    overrides = table.shim_overrides()
    assert overrides["train"]["shuffle_batch"] == "compat._runtime.batching:shuffle_batch"
    assert overrides["train.queue_runner"]["QueueRunner"] == \
        "compat._runtime.queue_runner:QueueRunner"
    assert overrides[""]["FIFOQueue"] == "compat._runtime.queues:FIFOQueue"
    assert all(attr and "." not in attr for module in overrides.values() for attr in module)


def test_committed_guide_table_is_up_to_date():
    path = os.path.join(ROOT, "migration_guide", "api_table.md")
    with open(path, encoding="utf-8") as handle:
        committed = handle.read()
    assert committed == guide.generate(), (
        "regenerate: python -m compat._check.guide > migration_guide/api_table.md")


def test_guide_lists_every_code():
    text = guide.generate()
    assert all(f"| {row.code} |" in text for row in table.ROWS)


@pytest.mark.needs_tf
def test_covered_rows_exist_in_compat_v1():
    """Every API the table calls covered is reachable under compat.v1 (the runtime's side).

    The runtime is written concurrently with the checker; this fails until it has landed.
    """
    shim = importlib.import_module("compat.v1")
    missing = []
    for row in table.ROWS:
        if row.coverage != table.COVERED:
            continue
        for path in row.shim_paths or (row.name,):
            target = shim
            try:
                for part in path.split("."):
                    target = getattr(target, part)
            except Exception as exc:  # report every missing path, not just the first
                missing.append(f"{row.code} compat.v1.{path}: {type(exc).__name__}: {exc}")
    assert missing == []
