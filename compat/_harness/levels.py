"""Comparison levels. Each takes streams and returns a ``LevelResult``; none needs TensorFlow.

exact   same batches in the same order, bit for bit (optional float tolerance)
epochs  same number and sizes of batches; same multiset of elements per epoch (when epochs are
        separable) or per run; components of an element stay together
window  every output element j comes from the first j + capacity inputs (the TF1 shuffle-queue
        bound), given the input (source) order
stats   the distribution of displacements (output position - input position) is the same on
        both sides: two-sample Kolmogorov-Smirnov test at significance ``alpha``
"""
from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict, deque

import numpy as np

from compat._harness.report import Finding, LevelResult, level_result, skipped
from compat._harness.streams import (Element, SparseValue, Stream, as_stream, element_counter,
                                     leaves, render, structure)

# ----------------------------------------------------------------------------- exact


def exact(legacy, candidate, *, rtol: float = 0.0, atol: float = 0.0) -> LevelResult:
    """Same batches, in order, with the same structure, dtypes, shapes and values.

    With ``rtol``/``atol`` left at 0, floats must be bit-identical (NaN equals NaN);
    otherwise ``numpy.isclose`` semantics apply to float components.

    Findings: every differing component of the first differing batch, one line listing the
    later differing batches, the batch count, and what the element multisets say (elements
    missing/extra, or "same elements in another order").
    """
    legacy, candidate = as_stream(legacy), as_stream(candidate)
    findings = []
    n_legacy, n_candidate = len(legacy.batches), len(candidate.batches)
    differing = []
    for index in range(min(n_legacy, n_candidate)):
        problems = _compare_batches(index, legacy.batches[index], candidate.batches[index],
                                    rtol, atol)
        if problems:
            differing.append(index)
            if len(differing) == 1:
                findings.extend(problems)
    if len(differing) > 1:
        later = differing[1:]
        shown = ", ".join(str(b) for b in later[:10]) + (", ..." if len(later) > 10 else "")
        findings.append(Finding("value", f"{len(later)} later batch(es) differ too: {shown}",
                                batch=later[0]))
    if n_legacy != n_candidate:
        findings.append(Finding(
            "batch_count", f"legacy produced {n_legacy} batch(es), candidate {n_candidate}",
            batch=min(n_legacy, n_candidate)))
    metrics = {"batches": n_legacy, "differing_batches": len(differing)}
    fail = None
    if findings:
        element_note = _element_summary(legacy, candidate, rtol, atol, metrics)
        if element_note is not None:
            findings.append(element_note)
        first = findings[0]
        fail = (f"first difference in batch {first.batch}"
                + (f" at {first.path}" if first.path else "") + f": {first.message}"
                + (f" ({len(differing)} differing batch(es))" if differing else ""))
    if n_legacy:
        ok = (f"all {n_legacy} batch(es) identical in order, structure, dtypes, shapes and "
              + (f"values (floats within rtol={rtol}, atol={atol})" if rtol or atol
                 else "values (bit for bit)"))
    else:
        ok = "neither side produced a batch: nothing was compared"
    return level_result("exact", findings, ok, fail, metrics=metrics)


def _element_summary(legacy, candidate, rtol, atol, metrics):
    """Missing/extra element counts behind an exact mismatch (None when not computable)."""
    try:
        matched = snap(candidate, [legacy], rtol=rtol, atol=atol)
        counts_l, counts_c = element_counter(legacy.elements()), \
            element_counter(matched.elements())
    except Exception:  # noqa: BLE001 - ragged or odd data: the batch findings still stand
        return None
    missing, extra = counts_l - counts_c, counts_c - counts_l
    metrics["missing_elements"] = sum(missing.values())
    metrics["extra_elements"] = sum(extra.values())
    if not missing and not extra:
        return Finding("order", "same elements, in a different order")
    first_missing = next((e for e in legacy.elements() if e.keys in missing), None)
    first_extra = next((e for e in reversed(matched.elements()) if e.keys in extra), None)
    return Finding(
        "elements", f"{sum(missing.values())} element(s) missing from the candidate, "
        f"{sum(extra.values())} extra", batch=(first_missing or first_extra).batch,
        legacy=_render_element(legacy, first_missing) if first_missing else None,
        candidate=_render_element(candidate, first_extra) if first_extra else None)


