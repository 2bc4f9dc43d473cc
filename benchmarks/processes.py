"""Running one measurement in a subprocess of its own, and what the reports say of the
machine: shared by suite.py and real_programs.py. Imports no TensorFlow."""
from __future__ import annotations

import datetime
import importlib.metadata
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import traceback
from typing import Callable, NoReturn, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# The child's one result line on stdout starts with this (TF may print anything else).
RESULT_MARKER = "@@BENCHMARK_RESULT@@"


def report_and_exit(produce: Callable[[], dict]) -> NoReturn:
    """Child side: print `produce()`'s payload, or the exception it raised, as the result
    line `run_child` reads, and exit without interpreter teardown: with TF1 queue threads or
    tf.data iterators alive it can hang or crash after the result is out."""
    try:
        payload = produce()
    except BaseException as error:  # noqa: BLE001 - reported to the parent, not swallowed
        lines = traceback.format_exception(type(error), error, error.__traceback__)
        payload = {"ok": False, "error": f"{type(error).__name__}: {error}".strip(),
                   "traceback": "".join(lines)[-4000:]}
    sys.stdout.flush()
    print(RESULT_MARKER, json.dumps(payload), flush=True)
    os._exit(0)


def cached_data(path: str, write: Callable[[str], dict]) -> Optional[str]:
    """Make `path` hold the data `write(directory)` writes (returning a child's payload),
    unless a complete copy is there already; the error, or None. Written aside and renamed
    into place, so an interrupted or concurrent run never leaves a half-written copy."""
    if os.path.exists(os.path.join(path, ".complete")):
        return None
    staging = f"{path}.tmp{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    os.makedirs(staging)
    payload = write(staging)
    if not payload.get("ok"):
        shutil.rmtree(staging, ignore_errors=True)
        return f"data preparation failed: {payload.get('error')}"
    open(os.path.join(staging, ".complete"), "w").close()
    if os.path.exists(path):  # another run finished first: keep its copy
        shutil.rmtree(staging, ignore_errors=True)
    else:
        os.replace(staging, path)
    return None


def child_env():
    env = dict(os.environ)
    # Bytecode is cached as an installed package's is: with it off, every subprocess would
    # compile the shim's modules again (~10 ms counted as the shim's graph build), while
    # TensorFlow's own bytecode was cached when it was installed.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    env.setdefault("PYTHONHASHSEED", "0")
    env["PYTHONPATH"] = os.pathsep.join(
        [ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != ROOT])
    return env


def usable_cpus() -> list[int]:
    """The CPUs this process may run on (all of them where affinity is unknown)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:
        return list(range(os.cpu_count() or 1))


def _pinned_to(cpus: Optional[int]) -> Optional[Callable[[], None]]:
    """A preexec_fn that pins the child to the first `cpus` usable CPUs (before TensorFlow
    sizes its thread pools, which follow the CPUs a process may use), or None."""
    if cpus is None:
        return None
    chosen = set(usable_cpus()[:cpus])
    return lambda: os.sched_setaffinity(0, chosen)


def run_child(arguments: list[str], timeout_s: float, cpus: Optional[int] = None) -> dict:
    """Run `python *arguments` (a script that prints one `RESULT_MARKER <json>` line, as
    run_variant.py does); its JSON payload, or an error payload."""
    command = [sys.executable, *arguments]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=child_env(),
                              timeout=timeout_s, cwd=ROOT, preexec_fn=_pinned_to(cpus))
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timeout: no result after {timeout_s:g} s",
                "wall_s": time.perf_counter() - start}
    wall_s = time.perf_counter() - start
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(RESULT_MARKER):
            payload = json.loads(line[len(RESULT_MARKER):])
            payload["wall_s"] = wall_s
            return payload
    tail = "\n".join(done.stderr.strip().splitlines()[-15:])
    return {"ok": False, "error": f"subprocess exited with status {done.returncode} and no "
                                  f"result", "traceback": tail, "wall_s": wall_s}


def compat_fingerprint() -> str:
    """A hash of the shim's source (compat/**/*.py): the suite notes if it changed mid-run
    (each subprocess imports the shim as it is on disk at that moment)."""
    import hashlib
    digest = hashlib.sha1()
    package = os.path.join(ROOT, "compat")
    for folder, subfolders, files in sorted(os.walk(package)):
        subfolders.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                digest.update(os.path.relpath(path, package).encode() + b"\0")
                try:
                    with open(path, "rb") as handle:
                        digest.update(handle.read())
                except OSError:
                    digest.update(b"<unreadable>")
    return digest.hexdigest()[:12]


def _git_state():
    def git(*args):
        try:
            return subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    return {"commit": git("rev-parse", "HEAD"),
            "compat_dirty": bool(git("status", "--porcelain", "--", "compat"))}


def machine_info() -> dict:
    tf_version = None
    for distribution in ("tensorflow", "tensorflow-cpu"):
        try:
            tf_version = importlib.metadata.version(distribution)
            break
        except importlib.metadata.PackageNotFoundError:
            continue
    return {"cpu_count": os.cpu_count(), "usable_cpus": len(usable_cpus()),
            "tensorflow_version": tf_version, "python": sys.version.split()[0],
            "platform": platform.platform(), "machine": platform.machine(),
            "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "load_average_at_start": list(os.getloadavg()), "git": _git_state(),
            "compat_source_at_start": compat_fingerprint()}
