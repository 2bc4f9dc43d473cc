"""``compare``: run both sides, pick the levels, collect a Report."""
from __future__ import annotations

import types

from compat._harness import levels as L
from compat._harness.report import (LevelResult, Report, SideSummary, level_result, skipped,
                                    Finding)
from compat._harness.runner import (PipelineFacts, SideRun, legacy_module, run_side,
                                    shim_module)
from compat._harness.input_order import Inputs, candidate_order
from compat._harness.streams import Stream

LEVELS = ("exact", "epochs", "window", "stats")
DEFAULT_MAX_BATCHES = 1000


def parse_mode(mode) -> tuple:
    """"auto", one level, "epochs+window", or a sequence of level names."""
    if isinstance(mode, str):
        parts = [p.strip() for p in mode.replace(",", "+").split("+") if p.strip()]
    else:
        parts = list(mode)
    if parts == ["auto"]:
        return ("auto",)
    unknown = [p for p in parts if p not in LEVELS]
    if unknown or not parts:
        raise ValueError(f"mode {mode!r}: use 'auto' or levels from {LEVELS} joined by '+'")
    return tuple(parts)


def choose_levels(facts: PipelineFacts, have_source: bool) -> tuple:
    """The strongest levels TF1 guarantees for the legacy pipeline, and why."""
    if facts.deterministic:
        return ("exact",), ("single-threaded pipeline without a shuffle queue or unseeded "
                            "shuffle: TF1 output is deterministic")
    why = []
    if facts.shuffle_queues:
        why.append("shuffle queue " + ", ".join(f"{q.name} (capacity {q.capacity})"
                                                 for q in facts.shuffle_queues))
    if facts.max_enqueue_threads > 1:
        why.append(f"{facts.max_enqueue_threads} enqueue threads")
    if facts.joins:
        why.append("*_join readers")
    if facts.unseeded_shuffles:
        why.append(f"unseeded shuffle ({facts.unseeded_shuffles[0]})")
    chosen = ("epochs", "window")
    if facts.shuffle_queues and have_source:
        chosen += ("stats",)
    return chosen, "TF1 order is timing- or seed-dependent: " + "; ".join(why)


def _summary(run: SideRun) -> SideSummary:
    stream = run.stream
    try:
        count = len(stream.elements())
    except Exception:  # noqa: BLE001 - ragged data: still summarise the side
        count = sum(stream.batch_sizes())
    return SideSummary(run.origin or stream.origin, len(stream.batches), count, stream.ended,
                       stream.error, run.seconds, run.facts.to_json())


def _side_from(value, build, *, max_batches, graph_seed, timeout, role):
    """Turn the legacy=/candidate= argument into a SideRun."""
    from compat._harness.golden import Golden
    if isinstance(value, SideRun):
        return value
    if isinstance(value, Golden):
        return value.side_run()
    if isinstance(value, Stream):
        return SideRun(value, origin=value.origin or role)
    if isinstance(value, types.ModuleType):
        return run_side(build, value, max_batches=max_batches, graph_seed=graph_seed,
                        timeout=timeout, origin=getattr(value, "__name__", role))
    if isinstance(value, (list, tuple)):
        stream = L.as_stream(value, origin=role)
        return SideRun(stream, origin=role)
    if callable(value):
        return run_side(value, None, max_batches=max_batches, graph_seed=graph_seed,
                        timeout=timeout, origin=f"{role} {_describe(value)}")
    raise TypeError(f"{role}: expected None, a tf module, a callable, a Stream or a Golden, "
                    f"got {type(value).__name__}")


def _through_to_dataset(build, graph_seed):
    """The candidate that runs `build` through the TF2 bridge (`compat.to_dataset`)."""
    import compat

    def to_dataset():
        return compat.to_dataset(_taking_tf(build), graph_seed=graph_seed)
    to_dataset.__qualname__ = f"to_dataset({getattr(build, '__qualname__', 'build')})"
    return to_dataset


def _taking_tf(build):
    """`build` as to_dataset calls it: ``build(tf)``, also for a build that uses a
    module-level ``tf`` (the harness accepts both, see `runner.run_side`)."""
    from compat._harness import runner
    return lambda tf: runner.bind_tf(build, tf)()


def _describe(fn) -> str:
    return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"


