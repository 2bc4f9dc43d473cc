"""The levels that compare where elements came from in the input order: ``window`` (the
TF1 shuffle-queue bound on how early an element may arrive) and ``stats`` (a Kolmogorov-Smirnov
test on the displacements, output position - input position). See ``levels`` for all four.
"""
from __future__ import annotations

import math
from collections import defaultdict, deque

import numpy as np

from compat._harness._element_matching import render_element, snap
from compat._harness.report import Finding, LevelResult, level_result, skipped
from compat._harness.streams import as_stream

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
                candidate=render_element(candidate, element)))
            continue
        lead = position - element.position
        worst = max(worst, lead + 1)
        if position >= element.position + bound:
            findings.append(Finding(
                "window", f"element #{element.position} came from input #{position}; TF1 "
                f"guarantees input < {element.position} + {bound} (capacity {capacity}"
                + (f" + slack {slack}" if slack else "") + ")", batch=element.batch,
                candidate=render_element(candidate, element)))
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
