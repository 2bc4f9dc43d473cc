"""Golden streams: a legacy run recorded to one compressed ``.npz`` file, replayed later.

The file holds every leaf of every batch as a numpy array (strings as a byte buffer plus
lengths, so no pickle is ever needed to read it) and one JSON document ``__metadata__``:
format version, TensorFlow/numpy/Python versions, the build function's identity and source
hash, graph seed, max_batches, the caller's config, the legacy graph facts and the stream's
own attributes.

``replay`` refuses (``GoldenMismatchError``) a file whose metadata does not match what the
caller expects. The TensorFlow version is recorded and checked only on request
(``tf_version=``): a golden file exists precisely so that the harness keeps working on a
TensorFlow that no longer ships queues.
"""
from __future__ import annotations

import datetime
import hashlib
import inspect
import json
import platform
from dataclasses import dataclass, field

import numpy as np

from compat._harness.runner import PipelineFacts, SideRun
from compat._harness.streams import SparseValue, Stream

FORMAT_VERSION = 1
_UNSET = object()


class GoldenMismatchError(ValueError):
    """The golden file was recorded for something else than what is being compared."""


def build_identity(build) -> dict:
    """Module, qualified name and source hash of the pipeline function."""
    try:
        source = inspect.getsource(build)
    except (OSError, TypeError):
        source = getattr(getattr(build, "__code__", None), "co_code", b"") or repr(build)
    if isinstance(source, str):
        source = source.encode()
    return {"module": getattr(build, "__module__", None),
            "qualname": getattr(build, "__qualname__", None),
            "source_sha256": hashlib.sha256(source).hexdigest()}


@dataclass(frozen=True)
class Golden:
    """A recorded legacy stream and the metadata it was recorded with."""

    path: str
    stream: Stream
    facts: PipelineFacts
    metadata: dict = field(default_factory=dict)

    def side_run(self) -> SideRun:
        return SideRun(self.stream, self.facts, 0.0, f"golden {self.path}")

    def check(self, *, build=_UNSET, graph_seed=_UNSET, max_batches=_UNSET, config=_UNSET,
              tf_version=None) -> "Golden":
        """Raise GoldenMismatchError listing every expected field that differs."""
        meta = self.metadata
        problems = []
        if meta.get("format_version") != FORMAT_VERSION:
            problems.append(f"format_version {meta.get('format_version')} != {FORMAT_VERSION}")
        if build is not _UNSET and build is not None:
            expected = build_identity(build)
            recorded = meta.get("build", {})
            for key in ("qualname", "source_sha256"):
                if recorded.get(key) != expected[key]:
                    problems.append(f"build {key} {recorded.get(key)!r} != {expected[key]!r}")
        if graph_seed is not _UNSET and meta.get("graph_seed") != graph_seed:
            problems.append(f"graph_seed {meta.get('graph_seed')!r} != {graph_seed!r}")
        if max_batches is not _UNSET and meta.get("max_batches") != max_batches:
            problems.append(f"max_batches {meta.get('max_batches')!r} != {max_batches!r}")
        if config is not _UNSET and meta.get("config") != _json_roundtrip(config):
            problems.append(f"config {meta.get('config')!r} != {_json_roundtrip(config)!r}")
        if tf_version is not None and not str(meta.get("tf_version", "")).startswith(tf_version):
            problems.append(f"tf_version {meta.get('tf_version')!r} does not match {tf_version!r}")
        if problems:
            raise GoldenMismatchError(f"golden file {self.path} does not match: "
                                      + "; ".join(problems))
        return self


def _json_roundtrip(value):
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def record(build, path, *, max_batches: int | None = 1000, graph_seed: int | None = None,
           config=None, timeout: float = 120.0, module=None) -> Golden:
    """Run ``build`` under real ``tensorflow.compat.v1`` (or ``module``) and save its stream.

    config: any JSON-able description of the run (pipeline parameters, data version); it is
            stored and must match on ``replay(config=...)``.
    Raises RuntimeError when the legacy run fails: a failing run is no golden reference.
    """
    from compat._harness.runner import legacy_module, run_side
    import tensorflow as tf_root
    run = run_side(build, module or legacy_module(), max_batches=max_batches,
                   graph_seed=graph_seed, timeout=timeout, origin="tensorflow.compat.v1")
    if run.stream.error:
        raise RuntimeError(f"cannot record a failing legacy run: {run.stream.error}")
    metadata = {
        "format_version": FORMAT_VERSION,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "tf_version": tf_root.__version__,
        "numpy_version": np.__version__,
        "python_version": platform.python_version(),
        "build": build_identity(build),
        "graph_seed": graph_seed,
        "max_batches": max_batches,
        "config": _json_roundtrip(config),
        "facts": run.facts.to_json(),
    }
    save_stream(path, run.stream, metadata)
    return Golden(str(path), run.stream, run.facts, _json_roundtrip(metadata))


