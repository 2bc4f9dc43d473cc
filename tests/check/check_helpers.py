"""Helpers shared by the checker tests (imported by name: pytest puts this directory on sys.path)."""
import os
import subprocess
import sys
import textwrap

from compat._check import engine

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
ROOT = os.path.dirname(os.path.dirname(HERE))


def check(source: str, path: str = "example.py"):
    return engine.check_source(textwrap.dedent(source), path)


def codes(source: str):
    return [f.code for f in check(source).findings]


def run_cli(*args, cwd=None):
    """compat-check in a subprocess, the way users run it."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "compat.check", *args], cwd=cwd,
                          capture_output=True, text=True, env=env)

