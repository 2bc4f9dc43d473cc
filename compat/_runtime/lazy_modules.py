"""Lazy mirror of ``tensorflow.compat.v1`` with the shim's overrides.

``compat.v1`` and every ``compat.v1.<sub>`` module are proxies: an attribute is looked up
first in the override table (``compat._api_table``), then in the matching TensorFlow module.
TensorFlow is imported on the first attribute access, never at import time.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

from compat import _api_table, _install

ROOT = "compat.v1"
_TF_ROOT = "tensorflow.compat.v1"
_OVERRIDES = _api_table.shim_overrides()


def _resolve(impl: str):
    module_name, _, attr = impl.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def _tf_module(relative: str):
    module = importlib.import_module(_TF_ROOT)
    for part in filter(None, relative.split(".")):
        module = getattr(module, part)
    return module


_runtime_loaded = []


def _load_runtime() -> None:
    """Import the shim's runtime (and TensorFlow) at the first name looked up, as importing
    TensorFlow loads its own: building the first pipeline then pays no imports (~15 ms);
    and TensorFlow's first failed op look-up runs meanwhile (see `registry_warmup`)."""
    if not _runtime_loaded:
        _install.require_tensorflow("compat.v1")
        _runtime_loaded.append(True)
        for module_name in sorted({impl.partition(":")[0] for table in _OVERRIDES.values()
                                   for impl in table.values()}):
            importlib.import_module(module_name)
        importlib.import_module("compat._runtime.registry_warmup").start()


def lookup(relative: str, name: str):
    """Attribute ``name`` of ``compat.v1.<relative>``: the shim's, else TensorFlow's."""
    _load_runtime()
    impl = _OVERRIDES.get(relative, {}).get(name)
    if impl is not None:
        return _resolve(impl)
    if relative == "compat" and name == "v1":
        return sys.modules[ROOT]
    value = getattr(_tf_module(relative), name)
    if isinstance(value, types.ModuleType):
        return proxy_module(f"{relative}.{name}" if relative else name)
    return value


def names(relative: str) -> list:
    return sorted(set(dir(_tf_module(relative))) | set(_OVERRIDES.get(relative, {})))


class ShimModule(types.ModuleType):
    """A ``compat.v1.<relative>`` module that resolves attributes lazily."""

    def __init__(self, relative: str):
        super().__init__(f"{ROOT}.{relative}")
        self.__dict__["_relative"] = relative
        self.__dict__["__path__"] = []  # a package, so that `import compat.v1.a.b` works

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = lookup(self._relative, name)
        self.__dict__[name] = value  # cache: later lookups are plain attribute reads
        return value

    def __dir__(self):
        return names(self._relative)


def proxy_module(relative: str) -> ShimModule:
    full = f"{ROOT}.{relative}"
    module = sys.modules.get(full)
    if module is None:
        module = sys.modules[full] = ShimModule(relative)
    return module


class _ShimFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Makes ``import compat.v1.train`` (and deeper) produce proxy modules."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith(ROOT + "."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return ShimModule(spec.name[len(ROOT) + 1:])

    def exec_module(self, module):
        pass


def install_finder() -> None:
    if not any(isinstance(finder, _ShimFinder) for finder in sys.meta_path):
        sys.meta_path.append(_ShimFinder())
