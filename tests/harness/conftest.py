"""Harness test helpers: the pipelines module is importable as ``harness_pipelines`` (needs TF)."""
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@pytest.fixture(scope="session")
def tf_v1():
    import tensorflow as tf
    tf.get_logger().setLevel("ERROR")  # deprecation warnings of every queue API
    return tf.compat.v1


@pytest.fixture(scope="session")
def pipelines(tf_v1):
    import harness_pipelines as module
    return module


@pytest.fixture(autouse=True)
def _under_each_tf_behavior(tf_behavior):
    """Every test here runs after `disable_v2_behavior()` and in TF2 graph mode."""
    return tf_behavior
