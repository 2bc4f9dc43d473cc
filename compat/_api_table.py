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
# A tf_data_when condition value: the argument is not a Python literal (an expression whose
# value only the running program knows, e.g. shuffle=is_training).
EXPR = "<expr>"


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
                arguments (missing arguments render as their TF1 defaults): one line of
                Python that runs as printed (see the rewrite templates below).
    notes:      semantic differences a migrating user must know.
    aliases:    other spellings of the same API outside `tf.compat.v1`
                (module paths such as "tensorflow.python.training.input.batch").
    params:     the TF1 signature in order, "name" or "name=default", so that positional
                arguments can be named and missing ones rendered as their TF1 default.
    tf_data_when: ((conditions, template), ...): the first entry whose every
                (param, source text) condition holds replaces `tf_data`; "True"/"False"
                test a literal's truth value, "None" a literal None, EXPR an argument that
                is no literal, anything else the source text itself.
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
_ENQUEUE_MANY = ("enqueue_many=True: the tensors are whole batches that TF1 enqueues again on "
                 "every run of its enqueue op, so fixed tensors repeat forever, as "
                 "from_tensor_slices(...).repeat() does; batches that come from an input "
                 "pipeline end with it: unbatch that dataset instead.")
_DATASET = ("`dataset` is the tf.data.Dataset whose elements are the call's tensors (the "
            "examples the queue held; a list of tensors becomes a tuple): the rewritten "
            "pipeline upstream.")
_DYNAMIC_PAD = ("dynamic_pad=True pads each None dimension to the batch maximum, as padded_batch "
                "without padded_shapes does.")
_KEEP_INPUT = ("keep_input becomes a filter predicate: written over the tensors' own names "
               "(tensors=[x, y], keep_input=y > 0) it reads each element, otherwise make it a "
               "function of the example. With enqueue_many a vector keep_input filters rows, a "
               "scalar whole batches.")
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

# --- tf.data rewrite templates ------------------------------------------------------------
# Every rewrite is one line that runs as printed under TF 2.x (`import tensorflow as tf`).
# Its names are the call's own arguments, the input the queue stage becomes -- `dataset`, the
# tf.data.Dataset whose elements are the examples the queue held (a list of tensors becomes
# a tuple), and `filenames`, the dataset of what a reader's queue held -- or placeholders the
# line defines itself. `{name:form}` renders a form derived from the argument's source text
# (compat/_check/render.py: struct, tuple, first, params, example, aslist, int,
# atom, reader_dataset). tests/check/test_check_rewrites_run.py runs every template.

_HOP_RECORDS = ("filenames.flat_map(lambda f: tf.data.Dataset.from_tensors(%s).flat_map("
                "lambda data: tf.data.Dataset.range({header_bytes:int}, "
                "tf.cast(tf.strings.length(data), tf.int64) - {footer_bytes:int} - "
                "{record_bytes} + 1, {hop_bytes}).map(lambda offset: "
                "tf.strings.substr(data, offset, {record_bytes}))))")
_SESSION_LOOP = ("for batch in dataset: ...  # no queue runners to start: iterate the dataset "
                 "(inside the session in graph mode)")
_BUCKET = ("%s.map(lambda {tensors:params}: (tf.cast({input_length}, tf.int32), "
           "{tensors:example})).bucket_by_sequence_length(lambda length, example: length, "
           "{bucket_boundaries}, [{batch_size}] * (len({bucket_boundaries}) + 1), "
           "drop_remainder={not_allow_smaller_final_batch})")
_STRATIFIED = ("%s.rejection_resample(lambda example, label: tf.cast(label, tf.int32), "
               "target_dist={target_probs}, initial_dist={init_probs})"
               ".map(lambda label, pair: pair).batch({batch_size}, drop_remainder=True)"
               "  # dataset: (tensors, labels) pairs")
_REJECTION = ("%s.filter(lambda {tensors:params}: tf.random.uniform([]) < "
              "{accept_prob_fn:atom}({tensors:aslist})).batch({batch_size}, drop_remainder=True)")
_PROVIDER = ("tf.data.Dataset.list_files({dataset}.data_sources, shuffle=%s, seed={seed})"
             ".repeat({num_epochs}).interleave(tf.data.TFRecordDataset, "
             "cycle_length={num_readers})%s.map(lambda record: tuple({dataset}.decoder.decode("
             "record, {dataset}.decoder.list_items())))  # reads TFRecord files, as "
             "{dataset}.reader = TFRecordReader does; items in decoder.list_items() order")
_PARALLEL_READ = ("tf.data.Dataset.list_files({data_sources}, shuffle=%s, seed={seed})"
                  ".repeat({num_epochs}).interleave(lambda f: "
                  "{reader_class:reader_dataset}(f).map(lambda value: (f, value)), "
                  "cycle_length={num_readers})%s")

