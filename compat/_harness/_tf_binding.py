"""Binding a pipeline function to the ``tf`` module one side of a comparison runs against.

``bind_tf`` never modifies the function's real module globals, so binding one side cannot leak
into the other. TensorFlow is imported inside functions only: ``compat.harness`` must import
without it.
"""
from __future__ import annotations

import inspect
import types

#: ``__name__`` of the modules that a legacy pipeline may use as ``tf``.
V1_MODULE_NAMES = frozenset({"tensorflow.compat.v1", "tensorflow._api.v2.compat.v1", "compat.v1"})
TF_ROOT_NAMES = frozenset({"tensorflow"})


class BuildError(Exception):
    """The pipeline function could not be called with the given ``tf`` module."""


def legacy_module():
    import tensorflow.compat.v1 as tf_v1
    return tf_v1


def shim_module():
    import compat.v1 as shim
    return shim


def _is_v1_module(value) -> bool:
    return isinstance(value, types.ModuleType) and value.__name__ in V1_MODULE_NAMES


class _RootWithV1:
    """Stands in for ``import tensorflow as tf`` so that ``tf.compat.v1`` is the chosen module."""

    def __init__(self, root, v1):
        self._root, self._v1 = root, v1
        self.compat = types.SimpleNamespace(v1=v1)

    def __getattr__(self, name):
        return getattr(self._root, name)


def takes_tf_argument(fn) -> bool:
    """True for ``build(tf)``; False for ``build()`` using a module-level ``tf``."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return bool(positional) and positional[0].default is inspect.Parameter.empty


def bind_tf(fn, module):
    """A zero-argument callable that runs the pipeline function ``fn`` against ``module``.

    ``build(tf)`` is called with the module. A function using a module-level ``tf`` (or any
    other global bound to ``tensorflow.compat.v1``/``compat.v1``, or ``import tensorflow`` used
    as ``tf.compat.v1``) runs on a *copy* of its globals where those names point at ``module``;
    functions defined in the same module are rebound to the copy too, so helpers called from
    the pipeline function see the same ``tf``. The real module globals are never modified,
    which is what keeps the two sides of a comparison isolated.
    """
    if takes_tf_argument(fn):
        return lambda: fn(module)
    return with_module_tf(fn, module)


def with_module_tf(fn, module):
    """``fn`` (whatever its parameters) running on a copy of its globals where the names
    bound to TF1's API point at ``module`` (see ``bind_tf``)."""
    if not isinstance(fn, types.FunctionType):
        return fn
    old = fn.__globals__
    new = dict(old)
    swapped = False
    for name, value in old.items():
        if _is_v1_module(value):
            new[name] = module
            swapped = True
        elif isinstance(value, types.ModuleType) and value.__name__ in TF_ROOT_NAMES:
            new[name] = _RootWithV1(value, module)
            swapped = True
    for name, value in old.items():
        if isinstance(value, types.FunctionType) and value.__globals__ is old:
            new[name] = _rebind(value, new)
    if not swapped and "tf" not in new:
        new["tf"] = module  # the function names `tf` without any module-level binding yet
    return _rebind(fn, new)


def _rebind(fn, new_globals):
    clone = types.FunctionType(fn.__code__, new_globals, fn.__name__, fn.__defaults__,
                               fn.__closure__)
    clone.__kwdefaults__ = fn.__kwdefaults__
    clone.__dict__.update(fn.__dict__)
    return clone
