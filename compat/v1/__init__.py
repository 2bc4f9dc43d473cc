"""Drop-in replacement for ``tensorflow.compat.v1``: ``import compat.v1 as tf``.

Everything in ``tensorflow.compat.v1`` is here; the queue-based input pipeline APIs are
replaced by versions that compile to one tf.data pipeline. TensorFlow is imported on the
first attribute access.
"""
from compat._runtime import lazy_modules as _lazy

_lazy.install_finder()


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    value = _lazy.lookup("", name)
    globals()[name] = value
    return value


def __dir__():
    return _lazy.names("")