def compare(build, candidate=None, mode="auto", max_batches: int | None = DEFAULT_MAX_BATCHES,
            *, legacy=None, graph_seed: int | None = None, rtol: float = 0.0,
            atol: float = 0.0, epoch_size: int | None = None, source=None,
            source_index: str | None = None, capacity: int | None = None, slack: int | None = None,
            alpha: float = 0.001, min_effect: float = 0.4, stats_direction: str | None = None,
            timeout: float = 120.0) -> Report:
    """Run ``build`` under legacy TF1 queues and under the candidate; compare the streams.

    build:      the legacy pipeline function: ``build(tf)`` or one using a module-level ``tf``.
                It returns what to fetch (tensor, list, tuple, dict, SparseTensor).
    candidate:  None -> the same ``build`` under ``compat.v1`` (the shim);
                "to_dataset" -> ``compat.to_dataset(build, graph_seed=graph_seed)``, the
                ``build`` handed to TF2 as a tf.data.Dataset (the TF2 bridge);
                a module -> the same ``build`` under that module (``tensorflow.compat.v1`` gives
                a legacy-vs-legacy run); a callable -> called as is (with ``tensorflow.compat.v1``
                if it takes an argument) in a fresh graph, returning a ``tf.data.Dataset`` or
                fetches; a Stream/Golden -> used as recorded.
    mode:       "auto", a level ("exact", "epochs", "window", "stats") or levels joined by "+".
    max_batches: stop each side after this many batches (None: until OutOfRangeError).
    legacy:     None -> real ``tensorflow.compat.v1``; a Golden from ``replay`` (checked against
                ``build``, ``graph_seed`` and ``max_batches``); a module; a Stream.
    graph_seed: ``tf.set_random_seed`` for both graphs (None: unseeded, TF1's default).
    rtol, atol: float tolerance (``numpy.isclose``) of every level; 0 means bit for bit.
    epoch_size: elements per epoch for ``epochs`` (default: detected when TF1 keeps epochs apart).
    source / source_index: the input order for ``window``/``stats`` (see ``levels.source_positions``);
                source may also be a ``build(tf)`` function whose stream is the input order.
                Default: re-run ``build`` with ``shuffle_batch`` -> single-threaded ``batch``,
                when the producers are deterministic (unshuffled or seeded).
    capacity, slack: override the window bound read from the legacy graph.
    alpha, min_effect, stats_direction: significance, effect floor and direction of ``stats``.
                With one shuffle queue, stats tests the candidate against TF1's weakest legal
                shuffle (``levels.tf1_minimum_displacements``), one-sided by default;
                otherwise against the legacy run, two-sided by default.
    timeout:    seconds per side before a blocked pipeline is cut off.
    """
    requested = parse_mode(mode)
    notes = []
    legacy_run = _side_from(legacy, build, max_batches=max_batches, graph_seed=graph_seed,
                            timeout=timeout, role="legacy") if legacy is not None else \
        run_side(build, legacy_module(), max_batches=max_batches, graph_seed=graph_seed,
                 timeout=timeout, origin="tensorflow.compat.v1")
    from compat._harness.golden import Golden
    if isinstance(legacy, Golden):
        legacy.check(build=build, graph_seed=graph_seed, max_batches=max_batches)
        notes.append(f"legacy side replayed from golden file recorded with TensorFlow "
                     f"{legacy.metadata.get('tf_version')}")
    order_of_candidate = candidate if candidate is not None else shim_module()
    if isinstance(candidate, SideRun) and candidate.module is not None:
        order_of_candidate = candidate.module  # a recorded run of this build: re-run it
    if isinstance(candidate, str) and candidate == "to_dataset":
        candidate = _through_to_dataset(build, graph_seed)
    candidate_run = _side_from(candidate if candidate is not None else shim_module(), build,
                               max_batches=max_batches, graph_seed=graph_seed, timeout=timeout,
                               role="candidate")
    facts = legacy_run.facts
    streams = {"legacy": legacy_run.stream, "candidate": candidate_run.stream}
    legacy_stream, candidate_stream = legacy_run.stream, candidate_run.stream
    for run in (legacy_run, candidate_run):
        notes.extend(getattr(run, "notes", ()))
    # Both sides split batches into elements the same way: the legacy graph decides.
    if candidate_stream.batched != legacy_stream.batched or \
            candidate_stream.unpad != legacy_stream.unpad:
        candidate_stream = candidate_stream.with_options(batched=legacy_stream.batched,
                                                         unpad=legacy_stream.unpad)
    if legacy_stream.ended == "timeout":
        # TF1 itself did not finish: compare what it delivered, and say so.
        notes.append(f"the legacy side (TF1) did not finish within timeout={timeout:g}s: only "
                     f"its first {len(legacy_stream.batches)} batch(es) are compared, with "
                     "as many of the candidate's")
        candidate_stream = candidate_stream.with_options(
            batches=candidate_stream.batches[:len(legacy_stream.batches)],
            ended="max_batches" if candidate_stream.ended != "error" else "error")
    elif candidate_stream.ended == "timeout":
        notes.append(f"the candidate did not finish within timeout={timeout:g}s (TF1 did)")
    results = []
    if legacy_stream.error or candidate_stream.error:
        errors = _errors_result(legacy_stream, candidate_stream)
        results.append(errors)
        if not errors.passed:
            return Report(False, str(mode), ("run",), "a side raised an error", (errors,),
                          _summary(legacy_run), _summary(candidate_run), tuple(notes), streams)
        notes.append("both sides raised the same error type; the elements each delivered "
                     "before it are compared as the whole stream")
    if facts.unseeded_random_ops:
        notes.append("the pipeline has unseeded random ops (" + ", ".join(
            facts.unseeded_random_ops[:3]) + "); their values differ between runs: set "
            "graph_seed or op seeds")

    inputs = Inputs(build, facts, legacy_run, graph_seed, timeout, legacy)
    orders = _Orders(source_index)
    needs_source = requested == ("auto",) or {"window", "stats"} & set(requested)
    if needs_source and source_index is None:
        orders.legacy, legacy_note = inputs.ordered(source)
        if source is not None:
            orders.candidate = orders.legacy  # the caller's input order, for both sides
        elif orders.legacy is not None:
            orders.candidate, candidate_note = candidate_order(
                order_of_candidate, build, facts, graph_seed, timeout,
                legacy_stream.batched, legacy_stream.unpad)
            if orders.candidate is None:
                orders.why_not_candidate = candidate_note
            else:
                notes.append(candidate_note)
        if legacy_note:
            notes.append(legacy_note)
        if orders.legacy is None:
            orders.why_not_legacy = legacy_note or (
                "input order unknown: pass source= or source_index=, or seed the producers "
                "(graph_seed=) so the input order can be re-run")

    if requested == ("auto",):
        chosen, reason = choose_levels(facts, orders.known)
        if not facts.deterministic and not orders.known:
            results.append(skipped("window", orders.why_unknown()))
            reason += "; window not checked (" + orders.why_unknown() + ")"
            chosen = tuple(level for level in chosen if level != "window")
    else:
        chosen, reason = requested, "levels requested by the caller"

    window_capacity = facts.window_capacity if capacity is None else capacity
    window_slack = facts.window_slack if slack is None else slack
    for level in chosen:
        if level == "exact":
            results.append(L.exact(legacy_stream, candidate_stream, rtol=rtol, atol=atol))
        elif level == "epochs":
            results.append(_run_epochs(legacy_stream, candidate_stream, facts, epoch_size,
                                       inputs, notes, rtol, atol))
        elif level == "window":
            results.append(_run_window(legacy_stream, candidate_stream, window_capacity,
                                       window_slack, orders, rtol, atol))
        elif level == "stats":
            window_result = next((r for r in results if r.level == "window"), None)
            if not orders.known:
                results.append(skipped("stats", orders.why_unknown()))
            elif window_result is not None and window_result.skipped:
                results.append(skipped("stats", "no usable input order (see the window level)"))
            else:
                results.append(_run_stats(legacy_stream, candidate_stream, facts, orders,
                                          alpha, min_effect, stats_direction, rtol, atol))
    notes.extend(_tolerance_hint(results, legacy_stream, candidate_stream, facts, epoch_size,
                                 inputs, rtol, atol))
    if legacy_stream.ended == "max_batches":
        notes.append(f"both sides were cut at max_batches={max_batches}")
    if not legacy_stream.batches:
        notes.append("the legacy side produced no batches: nothing was really compared")
    checked = tuple(r for r in results if not r.skipped)
    equivalent = bool(checked) and all(r.passed for r in checked)
    return Report(equivalent, str(mode), tuple(r.level for r in checked), reason,
                  tuple(results), _summary(legacy_run), _summary(candidate_run), tuple(notes),
                  streams)


