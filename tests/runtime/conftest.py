"""Fixtures for the runtime tests: run one legacy pipeline function under a given `tf`.

Every semantic test runs the same function twice, with `tensorflow.compat.v1` (the oracle)
and with `compat.v1` (the shim), each in its own graph and session.
"""
import pytest

tf_real = pytest.importorskip("tensorflow")

from session_streams import run_stream  # noqa: E402,F401 - the runtime tests import it from here


@pytest.fixture(scope="session")
def legacy():
    import tensorflow.compat.v1 as tf_v1
    return tf_v1


@pytest.fixture(scope="session")
def shim():
    import compat.v1 as tf_shim
    return tf_shim


def build_error(tf, build):
    """The exception `build(tf)` raises while building the graph, or None."""
    with tf_real.Graph().as_default():
        try:
            build(tf)
        except Exception as error:  # noqa: BLE001 - the type is what the tests compare
            return error
    return None


@pytest.fixture(autouse=True)
def _under_each_tf_behavior(tf_behavior):
    """Every test here runs after `disable_v2_behavior()` and in TF2 graph mode."""
    return tf_behavior
