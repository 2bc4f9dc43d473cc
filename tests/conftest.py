"""Shared test configuration: hypothesis profiles, TensorFlow availability, test scopes.

CI uses the "ci" profile; set COMPAT_HYPOTHESIS_PROFILE=long for the long run.

COMPAT_TEST_SCOPE picks the tests (each test is in exactly one of quick and extended, so CI
runs the whole matrix once as `tox -e quick,notf` then `tox -e extended`):

    full       every test in every behaviour (the default; `tox -e tf221` and friends)
    quick      the README's test command: every area, without what repeats coverage the
               quick run already has: `behaviour_independent` tests run under TF1 behaviour
               only, `extended` tests (large files, memory loops, subprocess round trips of
               what other tests cover in-process) not at all
    extended   exactly what quick leaves out
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


def pytest_generate_tests(metafunc):
    """Tests that use `tf_behavior` run once per behaviour; eager-only tests under TF2 alone
    (`disable_v2_behavior()` turns eager execution off for the whole process)."""
    if "tf_behavior" in metafunc.fixturenames:
        # TF2 first: the process then switches once, to TF1 behaviour, as a TF1 program does
        # at its start, and is never switched back (older TFs do not fully come back).
        modes = ("tf2",) if metafunc.definition.get_closest_marker("eager") else ("tf2", "tf1")
        metafunc.parametrize("tf_behavior", modes, indirect=True, scope="session")


@pytest.fixture(scope="session")
def tf_behavior(request):
    """The process-wide TF behaviour this test runs under: "tf1" (after
    `disable_v2_behavior()`, as TF1 programs run) or "tf2" (TF2 graph mode)."""
    import tf_behavior as behavior
    behavior.use(request.param)
    return request.param


_SCOPES = ("full", "quick", "extended")
_SCOPE = os.environ.get("COMPAT_TEST_SCOPE", "full")
if _SCOPE not in _SCOPES:
    raise pytest.UsageError(f"COMPAT_TEST_SCOPE={_SCOPE!r}: expected one of {', '.join(_SCOPES)}")


def _left_out_of_quick(item) -> bool:
    if item.get_closest_marker("extended"):
        return True
    behaviour = getattr(item, "callspec", None) and item.callspec.params.get("tf_behavior")
    return bool(item.get_closest_marker("behaviour_independent")) and behaviour == "tf2"


def _select_scope(config, items):
    if _SCOPE == "full":
        return
    keep, drop = [], []
    for item in items:
        (drop if _left_out_of_quick(item) == (_SCOPE == "quick") else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_collection_modifyitems(config, items):
    _select_scope(config, items)
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
