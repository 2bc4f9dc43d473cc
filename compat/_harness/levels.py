"""Comparison levels. Each takes streams and returns a ``LevelResult``; none needs TensorFlow.

exact   same batches in the same order, bit for bit (optional float tolerance)
epochs  same number and sizes of batches; same multiset of elements per epoch (when epochs are
        separable) or per run; components of an element stay together
window  every output element j comes from the first j + capacity inputs (the TF1 shuffle-queue
        bound), given the input (source) order
stats   the distribution of displacements (output position - input position) is the same on
        both sides: two-sample Kolmogorov-Smirnov test at significance ``alpha``

The levels live in ``_element_levels`` (exact, epochs: which elements) and
``_displacement_levels`` (window, stats: where they came from in the input order), with the
float-tolerant element matching both use in ``_element_matching``. This module is the one the
rest of the harness imports them from.
"""
from __future__ import annotations

from compat._harness._displacement_levels import (displacements, ks_two_sample,
                                                  source_positions, stats,
                                                  tf1_minimum_displacements, window)
from compat._harness._element_levels import detect_epoch_size, epochs, exact
from compat._harness._element_matching import snap
from compat._harness.streams import as_stream

# as_stream is here because compare and input_order reach it as ``levels.as_stream``.
__all__ = ["exact", "epochs", "detect_epoch_size", "window", "stats", "source_positions",
           "displacements", "ks_two_sample", "tf1_minimum_displacements", "snap", "as_stream"]
