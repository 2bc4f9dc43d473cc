"""The docs site: every code sample runs, `mkdocs build --strict` passes, generated pages are
current, and the README stays a front page."""
from __future__ import annotations

import concurrent.futures
import glob
import json
import os
import shlex
import subprocess
import sys

import pytest

from docs_samples import python_blocks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
PAGES = sorted(glob.glob(os.path.join(DOCS, "*.md"))) + [os.path.join(ROOT, "README.md")]
SAMPLE_PAGES = [page for page in PAGES
                if python_blocks(open(page, encoding="utf-8").read())]


def _read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _run_samples(pages):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2",
               PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, os.path.join(ROOT, "tests", "docs_samples.py")]
                          + pages, capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture(scope="module")
def sample_runs():
    """{page: (status, the run's stderr)}. Two processes, side by side: the pages whose
    samples switch to TF1 behaviour (`disable_v2_behavior()`, for the whole process), and
    the others; importing TensorFlow is most of a page's time."""
    tf1 = [page for page in SAMPLE_PAGES if "disable_v2_behavior()" in _read(page)]
    groups = [tf1, [page for page in SAMPLE_PAGES if page not in tf1]]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(_run_samples, [group for group in groups if group]))
    runs = {}
    for result in results:
        for line in result.stdout.splitlines():
            if line.startswith("RESULT "):
                status, page = line.split(" ", 2)[1:]
                runs[page] = (status, result.stderr)
    return runs


@pytest.mark.needs_tf
@pytest.mark.parametrize("page", SAMPLE_PAGES, ids=os.path.basename)
def test_code_samples_run(page, sample_runs):
    status, stderr = sample_runs.get(page, ("did not run", ""))
    failure = stderr[stderr.find(f"{page}, the block at line"):]   # the page's own traceback
    assert status == "ok", f"{page}: {status}\n{failure[:6000]}"


def test_mkdocs_build_strict(tmp_path):
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                             str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_checker_rules_page_is_current():
    from compat._check import guide
    assert _read(os.path.join(DOCS, "checker-rules.md")) == guide.generate("docs"), (
        "regenerate: python -m compat._check.guide --docs > docs/checker-rules.md")


def test_performance_page_is_current():
    """The committed page is the script's output for the JSON (and options) its first line
    names."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        import performance_page
    finally:
        sys.path.pop(0)
    committed = _read(os.path.join(DOCS, "performance.md"))
    command = committed.split("\n", 1)[0].split("`")[1]
    args = shlex.split(command)[2:]
    json_path, options = args[0], args[1:]
    changed = options[1] if options[:1] == ["--changed-during-run"] else None
    with open(os.path.join(ROOT, json_path), encoding="utf-8") as handle:
        result = json.load(handle)
    assert committed == performance_page.generate(result, json_path, changed), (
        f"regenerate: {command} > docs/performance.md")
    assert os.path.exists(os.path.join(DOCS, "performance.png"))


def test_every_page_is_in_the_nav():
    nav = _read(os.path.join(ROOT, "mkdocs.yml"))
    for page in glob.glob(os.path.join(DOCS, "*.md")):
        assert os.path.basename(page) in nav, f"{page} is not in mkdocs.yml's nav"


def test_readme_is_a_front_page():
    readme = _read(os.path.join(ROOT, "README.md"))
    assert len(readme.encode("utf-8")) <= 12 * 1024
    lines = readme.splitlines()
    assert lines[2] == "```bash" and "# the demo" in lines[3] and "# the tests" in lines[4]
    for command in ("compat-check", "compat-migrate", "compat.harness", "compat.to_dataset"):
        assert command in readme