_ENQUEUE_MANY_COMMENT = ("  # TF1 enqueues these batches again on every run until its input ends; "
                         "batches from an input pipeline: that dataset.unbatch()")
_JOIN_COMMENT = ("  # dataset: the examples of the len({tensors_list}) inputs, interleaved "
                 "(interleave(..., cycle_length=len({tensors_list})))")
_PER_ROW_KEEP = "tf.broadcast_to({keep_input}, tf.shape(%s)[:1])"
_KEEP_ROWS = ".filter(lambda example, keep: keep).map(lambda example, keep: example)"


def _batching_template(join: bool, shuffle: bool, maybe: bool, enqueue_many, dynamic_pad) -> str:
    """The rewrite of one batching call shape.

    enqueue_many / dynamic_pad: True, False or EXPR (not a literal: decided at run time);
    maybe: keep_input is not the literal True (it becomes a filter).
    """
    seed = ", seed={seed}" if shuffle else ""
    # enqueue_many=False: the queue held single examples, `dataset` yields them.
    one_by_one = "dataset"
    if maybe:
        one_by_one += (".filter(lambda *example: {keep_input})" if join
                       else ".filter(lambda {tensors:params}: {keep_input})")
    # enqueue_many=True: the call's tensors are whole batches, enqueued again on every run.
    if join:
        rows = "tuple(t) if isinstance(t, list) else t"
        if maybe:
            rows = "(" + rows + ", " + _PER_ROW_KEEP % "tf.nest.flatten(t)[0]" + ")"
        many = ("tf.data.Dataset.sample_from_datasets([tf.data.Dataset.from_tensor_slices("
                + rows + ").repeat() for t in {tensors_list}]" + seed + ")")
    elif maybe:
        many = ("tf.data.Dataset.from_tensor_slices(({tensors:struct}, "
                + _PER_ROW_KEEP % "{tensors:first}" + ")).repeat()")
    else:
        many = "tf.data.Dataset.from_tensor_slices({tensors:struct}).repeat()"
    if maybe:
        many += _KEEP_ROWS
    if enqueue_many is EXPR:
        source = "(" + many + " if {enqueue_many} else " + one_by_one + ")"
    else:
        source = many if enqueue_many else one_by_one
    shuffled = ".shuffle({capacity}, seed={seed})" if shuffle else ""
    args = "({batch_size}, drop_remainder={not_allow_smaller_final_batch})"
    if dynamic_pad is EXPR:
        batched = ".apply(lambda ds: (ds.padded_batch if {dynamic_pad} else ds.batch)" + args + ")"
    else:
        batched = (".padded_batch" if dynamic_pad else ".batch") + args
    comment = ""
    if enqueue_many is not False:
        comment = _ENQUEUE_MANY_COMMENT
    elif join:
        comment = _JOIN_COMMENT
    return source + shuffled + batched + comment


def _batching(join=False, shuffle=False, maybe=False) -> dict:
    """tf_data and tf_data_when of a batching row: every enqueue_many x dynamic_pad (x
    keep_input) combination TF1 distinguishes while building the graph."""
    pads = (False,) if shuffle else (True, False, EXPR)  # shuffle_* has no dynamic_pad
    when = []
    for keep in ((True, False) if maybe else (True,)):  # keep: keep_input is literally True
        for enqueue_many in (True, False, EXPR):
            for dynamic_pad in pads:
                conditions = (("enqueue_many", _condition(enqueue_many)),)
                if not shuffle:
                    conditions += (("dynamic_pad", _condition(dynamic_pad)),)
                if maybe and keep:
                    conditions += (("keep_input", "True"),)
                when.append((conditions, _batching_template(
                    join, shuffle, maybe and not keep, enqueue_many, dynamic_pad)))
    default = _batching_template(join, shuffle, maybe, False, False)
    return {"tf_data": default, "tf_data_when": tuple(when)}


def _condition(value) -> str:
    return value if value is EXPR else str(value)


def _shuffled_when(shuffle_param: str, shuffled: str, unshuffled: str, conditional: str) -> dict:
    """A rewrite that shuffles when `shuffle_param` is true: literal True, literal False, or
    an expression (`conditional`, which decides at run time and still runs)."""
    return {"tf_data": shuffled,
            "tf_data_when": ((((shuffle_param, "False"),), unshuffled),
                             (((shuffle_param, EXPR),), conditional))}


_PRODUCER_PARAMS_TAIL = ("num_epochs=None", "shuffle=True", "seed=None", "capacity=32",
                         "shared_name=None", "name=None")

