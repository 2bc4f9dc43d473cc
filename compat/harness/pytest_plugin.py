"""pytest plugin (entry point ``pytest11: compat_harness``).

Fixture::

    def test_inputs(compat_harness):
        report = compat_harness.assert_equivalent(build_input, max_batches=200)

Marker (the comparison runs before the test body; the test fails with the report's
explanation when the streams differ, and may look at the report through ``compat_report``)::

    @pytest.mark.compat_equivalent(build_input, mode="auto", max_batches=200)
    def test_inputs(compat_report):
        assert compat_report.levels

Command-line option ``--compat-max-batches N`` sets the default ``max_batches``.

Loading the plugin imports neither TensorFlow nor numpy.
"""
from __future__ import annotations

import pytest

MARKER = "compat_equivalent"


def pytest_addoption(parser):
    group = parser.getgroup("compat-harness")
    group.addoption("--compat-max-batches", type=int, default=None,
                    help="default max_batches of compat harness comparisons")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", f"{MARKER}(build, candidate=None, **options): compare the legacy pipeline "
                   "`build` under TF1 queues with the candidate (compat.v1 by default) and fail "
                   "the test when the streams are not equivalent")


class HarnessFixture:
    """What the ``compat_harness`` fixture gives a test."""

    def __init__(self, default_max_batches=None):
        self.default_max_batches = default_max_batches
        self.reports = []

    def _options(self, options):
        if self.default_max_batches is not None:
            options.setdefault("max_batches", self.default_max_batches)
        return options

    def compare(self, build, candidate=None, **options):
        """``compat.harness.compare`` (the report is also kept in ``self.reports``)."""
        from compat import harness
        report = harness.compare(build, candidate, **self._options(options))
        self.reports.append(report)
        return report

    def assert_equivalent(self, build, candidate=None, **options):
        """Compare and fail the test with the report's explanation unless equivalent."""
        report = self.compare(build, candidate, **options)
        if not report.equivalent:
            pytest.fail(report.explain(), pytrace=False)
        return report


@pytest.fixture
def compat_harness(request):
    return HarnessFixture(request.config.getoption("--compat-max-batches"))


@pytest.fixture
def compat_report(request):
    """The Report of this test's ``compat_equivalent`` marker."""
    report = getattr(request.node, "compat_report", None)
    if report is None:
        raise pytest.UsageError(f"compat_report needs @pytest.mark.{MARKER}(build, ...)")
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    # Compare before fixtures are set up, so that ``compat_report`` can hand the report over.
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return
    if not marker.args:
        raise pytest.UsageError(f"@pytest.mark.{MARKER} needs the pipeline function first")
    from compat import harness
    options = dict(marker.kwargs)
    default = item.config.getoption("--compat-max-batches")
    if default is not None:
        options.setdefault("max_batches", default)
    build, *rest = marker.args
    item.compat_report = harness.compare(build, *rest, **options)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    # Failing here (not in setup) reports a FAILED test, not an ERROR, and skips the body.
    report = getattr(item, "compat_report", None)
    if report is not None and not report.equivalent:
        pytest.fail(report.explain(), pytrace=False)
