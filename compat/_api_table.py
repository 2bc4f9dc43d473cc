"""The one mapping table: every legacy TF1 input-pipeline API, as plain data.

Read by three consumers, never duplicated:
- the runtime (`compat.v1` builds its overrides from the `shim_paths`/`impl` columns),
- the checker (`compat-check` rule codes, coverage, tf.data rewrite templates, notes),
- the migration guide and the coverage tests.

This module must stay importable without TensorFlow.
"""
from __future__ import annotations

from dataclasses import dataclass, field

COVERED = "covered"
PARTIAL = "partial"
NOT_COVERED = "not covered"
NOT_PIPELINE = "not an input pipeline"


@dataclass(frozen=True)
class ApiRow:
    """One legacy API.

    name:       canonical path under `tf.compat.v1` (e.g. "train.shuffle_batch").
    code:       stable checker rule code (TFQ1xx producers/readers, TFQ2xx batching,
                TFQ3xx queues/runners/coordination, TFQ4xx idioms).
    coverage:   COVERED / PARTIAL / NOT_COVERED / NOT_PIPELINE.
    shim_paths: every path under `compat.v1` where the shim replaces the TF name
                (the canonical one first); empty when the shim does not replace it.
    impl:       "module:attribute" of the shim implementation, or "" if none.
    tf_data:    idiomatic tf.data rewrite, a str.format template over the call's
                arguments (missing arguments render as their TF1 defaults).
    notes:      semantic differences a migrating user must know.
    aliases:    other spellings of the same API outside `tf.compat.v1`
                (module paths such as "tensorflow.python.training.input.batch").
    """

    name: str
    code: str
    coverage: str
    shim_paths: tuple = ()
    impl: str = ""
    tf_data: str = ""
    notes: str = ""
    aliases: tuple = field(default_factory=tuple)


_PRODUCERS = "compat._runtime.producers"
_BATCHING = "compat._runtime.batching"
_READERS = "compat._runtime.readers"
_QUEUES = "compat._runtime.queues"
_RUNNERS = "compat._runtime.queue_runner"
_COORD = "compat._runtime.coordinator"

