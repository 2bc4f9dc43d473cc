"""Shared test configuration: hypothesis profiles and TensorFlow availability.

CI uses the "ci" profile; set COMPAT_HYPOTHESIS_PROFILE=long for the long run.
"""
import importlib.util
import os

import pytest
from hypothesis import HealthCheck, settings

HAS_TF = importlib.util.find_spec("tensorflow") is not None

settings.register_profile(
    "ci", max_examples=20, deadline=None, derandomize=True, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile(
    "long", max_examples=200, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile(
    "dev", max_examples=3, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("COMPAT_HYPOTHESIS_PROFILE", "ci"))
# Timeouts are sized for the ci profile's example count; longer profiles scale them.
_TIMEOUT_SCALE = max(1.0, settings().max_examples / 20)


def pytest_collection_modifyitems(config, items):
    if _TIMEOUT_SCALE > 1:
        for item in items:
            marker = item.get_closest_marker("timeout")
            if marker and marker.args:
                item.add_marker(pytest.mark.timeout(marker.args[0] * _TIMEOUT_SCALE),
                                append=False)
    if HAS_TF:
        return
    skip = pytest.mark.skip(reason="TensorFlow is not installed (no-TF tox env)")
    for item in items:
        if "needs_tf" in item.keywords:
            item.add_marker(skip)
