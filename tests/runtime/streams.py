"""Exact comparison of two fetched streams (lists of nested numpy values)."""
import numpy as np


def _leaves(value, path="batch"):
    if isinstance(value, dict):
        for key in sorted(value):
            yield from _leaves(value[key], f"{path}[{key!r}]")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _leaves(item, f"{path}[{i}]")
    elif hasattr(value, "dense_shape"):  # SparseTensorValue
        for part in ("indices", "values", "dense_shape"):
            yield f"{path}.{part}", np.asarray(getattr(value, part))
    else:
        yield path, np.asarray(value)


def structure(value):
    if isinstance(value, dict):
        return {key: structure(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value).__name__, [structure(item) for item in value]
    return "sparse" if hasattr(value, "dense_shape") else "tensor"


def assert_streams_equal(expected, actual):
    """Same number of batches, same structure, same dtypes and values bit for bit."""
    assert len(actual) == len(expected), f"{len(actual)} batches, TF1 gave {len(expected)}"
    for index, (want, got) in enumerate(zip(expected, actual)):
        assert structure(got) == structure(want), f"batch {index}: structure differs"
        for (path, want_leaf), (_, got_leaf) in zip(_leaves(want), _leaves(got)):
            where = f"batch {index}, {path}"
            assert got_leaf.dtype == want_leaf.dtype, f"{where}: dtype {got_leaf.dtype} != {want_leaf.dtype}"
            np.testing.assert_array_equal(got_leaf, want_leaf, err_msg=where)
