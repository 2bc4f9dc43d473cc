"""Matching elements across streams, for the levels in ``_element_levels`` and
``_displacement_levels``: ``snap`` lets float components match within a tolerance, and
``render_element`` shows one element in a finding. None of this needs TensorFlow.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from compat._harness.streams import Element, SparseValue, Stream, as_stream, render


def snap(candidate, references, *, rtol: float = 0.0, atol: float = 0.0) -> Stream:
    """``candidate`` with each element that equals a reference element within tolerance
    carrying that element's keys, so multiset and order levels can count it as the same.

    Non-float components must match exactly; float components must be ``numpy.isclose``.
    Candidates are found through a bucket of the sum of all float values (looking at the
    neighbouring buckets too), so this stays near-linear for large streams.
    """
    candidate = as_stream(candidate)
    if not (rtol or atol):
        return candidate
    references = [as_stream(r) for r in references if r is not None]
    exact_keys = {e.keys for r in references for e in r.elements()}
    index, grid = defaultdict(list), _grid(references, rtol, atol)
    for reference in references:
        for element in reference.elements():
            fixed, floats = _split(reference, element)
            index[(fixed, _bucket(floats, grid))].append((element.keys, floats))
    snapped = []
    for element in candidate.elements():
        if element.keys in exact_keys:
            snapped.append(element)
            continue
        fixed, floats = _split(candidate, element)
        bucket = _bucket(floats, grid)
        match = None
        for b in (bucket, bucket - 1, bucket + 1):
            for keys, values in index.get((fixed, b), ()):
                if all(x.shape == y.shape and np.allclose(x, y, rtol=rtol, atol=atol,
                                                          equal_nan=True)
                       for x, y in zip(floats, values)):
                    match = keys
                    break
            if match is not None:
                break
        snapped.append(Element(element.position, element.batch, element.row, match)
                       if match is not None else element)
    out = candidate.with_options()
    out._cache["elements"] = snapped
    return out


def _float_parts(stream, element):
    return [np.asarray(v) for _, v in stream.element_values(element)
            if not isinstance(v, SparseValue) and np.asarray(v).dtype.kind in "fc"]


def _split(stream, element):
    values = stream.element_values(element)
    fixed = tuple(key for key, (_, v) in zip(element.keys, values)
                  if isinstance(v, SparseValue) or np.asarray(v).dtype.kind not in "fc")
    floats = [np.asarray(v, dtype=np.float64) for _, v in values
              if not isinstance(v, SparseValue) and np.asarray(v).dtype.kind in "fc"]
    return fixed, floats


def _grid(references, rtol, atol) -> float:
    """Bucket width: at least twice the largest tolerated change of an element's float sum."""
    widest = 0.0
    for reference in references:
        for element in reference.elements()[:2000]:
            for values in _float_parts(reference, element):
                finite = np.abs(values[np.isfinite(values)]) if values.size else values
                top = float(finite.max()) if finite.size else 0.0
                widest = max(widest, values.size * (atol + rtol * top))
    return max(2.0 * widest, 1e-12)


def _bucket(floats, grid) -> int:
    total = sum(float(np.nansum(np.where(np.isfinite(v), v, 0.0))) for v in floats)
    return int(np.floor(total / grid))



def render_element(stream: Stream, element) -> str:
    parts = [f"{path}={render(value, 40)}" for path, value in stream.element_values(element)]
    return f"element #{element.position} (batch {element.batch}, row {element.row}): " + \
        ", ".join(parts)