def _compare_batches(index, left, right, rtol, atol):
    if structure(left) != structure(right):
        return [Finding("structure", "different nesting of the fetched value", batch=index,
                        legacy=render(structure(left), 120),
                        candidate=render(structure(right), 120))]
    out = []
    for (path, a), (_, b) in zip(leaves(left), leaves(right)):
        problem = _leaf_difference(a, b, rtol, atol)
        if problem is not None:
            kind, message = problem
            out.append(Finding(kind, message, batch=index, path=path, legacy=render(a),
                               candidate=render(b)))
    return out


def _leaf_difference(a, b, rtol, atol):
    if isinstance(a, SparseValue) or isinstance(b, SparseValue):
        if not (isinstance(a, SparseValue) and isinstance(b, SparseValue)):
            return "structure", "one side is sparse, the other dense"
        for part in ("dense_shape", "indices", "values"):
            problem = _leaf_difference(getattr(a, part), getattr(b, part), rtol, atol)
            if problem is not None:
                return problem[0], f"sparse {part}: {problem[1]}"
        return None
    if a.dtype != b.dtype and not (a.dtype == object and b.dtype == object):
        return "dtype", f"dtype {a.dtype} vs {b.dtype}"
    if a.shape != b.shape:
        return "shape", f"shape {a.shape} vs {b.shape}"
    if a.dtype == object:
        equal = np.array([x == y for x, y in zip(a.reshape(-1), b.reshape(-1))], dtype=bool)
    elif a.dtype.kind in "fc" and (rtol or atol):
        equal = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True).reshape(-1)
    elif a.dtype.kind in "fc":
        equal = (a.view(np.uint8).reshape(a.size, -1) == b.view(np.uint8).reshape(b.size, -1)) \
            .all(axis=1) if a.size else np.ones(0, bool)
    else:
        equal = (a == b).reshape(-1)
    if equal.all():
        return None
    wrong = np.flatnonzero(~equal)
    first = np.unravel_index(wrong[0], a.shape) if a.ndim else ()
    at = tuple(int(i) for i in first)
    return "value", (f"{len(wrong)} of {a.size} value(s) differ; first at index {at}: "
                     f"{render(a[at] if a.ndim else a, 40)} vs {render(b[at] if b.ndim else b, 40)}")


# ----------------------------------------------------------------------------- tolerance


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


# ----------------------------------------------------------------------------- epochs


