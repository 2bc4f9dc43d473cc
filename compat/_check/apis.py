"""Where a fully qualified name lands in the mapping table.

Every spelling is reduced to a path relative to the TF1 API root: `tensorflow.train.batch`,
`tensorflow.compat.v1.train.batch` and `compat.v1.train.batch` all become `train.batch`;
private module paths keep their module (`python.training.input.batch`) and are found
through the table's aliases.
"""
from __future__ import annotations

from typing import Optional

from compat import _api_table

_ROOT_PREFIXES = ("tensorflow.compat.v1.", "tensorflow.compat.v2.", "tensorflow.",
                  "compat.v1.", "compat.v2.")
_ROOTS = ("tensorflow", "tensorflow.compat.v1", "tensorflow.compat.v2", "compat.v1")
# Private modules that TF1 built its public `tf.train` namespace from by star imports.
_REEXPORTS = {"python.training.training.": "train."}

# Names that create or wrap a TF1 Session: a file using one needs disable_v2_behavior().
SESSION_APIS = frozenset({
    "Session", "InteractiveSession", "train.MonitoredTrainingSession", "train.MonitoredSession",
    "train.SingularMonitoredSession", "train.Supervisor",
})
DISABLE_V2 = "disable_v2_behavior"


# Packages that are TensorFlow under another name: `tf_slim` is tf.contrib.slim, released on
# its own (tf_slim.queues, tf_slim.data.prefetch_queue, ...).
_FOREIGN_ROOTS = (("tf_slim", "tensorflow.contrib.slim"),)
# Modules tf.contrib.slim never re-exported: `contrib.slim.data.x` lives in python/slim/data.
_SUBPACKAGES = (("tensorflow.contrib.slim.data", "tensorflow.contrib.slim.python.slim.data"),)


def canonical(path: str) -> str:
    """The TensorFlow spelling of a path into a package that mirrors part of TensorFlow
    (`tf_slim.data.parallel_reader` -> `tensorflow.contrib.slim.python.slim.data.parallel_reader`);
    any other path unchanged."""
    for foreign, native in _FOREIGN_ROOTS:
        if path == foreign or path.startswith(foreign + "."):
            path = native + path[len(foreign):]
            break
    for short, full in _SUBPACKAGES:
        if path == short or path.startswith(short + "."):
            return full + path[len(short):]
    return path


def is_tensorflow(path: str) -> bool:
    return any(path == root or path.startswith(root + ".") for root in _ROOTS)


def is_shim(path: str) -> bool:
    """`compat.v1...`: this project's shim, not TensorFlow's own tf.compat.v1."""
    return path.startswith(("compat.v1", "compat.v2"))


def relative(path: str) -> Optional[str]:
    """The path below the TF API root, or None when `path` is not TensorFlow."""
    if not is_tensorflow(path):
        return None
    if path in _ROOTS:
        return ""
    changed = True
    while changed:  # `tf.compat.v1.compat.v1.x` is legal, if odd
        changed = False
        for prefix in _ROOT_PREFIXES:
            if path.startswith(prefix):
                path = path[len(prefix):]
                changed = True
    for private, public in _REEXPORTS.items():
        if path.startswith(private):
            return public + path[len(private):]
    return path


def _build_index() -> dict:
    index: dict = {}
    for row in _api_table.ROWS:
        for spelling in (row.name, *row.shim_paths, *row.aliases):
            index.setdefault(relative("tensorflow." + spelling) if not is_tensorflow(spelling)
                             else relative(spelling), row)
    return index


INDEX = _build_index()


def row_for(path: str):
    """The table row for a fully qualified name, or None."""
    rel = relative(path)
    return None if rel is None else INDEX.get(rel)


# Last components of legacy names that practically nothing but TensorFlow defines: reached
# through a module the checker cannot resolve (`from mypkg.compat import tfv1`), they are
# still taken to be TensorFlow's. Generic names (batch, Coordinator, PriorityQueue, ...) are
# not, unless qualified as in TF (`tfv1.train.Coordinator`, see DISTINCTIVE_PATHS).
DISTINCTIVE_LEAVES = frozenset({
    "string_input_producer", "slice_input_producer", "range_input_producer", "limit_epochs",
    "match_filenames_once", "TFRecordReader", "TextLineReader", "FixedLengthRecordReader",
    "WholeFileReader", "IdentityReader", "LMDBReader", "shuffle_batch", "batch_join",
    "shuffle_batch_join", "maybe_batch", "maybe_shuffle_batch", "maybe_batch_join",
    "maybe_shuffle_batch_join", "FIFOQueue", "RandomShuffleQueue", "PaddingFIFOQueue",
    "QueueRunner", "add_queue_runner", "start_queue_runners", "MonitoredTrainingSession",
    "SingularMonitoredSession", "SyncReplicasOptimizer", "prefetch_queue", "parallel_read",
    "DatasetDataProvider", "batch_sequences_with_states",
})
DISTINCTIVE_PATHS = frozenset({
    "train.batch", "train.input_producer", "train.Coordinator", "train.LooperThread",
    "train.Supervisor", "train.MonitoredSession", "errors.OutOfRangeError",
})
DISTINCTIVE_ATTRIBUTES = DISTINCTIVE_LEAVES | {path.rpartition(".")[2]
                                               for path in DISTINCTIVE_PATHS}
# Third-party packages with their own classes of the same names (NVIDIA DALI's
# ops.TFRecordReader reads TFRecords for PyTorch/MXNet): never taken to be TensorFlow.
_LOOKALIKE_PACKAGES = ("nvidia.dali", "tfrecord", "torchdata", "mxnet")


def _build_suffixes() -> dict:
    by_leaf: dict = {}
    for key, row in INDEX.items():
        parts = tuple(key.split("."))
        by_leaf.setdefault(parts[-1], []).append((parts, row))
    return by_leaf


_BY_LEAF = _build_suffixes()


def distinctive_row(parts) -> Optional[object]:
    """The row a path below an unresolved module names, when it is distinctive enough: its
    last component is in DISTINCTIVE_LEAVES (and the path is the tail of a table spelling),
    or the whole path is in DISTINCTIVE_PATHS."""
    parts = tuple(parts)
    joined = ".".join(parts)
    if parts[-1] not in DISTINCTIVE_LEAVES and joined not in DISTINCTIVE_PATHS:
        return None
    for spelling, row in _BY_LEAF.get(parts[-1], ()):
        if spelling[len(spelling) - len(parts):] == parts:
            return row
    return None


def is_lookalike_package(path: str) -> bool:
    path = path.lstrip(".")
    return any(path == p or path.startswith(p + ".") for p in _LOOKALIKE_PACKAGES)


# Methods of table classes that are another table API: Supervisor.start_queue_runners(sess)
# starts the collection's runners like tf.train.start_queue_runners(sess, coord=sv.coord).
# Unless the runners it is given are SyncReplicasOptimizer's chief queue runner (CHIEF_RUNNER).
MEMBER_ROWS = {("train.Supervisor", "start_queue_runners"): "train.start_queue_runners"}
CHIEF_RUNNER = "get_chief_queue_runner"


def member_row(row, member: str):
    name = MEMBER_ROWS.get((row.name, member))
    return None if name is None else INDEX.get(name)


# Last components of every spelling in the table: a call whose callee ends otherwise cannot
# make its result an instance of a table class.
LEAVES = frozenset(_BY_LEAF)
