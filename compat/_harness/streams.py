"""Streams of fetched values, normalised so that two sides can be compared.

A *stream* is what one side of a comparison produced: the value of every ``sess.run`` of the
pipeline's output (a *batch*), in order. Values are normalised to plain data:

- dense tensors, numpy scalars, Python scalars and bytes -> ``numpy.ndarray``
- ``SparseTensorValue`` / eager ``SparseTensor``          -> ``SparseValue``
- dicts stay dicts (keys sorted), lists and tuples become tuples

An *element* is one row of a batch (every leaf sliced at the same index of dim 0), or the whole
fetched value when the pipeline is not batched. Elements are compared through *keys*: one
digest per component, computed from dtype and bytes, so that multisets of elements can be
counted without holding the arrays twice.
"""
from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np


@dataclass(frozen=True, eq=False)
class SparseValue:
    """A fetched sparse tensor: ``indices`` [n, rank] int64, ``values`` [n], ``dense_shape`` [rank]."""

    indices: np.ndarray
    values: np.ndarray
    dense_shape: np.ndarray

    def row(self, i: int) -> "SparseValue":
        """Row ``i`` of a batched sparse tensor (dim 0 removed)."""
        mask = self.indices[:, 0] == i
        return SparseValue(self.indices[mask][:, 1:], self.values[mask], self.dense_shape[1:])


def is_sparse_like(value) -> bool:
    return all(hasattr(value, name) for name in ("indices", "values", "dense_shape"))


def normalize(value) -> Any:
    """Turn one fetched value (any nesting of tensors) into plain numpy data."""
    if isinstance(value, SparseValue):
        return value
    if is_sparse_like(value) and not isinstance(value, np.ndarray):
        return SparseValue(_to_array(value.indices).astype(np.int64).reshape(-1, _rank(value)),
                           _to_array(value.values), _to_array(value.dense_shape).astype(np.int64))
    if isinstance(value, dict):
        return {key: normalize(value[key]) for key in sorted(value, key=str)}
    if isinstance(value, (list, tuple)):
        return tuple(normalize(item) for item in value)
    return _to_array(value)


def _rank(sparse) -> int:
    return int(np.asarray(_to_array(sparse.dense_shape)).shape[0])


def _to_array(value) -> np.ndarray:
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()  # an eager tensor
    if isinstance(value, (bytes, str)):
        return np.array(value, dtype=object)
    array = np.asarray(value)
    if array.dtype.kind in "SU":  # keep strings as object arrays of bytes, like sess.run does
        array = np.vectorize(lambda s: s if isinstance(s, bytes) else str(s).encode(),
                             otypes=[object])(array) if array.size else array.astype(object)
    return array


def leaves(value, path: str = "") -> list:
    """``[(path, leaf)]`` in a stable order; paths look like ``[0]``, ``['image']``, ``[1]['a']``."""
    if isinstance(value, dict):
        out = []
        for key in value:
            out.extend(leaves(value[key], f"{path}[{key!r}]"))
        return out
    if isinstance(value, tuple):
        out = []
        for index, item in enumerate(value):
            out.extend(leaves(item, f"{path}[{index}]"))
        return out
    return [(path or "<value>", value)]