def detect_epoch_size(stream) -> int | None:
    """Smallest period p such that every full chunk of p elements has the same multiset.

    Used when TF1 keeps epochs separate (no shuffle queue, one enqueue thread), so that elements
    can be compared per epoch even when the producer shuffles within each epoch. Requires at
    least two full chunks; None when no period exists (then compare per run). Multisets are
    compared through sums of per-key random hashes, which makes the search O(n log n).
    """
    stream = as_stream(stream)
    elements = stream.elements()
    n = len(elements)
    if n < 2:
        return None
    weights = {}
    values = np.empty(n, dtype=np.uint64)
    for i, element in enumerate(elements):
        w = weights.get(element.keys)
        if w is None:
            digest = hashlib.blake2b(b"".join(element.keys), digest_size=8).digest()
            w = weights[element.keys] = np.uint64(int.from_bytes(digest, "little"))
        values[i] = w
    prefix = np.zeros(n + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        np.cumsum(values, out=prefix[1:])
        for p in range(1, n // 2 + 1):
            ends = np.arange(p, (n // p) * p + 1, p)
            sums = prefix[ends] - prefix[ends - p]
            if np.all(sums == sums[0]):
                chunks = [Counter(e.keys for e in elements[k:k + p]) for k in range(0, 2 * p, p)]
                if chunks[0] == chunks[1]:
                    return p
    return None


def epochs(legacy, candidate, *, epoch_size: int | None = None, check_counts: bool = True,
           remainder_tolerance: int = 0, universe=None, rtol: float = 0.0,
           atol: float = 0.0) -> LevelResult:
    """Same number and sizes of batches; same elements per epoch (or per run).

    epoch_size:  elements per epoch when TF1 keeps epochs apart (see ``detect_epoch_size``);
                 None compares the whole run as one multiset. A last, partial epoch (cut by
                 ``max_batches`` or a dropped remainder) must be a sub-multiset of a full one.
    check_counts: compare the multisets. ``compare`` turns this off for runs cut at
                 ``max_batches`` whose epochs mix (the cut point then selects a random subset);
                 the ``window`` level still bounds those elements.
    remainder_tolerance: per-run comparisons accept up to this many elements swapped for
                 others: with ``allow_smaller_final_batch=False`` TF1 drops the elements left
                 in a mixing queue at the end, and which ones is random (``compare`` sets it
                 to batch_size - 1 for such pipelines).
    universe:    every input element (a Stream or batches, epochs in order); when given,
                 elements accepted under ``remainder_tolerance`` must be among them, and its
                 first ``epoch_size`` elements are the full epoch a partial one is checked
                 against (needed when the legacy run holds less than one full epoch).
    rtol, atol:  float components of an element match within this tolerance (see ``snap``).

    Missing/extra elements are reported with where they sit in the stream; when every component
    taken alone has the same multiset but whole elements do not, the components are misaligned.
    """
    legacy, candidate = as_stream(legacy), as_stream(candidate)
    if universe is not None:
        universe = as_stream(universe, batched=legacy.batched).with_options(unpad=legacy.unpad)
    candidate = snap(candidate, [legacy, universe], rtol=rtol, atol=atol)
    findings = []
    sizes_l, sizes_c = legacy.batch_sizes(), candidate.batch_sizes()
    if len(sizes_l) != len(sizes_c):
        findings.append(Finding("batch_count",
                                f"legacy produced {len(sizes_l)} batch(es), candidate {len(sizes_c)}",
                                batch=min(len(sizes_l), len(sizes_c))))
    for index, (a, b) in enumerate(zip(sizes_l, sizes_c)):
        if a != b:
            findings.append(Finding("batch_size", f"batch size {a} vs {b}", batch=index,
                                    legacy=str(a), candidate=str(b)))
            break
    if legacy.batches and candidate.batches and \
            structure(legacy.batches[0]) != structure(candidate.batches[0]):
        findings.append(Finding("structure", "different nesting of the fetched value", batch=0,
                                legacy=render(structure(legacy.batches[0]), 120),
                                candidate=render(structure(candidate.batches[0]), 120)))
        return level_result("epochs", findings, "")
    elements_l, elements_c = legacy.elements(), candidate.elements()
    metrics = {"legacy_elements": len(elements_l), "candidate_elements": len(elements_c),
               "epoch_size": epoch_size, "remainder_tolerance": remainder_tolerance}
    tolerated = 0
    if check_counts:
        allowed = None
        if universe is not None:
            allowed = element_counter(universe.elements())
        more, tolerated = _multiset_findings(
            legacy, candidate, elements_l, elements_c, epoch_size, remainder_tolerance, allowed,
            universe.elements() if universe is not None else None)
        findings.extend(more)
    metrics["tolerated_remainder_differences"] = tolerated
    sizes = f"{len(sizes_l)} batch(es) on both sides, of the same sizes"
    if not check_counts:
        ok = (f"{sizes}; which elements arrived NOT compared: both runs were cut "
              "(max_batches) inside epochs that TF1 mixes, so each side holds a different "
              "random subset (the window level still checks where they came from)")
    elif not elements_l:
        ok = f"{sizes}; no elements on either side: nothing else was compared"
    else:
        scope = (f"epoch by epoch ({epoch_size} per epoch); order within an epoch"
                 if epoch_size else "over the whole run; order")
        ok = (f"{sizes}; the same {len(elements_l)} element(s) (components of each kept "
              f"together), {scope} not compared")
    if tolerated:
        ok += (f"; {tolerated} element(s) differ within the final remainder TF1 drops at "
               "random (accepted)")
    return level_result("epochs", findings, ok, metrics=metrics)


def _chunks(elements, size):
    if not size:
        return [elements]
    return [elements[k:k + size] for k in range(0, len(elements), size)]


def _multiset_findings(legacy, candidate, elements_l, elements_c, epoch_size, tolerance,
                       allowed=None, universe_elements=None):
    findings = []
    tolerated = 0
    chunks_l, chunks_c = _chunks(elements_l, epoch_size), _chunks(elements_c, epoch_size)
    full_epoch = None
    if epoch_size and universe_elements is not None:
        full_epoch = element_counter(universe_elements[:epoch_size])
    elif epoch_size and chunks_l and len(chunks_l[0]) == epoch_size:
        full_epoch = element_counter(chunks_l[0])
    all_l, all_c = element_counter(elements_l), element_counter(elements_c)
    for number in range(max(len(chunks_l), len(chunks_c))):
        part_l = chunks_l[number] if number < len(chunks_l) else []
        part_c = chunks_c[number] if number < len(chunks_c) else []
        counts_l, counts_c = element_counter(part_l), element_counter(part_c)
        where = f"epoch {number}" if epoch_size else "the run"
        if epoch_size and full_epoch is not None and len(part_l) < epoch_size:
            # A cut epoch: which of its elements arrived is random; they must be real ones.
            counts_l, where = full_epoch, f"epoch {number} (partial)"
            if not counts_c - counts_l:
                continue
            missing, extra = Counter(), counts_c - counts_l
        else:
            if counts_l == counts_c:
                continue
            missing, extra = counts_l - counts_c, counts_c - counts_l
            n_missing, n_extra = sum(missing.values()), sum(extra.values())
            if not epoch_size and n_missing == n_extra <= tolerance and (
                    allowed is None or not (counts_c - allowed)):
                tolerated = n_missing
                continue
        if missing and _components_match(part_l, part_c):
            sample = next(e for e in part_l if e.keys in missing)
            findings.append(Finding(
                "misaligned",
                f"components misaligned in {where}: each component has the same values, but "
                f"{sum(missing.values())} element(s) pair them differently",
                batch=sample.batch, legacy=_render_element(legacy, sample),
                candidate=_render_element(candidate, next(e for e in part_c if e.keys in extra))))
            continue
        for key, count in list(missing.items())[:3]:
            sample = next(e for e in part_l if e.keys == key)
            findings.append(Finding(
                "missing", f"{where}: {count} element(s) missing from the candidate "
                f"({sum(missing.values())} missing in total)", batch=sample.batch,
                legacy=_render_element(legacy, sample)))
        for key, count in list(extra.items())[:3]:
            sample = [e for e in part_c if e.keys == key][-1]
            kind = "duplicated" if key in all_l and all_c[key] > all_l[key] else (
                "extra" if key not in all_l else "moved")
            text = {"duplicated": "duplicated in the candidate",
                    "extra": "in the candidate but never in legacy",
                    "moved": "in a different epoch than in legacy"}[kind]
            findings.append(Finding(
                kind, f"{where}: {count} element(s) {text} ({sum(extra.values())} extra in "
                f"total)", batch=sample.batch, candidate=_render_element(candidate, sample)))
    return findings, tolerated


def _components_match(part_l, part_c) -> bool:
    if not part_l or len(part_l) != len(part_c) or len(part_l[0].keys) < 2:
        return False
    for i in range(len(part_l[0].keys)):
        if Counter(e.keys[i] for e in part_l) != Counter(e.keys[i] for e in part_c):
            return False
    return True


def _render_element(stream: Stream, element) -> str:
    parts = [f"{path}={render(value, 40)}" for path, value in stream.element_values(element)]
    return f"element #{element.position} (batch {element.batch}, row {element.row}): " + \
        ", ".join(parts)


# ----------------------------------------------------------------------------- source order


def source_positions(stream, *, source=None, source_index=None, rtol=0.0, atol=0.0):
    """Input position of every element of ``stream`` (None where it cannot be matched).

    source_index: path of a component that carries the element's absolute input position
                  (e.g. ``"[0]"`` or ``"['index']"``, as shown in reports)
    source:       the input sequence itself (a Stream or list of batches whose elements are
                  in input order). Repeated elements are matched greedily to their earliest
                  unused occurrence, which never makes a bound violation appear that a true
                  matching would not have.
    """
    stream = as_stream(stream)
    if source_index is not None:
        return [int(np.asarray(dict(stream.element_values(e))[source_index]).reshape(-1)[0])
                for e in stream.elements()]
    source = as_stream(source, batched=stream.batched)
    if source.unpad != stream.unpad:
        source = source.with_options(unpad=stream.unpad)
    stream = snap(stream, [source], rtol=rtol, atol=atol)
    occurrences = defaultdict(deque)
    for element in source.elements():
        occurrences[element.keys].append(element.position)
    out = []
    for element in stream.elements():
        queue = occurrences.get(element.keys)
        out.append(queue.popleft() if queue else None)
    return out


def window(candidate, capacity: int, *, source=None, source_index=None,
           slack: int = 0, rtol: float = 0.0, atol: float = 0.0) -> LevelResult:
    """Every output element j (0-based, across batches) comes from input position
    ``< j + max(capacity, 1) + slack``.

    capacity: the shuffle queue's capacity (``shuffle_batch(capacity=...)``), 0 without one
    slack:    extra reordering allowed by parallel enqueue threads (``num_threads - 1`` for
              single-element enqueues)
    source / source_index: the input order, see ``source_positions``.
    An element that matches no input is reported as extra (duplicated or unknown).
    """
    candidate = as_stream(candidate)
    if source is None and source_index is None:
        return skipped("window", "no input order given (pass source= or source_index=)")
    positions = source_positions(candidate, source=source, source_index=source_index,
                                 rtol=rtol, atol=atol)
    bound = max(int(capacity), 1) + int(slack)
    findings = []
    worst = 0
    elements = candidate.elements()
    for element, position in zip(elements, positions):
        if position is None:
            findings.append(Finding(
                "extra", f"element #{element.position} matches no remaining input element "
                "(duplicated, or never produced by the input)", batch=element.batch,
                candidate=_render_element(candidate, element)))
            continue
        lead = position - element.position
        worst = max(worst, lead + 1)
        if position >= element.position + bound:
            findings.append(Finding(
                "window", f"element #{element.position} came from input #{position}; TF1 "
                f"guarantees input < {element.position} + {bound} (capacity {capacity}"
                + (f" + slack {slack}" if slack else "") + ")", batch=element.batch,
                candidate=_render_element(candidate, element)))
    matched = [p for p in positions if p is not None]
    if elements:
        ok = (f"each of the {len(elements)} candidate element(s) came from input position "
              f"< j + {bound}, j its output position (capacity {capacity}"
              + (f" + slack {slack}" if slack else "") + f"; largest lead needed: {worst}); "
              "this bounds how early an element arrives, not how late or how well the stream "
              "is shuffled")
    else:
        ok = "the candidate produced no elements: nothing to bound"
    return level_result(
        "window", findings, ok,
        metrics={"bound": bound, "capacity": capacity, "slack": slack, "max_lead": worst,
                 "matched": len(matched), "elements": len(elements)})


# ----------------------------------------------------------------------------- stats


def displacements(stream, *, source=None, source_index=None, rtol=0.0,
                  atol=0.0) -> np.ndarray:
    """Output position minus input position of every matched element."""
    stream = as_stream(stream)
    positions = source_positions(stream, source=source, source_index=source_index,
                                 rtol=rtol, atol=atol)
    return np.array([e.position - p for e, p in zip(stream.elements(), positions) if p is not None],
                    dtype=np.int64)


def ks_two_sample(a, b, alternative: str = "two-sided"):
    """Two-sample Kolmogorov-Smirnov statistic D and asymptotic p-value (numpy only).

    alternative "two-sided": D = max |F_a - F_b|; "less": b is stochastically smaller than a,
    D = max(F_b - F_a), one-sided p = exp(-2 n_eff D^2).
    """
    if alternative not in ("two-sided", "less"):
        raise ValueError(f"alternative {alternative!r}: use 'two-sided' or 'less'")
    a, b = np.sort(np.asarray(a, dtype=float)), np.sort(np.asarray(b, dtype=float))
    n, m = len(a), len(b)
    grid = np.concatenate([a, b])
    cdf_a = np.searchsorted(a, grid, side="right") / n
    cdf_b = np.searchsorted(b, grid, side="right") / m
    en = math.sqrt(n * m / (n + m))
    if alternative == "less":
        d = float(max(0.0, np.max(cdf_b - cdf_a)))
        return d, float(min(1.0, math.exp(-2.0 * en * en * d * d)))
    d = float(np.max(np.abs(cdf_a - cdf_b)))
    lam = (en + 0.12 + 0.11 / en) * d
    if lam < 1e-3:
        return d, 1.0
    p = 2.0 * sum((-1) ** (k - 1) * math.exp(-2.0 * k * k * lam * lam) for k in range(1, 101))
    return d, float(min(1.0, max(0.0, p)))


def tf1_minimum_displacements(n_outputs: int, min_after_dequeue: int, n_inputs: int, *,
                              repeats: int = 5, seed: int = 0) -> np.ndarray:
    """Displacements of the weakest shuffle a TF1 ``RandomShuffleQueue`` may give.

    Until the input ends, TF1 removes an element only while the queue holds more than
    ``min_after_dequeue`` (``dequeue_many`` takes its n elements one at a time under that
    rule), each picked uniformly from what is in the queue; a faster producer only fills it
    further, which mixes more. Simulating a queue held at exactly ``min_after_dequeue + 1`` at
    every pick (and drained at the end) gives a sample that every TF1 run, whatever its
    timing, shuffles at least as much as.
    """
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(repeats):
        queue, next_input = [], 0
        for position in range(n_outputs):
            while len(queue) <= min_after_dequeue and next_input < n_inputs:
                queue.append(next_input)
                next_input += 1
            if not queue:
                break
            k = int(rng.integers(len(queue)))
            queue[k], queue[-1] = queue[-1], queue[k]
            out.append(position - queue.pop())
    return np.asarray(out, dtype=np.int64)


def stats(legacy, candidate, *, source=None, source_index=None, candidate_source=None,
          alpha: float = 0.001,
          min_effect: float = 0.4, min_samples: int = 30, direction: str = "two-sided",
          reference=None, rtol: float = 0.0, atol: float = 0.0) -> LevelResult:
    """Shuffle quality: does the candidate displace elements like legacy?

    Computes each side's displacements (output position - input position) against its input
    order (``source``; ``candidate_source`` for the candidate when it has its own) and runs a two-sample Kolmogorov-Smirnov test on their absolute values. The
    candidate is flagged when the difference is both significant (p < ``alpha``) and material
    (D >= ``min_effect``).

    direction: "two-sided" flags any such difference; "less" (one-sided test) only a
               candidate that shuffles less than the reference.
    reference: displacements to test against instead of the legacy run's, typically
               ``tf1_minimum_displacements(...)``. ``compare`` does this for shuffle queues:
               how full a TF1 queue is, so how far elements move, follows producer/consumer
               timing (two legacy runs under load were measured at D = 0.58 on |displacement|),
               so the rule that must never flag a legacy run is "shuffles significantly less
               than TF1's weakest legal shuffle", with ``direction="less"``. The upper side is
               the ``window`` level's job.
    """
    if direction not in ("two-sided", "less"):
        raise ValueError(f"direction {direction!r}: use 'two-sided' or 'less'")
    if source is None and source_index is None:
        return skipped("stats", "no input order given (pass source= or source_index=)")
    d_legacy = displacements(legacy, source=source, source_index=source_index)
    d_candidate = displacements(candidate, source=source if candidate_source is None
                                else candidate_source, source_index=source_index,
                                rtol=rtol, atol=atol)
    d_reference = d_legacy if reference is None else np.asarray(reference, dtype=np.int64)
    against = "legacy" if reference is None else "TF1's weakest legal shuffle"
    artifacts = {"legacy_displacements": d_legacy, "candidate_displacements": d_candidate}
    if reference is not None:
        artifacts["reference_displacements"] = d_reference
    if min(len(d_reference), len(d_candidate)) < min_samples:
        return LevelResult("stats", True, f"too few matched elements for a test "
                           f"({len(d_reference)} vs {len(d_candidate)}, need {min_samples})",
                           skipped=True, artifacts=artifacts)
    # |displacement|: how far an element moved, whichever way (an unshuffled stream is all 0).
    d, p = ks_two_sample(np.abs(d_reference), np.abs(d_candidate),
                         "less" if direction == "less" else "two-sided")
    mean_ref, mean_cand = float(np.mean(np.abs(d_reference))), float(np.mean(np.abs(d_candidate)))
    metrics = {"ks_statistic": round(d, 6), "p_value": p, "alpha": alpha,
               "min_effect": min_effect, "direction": direction, "reference": against,
               "reference_n": len(d_reference), "candidate_n": len(d_candidate),
               "legacy_mean_abs_displacement": float(np.mean(np.abs(d_legacy)))
               if len(d_legacy) else None,
               "reference_mean_abs_displacement": mean_ref,
               "candidate_mean_abs_displacement": mean_cand}
    findings = []
    if p < alpha and d >= min_effect:
        findings.append(Finding(
            "distribution",
            f"candidate displacements differ from {against}: KS D={d:.3f}, p={p:.2g} < "
            f"alpha={alpha} (mean |displacement| {against} {mean_ref:.1f}, candidate "
            f"{mean_cand:.1f}; "
            + ("candidate looks unshuffled" if np.all(d_candidate == 0) else
               "candidate shuffles less" if mean_cand < mean_ref else
               "candidate shuffles differently") + ")",
            legacy=_describe_distribution(d_reference),
            candidate=_describe_distribution(d_candidate)))
    return level_result("stats", findings,
                        _stats_summary(d, p, d_reference, d_candidate, against, direction,
                                       alpha, min_effect),
                        metrics=metrics, artifacts=artifacts)


def _stats_summary(d, p, d_reference, d_candidate, against, direction, alpha,
                   min_effect) -> str:
    """What the passing stats level compared, without presenting a degenerate KS test (D=0,
    p=1 by construction) as if it had measured something."""
    compared = (f"|output - input position| of {len(d_candidate)} candidate element(s) vs "
                + (f"{len(d_reference)} legacy element(s)" if against == "legacy"
                   else f"{len(d_reference)} samples of {against}"))
    means = (f"mean |displacement| candidate {np.mean(np.abs(d_candidate)):.1f}, "
             f"{against} {np.mean(np.abs(d_reference)):.1f}")
    if not np.any(d_reference) and not np.any(d_candidate):
        return (f"no element moved on either side ({compared} all 0): no shuffle to compare, "
                "the KS test is degenerate and was not used")
    if d == 0 and direction == "less":
        return (f"{compared}: no sign of weaker shuffling, at every distance at least as "
                f"large a share of candidate elements moved that far as in {against} "
                f"(one-sided KS statistic 0; {means}); shuffling more than TF1 is bounded by "
                "the window level, not here")
    if d == 0:
        return f"{compared}: identical distributions (KS D=0; {means})"
    test = "one-sided KS (candidate shuffling less)" if direction == "less" else "two-sided KS"
    return (f"{compared}: {test} D={d:.3f}, p={p:.2g}, not flagged (needs p < {alpha} and "
            f"D >= {min_effect}; {means})")


def _describe_distribution(values) -> str:
    q = np.percentile(values, [5, 50, 95])
    return (f"n={len(values)}, mean |d|={np.mean(np.abs(values)):.1f}, p5/p50/p95="
            f"{q[0]:.0f}/{q[1]:.0f}/{q[2]:.0f}, zero={np.mean(values == 0):.0%}")