class _Orders:
    """Each side's input order (see `input_order`), and why one is unknown."""

    def __init__(self, source_index):
        self.source_index = source_index
        self.legacy = self.candidate = None
        self.why_not_legacy = self.why_not_candidate = ""

    @property
    def known(self) -> bool:
        return self.source_index is not None or (
            self.legacy is not None and self.candidate is not None)

    def why_unknown(self) -> str:
        return self.why_not_legacy or self.why_not_candidate or "input order unknown"


def _errors_result(legacy: Stream, candidate: Stream) -> LevelResult:
    """Both sides failing the same way is equivalence too (e.g. a ValueError on bad args)."""
    if legacy.error and candidate.error:
        same = legacy.error.split(":")[0] == candidate.error.split(":")[0]
        finding = [] if same else [Finding("error", "the sides raised different errors",
                                           legacy=legacy.error, candidate=candidate.error)]
        return level_result("run", finding, f"both sides raised {legacy.error.split(':')[0]}")
    if candidate.error:
        return level_result("run", [Finding("error", f"the candidate raised {candidate.error}",
                                            batch=len(candidate.batches),
                                            candidate=candidate.error)], "")
    return level_result("run", [Finding("error", f"the legacy side raised {legacy.error}, the "
                                        "candidate did not", batch=len(legacy.batches),
                                        legacy=legacy.error)], "")


