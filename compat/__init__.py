"""compat: TensorFlow 1 queue-based input pipelines on tf.data.

Three parts, each imported only when touched (none of them imports TensorFlow at import time):

- ``compat.v1``      drop-in replacement for ``tensorflow.compat.v1`` (the runtime shim)
- ``compat.check``   the migration checker (``compat-check``), runs without TensorFlow
- ``compat.harness`` the regression harness comparing legacy TF1 and shim streams
- ``compat.to_dataset(build, *args, graph_seed=None, **kwargs)`` the TF2 bridge: legacy
  pipeline code as a ``tf.data.Dataset`` for eager code, ``tf.function``, Keras,
  ``tf.distribute`` and the tf.data service
"""
import importlib

__version__ = "0.1.0"
__all__ = ["v1", "check", "harness", "to_dataset", "__version__"]


def __getattr__(name):
    if name in ("v1", "check", "harness"):
        return importlib.import_module(f"{__name__}.{name}")
    if name == "to_dataset":
        importlib.import_module(f"{__name__}._install").require_tensorflow("compat.to_dataset")
        return importlib.import_module(f"{__name__}._bridge").to_dataset
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
