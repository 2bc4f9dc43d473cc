"""compat: TensorFlow 1 queue-based input pipelines on tf.data.

Three parts, each imported only when touched (none of them imports TensorFlow at import time):

- ``compat.v1``      drop-in replacement for ``tensorflow.compat.v1`` (the runtime shim)
- ``compat.check``   the migration checker (``compat-check``), runs without TensorFlow
- ``compat.harness`` the regression harness comparing legacy TF1 and shim streams
"""
import importlib

__version__ = "0.1.0"
__all__ = ["v1", "check", "harness", "__version__"]


def __getattr__(name):
    if name in ("v1", "check", "harness"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
