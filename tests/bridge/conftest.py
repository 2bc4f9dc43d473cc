"""Fixtures for the TF2 bridge tests (`compat.to_dataset`).

Tests that need eager execution carry `@pytest.mark.eager` and run under TF2 alone; the
others run under both TF behaviours (see tests/conftest.py), as the runtime tests do.
"""
import os
import sys
from pathlib import Path

import pytest

tf_real = pytest.importorskip("tensorflow")

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


@pytest.fixture(scope="session")
def legacy():
    import tensorflow.compat.v1 as tf_v1
    return tf_v1


@pytest.fixture(scope="session")
def shim():
    import compat.v1 as tf_shim
    return tf_shim


@pytest.fixture(autouse=True)
def _under_each_tf_behavior(tf_behavior):
    return tf_behavior