def replay(path, *, build=None, graph_seed=_UNSET, max_batches=_UNSET, config=_UNSET,
           tf_version: str | None = None) -> Golden:
    """Load a golden file, refusing it when any given expectation does not match.

    Pass it to ``compare(build, legacy=golden, ...)``, which checks it again against the
    ``build``, ``graph_seed`` and ``max_batches`` of that comparison.
    """
    stream, metadata = load_stream(path)
    golden = Golden(str(path), stream, PipelineFacts.from_json(metadata.get("facts", {})),
                    metadata)
    return golden.check(build=build, graph_seed=graph_seed, max_batches=max_batches,
                        config=config, tf_version=tf_version)


# ----------------------------------------------------------------------------- file format


def save_stream(path, stream: Stream, metadata: dict) -> None:
    arrays = {}
    layouts = []
    for b, batch in enumerate(stream.batches):
        layouts.append(_encode(batch, f"b{b}", arrays))
    document = dict(metadata)
    document["stream"] = {"batched": stream.batched, "ended": stream.ended,
                          "error": stream.error, "origin": stream.origin,
                          "unpad": stream.unpad, "timeline": list(stream.timeline),
                          "layouts": layouts}
    arrays["__metadata__"] = np.frombuffer(json.dumps(document).encode(), dtype=np.uint8)
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **arrays)


def load_stream(path):
    with np.load(path, allow_pickle=False) as data:
        document = json.loads(bytes(data["__metadata__"]).decode())
        info = document.pop("stream")
        batches = tuple(_decode(layout, data) for layout in info["layouts"])
    stream = Stream(batches, batched=info["batched"], ended=info["ended"], error=info["error"],
                    origin=f"golden {path}", timeline=tuple(info["timeline"]),
                    unpad=info["unpad"])
    return stream, document


def _encode(value, name, arrays):
    if isinstance(value, dict):
        return {"dict": [[key, _encode(item, f"{name}_{i}", arrays)]
                         for i, (key, item) in enumerate(value.items())]}
    if isinstance(value, tuple):
        return {"tuple": [_encode(item, f"{name}_{i}", arrays) for i, item in enumerate(value)]}
    if isinstance(value, SparseValue):
        return {"sparse": [_encode(value.indices, f"{name}_i", arrays),
                           _encode(value.values, f"{name}_v", arrays),
                           _encode(value.dense_shape, f"{name}_s", arrays)]}
    array = np.asarray(value)
    if array.dtype == object:  # bytes: one buffer plus lengths, no pickle
        items = [x if isinstance(x, bytes) else str(x).encode() for x in array.reshape(-1)]
        arrays[f"{name}_data"] = np.frombuffer(b"".join(items), dtype=np.uint8)
        arrays[f"{name}_len"] = np.array([len(x) for x in items], dtype=np.int64)
        return {"bytes": name, "shape": list(array.shape)}
    arrays[name] = array
    return {"array": name}


def _decode(layout, data):
    if "dict" in layout:
        return {key: _decode(item, data) for key, item in layout["dict"]}
    if "tuple" in layout:
        return tuple(_decode(item, data) for item in layout["tuple"])
    if "sparse" in layout:
        indices, values, shape = (_decode(item, data) for item in layout["sparse"])
        return SparseValue(indices, values, shape)
    if "bytes" in layout:
        name = layout["bytes"]
        buffer, lengths = bytes(data[f"{name}_data"]), data[f"{name}_len"]
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        items = [buffer[offsets[i]:offsets[i + 1]] for i in range(len(lengths))]
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out.reshape(layout["shape"])
    return data[layout["array"]]