def structure(value) -> Any:
    """The nesting of ``value`` without its data (for 'different structure' reports)."""
    if isinstance(value, dict):
        return {key: structure(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return tuple(structure(item) for item in value)
    if isinstance(value, SparseValue):
        return "sparse"
    return "dense"


def batch_size(value) -> int:
    """Number of rows (dim 0) of a batch; every leaf of a batch has the same number."""
    for _, leaf in leaves(value):
        if isinstance(leaf, SparseValue):
            return int(leaf.dense_shape[0]) if leaf.dense_shape.size else 1
        if leaf.ndim:
            return int(leaf.shape[0])
    return 1


def leaf_row(leaf, i: int):
    if isinstance(leaf, SparseValue):
        return leaf.row(i)
    return leaf[i]


def _strip_padding(array: np.ndarray) -> np.ndarray:
    """Remove trailing all-zero slices along every axis (undoes ``dynamic_pad``)."""
    if array.dtype == object or array.ndim == 0:
        if array.dtype == object and array.ndim >= 1:  # strings pad with b""
            nonempty = np.vectorize(lambda s: len(s) > 0, otypes=[bool])(array) if array.size else array
            return _trim(array, nonempty)
        return array
    return _trim(array, array != 0)


def _trim(array, nonzero):
    for axis in range(array.ndim):
        other = tuple(a for a in range(array.ndim) if a != axis)
        keep = np.any(nonzero, axis=other) if other else nonzero
        last = int(np.max(np.nonzero(keep)[0])) + 1 if np.any(keep) else 0
        index = [slice(None)] * array.ndim
        index[axis] = slice(0, last)
        array, nonzero = array[tuple(index)], nonzero[tuple(index)]
    return array


def component_key(leaf, unpad: bool = False) -> bytes:
    """A digest identifying one component of one element, bit for bit."""
    h = hashlib.blake2b(digest_size=16)
    if isinstance(leaf, SparseValue):
        h.update(b"sparse")
        h.update(np.ascontiguousarray(leaf.indices).tobytes())
        _update_array(h, leaf.values)
        if not unpad:  # a padded batch's dense_shape depends on its other rows
            h.update(np.ascontiguousarray(leaf.dense_shape).tobytes())
        return h.digest()
    array = np.asarray(leaf)
    if unpad:
        array = _strip_padding(array)
    h.update(str(array.shape).encode())
    _update_array(h, array)
    return h.digest()


def _update_array(h, array: np.ndarray) -> None:
    h.update(array.dtype.str.encode() if array.dtype != object else b"|O")
    if array.dtype == object:
        for item in array.reshape(-1):
            data = item if isinstance(item, bytes) else repr(item).encode()
            h.update(len(data).to_bytes(8, "little"))
            h.update(data)
    else:
        h.update(np.ascontiguousarray(array).tobytes())


@dataclass(frozen=True, eq=False)
class Element:
    """One element of a stream: where it came from and its per-component keys."""

    position: int  # index in the flattened element sequence
    batch: int
    row: int       # row inside the batch (0 when the stream is not batched)
    keys: tuple    # one digest per component, in ``leaves`` order

    @property
    def key(self) -> tuple:
        return self.keys


@dataclass(frozen=True, eq=False)
class Stream:
    """Everything one side produced.

    batches:  normalised fetched values, in ``sess.run`` order
    batched:  whether each fetched value is a batch (rows along dim 0) or one element
    ended:    "out_of_range" (input exhausted), "max_batches", "timeout" or "error"
    error:    ``"ErrorType: message"`` when the side failed, else ""
    origin:   human-readable description of the side ("tensorflow.compat.v1", "compat.v1", ...)
    timeline: seconds since the first ``sess.run`` at which each batch arrived
    unpad:    compare elements with trailing zero padding removed (``dynamic_pad`` pipelines)
    """

    batches: tuple
    batched: bool = True
    ended: str = "out_of_range"
    error: str = ""
    origin: str = ""
    timeline: tuple = ()
    unpad: bool = False
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def truncated(self) -> bool:
        return self.ended in ("max_batches", "timeout")

    def batch_sizes(self) -> list:
        if not self.batched:
            return [1] * len(self.batches)
        return [batch_size(batch) for batch in self.batches]

    def paths(self) -> list:
        return [path for path, _ in leaves(self.batches[0])] if self.batches else []

    def elements(self) -> list:
        """The flattened element sequence (computed once)."""
        if "elements" not in self._cache:
            self._cache["elements"] = list(self._iter_elements())
        return self._cache["elements"]

    def _iter_elements(self) -> Iterator[Element]:
        position = 0
        for b, batch in enumerate(self.batches):
            flat = [leaf for _, leaf in leaves(batch)]
            rows = batch_size(batch) if self.batched else 1
            for r in range(rows):
                parts = [leaf_row(leaf, r) if self.batched else leaf for leaf in flat]
                yield Element(position, b, r, tuple(component_key(p, self.unpad) for p in parts))
                position += 1

    def element_values(self, element: Element) -> list:
        """``[(path, value)]`` of one element, for reports."""
        batch = self.batches[element.batch]
        return [(path, leaf_row(leaf, element.row) if self.batched else leaf)
                for path, leaf in leaves(batch)]

    def with_options(self, **changes) -> "Stream":
        values = {name: getattr(self, name) for name in
                  ("batches", "batched", "ended", "error", "origin", "timeline", "unpad")}
        values.update(changes)
        return Stream(**values)


def as_stream(value, *, batched: bool = True, origin: str = "") -> Stream:
    """Accept a ``Stream`` or a plain list of fetched batches."""
    if isinstance(value, Stream):
        return value
    if hasattr(value, "stream") and isinstance(value.stream, Stream):  # a SideRun or Golden
        return value.stream
    return Stream(tuple(normalize(batch) for batch in value), batched=batched, origin=origin)


def element_counter(elements) -> Counter:
    return Counter(element.keys for element in elements)


def render(value, limit: int = 60) -> str:
    """Short text for a value in a report."""
    if isinstance(value, SparseValue):
        text = (f"SparseValue(indices={value.indices.tolist()}, values={_render_array(value.values)}, "
                f"dense_shape={value.dense_shape.tolist()})")
    elif isinstance(value, np.ndarray):
        text = _render_array(value)
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _render_array(array: np.ndarray) -> str:
    with np.printoptions(threshold=8, edgeitems=3, linewidth=10_000):
        body = np.array2string(array, separator=", ") if array.dtype != object else repr(array.tolist())
    return body.replace("\n", "")