def _run_epochs(legacy_stream, candidate_stream, facts, epoch_size, inputs, notes, rtol,
                atol):
    check_counts = True
    universe = None
    if epoch_size is None and facts.epochs_separable:
        epoch_size = L.detect_epoch_size(legacy_stream)
        if epoch_size is None and not facts.deterministic:
            # Less than two full epochs in the run, and the last one's content is random
            # (shuffled producer): learn the epoch from the whole input instead.
            universe = inputs.everything()
            if universe is not None:
                epoch_size = L.detect_epoch_size(universe)
                if epoch_size is None and not universe.truncated:
                    epoch_size = len(universe.elements()) or None  # a single epoch
                if epoch_size is None:
                    universe = None
    if legacy_stream.truncated and not epoch_size:
        # Cut inside a mixing run, each side's prefix is a different random subset.
        check_counts = facts.deterministic
    tolerance = 0
    if facts.drops_remainder and not facts.epochs_separable and legacy_stream.batches \
            and not legacy_stream.truncated:
        tolerance = max(legacy_stream.batch_sizes()) - 1
        universe = inputs.everything()
        if universe is None:
            notes.append("elements swapped within the dropped final remainder could not be "
                         "checked against the input (it could not be re-run)")
    return L.epochs(legacy_stream, candidate_stream, epoch_size=epoch_size,
                    check_counts=check_counts, remainder_tolerance=tolerance, universe=universe,
                    rtol=rtol, atol=atol)


def _run_stats(legacy_stream, candidate_stream, facts, orders, alpha, min_effect, direction,
               rtol, atol):
    """With one shuffle queue, test against TF1's weakest legal shuffle (one-sided): a legacy
    run can never be flagged, however its timing filled the queue. Otherwise against legacy."""
    reference = None
    if len(facts.shuffle_queues) == 1 and legacy_stream.batches:
        n_inputs = (len(orders.legacy.elements()) if orders.legacy is not None
                    else len(legacy_stream.elements()))
        reference = L.tf1_minimum_displacements(
            len(legacy_stream.elements()), facts.shuffle_queues[0].min_after_dequeue, n_inputs)
        direction = direction or "less"
    return L.stats(legacy_stream, candidate_stream, source=orders.legacy,
                   candidate_source=orders.candidate, source_index=orders.source_index,
                   alpha=alpha, min_effect=min_effect,
                   direction=direction or "two-sided", reference=reference, rtol=rtol,
                   atol=atol)


def _tolerance_hint(results, legacy_stream, candidate_stream, facts, epoch_size, inputs, rtol,
                    atol):
    """When elements differ only by float rounding, say so (and which tolerance would do)."""
    if rtol or atol:
        return []
    failed = [r for r in results if not r.passed and r.level in ("exact", "epochs")]
    if not failed or not any(f.kind in ("value", "missing", "extra", "moved", "misaligned")
                             for r in failed for f in r.findings):
        return []
    for tolerance in (1e-6, 1e-4):
        retry = _run_epochs(legacy_stream, candidate_stream, facts, epoch_size, inputs, [],
                            tolerance, tolerance)
        if retry.passed:
            return [f"the elements match within rtol=atol={tolerance:g}: only float rounding "
                    f"differs (pass rtol=/atol=, or --rtol/--atol, to accept it)"]
    return []


def _run_window(legacy_stream, candidate_stream, capacity, slack, orders, rtol=0.0, atol=0.0):
    if not orders.known:
        return skipped("window", orders.why_unknown())
    sanity = L.window(legacy_stream, capacity, source=orders.legacy,
                      source_index=orders.source_index, slack=slack)
    if not sanity.passed:
        return skipped("window", "the input order does not explain the legacy stream itself "
                       f"({sanity.findings[0].message}); not checked")
    return L.window(candidate_stream, capacity, source=orders.candidate,
                    source_index=orders.source_index, slack=slack, rtol=rtol, atol=atol)
