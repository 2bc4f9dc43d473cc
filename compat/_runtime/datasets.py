"""Dataset transformations the shim uses in place of tf.data's, where those cost more."""
from __future__ import annotations

import tensorflow as tf
# tf.data loads the modules of its transformations at their first use; the shim's pipelines
# use these, and load them with the shim (see `lazy_modules._load_runtime`).
from tensorflow.python.data.ops import flat_map_op, from_tensors_op, take_op  # noqa: F401
from tensorflow.python.data.ops import unbatch_op as _unbatch_op


def unbatched(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """`dataset.unbatch()` without its re-encoding map where every component is dense.

    tf.data's unbatch first maps every element through a function that re-encodes sparse and
    ragged components; for dense ones it is an identity that still costs a traced function,
    its instantiation, and a call per element (and, inside a flat_map, per file)."""
    if all(isinstance(spec, tf.TensorSpec) for spec in tf.nest.flatten(dataset.element_spec)):
        return _unbatch_op._UnbatchDataset(dataset)  # pylint: disable=protected-access
    return dataset.unbatch()
