"""Benchmark workloads: one module per TF1 input pipeline.

Each workload module defines

    NAME, DESCRIPTION   its name on the command line and a one-line description
    UNIT                what one "record" is (records/s counts these)
    Params              a dataclass of its knobs; fields with metadata {"data": True} shape
                        the generated data (and so name its cache directory)
    prepare(params, data_dir)
                        writes the synthetic data into data_dir (run once, then cached)
    load(params, data_dir)
                        what the program has in hand before it builds a graph (file lists,
                        arrays): not timed
    build(tf, loaded, params) -> Pipeline | fetches
                        the legacy TF1 program's input pipeline; the SAME function runs with
                        `tensorflow.compat.v1` (legacy) and `compat.v1` (shim)
    tf_data(tf, loaded, params) -> tf.data.Dataset
                        the best hand-written tf.data equivalent (`tf` is the real TF2 module)

Modules import TensorFlow only inside these functions, so the suite's parent process (which
never measures anything) does not import it.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
from typing import Any, Callable, Optional

# Workload name -> module (under this package). `csv_text`, not `csv`, so that no file here
# shadows the standard library's csv module if this directory ever lands on sys.path.
MODULES = {
    "mnist": "mnist",
    "csv": "csv_text",
    "cifar_augment": "cifar_augment",
    "small_shards": "small_shards",
    "jpeg_folder": "jpeg_folder",
    "ptb": "ptb",
    "python_fed": "python_fed",
    "big_text": "big_text",
}
NAMES = tuple(MODULES)

# Bump when a writer changes the bytes it writes, so that stale caches are not reused.
DATA_FORMAT_VERSION = 1


@dataclasses.dataclass
class Pipeline:
    """What `build` returns when the program needs more than `sess.run(fetches)`.

    fetches: what each training step runs (the batch tensors).
    start(sess, coord) -> threads: run after `start_queue_runners` (e.g. Python feeders).
    stop(sess): run after `coord.request_stop()` (e.g. cancel blocked enqueues).
    """

    fetches: Any
    start: Optional[Callable[[Any, Any], list]] = None
    stop: Optional[Callable[[Any], None]] = None


def load(name: str):
    """The workload module called `name`."""
    if name not in MODULES:
        raise KeyError(f"unknown workload {name!r}; known: {', '.join(NAMES)}")
    return importlib.import_module(f"{__name__}.{MODULES[name]}")


def make_params(module, overrides: dict[str, Any] | None = None):
    """`module.Params` with `overrides` ({field: value or string}) applied, type-converted."""
    params = module.Params()
    fields = {field.name: field for field in dataclasses.fields(params)}
    for key, value in (overrides or {}).items():
        if key not in fields:
            raise KeyError(f"workload {module.NAME!r} has no parameter {key!r}; "
                           f"it has: {', '.join(fields)}")
        setattr(params, key, _convert(value, type(getattr(params, key))))
    return params


def _convert(value, kind):
    if not isinstance(value, str) or kind is str:
        return value
    if kind is bool:
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"not a boolean: {value!r}")
    return kind(value)


def data_key(module, params) -> str:
    """The cache directory name of the data `params` describe (only data fields count)."""
    data_fields = {field.name: getattr(params, field.name)
                   for field in dataclasses.fields(params) if field.metadata.get("data")}
    blob = json.dumps([DATA_FORMAT_VERSION, module.NAME, data_fields], sort_keys=True)
    return f"{module.NAME}-{hashlib.sha1(blob.encode()).hexdigest()[:10]}"


def data_field(default):
    """A Params field that shapes the generated data."""
    return dataclasses.field(default=default, metadata={"data": True})
