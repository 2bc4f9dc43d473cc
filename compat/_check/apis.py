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


def is_tensorflow(path: str) -> bool:
    return any(path == root or path.startswith(root + ".") for root in _ROOTS)


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