ROWS: tuple = (
    # --- producers -------------------------------------------------------------------------
    ApiRow("train.string_input_producer", "TFQ101", COVERED,
           ("train.string_input_producer",), f"{_PRODUCERS}:string_input_producer",
           **_shuffled_when(
               "shuffle",
               "tf.data.Dataset.from_tensor_slices({string_tensor})"
               ".shuffle(len({string_tensor}), seed={seed}).repeat({num_epochs})",
               "tf.data.Dataset.from_tensor_slices({string_tensor}).repeat({num_epochs})",
               "tf.data.Dataset.from_tensor_slices({string_tensor}).apply(lambda ds: "
               "ds.shuffle(len({string_tensor}), seed={seed}) if {shuffle} else ds)"
               ".repeat({num_epochs})"),
           notes=_PRODUCER_EPOCHS + " " + _SEEDS + " capacity only bounds prefetching.",
           aliases=(f"{_INPUT}.string_input_producer",),
           params=("string_tensor",) + _PRODUCER_PARAMS_TAIL + ("cancel_op=None",)),
    ApiRow("train.slice_input_producer", "TFQ102", COVERED,
           ("train.slice_input_producer",), f"{_PRODUCERS}:slice_input_producer",
           **_shuffled_when(
               "shuffle",
               "tf.data.Dataset.from_tensor_slices({tensor_list:tuple})"
               ".shuffle(len({tensor_list:first}), seed={seed}).repeat({num_epochs})",
               "tf.data.Dataset.from_tensor_slices({tensor_list:tuple}).repeat({num_epochs})",
               "tf.data.Dataset.from_tensor_slices({tensor_list:tuple}).apply(lambda ds: "
               "ds.shuffle(len({tensor_list:first}), seed={seed}) if {shuffle} else ds)"
               ".repeat({num_epochs})"),
           notes=(_PRODUCER_EPOCHS + " " + _SEEDS + " TF1 returns a list of tensors (one per "
                  "input), the dataset yields a tuple."),
           aliases=(f"{_INPUT}.slice_input_producer",),
           params=("tensor_list",) + _PRODUCER_PARAMS_TAIL),
    ApiRow("train.range_input_producer", "TFQ103", COVERED,
           ("train.range_input_producer",), f"{_PRODUCERS}:range_input_producer",
           **_shuffled_when(
               "shuffle",
               "tf.data.Dataset.range({limit}, output_type=tf.int32)"
               ".shuffle({limit}, seed={seed}).repeat({num_epochs})",
               "tf.data.Dataset.range({limit}, output_type=tf.int32).repeat({num_epochs})",
               "tf.data.Dataset.range({limit}, output_type=tf.int32).apply(lambda ds: "
               "ds.shuffle({limit}, seed={seed}) if {shuffle} else ds).repeat({num_epochs})"),
           notes=(_PRODUCER_EPOCHS + " " + _SEEDS + " TF1 yields int32 (Dataset.range's default "
                  "is int64: output_type=tf.int32 keeps TF1's dtype)."),
           aliases=(f"{_INPUT}.range_input_producer",),
           params=("limit",) + _PRODUCER_PARAMS_TAIL),
    ApiRow("train.input_producer", "TFQ104", COVERED,
           ("train.input_producer",), f"{_PRODUCERS}:input_producer",
           **_shuffled_when(
               "shuffle",
               "tf.data.Dataset.from_tensor_slices({input_tensor})"
               ".shuffle(len({input_tensor}), seed={seed}).repeat({num_epochs})",
               "tf.data.Dataset.from_tensor_slices({input_tensor}).repeat({num_epochs})",
               "tf.data.Dataset.from_tensor_slices({input_tensor}).apply(lambda ds: "
               "ds.shuffle(len({input_tensor}), seed={seed}) if {shuffle} else ds)"
               ".repeat({num_epochs})"),
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
           tf_data=("tf.io.matching_files({pattern})  # the sorted names, as TF1's variable "
                    "holds them; as a dataset: tf.data.Dataset.list_files({pattern}, "
                    "shuffle=False)"),
           notes=("TF1 globs once into a local variable (run local_variables_initializer) and "
                  "gives a 1-D string tensor, sorted, empty when nothing matches: "
                  "tf.io.matching_files gives the same; list_files raises on no match and "
                  "shuffles by default (pass shuffle=False to keep TF1's sorted order)."),
           aliases=(f"{_INPUT}.match_filenames_once",),
           params=("pattern", "name=None")),
    # --- readers ---------------------------------------------------------------------------
    ApiRow("TFRecordReader", "TFQ111", COVERED, ("TFRecordReader",), f"{_READERS}:TFRecordReader",
           tf_data=("filenames.flat_map(lambda f: tf.data.TFRecordDataset(f, compression_type="
                    "tf.io.TFRecordOptions.get_compression_type_string({options})))"),
           tf_data_when=(
               ((("options", "None"),), "filenames.flat_map(tf.data.TFRecordDataset)"),
           ),
           notes=(_READER + " TFRecordReader's key (b'file:byte_offset') has no tf.data equivalent; "
                  "compression comes from TFRecordOptions, in tf.data from compression_type "
                  "(TFRecordOptions.get_compression_type_string converts)."),
           aliases=(f"{_IO_OPS}.TFRecordReader",),
           params=("name=None", "options=None")),
    ApiRow("TextLineReader", "TFQ112", COVERED, ("TextLineReader",), f"{_READERS}:TextLineReader",
           tf_data="filenames.flat_map(lambda f: tf.data.TextLineDataset(f).skip({skip_header_lines}))",
           tf_data_when=(
               ((("skip_header_lines", "None"),), "filenames.flat_map(tf.data.TextLineDataset)"),
           ),
           notes=(_READER + " skip_header_lines applies to every file: skip inside flat_map, "
                  "not once on the whole dataset. TF1's key is b'file:line_number'."),
           aliases=(f"{_IO_OPS}.TextLineReader",),
           params=("skip_header_lines=None", "name=None")),
    ApiRow("FixedLengthRecordReader", "TFQ113", COVERED,
           ("FixedLengthRecordReader",), f"{_READERS}:FixedLengthRecordReader",
           tf_data=("filenames.flat_map(lambda f: tf.data.FixedLengthRecordDataset(f, "
                    "{record_bytes}, header_bytes={header_bytes}, footer_bytes={footer_bytes}, "
                    "compression_type={encoding}))"),
           tf_data_when=(
               ((("hop_bytes", "False"), ("encoding", "None")),
                "filenames.flat_map(lambda f: tf.data.FixedLengthRecordDataset(f, "
                "{record_bytes}, header_bytes={header_bytes}, footer_bytes={footer_bytes}))"),
               ((("hop_bytes", "False"),),
                "filenames.flat_map(lambda f: tf.data.FixedLengthRecordDataset(f, "
                "{record_bytes}, header_bytes={header_bytes}, footer_bytes={footer_bytes}, "
                "compression_type={encoding}))"),
               ((("encoding", "None"),),
                _HOP_RECORDS % "tf.io.read_file(f)"),
               ((), _HOP_RECORDS % "tf.io.decode_compressed(tf.io.read_file(f), {encoding})"),
           ),
           notes=(_READER + " hop_bytes (overlapping records: the k-th starts at header_bytes + "
                  "k * hop_bytes, while it ends before the footer) has no "
                  "FixedLengthRecordDataset argument: the rewrite cuts the records out of the "
                  "whole file. FixedLengthRecordDataset refuses a body (between header and "
                  "footer) that is not a multiple of record_bytes, where TF1 drops the partial "
                  "last record. TF1's key is b'file:record_number'."),
           aliases=(f"{_IO_OPS}.FixedLengthRecordReader",),
           params=("record_bytes", "header_bytes=None", "footer_bytes=None", "hop_bytes=None",
                   "name=None", "encoding=None")),
    ApiRow("WholeFileReader", "TFQ114", COVERED, ("WholeFileReader",), f"{_READERS}:WholeFileReader",
           tf_data="filenames.map(lambda f: (f, tf.io.read_file(f)))",
           notes=_READER + " The key is the filename, as in TF1.",
           aliases=(f"{_IO_OPS}.WholeFileReader",),
           params=("name=None",)),
    ApiRow("IdentityReader", "TFQ115", COVERED, ("IdentityReader",), f"{_READERS}:IdentityReader",
           tf_data="filenames.map(lambda work: (work, work))  # filenames: the work units the "
                   "reader's queue held",
           notes=_READER + " IdentityReader returns each work unit as both key and value.",
           aliases=(f"{_IO_OPS}.IdentityReader",),
           params=("name=None",)),
    ApiRow("LMDBReader", "TFQ116", PARTIAL, ("LMDBReader",), f"{_READERS}:LMDBReader",
           tf_data=("import lmdb, os; filenames.flat_map(lambda f: "
                    "tf.data.Dataset.from_generator(lambda path: iter(lmdb.open(path.decode(), "
                    "subdir=os.path.isdir(path), readonly=True, lock=False).begin().cursor()), "
                    "args=(f,), output_signature=(tf.TensorSpec([], tf.string),) * 2))"
                    "  # (key, value) in key order, as TF1's"),
           notes=(_READER + " Core tf.data has no LMDB dataset; the shim's support is partial, "
                  "a Python generator over the lmdb package is the portable rewrite (a file or "
                  "a directory, as TF1 opens either)."),
           aliases=(f"{_IO_OPS}.LMDBReader",),
           params=("name=None", "options=None")),
    ApiRow("ReaderBase", "TFQ117", COVERED, ("ReaderBase",), f"{_READERS}:ReaderBase",
           tf_data=("read_records = lambda work: iter([(work, work)]); filenames.flat_map("
                    "lambda f: tf.data.Dataset.from_generator(read_records, args=(f,), "
                    "output_signature=(tf.TensorSpec([], tf.string),) * 2))  # read_records: a "
                    "placeholder, yield your reader's (key, value) records for one work unit "
                    "(or use a tf.data *Dataset class)"),
           notes="Custom readers subclass ReaderBase around a reader op; in tf.data a reader is "
                 "any source dataset.",
           aliases=(f"{_IO_OPS}.ReaderBase",),
           params=("reader_ref", "supports_serialize=False")),
    # --- batching --------------------------------------------------------------------------
    ApiRow("train.batch", "TFQ201", COVERED, ("train.batch",), f"{_BATCHING}:batch",
           **_batching(),
           notes=" ".join((_DATASET, _FINAL_BATCH, _BATCH_THREADS, _ENQUEUE_MANY, _DYNAMIC_PAD)),
           aliases=(f"{_INPUT}.batch",), params=_BATCH_PARAMS),
    ApiRow("train.shuffle_batch", "TFQ202", COVERED, ("train.shuffle_batch",), f"{_BATCHING}:shuffle_batch",
           **_batching(shuffle=True),
           notes=" ".join((_DATASET, _SHUFFLE_WINDOW, _FINAL_BATCH, _SEEDS, _BATCH_THREADS,
                           _ENQUEUE_MANY, "capacity <= min_after_dequeue is a ValueError in TF1.")),
           aliases=(f"{_INPUT}.shuffle_batch",), params=_SHUFFLE_BATCH_PARAMS),
    ApiRow("train.batch_join", "TFQ203", COVERED, ("train.batch_join",), f"{_BATCHING}:batch_join",
           **_batching(join=True),
           notes=" ".join((_JOIN, _FINAL_BATCH, _ENQUEUE_MANY, _DYNAMIC_PAD)),
           aliases=(f"{_INPUT}.batch_join",), params=_BATCH_JOIN_PARAMS),
    ApiRow("train.shuffle_batch_join", "TFQ204", COVERED,
           ("train.shuffle_batch_join",), f"{_BATCHING}:shuffle_batch_join",
           **_batching(join=True, shuffle=True),
           notes=" ".join((_JOIN, _SHUFFLE_WINDOW, _FINAL_BATCH, _SEEDS, _ENQUEUE_MANY)),
           aliases=(f"{_INPUT}.shuffle_batch_join",), params=_SHUFFLE_BATCH_JOIN_PARAMS),
    ApiRow("train.maybe_batch", "TFQ205", COVERED, ("train.maybe_batch",), f"{_BATCHING}:maybe_batch",
           **_batching(maybe=True),
           notes=" ".join((_DATASET, _KEEP_INPUT, _FINAL_BATCH, _ENQUEUE_MANY, _DYNAMIC_PAD)),
           aliases=(f"{_INPUT}.maybe_batch",),
           params=("tensors", "keep_input") + _BATCH_PARAMS[1:]),
    ApiRow("train.maybe_shuffle_batch", "TFQ206", COVERED,
           ("train.maybe_shuffle_batch",), f"{_BATCHING}:maybe_shuffle_batch",
           **_batching(shuffle=True, maybe=True),
           notes=" ".join((_DATASET, _KEEP_INPUT, _SHUFFLE_WINDOW, _FINAL_BATCH, _ENQUEUE_MANY)),
           aliases=(f"{_INPUT}.maybe_shuffle_batch",),
           params=_SHUFFLE_BATCH_PARAMS[:4] + ("keep_input",) + _SHUFFLE_BATCH_PARAMS[4:]),
    ApiRow("train.maybe_batch_join", "TFQ207", COVERED,
           ("train.maybe_batch_join",), f"{_BATCHING}:maybe_batch_join",
           **_batching(join=True, maybe=True),
           notes=" ".join((_KEEP_INPUT, _JOIN, _FINAL_BATCH, _ENQUEUE_MANY, _DYNAMIC_PAD)),
           aliases=(f"{_INPUT}.maybe_batch_join",),
           params=("tensors_list", "keep_input") + _BATCH_JOIN_PARAMS[1:]),
    ApiRow("train.maybe_shuffle_batch_join", "TFQ208", COVERED,
           ("train.maybe_shuffle_batch_join",), f"{_BATCHING}:maybe_shuffle_batch_join",
           **_batching(join=True, shuffle=True, maybe=True),
           notes=" ".join((_KEEP_INPUT, _JOIN, _SHUFFLE_WINDOW, _FINAL_BATCH, _ENQUEUE_MANY)),
           aliases=(f"{_INPUT}.maybe_shuffle_batch_join",),
           params=_SHUFFLE_BATCH_JOIN_PARAMS[:4] + ("keep_input",) + _SHUFFLE_BATCH_JOIN_PARAMS[4:]),
    # --- queues, runners, coordination -------------------------------------------------------
    ApiRow("FIFOQueue", "TFQ301", COVERED, ("FIFOQueue", "queue.FIFOQueue"), f"{_QUEUES}:FIFOQueue",
           tf_data=("dataset.prefetch({capacity})  # dataset: what was enqueued, in order; "
                    "dequeue_many(n): .batch(n, drop_remainder=True), dequeue_up_to(n): "
                    ".batch(n)"),
           notes=("A queue fed by Python threads (feed_dict) becomes a bounded buffer in the shim; "
                  "the idiomatic source is Dataset.from_generator. dequeue_many after close "
                  "with fewer than n elements raises OutOfRangeError in TF1 (batch(n) would "
                  "return the short tail unless drop_remainder=True). " + _NO_THREADS),
           aliases=(f"{_DATA_FLOW}.FIFOQueue",),
           params=("capacity", "dtypes", "shapes=None", "names=None", "shared_name=None",
                   "name='fifo_queue'")),
    ApiRow("RandomShuffleQueue", "TFQ302", COVERED,
           ("RandomShuffleQueue", "queue.RandomShuffleQueue", "io.RandomShuffleQueue"),
           f"{_QUEUES}:RandomShuffleQueue",
           tf_data=("dataset.shuffle({capacity}, seed={seed})  # TF1 samples from everything "
                    "the queue holds, up to capacity; min_after_dequeue={min_after_dequeue} "
                    "only makes a dequeue wait for more (until the queue closes)"),
           notes=_SHUFFLE_WINDOW + " " + _SEEDS,
           aliases=(f"{_DATA_FLOW}.RandomShuffleQueue",),
           params=("capacity", "min_after_dequeue", "dtypes", "shapes=None", "names=None",
                   "seed=None", "shared_name=None", "name='random_shuffle_queue'")),
    ApiRow("PaddingFIFOQueue", "TFQ303", COVERED,
           ("PaddingFIFOQueue", "queue.PaddingFIFOQueue", "io.PaddingFIFOQueue"),
           f"{_QUEUES}:PaddingFIFOQueue",
           tf_data=("dataset.padded_batch(32, drop_remainder=True)  # 32: your dequeue_many(n) "
                    "(dequeue_up_to(n): drop_remainder=False); each None dimension of "
                    "shapes={shapes} pads to the longest in the batch"),
           notes=("dequeue_many pads every None dimension to the longest element of the batch, "
                  "as padded_batch does without padded_shapes (fixed dimensions are equal "
                  "anyway); dequeue_up_to keeps the short final batch (drop_remainder=False); "
                  "dequeue() returns single, unpadded elements. A one-component queue "
                  "dequeues a bare tensor."),
           aliases=(f"{_DATA_FLOW}.PaddingFIFOQueue",),
           params=("capacity", "dtypes", "shapes", "names=None", "shared_name=None",
                   "name='padding_fifo_queue'")),
    ApiRow("PriorityQueue", "TFQ304", COVERED,
           ("PriorityQueue", "queue.PriorityQueue", "io.PriorityQueue"), f"{_QUEUES}:PriorityQueue",
           tf_data=("dataset.batch({capacity}).map(lambda priority, *values: tuple(tf.gather(t, "
                    "tf.argsort(priority, stable=True)) for t in (priority, *values))).unbatch()"
                    "  # dataset: (priority, *values); each capacity-sized window in priority "
                    "order"),
           notes=("TF1 dequeues the smallest int64 priority among the queued elements, so the "
                  "order depends on how full the queue is; sorting capacity-sized windows is "
                  "one of TF1's orders (a consumer that drains the full queue) and bounded the "
                  "same way."),
           aliases=(f"{_DATA_FLOW}.PriorityQueue",),
           params=("capacity", "types", "shapes=None", "names=None", "shared_name=None",
                   "name='priority_queue'")),
    ApiRow("QueueBase", "TFQ305", COVERED,
           ("QueueBase", "queue.QueueBase", "io.QueueBase"), f"{_QUEUES}:QueueBase",
           tf_data=("iter(dataset)  # a queue stage is a dataset: enqueue -> the source "
                    "dataset, dequeue() -> next(iterator)"),
           notes="Subclasses of QueueBase wrap a queue resource; in tf.data every stage is a dataset.",
           aliases=(f"{_DATA_FLOW}.QueueBase",),
           params=("dtypes", "shapes", "names", "queue_ref")),
    ApiRow("QueueBase.from_list", "TFQ306", COVERED, (), "",
           tf_data=("tf.data.Dataset.choose_from_datasets({queues}, tf.data.Dataset.from_tensors("
                    "tf.cast({index}, tf.int64)).repeat())  # each queue of {queues} as its "
                    "dataset"),
           notes=("from_list selects one of a list of queues by a scalar index tensor evaluated on "
                  "every run; choose_from_datasets selects per element from an index dataset "
                  "(here the index repeated; map a per-element index dataset for more)."),
           aliases=(f"{_DATA_FLOW}.QueueBase.from_list", "queue.QueueBase.from_list",
                    "io.QueueBase.from_list"),
           params=("index", "queues")),
    ApiRow("train.QueueRunner", "TFQ311", COVERED,
           ("train.QueueRunner", "train.queue_runner.QueueRunner"), f"{_RUNNERS}:QueueRunner",
           tf_data=("dataset.prefetch(tf.data.AUTOTUNE)  # no enqueue threads: prefetch fills "
                    "ahead, map(..., num_parallel_calls=tf.data.AUTOTUNE) parallelizes"),
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
           tf_data="pass  # nothing to register: a dataset runs when it is iterated",
           notes="Runners in the QUEUE_RUNNERS collection are started by start_queue_runners, "
                 "Supervisor and MonitoredSession. " + _NO_THREADS,
           aliases=(f"{_QR}.add_queue_runner", f"{_QR_IMPL}.add_queue_runner"),
           params=("qr", "collection=tf.GraphKeys.QUEUE_RUNNERS")),
    ApiRow("train.start_queue_runners", "TFQ313", COVERED,
           ("train.start_queue_runners", "train.queue_runner.start_queue_runners"),
           f"{_RUNNERS}:start_queue_runners",
           tf_data=("[]  # no threads to start (this empty list keeps coord.join(threads) "
                    "working): iterating the dataset drives it, for batch in dataset: ..."),
           notes=("Returns the started threads (the shim may return an empty list when nothing "
                  "needs a thread). Forgetting it in TF1 hangs the first sess.run; with tf.data "
                  "there is nothing to start. " + _NO_THREADS),
           aliases=(f"{_QR}.start_queue_runners", f"{_QR_IMPL}.start_queue_runners"),
           params=("sess=None", "coord=None", "daemon=True", "start=True",
                   "collection=tf.GraphKeys.QUEUE_RUNNERS")),
    ApiRow("train.Coordinator", "TFQ321", COVERED, ("train.Coordinator",), f"{_COORD}:Coordinator",
           tf_data=("for batch in dataset: ...  # the end of the dataset ends the loop: no "
                    "threads to stop"),
           notes=("OutOfRangeError counts as a clean stop; coord.join re-raises errors reported "
                  "by the threads. Still useful for your own threads (TF2 keeps "
                  "tf.train.Coordinator). " + _NO_THREADS),
           aliases=(f"{_COORDINATOR}.Coordinator",),
           params=("clean_stop_exception_types=None",)),
    ApiRow("train.LooperThread", "TFQ322", COVERED, ("train.LooperThread",), f"{_COORD}:LooperThread",
           tf_data=("tf.compat.v1.train.LooperThread({coord}, {timer_interval_secs}, "
                    "target={target}, args={args}, kwargs={kwargs})  # not input: TF2 keeps it "
                    "(or a threading.Thread for the periodic work)"),
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
           tf_data=("for batch in dataset: ...  # a plain loop (Supervisor is deprecated: "
                    "tf.train.CheckpointManager, or Keras fit)"),
           notes=_IMPLICIT_RUNNERS + " managed_session() also starts the standard services.",
           aliases=("tensorflow.python.training.supervisor.Supervisor",),
           params=("graph=None",)),
    ApiRow("train.MonitoredTrainingSession", "TFQ403", PARTIAL, (), "",
           tf_data=_SESSION_LOOP,
           notes=_IMPLICIT_RUNNERS,
           aliases=("tensorflow.python.training.monitored_session.MonitoredTrainingSession",),
           params=("master=''", "is_chief=True", "checkpoint_dir=None")),
    ApiRow("train.MonitoredSession", "TFQ404", PARTIAL, (), "",
           tf_data=_SESSION_LOOP,
           notes=_IMPLICIT_RUNNERS,
           aliases=("tensorflow.python.training.monitored_session.MonitoredSession",),
           params=("session_creator=None", "hooks=None")),
    ApiRow("train.SingularMonitoredSession", "TFQ405", PARTIAL, (), "",
           tf_data=_SESSION_LOOP,
           notes=_IMPLICIT_RUNNERS,
           aliases=("tensorflow.python.training.monitored_session.SingularMonitoredSession",),
           params=("hooks=None",)),
    ApiRow("contrib.slim.queues", "TFQ411", NOT_COVERED, (), "",
           tf_data=("for batch in dataset: ...  # in place of the "
                    "`with slim.queues.QueueRunners(sess):` block"),
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
           tf_data=_BUCKET % "dataset.filter(lambda {tensors:params}: {keep_input})",
           tf_data_when=(((("keep_input", "True"),), _BUCKET % "dataset"),),
           notes=(_CONTRIB + " The rewrite yields (lengths, examples) batches as TF1 did, every "
                  "bucket batching batch_size elements and padding to the batch maximum "
                  "(pad_to_bucket_boundary=False). " + _FINAL_BATCH),
           aliases=("tensorflow.contrib.training.python.training.bucket_ops."
                    "bucket_by_sequence_length",),
           params=("input_length", "tensors", "batch_size", "bucket_boundaries",
                   "num_threads=1", "capacity=32", "bucket_capacities=None", "shapes=None",
                   "dynamic_pad=False", "allow_smaller_final_batch=False", "keep_input=True",
                   "shared_name=None", "name=None")),
    ApiRow("contrib.training.batch_sequences_with_states", "TFQ414", NOT_COVERED, (), "",
           tf_data=("dataset.padded_batch({batch_size}, drop_remainder={not_allow_small_batch})"
                    "  # no tf.data equivalent: batch whole sequences and carry the state in a "
                    "stateful RNN (or a loop over num_unroll={num_unroll}-step slices)"),
           notes=_CONTRIB + " Truncated-BPTT state saving must move into the model.",
           aliases=("tensorflow.contrib.training.python.training.sequence_queueing_state_saver."
                    "batch_sequences_with_states",),
           params=("input_key", "input_sequences", "input_context", "input_length",
                   "initial_states", "num_unroll", "batch_size", "num_threads=3",
                   "capacity=1000", "allow_small_batch=True", "pad=True",
                   "make_keys_unique=False", "make_keys_unique_seed=None", "name=None")),
    ApiRow("contrib.training.stratified_sample", "TFQ415", NOT_COVERED, (), "",
           tf_data=_STRATIFIED % "dataset",
           tf_data_when=(
               ((("enqueue_many", "True"),), _STRATIFIED % (
                   "tf.data.Dataset.from_tensor_slices(({tensors:struct}, {labels})).repeat()")),
           ),
           notes=(_CONTRIB + " The rewrite yields (examples, labels) batches as TF1 did; "
                  "init_probs=None estimates the input distribution in both."),
           aliases=("tensorflow.contrib.training.python.training.sampling_ops.stratified_sample",),
           params=("tensors", "labels", "target_probs", "batch_size", "init_probs=None",
                   "enqueue_many=False", "queue_capacity=16", "threads_per_queue=1",
                   "name=None")),
    ApiRow("contrib.training.rejection_sample", "TFQ416", NOT_COVERED, (), "",
           tf_data=_REJECTION % "dataset",
           tf_data_when=(
               ((("enqueue_many", "True"),), _REJECTION % (
                   "tf.data.Dataset.from_tensor_slices({tensors:struct}).repeat()")),
           ),
           notes=_CONTRIB + " accept_prob_fn gets the example as TF1 gave it (the list or dict).",
           aliases=("tensorflow.contrib.training.python.training.sampling_ops.rejection_sample",),
           params=("tensors", "accept_prob_fn", "batch_size", "queue_threads=1",
                   "enqueue_many=False", "prebatch_capacity=16", "prebatch_threads=1",
                   "runtime_checks=False", "name=None")),
    ApiRow("contrib.slim.dataset_data_provider.DatasetDataProvider", "TFQ417", NOT_COVERED, (), "",
           **_shuffled_when(
               "shuffle",
               _PROVIDER % ("{shuffle}", ".shuffle({common_queue_capacity}, seed={seed})"),
               _PROVIDER % ("False", ""),
               _PROVIDER % ("{shuffle}", ".apply(lambda ds: ds.shuffle({common_queue_capacity}, "
                                         "seed={seed}) if {shuffle} else ds)")),
           notes=_CONTRIB + " The provider hides parallel_read + a RandomShuffleQueue "
                            "(common_queue_min/common_queue_capacity); provider.get(items) "
                            "picks items of decoder.list_items(), the record_key item is the "
                            "file name here.",
           aliases=(f"{_SLIM}.data.dataset_data_provider.DatasetDataProvider",
                    "contrib.slim.python.slim.data.dataset_data_provider.DatasetDataProvider"),
           params=("dataset", "num_readers=1", "reader_kwargs=None", "shuffle=True",
                   "num_epochs=None", "common_queue_capacity=256", "common_queue_min=128",
                   "record_key='record_key'", "seed=None", "scope=None")),
    ApiRow("contrib.slim.parallel_reader.parallel_read", "TFQ418", NOT_COVERED, (), "",
           **_shuffled_when(
               "shuffle",
               _PARALLEL_READ % ("{shuffle}", ".shuffle({capacity}, seed={seed})"),
               _PARALLEL_READ % ("False", ""),
               _PARALLEL_READ % ("{shuffle}", ".apply(lambda ds: ds.shuffle({capacity}, "
                                              "seed={seed}) if {shuffle} else ds)")),
           notes=_CONTRIB + " " + _SHUFFLE_WINDOW + " The key is the file name (TF1's reader "
                 "key adds the record's position).",
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