ROWS: tuple = (
    # --- producers -------------------------------------------------------------------------
    ApiRow("train.string_input_producer", "TFQ101", COVERED,
           ("train.string_input_producer",), f"{_PRODUCERS}:string_input_producer"),
    ApiRow("train.slice_input_producer", "TFQ102", COVERED,
           ("train.slice_input_producer",), f"{_PRODUCERS}:slice_input_producer"),
    ApiRow("train.range_input_producer", "TFQ103", COVERED,
           ("train.range_input_producer",), f"{_PRODUCERS}:range_input_producer"),
    ApiRow("train.input_producer", "TFQ104", COVERED,
           ("train.input_producer",), f"{_PRODUCERS}:input_producer"),
    ApiRow("train.limit_epochs", "TFQ105", COVERED,
           ("train.limit_epochs",), f"{_PRODUCERS}:limit_epochs"),
    ApiRow("train.match_filenames_once", "TFQ106", COVERED,
           ("train.match_filenames_once", "io.match_filenames_once"),
           f"{_PRODUCERS}:match_filenames_once"),
    # --- readers ---------------------------------------------------------------------------
    ApiRow("TFRecordReader", "TFQ111", COVERED, ("TFRecordReader",), f"{_READERS}:TFRecordReader"),
    ApiRow("TextLineReader", "TFQ112", COVERED, ("TextLineReader",), f"{_READERS}:TextLineReader"),
    ApiRow("FixedLengthRecordReader", "TFQ113", COVERED,
           ("FixedLengthRecordReader",), f"{_READERS}:FixedLengthRecordReader"),
    ApiRow("WholeFileReader", "TFQ114", COVERED, ("WholeFileReader",), f"{_READERS}:WholeFileReader"),
    ApiRow("IdentityReader", "TFQ115", COVERED, ("IdentityReader",), f"{_READERS}:IdentityReader"),
    ApiRow("LMDBReader", "TFQ116", PARTIAL, ("LMDBReader",), f"{_READERS}:LMDBReader"),
    ApiRow("ReaderBase", "TFQ117", COVERED, ("ReaderBase",), f"{_READERS}:ReaderBase"),
    # --- batching --------------------------------------------------------------------------
    ApiRow("train.batch", "TFQ201", COVERED, ("train.batch",), f"{_BATCHING}:batch"),
    ApiRow("train.shuffle_batch", "TFQ202", COVERED, ("train.shuffle_batch",), f"{_BATCHING}:shuffle_batch"),
    ApiRow("train.batch_join", "TFQ203", COVERED, ("train.batch_join",), f"{_BATCHING}:batch_join"),
    ApiRow("train.shuffle_batch_join", "TFQ204", COVERED,
           ("train.shuffle_batch_join",), f"{_BATCHING}:shuffle_batch_join"),
    ApiRow("train.maybe_batch", "TFQ205", COVERED, ("train.maybe_batch",), f"{_BATCHING}:maybe_batch"),
    ApiRow("train.maybe_shuffle_batch", "TFQ206", COVERED,
           ("train.maybe_shuffle_batch",), f"{_BATCHING}:maybe_shuffle_batch"),
    ApiRow("train.maybe_batch_join", "TFQ207", COVERED,
           ("train.maybe_batch_join",), f"{_BATCHING}:maybe_batch_join"),
    ApiRow("train.maybe_shuffle_batch_join", "TFQ208", COVERED,
           ("train.maybe_shuffle_batch_join",), f"{_BATCHING}:maybe_shuffle_batch_join"),
    # --- queues, runners, coordination -------------------------------------------------------
    ApiRow("FIFOQueue", "TFQ301", COVERED, ("FIFOQueue", "queue.FIFOQueue"), f"{_QUEUES}:FIFOQueue"),
    ApiRow("RandomShuffleQueue", "TFQ302", COVERED,
           ("RandomShuffleQueue", "queue.RandomShuffleQueue", "io.RandomShuffleQueue"),
           f"{_QUEUES}:RandomShuffleQueue"),
    ApiRow("PaddingFIFOQueue", "TFQ303", COVERED,
           ("PaddingFIFOQueue", "queue.PaddingFIFOQueue", "io.PaddingFIFOQueue"),
           f"{_QUEUES}:PaddingFIFOQueue"),
    ApiRow("PriorityQueue", "TFQ304", COVERED,
           ("PriorityQueue", "queue.PriorityQueue", "io.PriorityQueue"), f"{_QUEUES}:PriorityQueue"),
    ApiRow("QueueBase", "TFQ305", COVERED,
           ("QueueBase", "queue.QueueBase", "io.QueueBase"), f"{_QUEUES}:QueueBase"),
    ApiRow("train.QueueRunner", "TFQ311", COVERED,
           ("train.QueueRunner", "train.queue_runner.QueueRunner"), f"{_RUNNERS}:QueueRunner"),
    ApiRow("train.add_queue_runner", "TFQ312", COVERED,
           ("train.add_queue_runner", "train.queue_runner.add_queue_runner"),
           f"{_RUNNERS}:add_queue_runner"),
    ApiRow("train.start_queue_runners", "TFQ313", COVERED,
           ("train.start_queue_runners", "train.queue_runner.start_queue_runners"),
           f"{_RUNNERS}:start_queue_runners"),
    ApiRow("train.Coordinator", "TFQ321", COVERED, ("train.Coordinator",), f"{_COORD}:Coordinator"),
    ApiRow("train.LooperThread", "TFQ322", COVERED, ("train.LooperThread",), f"{_COORD}:LooperThread"),
)


def rows_by_name() -> dict:
    return {row.name: row for row in ROWS}


def shim_overrides() -> dict:
    """{"module.path.under.compat.v1": {"Name": "impl.module:attr"}}, for the runtime proxy."""
    overrides: dict = {}
    for row in ROWS:
        if not row.impl:
            continue
        for path in row.shim_paths:
            module, _, attr = path.rpartition(".")
            overrides.setdefault(module, {})[attr] = row.impl
    return overrides
