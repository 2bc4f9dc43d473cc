"""The levels that compare which elements each side produced: ``exact`` (same batches in the
same order, bit for bit or within a float tolerance) and ``epochs`` (same batch sizes, same
multiset of elements per epoch or per run). See ``levels`` for all four.
"""
from __future__ import annotations

import hashlib
from collections import Counter

import numpy as np

from compat._harness._element_matching import render_element, snap
from compat._harness.report import Finding, LevelResult, level_result
from compat._harness.streams import (SparseValue, as_stream, element_counter, leaves, render,
                                     structure)

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
        legacy=render_element(legacy, first_missing) if first_missing else None,
        candidate=render_element(candidate, first_extra) if first_extra else None)


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
                batch=sample.batch, legacy=render_element(legacy, sample),
                candidate=render_element(candidate, next(e for e in part_c if e.keys in extra))))
            continue
        for key, count in list(missing.items())[:3]:
            sample = next(e for e in part_l if e.keys == key)
            findings.append(Finding(
                "missing", f"{where}: {count} element(s) missing from the candidate "
                f"({sum(missing.values())} missing in total)", batch=sample.batch,
                legacy=render_element(legacy, sample)))
        for key, count in list(extra.items())[:3]:
            sample = [e for e in part_c if e.keys == key][-1]
            kind = "duplicated" if key in all_l and all_c[key] > all_l[key] else (
                "extra" if key not in all_l else "moved")
            text = {"duplicated": "duplicated in the candidate",
                    "extra": "in the candidate but never in legacy",
                    "moved": "in a different epoch than in legacy"}[kind]
            findings.append(Finding(
                kind, f"{where}: {count} element(s) {text} ({sum(extra.values())} extra in "
                f"total)", batch=sample.batch, candidate=render_element(candidate, sample)))
    return findings, tolerated


def _components_match(part_l, part_c) -> bool:
    if not part_l or len(part_l) != len(part_c) or len(part_l[0].keys) < 2:
        return False
    for i in range(len(part_l[0].keys)):
        if Counter(e.keys[i] for e in part_l) != Counter(e.keys[i] for e in part_c):
            return False
    return True
