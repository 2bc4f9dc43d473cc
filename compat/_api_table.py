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
    params:     the TF1 signature in order, "name" or "name=default", so that positional
                arguments can be named and missing ones rendered as their TF1 default.
    tf_data_when: ((conditions, template), ...): the first entry whose every
                (param, source text) condition holds replaces `tf_data`.
    """

    name: str
    code: str
    coverage: str
    shim_paths: tuple = ()
    impl: str = ""
    tf_data: str = ""
    notes: str = ""
    aliases: tuple = field(default_factory=tuple)
    params: tuple = ()
    tf_data_when: tuple = ()


_PRODUCERS = "compat._runtime.producers"
_BATCHING = "compat._runtime.batching"
_READERS = "compat._runtime.readers"
_QUEUES = "compat._runtime.queues"
_RUNNERS = "compat._runtime.queue_runner"
_COORD = "compat._runtime.coordinator"

# Module paths that TF1 code imported directly (bypassing the public API).
_INPUT = "tensorflow.python.training.input"
_DATA_FLOW = "tensorflow.python.ops.data_flow_ops"
_IO_OPS = "tensorflow.python.ops.io_ops"
_QR = "tensorflow.python.training.queue_runner"
_QR_IMPL = "tensorflow.python.training.queue_runner_impl"
_COORDINATOR = "tensorflow.python.training.coordinator"
_SLIM = "tensorflow.contrib.slim.python.slim"

_FINAL_BATCH = ("Final batch: TF1 drops a short final batch unless allow_smaller_final_batch=True; "
                "Dataset.batch keeps it unless drop_remainder=True.")
_BATCH_THREADS = ("Threads: num_threads > 1 makes TF1's order nondeterministic; in tf.data "
                  "parallelism belongs to map(num_parallel_calls=...), order stays deterministic "
                  "unless options.deterministic=False.")
_SHUFFLE_WINDOW = ("Shuffle window: TF1 samples from a queue holding between min_after_dequeue and "
                   "capacity elements and mixes across epoch boundaries, so the j-th output is one "
                   "of the first j + capacity inputs; shuffle(capacity) placed after repeat() keeps "
                   "that bound and mixes epochs (the shim does exactly this), before repeat() it "
                   "keeps epochs apart.")
_SEEDS = ("Seeds: TF1 derives the op seed from the graph seed; the same seeds give a different "
          "order in tf.data (the shim reproduces TF1's order bit-for-bit).")
_ENQUEUE_MANY = ("enqueue_many=True means the inputs are already batches: add .unbatch() "
                 "before batching.")
_JOIN = ("*_join: one reader per list entry, interleaved; TF1's interleaving is timing-dependent, "
         "interleave(cycle_length=len(list)) is deterministic.")
_PRODUCER_EPOCHS = ("Epochs: each epoch is a full permutation and epochs never mix; num_epochs "
                    "ends the input with OutOfRangeError (a local variable counts epochs, so "
                    "run local_variables_initializer); the tf.data form ends the iteration.")
_READER = ("Readers pull filenames from a queue and keep per-file state; in tf.data the reader "
           "is a dataset built per filename inside flat_map/interleave. The shim's readers "
           "give TF1's keys and values; num_records_produced and num_work_units_completed count "
           "as TF1's do (ahead of what was dequeued, by what was read ahead) and reset() zeroes "
           "them (unlike TF1's, it does not drop the file being read); serialize/restore_state raise NotImplementedError (the position lives in "
           "the tf.data pipeline, not the reader).")
_NO_THREADS = ("tf.data needs no Python threads: iterating the dataset (or get_next() in graph "
               "mode) drives the whole pipeline.")
_IMPLICIT_RUNNERS = ("Starts every QueueRunner in the QUEUE_RUNNERS collection by itself. With "
                     "compat.v1 the pipeline needs no runner threads, so this keeps working, but "
                     "the session wrapper itself is TF1-only (graph mode): verify with "
                     "compat-harness.")
_CONTRIB = ("tf.contrib was removed in TensorFlow 2.0: this import fails before any pipeline "
            "runs; compat.v1 does not bring it back.")

_BATCH_PARAMS = ("tensors", "batch_size", "num_threads=1", "capacity=32", "enqueue_many=False",
                 "shapes=None", "dynamic_pad=False", "allow_smaller_final_batch=False",
                 "shared_name=None", "name=None")
_SHUFFLE_BATCH_PARAMS = ("tensors", "batch_size", "capacity", "min_after_dequeue",
                         "num_threads=1", "seed=None", "enqueue_many=False", "shapes=None",
                         "allow_smaller_final_batch=False", "shared_name=None", "name=None")
_BATCH_JOIN_PARAMS = ("tensors_list", "batch_size", "capacity=32", "enqueue_many=False",
                      "shapes=None", "dynamic_pad=False", "allow_smaller_final_batch=False",
                      "shared_name=None", "name=None")
_SHUFFLE_BATCH_JOIN_PARAMS = ("tensors_list", "batch_size", "capacity", "min_after_dequeue",
                              "seed=None", "enqueue_many=False", "shapes=None",
                              "allow_smaller_final_batch=False", "shared_name=None", "name=None")

_BATCH_TF_DATA = "dataset.batch({batch_size}, drop_remainder={not_allow_smaller_final_batch})"
_PADDED_TF_DATA = ("dataset.padded_batch({batch_size}, "
                   "drop_remainder={not_allow_smaller_final_batch})")
_BATCH_WHEN = (
    ((("enqueue_many", "True"), ("dynamic_pad", "True")), "dataset.unbatch()." + _PADDED_TF_DATA[8:]),
    ((("enqueue_many", "True"),), "dataset.unbatch()." + _BATCH_TF_DATA[8:]),
    ((("dynamic_pad", "True"),), _PADDED_TF_DATA),
)
_SHUFFLE_BATCH_TF_DATA = ("dataset.shuffle({capacity}, seed={seed})"
                          ".batch({batch_size}, drop_remainder={not_allow_smaller_final_batch})")
_SHUFFLE_BATCH_WHEN = (
    ((("enqueue_many", "True"),), "dataset.unbatch()." + _SHUFFLE_BATCH_TF_DATA[8:]),
)
_JOIN_SOURCE = ("tf.data.Dataset.from_tensor_slices(filenames).interleave(read_and_decode, "
                "cycle_length=len({tensors_list}))")
_MAYBE_FILTER = ".filter(keep_fn)"  # keep_input is a graph tensor: it becomes a predicate

_PRODUCER_PARAMS_TAIL = ("num_epochs=None", "shuffle=True", "seed=None", "capacity=32",
                         "shared_name=None", "name=None")

ROWS: tuple = (
    # --- producers -------------------------------------------------------------------------
    ApiRow("train.string_input_producer", "TFQ101", COVERED,
           ("train.string_input_producer",), f"{_PRODUCERS}:string_input_producer",
           tf_data=("tf.data.Dataset.from_tensor_slices({string_tensor})"
                    ".shuffle(len({string_tensor}), seed={seed}).repeat({num_epochs})"),
           tf_data_when=(
               ((("shuffle", "False"),),
                "tf.data.Dataset.from_tensor_slices({string_tensor}).repeat({num_epochs})"),
           ),
           notes=_PRODUCER_EPOCHS + " " + _SEEDS + " capacity only bounds prefetching.",
           aliases=(f"{_INPUT}.string_input_producer",),
           params=("string_tensor",) + _PRODUCER_PARAMS_TAIL + ("cancel_op=None",)),
    ApiRow("train.slice_input_producer", "TFQ102", COVERED,
           ("train.slice_input_producer",), f"{_PRODUCERS}:slice_input_producer",
           tf_data=("tf.data.Dataset.from_tensor_slices(tuple({tensor_list}))"
                    ".shuffle(num_rows, seed={seed}).repeat({num_epochs})"),
           tf_data_when=(
               ((("shuffle", "False"),),
                "tf.data.Dataset.from_tensor_slices(tuple({tensor_list})).repeat({num_epochs})"),
           ),
           notes=(_PRODUCER_EPOCHS + " " + _SEEDS + " TF1 returns a list of tensors (one per "
                  "input), the dataset yields a tuple."),
           aliases=(f"{_INPUT}.slice_input_producer",),
           params=("tensor_list",) + _PRODUCER_PARAMS_TAIL),
    ApiRow("train.range_input_producer", "TFQ103", COVERED,
           ("train.range_input_producer",), f"{_PRODUCERS}:range_input_producer",
           tf_data=("tf.data.Dataset.range({limit}).shuffle({limit}, seed={seed})"
                    ".repeat({num_epochs})"),
           tf_data_when=(
               ((("shuffle", "False"),), "tf.data.Dataset.range({limit}).repeat({num_epochs})"),
           ),
           notes=_PRODUCER_EPOCHS + " " + _SEEDS + " TF1 yields int32, Dataset.range int64.",
           aliases=(f"{_INPUT}.range_input_producer",),
           params=("limit",) + _PRODUCER_PARAMS_TAIL),
    ApiRow("train.input_producer", "TFQ104", COVERED,
           ("train.input_producer",), f"{_PRODUCERS}:input_producer",
           tf_data=("tf.data.Dataset.from_tensor_slices({input_tensor})"
                    ".shuffle(num_rows, seed={seed}).repeat({num_epochs})"),
           tf_data_when=(
               ((("shuffle", "False"),),
                "tf.data.Dataset.from_tensor_slices({input_tensor}).repeat({num_epochs})"),
           ),
           notes=_PRODUCER_EPOCHS + " " + _SEEDS,
           aliases=(f"{_INPUT}.input_producer",),
           params=("input_tensor", "element_shape=None", "num_epochs=None", "shuffle=True",
                   "seed=None", "capacity=32", "shared_name=None", "summary_name=None",
                   "name=None", "cancel_op=None")),
    ApiRow("train.limit_epochs", "TFQ105", COVERED,
           ("train.limit_epochs",), f"{_PRODUCERS}:limit_epochs",
           tf_data="tf.data.Dataset.from_tensors({tensor}).repeat({num_epochs})",
           notes=("Epochs: TF1 counts evaluations in a local variable (run "
                  "local_variables_initializer) and raises OutOfRangeError after num_epochs; "
                  "num_epochs=None repeats forever."),
           aliases=(f"{_INPUT}.limit_epochs",),
           params=("tensor", "num_epochs=None", "name=None")),
    ApiRow("train.match_filenames_once", "TFQ106", COVERED,
           ("train.match_filenames_once", "io.match_filenames_once"),
           f"{_PRODUCERS}:match_filenames_once",
           tf_data="tf.data.Dataset.list_files({pattern}, shuffle=False)",
           notes=("TF1 globs once into a local variable (run local_variables_initializer); "
                  "list_files shuffles by default, pass shuffle=False to keep TF1's sorted order."),
           aliases=(f"{_INPUT}.match_filenames_once",),
           params=("pattern", "name=None")),
    # --- readers ---------------------------------------------------------------------------
    ApiRow("TFRecordReader", "TFQ111", COVERED, ("TFRecordReader",), f"{_READERS}:TFRecordReader",
           tf_data="filenames.flat_map(lambda f: tf.data.TFRecordDataset(f, compression_type=...))"
                   "  # from options={options}",
           tf_data_when=(
               ((("options", "None"),), "filenames.flat_map(tf.data.TFRecordDataset)"),
           ),
           notes=(_READER + " TFRecordReader's key (b'file:byte_offset') has no tf.data equivalent; "
                  "compression comes from TFRecordOptions, in tf.data from compression_type."),
           aliases=(f"{_IO_OPS}.TFRecordReader",),
           params=("name=None", "options=None")),
    ApiRow("TextLineReader", "TFQ112", COVERED, ("TextLineReader",), f"{_READERS}:TextLineReader",
           tf_data="filenames.flat_map(lambda f: tf.data.TextLineDataset(f).skip({skip_header_lines}))",
           tf_data_when=(
               ((("skip_header_lines", "None"),), "filenames.flat_map(tf.data.TextLineDataset)"),
           ),
           notes=(_READER + " skip_header_lines applies to every file: skip inside flat_map, "
                  "not once on the whole dataset."),
           aliases=(f"{_IO_OPS}.TextLineReader",),
           params=("skip_header_lines=None", "name=None")),
    ApiRow("FixedLengthRecordReader", "TFQ113", COVERED,
           ("FixedLengthRecordReader",), f"{_READERS}:FixedLengthRecordReader",
           tf_data=("filenames.flat_map(lambda f: tf.data.FixedLengthRecordDataset(f, "
                    "{record_bytes}, header_bytes={header_bytes}, footer_bytes={footer_bytes}))"),
           notes=(_READER + " hop_bytes (overlapping records) has no FixedLengthRecordDataset "
                  "argument: read with hop-sized records and window them."),
           aliases=(f"{_IO_OPS}.FixedLengthRecordReader",),
           params=("record_bytes", "header_bytes=None", "footer_bytes=None", "hop_bytes=None",
                   "name=None", "encoding=None")),
    ApiRow("WholeFileReader", "TFQ114", COVERED, ("WholeFileReader",), f"{_READERS}:WholeFileReader",
           tf_data="filenames.map(lambda f: (f, tf.io.read_file(f)))",
           notes=_READER + " The key is the filename, as in TF1.",
           aliases=(f"{_IO_OPS}.WholeFileReader",),
           params=("name=None",)),
    ApiRow("IdentityReader", "TFQ115", COVERED, ("IdentityReader",), f"{_READERS}:IdentityReader",
           tf_data="work_units.map(lambda w: (w, w))",
           notes=_READER + " IdentityReader returns each work unit as both key and value.",
           aliases=(f"{_IO_OPS}.IdentityReader",),
           params=("name=None",)),
    ApiRow("LMDBReader", "TFQ116", PARTIAL, ("LMDBReader",), f"{_READERS}:LMDBReader",
           tf_data="tf.data.Dataset.from_generator(read_lmdb_records, output_signature=...)",
           notes=(_READER + " Core tf.data has no LMDB dataset; the shim's support is partial, "
                  "a Python generator over the lmdb package is the portable rewrite."),
           aliases=(f"{_IO_OPS}.LMDBReader",),
           params=("name=None", "options=None")),
    ApiRow("ReaderBase", "TFQ117", COVERED, ("ReaderBase",), f"{_READERS}:ReaderBase",
           tf_data="a tf.data source dataset (tf.data.Dataset.from_generator or a *Dataset class)",
           notes="Custom readers subclass ReaderBase around a reader op; in tf.data a reader is "
                 "any source dataset.",
           aliases=(f"{_IO_OPS}.ReaderBase",),
           params=("reader_ref", "supports_serialize=False")),
    # --- batching --------------------------------------------------------------------------
    ApiRow("train.batch", "TFQ201", COVERED, ("train.batch",), f"{_BATCHING}:batch",
           tf_data=_BATCH_TF_DATA, tf_data_when=_BATCH_WHEN,
           notes=" ".join((_FINAL_BATCH, _BATCH_THREADS, _ENQUEUE_MANY,
                           "dynamic_pad=True pads to the batch maximum: padded_batch.")),
           aliases=(f"{_INPUT}.batch",), params=_BATCH_PARAMS),
    ApiRow("train.shuffle_batch", "TFQ202", COVERED, ("train.shuffle_batch",), f"{_BATCHING}:shuffle_batch",
           tf_data=_SHUFFLE_BATCH_TF_DATA, tf_data_when=_SHUFFLE_BATCH_WHEN,
           notes=" ".join((_SHUFFLE_WINDOW, _FINAL_BATCH, _SEEDS, _BATCH_THREADS,
                           "capacity <= min_after_dequeue is a ValueError in TF1.")),
           aliases=(f"{_INPUT}.shuffle_batch",), params=_SHUFFLE_BATCH_PARAMS),
    ApiRow("train.batch_join", "TFQ203", COVERED, ("train.batch_join",), f"{_BATCHING}:batch_join",
           tf_data=_JOIN_SOURCE + _BATCH_TF_DATA[7:],
           notes=" ".join((_JOIN, _FINAL_BATCH, _ENQUEUE_MANY)),
           aliases=(f"{_INPUT}.batch_join",), params=_BATCH_JOIN_PARAMS),
    ApiRow("train.shuffle_batch_join", "TFQ204", COVERED,
           ("train.shuffle_batch_join",), f"{_BATCHING}:shuffle_batch_join",
           tf_data=_JOIN_SOURCE + _SHUFFLE_BATCH_TF_DATA[7:],
           notes=" ".join((_JOIN, _SHUFFLE_WINDOW, _FINAL_BATCH, _SEEDS)),
           aliases=(f"{_INPUT}.shuffle_batch_join",), params=_SHUFFLE_BATCH_JOIN_PARAMS),
    ApiRow("train.maybe_batch", "TFQ205", COVERED, ("train.maybe_batch",), f"{_BATCHING}:maybe_batch",
           tf_data="dataset" + _MAYBE_FILTER + _BATCH_TF_DATA[7:] + "  # keep_input={keep_input}",
           notes=" ".join(("keep_input becomes a filter predicate; with enqueue_many a vector "
                           "keep_input filters rows (unbatch first).", _FINAL_BATCH)),
           aliases=(f"{_INPUT}.maybe_batch",),
           params=("tensors", "keep_input") + _BATCH_PARAMS[1:]),
    ApiRow("train.maybe_shuffle_batch", "TFQ206", COVERED,
           ("train.maybe_shuffle_batch",), f"{_BATCHING}:maybe_shuffle_batch",
           tf_data=("dataset" + _MAYBE_FILTER + _SHUFFLE_BATCH_TF_DATA[7:]
                    + "  # keep_input={keep_input}"),
           notes=" ".join(("keep_input becomes a filter predicate.", _SHUFFLE_WINDOW, _FINAL_BATCH)),
           aliases=(f"{_INPUT}.maybe_shuffle_batch",),
           params=_SHUFFLE_BATCH_PARAMS[:4] + ("keep_input",) + _SHUFFLE_BATCH_PARAMS[4:]),
    ApiRow("train.maybe_batch_join", "TFQ207", COVERED,
           ("train.maybe_batch_join",), f"{_BATCHING}:maybe_batch_join",
           tf_data=_JOIN_SOURCE + _MAYBE_FILTER + _BATCH_TF_DATA[7:] + "  # keep_input={keep_input}",
           notes=" ".join(("keep_input becomes a filter predicate.", _JOIN, _FINAL_BATCH)),
           aliases=(f"{_INPUT}.maybe_batch_join",),
           params=("tensors_list", "keep_input") + _BATCH_JOIN_PARAMS[1:]),
    ApiRow("train.maybe_shuffle_batch_join", "TFQ208", COVERED,
           ("train.maybe_shuffle_batch_join",), f"{_BATCHING}:maybe_shuffle_batch_join",
           tf_data=(_JOIN_SOURCE + _MAYBE_FILTER + _SHUFFLE_BATCH_TF_DATA[7:]
                    + "  # keep_input={keep_input}"),
           notes=" ".join(("keep_input becomes a filter predicate.", _JOIN, _SHUFFLE_WINDOW,
                           _FINAL_BATCH)),
           aliases=(f"{_INPUT}.maybe_shuffle_batch_join",),
           params=_SHUFFLE_BATCH_JOIN_PARAMS[:4] + ("keep_input",) + _SHUFFLE_BATCH_JOIN_PARAMS[4:]),
    # --- queues, runners, coordination -------------------------------------------------------
    ApiRow("FIFOQueue", "TFQ301", COVERED, ("FIFOQueue", "queue.FIFOQueue"), f"{_QUEUES}:FIFOQueue",
           tf_data=("enqueue -> a source dataset (from_tensor_slices / from_generator), "
                    "dequeue_many(n) -> .batch(n, drop_remainder=True), dequeue_up_to(n) -> "
                    ".batch(n), capacity={capacity} -> .prefetch({capacity})"),
           notes=("A queue fed by Python threads (feed_dict) becomes a bounded buffer in the shim; "
                  "the idiomatic rewrite is Dataset.from_generator. dequeue_many after close "
                  "with fewer than n elements raises OutOfRangeError in TF1 (batch(n) would "
                  "return the short tail unless drop_remainder=True). " + _NO_THREADS),
           aliases=(f"{_DATA_FLOW}.FIFOQueue",),
           params=("capacity", "dtypes", "shapes=None", "names=None", "shared_name=None",
                   "name='fifo_queue'")),
    ApiRow("RandomShuffleQueue", "TFQ302", COVERED,
           ("RandomShuffleQueue", "queue.RandomShuffleQueue", "io.RandomShuffleQueue"),
           f"{_QUEUES}:RandomShuffleQueue",
           tf_data="dataset.shuffle({min_after_dequeue}, seed={seed})  # capacity={capacity}",
           notes=_SHUFFLE_WINDOW + " " + _SEEDS,
           aliases=(f"{_DATA_FLOW}.RandomShuffleQueue",),
           params=("capacity", "min_after_dequeue", "dtypes", "shapes=None", "names=None",
                   "seed=None", "shared_name=None", "name='random_shuffle_queue'")),
    ApiRow("PaddingFIFOQueue", "TFQ303", COVERED,
           ("PaddingFIFOQueue", "queue.PaddingFIFOQueue", "io.PaddingFIFOQueue"),
           f"{_QUEUES}:PaddingFIFOQueue",
           tf_data="dataset.padded_batch(n, padded_shapes={shapes})",
           notes=("dequeue_many pads to the longest element of each batch, as padded_batch does; "
                  "dequeue_up_to keeps the short final batch (drop_remainder=False)."),
           aliases=(f"{_DATA_FLOW}.PaddingFIFOQueue",),
           params=("capacity", "dtypes", "shapes", "names=None", "shared_name=None",
                   "name='padding_fifo_queue'")),
    ApiRow("PriorityQueue", "TFQ304", COVERED,
           ("PriorityQueue", "queue.PriorityQueue", "io.PriorityQueue"), f"{_QUEUES}:PriorityQueue",
           tf_data="no direct tf.data equivalent: sort within a window, "
                   "dataset.batch(k).map(sort_by_priority).unbatch()",
           notes=("TF1 dequeues the smallest int64 priority among the queued elements, so the "
                  "order depends on how full the queue is; a windowed sort is bounded the same "
                  "way."),
           aliases=(f"{_DATA_FLOW}.PriorityQueue",),
           params=("capacity", "types", "shapes=None", "names=None", "shared_name=None",
                   "name='priority_queue'")),
    ApiRow("QueueBase", "TFQ305", COVERED,
           ("QueueBase", "queue.QueueBase", "io.QueueBase"), f"{_QUEUES}:QueueBase",
           tf_data="tf.data.Dataset (one dataset per queue stage)",
           notes="Subclasses of QueueBase wrap a queue resource; in tf.data every stage is a dataset.",
           aliases=(f"{_DATA_FLOW}.QueueBase",),
           params=("dtypes", "shapes", "names", "queue_ref")),
    ApiRow("QueueBase.from_list", "TFQ306", COVERED, (), "",
           tf_data="tf.data.Dataset.choose_from_datasets([...], index_dataset)  # index={index}",
           notes=("from_list selects one of a list of queues by a scalar index tensor evaluated on "
                  "every run; choose_from_datasets selects per element from an index dataset."),
           aliases=(f"{_DATA_FLOW}.QueueBase.from_list", "queue.QueueBase.from_list",
                    "io.QueueBase.from_list"),
           params=("index", "queues")),
    ApiRow("train.QueueRunner", "TFQ311", COVERED,
           ("train.QueueRunner", "train.queue_runner.QueueRunner"), f"{_RUNNERS}:QueueRunner",
           tf_data="nothing: dataset.map(..., num_parallel_calls=tf.data.AUTOTUNE) replaces "
                   "the enqueue threads",
           notes=("The last enqueue thread to see OutOfRangeError closes the queue; other "
                  "errors reach the Coordinator. Subclasses keep working under the shim. "
                  + _NO_THREADS),
           aliases=(f"{_QR}.QueueRunner", f"{_QR_IMPL}.QueueRunner"),
           params=("queue=None", "enqueue_ops=None", "close_op=None", "cancel_op=None",
                   "queue_closed_exception_types=None", "queue_runner_def=None",
                   "import_scope=None")),
    ApiRow("train.add_queue_runner", "TFQ312", COVERED,
           ("train.add_queue_runner", "train.queue_runner.add_queue_runner"),
           f"{_RUNNERS}:add_queue_runner",
           tf_data="nothing: a dataset needs no registration",
           notes="Runners in the QUEUE_RUNNERS collection are started by start_queue_runners, "
                 "Supervisor and MonitoredSession. " + _NO_THREADS,
           aliases=(f"{_QR}.add_queue_runner", f"{_QR_IMPL}.add_queue_runner"),
           params=("qr", "collection=tf.GraphKeys.QUEUE_RUNNERS")),
    ApiRow("train.start_queue_runners", "TFQ313", COVERED,
           ("train.start_queue_runners", "train.queue_runner.start_queue_runners"),
           f"{_RUNNERS}:start_queue_runners",
           tf_data="nothing: iterate the dataset (for batch in dataset: ...)",
           notes=("Returns the started threads (the shim may return an empty list when nothing "
                  "needs a thread). Forgetting it in TF1 hangs the first sess.run; with tf.data "
                  "there is nothing to start. " + _NO_THREADS),
           aliases=(f"{_QR}.start_queue_runners", f"{_QR_IMPL}.start_queue_runners"),
           params=("sess=None", "coord=None", "daemon=True", "start=True",
                   "collection=tf.GraphKeys.QUEUE_RUNNERS")),
    ApiRow("train.Coordinator", "TFQ321", COVERED, ("train.Coordinator",), f"{_COORD}:Coordinator",
           tf_data="nothing: the end of the dataset ends the loop (for batch in dataset: ...)",
           notes=("OutOfRangeError counts as a clean stop; coord.join re-raises errors reported "
                  "by the threads. Still useful for your own threads. " + _NO_THREADS),
           aliases=(f"{_COORDINATOR}.Coordinator",),
           params=("clean_stop_exception_types=None",)),
    ApiRow("train.LooperThread", "TFQ322", COVERED, ("train.LooperThread",), f"{_COORD}:LooperThread",
           tf_data="a threading.Thread (or a tf.keras callback) for the periodic work",
           notes="Not part of the input pipeline itself: it runs a function every "
                 "timer_interval_secs until the Coordinator stops.",
           aliases=(f"{_COORDINATOR}.LooperThread",),
           params=("coord", "timer_interval_secs", "target=None", "args=None", "kwargs=None")),
    # --- related TF1 idioms ----------------------------------------------------------------
    ApiRow("errors.OutOfRangeError", "TFQ401", COVERED, (), "",
           tf_data="for batch in dataset: ...  # the loop ends at the end of input",
           notes=("End of input: in graph mode the shim's get_next() still raises "
                  "OutOfRangeError, so `except OutOfRangeError` loops keep working; in eager "
                  "code iteration simply stops, and with num_epochs=None it never comes."),
           aliases=("tensorflow.python.framework.errors_impl.OutOfRangeError",
                    "tensorflow.python.framework.errors.OutOfRangeError")),
    ApiRow("train.Supervisor", "TFQ402", PARTIAL, (), "",
           tf_data="a plain loop over a tf.data.Dataset (Supervisor is deprecated: "
                   "tf.train.MonitoredTrainingSession or Keras fit)",
           notes=_IMPLICIT_RUNNERS + " managed_session() also starts the standard services.",
           aliases=("tensorflow.python.training.supervisor.Supervisor",),
           params=("graph=None",)),
    ApiRow("train.MonitoredTrainingSession", "TFQ403", PARTIAL, (), "",
           tf_data="iterate a tf.data.Dataset inside the session (no queue runners to start)",
           notes=_IMPLICIT_RUNNERS,
           aliases=("tensorflow.python.training.monitored_session.MonitoredTrainingSession",),
           params=("master=''", "is_chief=True", "checkpoint_dir=None")),
    ApiRow("train.MonitoredSession", "TFQ404", PARTIAL, (), "",
           tf_data="iterate a tf.data.Dataset inside the session (no queue runners to start)",
           notes=_IMPLICIT_RUNNERS,
           aliases=("tensorflow.python.training.monitored_session.MonitoredSession",),
           params=("session_creator=None", "hooks=None")),
    ApiRow("train.SingularMonitoredSession", "TFQ405", PARTIAL, (), "",
           tf_data="iterate a tf.data.Dataset inside the session (no queue runners to start)",
           notes=_IMPLICIT_RUNNERS,
           aliases=("tensorflow.python.training.monitored_session.SingularMonitoredSession",),
           params=("hooks=None",)),
    ApiRow("contrib.slim.queues", "TFQ411", NOT_COVERED, (), "",
           tf_data="remove the `with slim.queues.QueueRunners(sess):` block and iterate the dataset",
           notes=_CONTRIB + " QueueRunners(sess) starts and joins the collection's runners.",
           aliases=(f"{_SLIM}.queues",)),
    ApiRow("contrib.slim.prefetch_queue.prefetch_queue", "TFQ412", NOT_COVERED, (), "",
           tf_data="dataset.prefetch({capacity})",
           notes=_CONTRIB + " prefetch_queue re-queues already batched tensors; "
                            "Dataset.prefetch does the same without threads.",
           aliases=(f"{_SLIM}.data.prefetch_queue.prefetch_queue",
                    "contrib.slim.python.slim.data.prefetch_queue.prefetch_queue"),
           params=("tensors", "capacity=8", "num_threads=1", "dynamic_pad=False",
                   "shared_name=None", "name=None")),
    ApiRow("contrib.training.bucket_by_sequence_length", "TFQ413", NOT_COVERED, (), "",
           tf_data=("dataset.bucket_by_sequence_length(element_length_func, "
                    "{bucket_boundaries}, bucket_batch_sizes, pad_to_bucket_boundary=False)"),
           notes=_CONTRIB + " " + _FINAL_BATCH,
           aliases=("tensorflow.contrib.training.python.training.bucket_ops."
                    "bucket_by_sequence_length",),
           params=("input_length", "tensors", "batch_size", "bucket_boundaries",
                   "num_threads=1", "capacity=32", "bucket_capacities=None", "shapes=None",
                   "dynamic_pad=False", "allow_smaller_final_batch=False", "keep_input=True",
                   "shared_name=None", "name=None")),
    ApiRow("contrib.training.batch_sequences_with_states", "TFQ414", NOT_COVERED, (), "",
           tf_data="no tf.data equivalent: split sequences with dataset.window / batch and "
                   "keep the state in a stateful RNN",
           notes=_CONTRIB + " Truncated-BPTT state saving must move into the model.",
           aliases=("tensorflow.contrib.training.python.training.sequence_queueing_state_saver."
                    "batch_sequences_with_states",)),
    ApiRow("contrib.training.stratified_sample", "TFQ415", NOT_COVERED, (), "",
           tf_data=("dataset.rejection_resample(class_func, target_dist={target_probs}, "
                    "initial_dist={init_probs}).map(lambda _, x: x).batch({batch_size})"),
           notes=_CONTRIB,
           aliases=("tensorflow.contrib.training.python.training.sampling_ops.stratified_sample",),
           params=("tensors", "labels", "target_probs", "batch_size", "init_probs=None",
                   "enqueue_many=False", "queue_capacity=16", "threads_per_queue=1",
                   "name=None")),
    ApiRow("contrib.training.rejection_sample", "TFQ416", NOT_COVERED, (), "",
           tf_data=("dataset.filter(lambda *x: tf.random.uniform([]) < {accept_prob_fn}(*x))"
                    ".batch({batch_size})"),
           notes=_CONTRIB,
           aliases=("tensorflow.contrib.training.python.training.sampling_ops.rejection_sample",),
           params=("tensors", "accept_prob_fn", "batch_size", "queue_threads=1",
                   "enqueue_many=False", "prebatch_capacity=16", "prebatch_threads=1",
                   "runtime_checks=False", "name=None")),
    ApiRow("contrib.slim.dataset_data_provider.DatasetDataProvider", "TFQ417", NOT_COVERED, (), "",
           tf_data=("tf.data.Dataset.list_files(pattern).interleave(tf.data.TFRecordDataset, "
                    "cycle_length={num_readers}).shuffle(...).repeat({num_epochs})"
                    ".map(decode)"),
           notes=_CONTRIB + " The provider hides parallel_read + a RandomShuffleQueue "
                            "(common_queue_min/common_queue_capacity).",
           aliases=(f"{_SLIM}.data.dataset_data_provider.DatasetDataProvider",
                    "contrib.slim.python.slim.data.dataset_data_provider.DatasetDataProvider"),
           params=("dataset", "num_readers=1", "reader_kwargs=None", "shuffle=True",
                   "num_epochs=None", "common_queue_capacity=256", "common_queue_min=128",
                   "record_key='record_key'", "seed=None", "scope=None")),
    ApiRow("contrib.slim.parallel_reader.parallel_read", "TFQ418", NOT_COVERED, (), "",
           tf_data=("tf.data.Dataset.from_tensor_slices({data_sources})"
                    ".interleave(reader_dataset, cycle_length={num_readers})"
                    ".shuffle({min_after_dequeue}, seed={seed}).repeat({num_epochs})"),
           notes=_CONTRIB + " " + _SHUFFLE_WINDOW,
           aliases=(f"{_SLIM}.data.parallel_reader.parallel_read",
                    "contrib.slim.python.slim.data.parallel_reader.parallel_read"),
           params=("data_sources", "reader_class", "num_epochs=None", "num_readers=4",
                   "reader_kwargs=None", "shuffle=True", "dtypes=None", "capacity=256",
                   "min_after_dequeue=128", "seed=None", "scope=None")),
    ApiRow("train.SyncReplicasOptimizer", "TFQ421", NOT_PIPELINE, (), "",
           tf_data="",
           notes=("Not an input pipeline; keep as is. The chief queue runner "
                  "(get_chief_queue_runner) synchronises gradient tokens between replicas; "
                  "compat.v1 passes it through to TensorFlow unchanged."),
           aliases=("tensorflow.python.training.sync_replicas_optimizer.SyncReplicasOptimizer",),
           params=("opt", "replicas_to_aggregate", "total_num_replicas=None")),
)


def rows_by_name() -> dict:
    return {row.name: row for row in ROWS}


def rows_by_code() -> dict:
    return {row.code: row for row in ROWS}


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
