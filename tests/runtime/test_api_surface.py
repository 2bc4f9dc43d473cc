"""The shim's surface, parametrized over the one mapping table (compat/_api_table.py)."""
import importlib
import inspect

import pytest

from compat import _api_table

pytestmark = pytest.mark.needs_tf

SHIMMED = [(row, path) for row in _api_table.ROWS if row.impl for path in row.shim_paths]


def _resolve(root, dotted):
    value = root
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def _impl(row):
    module, _, attr = row.impl.partition(":")
    return getattr(importlib.import_module(module), attr)


def _signature(obj):
    target = obj.__init__ if inspect.isclass(obj) else obj
    return inspect.signature(inspect.unwrap(target))


@pytest.mark.parametrize("row,path", SHIMMED, ids=[path for _, path in SHIMMED])
def test_compat_v1_serves_the_shim_implementation(row, path, shim):
    assert _resolve(shim, path) is _impl(row)


@pytest.mark.parametrize("row,path", SHIMMED, ids=[path for _, path in SHIMMED])
def test_signature_is_tf1s(row, path, shim, legacy):
    assert _signature(_resolve(shim, path)) == _signature(_resolve(legacy, path))


@pytest.mark.parametrize("statement", [
    "import compat.v1.train as train; assert callable(train.shuffle_batch)",
    "from compat.v1.train import shuffle_batch",
    "from compat.v1.train.queue_runner import QueueRunner",
    "import compat.v1 as tf; tf.io.match_filenames_once; tf.queue.FIFOQueue; tf.errors.OutOfRangeError",
    "import compat.v1 as tf; assert tf.compat.v1 is tf",
])
def test_submodules_import_lazily_and_resolve(statement):
    exec(statement, {})


def test_untouched_names_are_tensorflows(shim, legacy):
    assert shim.parse_single_example is legacy.parse_single_example
    assert shim.train.Saver is legacy.train.Saver
    assert shim.errors.OutOfRangeError is legacy.errors.OutOfRangeError
