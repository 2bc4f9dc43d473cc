"""Regression harness: prove a migrated input pipeline gives the same data as the TF1 one.

::

    from compat import harness
    report = harness.compare(build_input, mode="auto", max_batches=500)  # TF1 queues vs compat.v1
    report = harness.compare(build_input, candidate=my_tf_data_fn)       # TF1 vs your tf.data
    assert report.equivalent, report.explain()

``build_input`` is the legacy pipeline function: ``build(tf)`` taking the ``tf`` module, or a
function that uses a module-level ``tf``; the harness runs it once with ``tf`` bound to
``tensorflow.compat.v1`` (real queues, own graph/Session/Coordinator) and once with ``tf``
bound to ``compat.v1`` (or runs the candidate you give), then compares the streams.

Levels (each also a function here, taking two streams):

``exact``   same batches in order, bit for bit
``epochs``  same number/sizes of batches; same multiset of elements per epoch (or per run when
            TF1 mixes epochs); components stay aligned
``window``  output element j comes from the first j + capacity inputs. The input order comes from
            ``source_index=`` (the path of a component, e.g. ``"['position']"``, whose value
            is the element's position in the order elements entered the batching queue), ``source=`` (the input sequence, or a
            ``build(tf)`` producing it), or automatically from the legacy pipeline re-run with
            ``shuffle_batch`` replaced by single-threaded ``batch`` when its producers are
            deterministic (unshuffled or seeded).
``stats``   |displacement| (output minus input position) distributions compared by a
            two-sample Kolmogorov-Smirnov test at ``alpha`` (default 0.001) with an effect
            floor (``min_effect``, D >= 0.4). With a shuffle queue, ``compare`` tests the
            candidate one-sided against the weakest shuffle TF1 allows (queue held at
            ``min_after_dequeue``), because TF1's own displacements follow timing; two legacy
            runs can then not flag each other, while an unshuffled stream or a too-small
            buffer is flagged. ``window`` bounds the other side.

``mode="auto"`` inspects the legacy graph: ``exact`` when it is single-threaded without shuffle
queues or unseeded shuffles, else ``epochs`` + ``window`` (+ ``stats`` when a shuffle queue
exists and the input order is known). ``Report.reason`` says what decided it.

Floats are compared bit for bit unless ``rtol``/``atol`` are given (every level honours them;
a failing report says when the elements would match within 1e-6 or 1e-4).

Golden streams: ``record(build, "golden.npz", ...)`` then
``compare(build, legacy=replay("golden.npz", build=build))``.

Also: ``python -m compat.harness module:function``, the pytest plugin (fixture
``compat_harness``, marker ``compat_equivalent``), and ``compat.harness.strategies`` (hypothesis).

Importing this package imports neither TensorFlow nor numpy; they load on first use.
"""
from __future__ import annotations

import importlib

__all__ = ["compare", "exact", "epochs", "window", "stats", "record", "replay",
           "detect_epoch_size", "source_positions", "displacements", "ks_two_sample",
           "tf1_minimum_displacements", "snap", "Report", "LevelResult", "Finding",
           "SideSummary", "Stream", "SparseValue", "Golden", "GoldenMismatchError", "PipelineFacts", "run_side", "as_stream", "REPORT_JSON_SCHEMA",
           "DEFAULT_MAX_BATCHES", "strategies"]

# name -> private module providing it; resolved on first attribute access.
_EXPORTS = {
    "compare": "compare", "DEFAULT_MAX_BATCHES": "compare",
    "exact": "levels", "epochs": "levels", "window": "levels", "stats": "levels",
    "detect_epoch_size": "levels", "source_positions": "levels", "displacements": "levels",
    "ks_two_sample": "levels", "tf1_minimum_displacements": "levels", "snap": "levels",
    "record": "golden", "replay": "golden", "Golden": "golden", "GoldenMismatchError": "golden",
    "Report": "report", "LevelResult": "report", "Finding": "report", "SideSummary": "report",
    "REPORT_JSON_SCHEMA": "report",
    "Stream": "streams", "SparseValue": "streams", "as_stream": "streams",
    "PipelineFacts": "runner", "run_side": "runner",
}


def __getattr__(name):
    if name == "strategies":
        return importlib.import_module(f"{__name__}.strategies")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"compat._harness.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
