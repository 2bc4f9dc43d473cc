"""Trees as they are: unreadable directories and files, file names that are not UTF-8,
FIFOs and devices, huge files, symlink loops; and the exit codes CI relies on."""
import builtins
import errno
import json
import os
import socket
import subprocess
import sys

import pytest

from check_helpers import ROOT, run_cli
from compat._check import cli, engine, sources
from compat.check import main

LEGACY = "import tensorflow as tf\nq = tf.train.string_input_producer(files)\n"
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
root_ignores_chmod = pytest.mark.skipif(
    AS_ROOT, reason="root reads whatever chmod says; the monkeypatched twin test still runs")


def _run(*args, timeout=120):
    """compat-check in a subprocess, raw bytes out (so invalid UTF-8 would show)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "compat.check", *args], capture_output=True,
                          env=env, timeout=timeout)


def _report(fmt, args, capsys, tmp_path):
    """(exit code, what the report says about errors) for one format, in-process."""
    out = tmp_path / f"report.{fmt}"
    code = main(["--format", fmt, "-o", str(out), *args])
    text = out.read_bytes().decode("utf-8")  # strict: always valid UTF-8
    capsys.readouterr()
    if fmt == "text":
        return code, text
    document = json.loads(text)
    if fmt == "json":
        assert {tuple(e) for e in document["summary"]["errors"]} == {
            (f["path"], f["error"]) for f in document["files"] if f["error"]}
        return code, json.dumps(document["summary"]["errors"])
    run = document["runs"][0]
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is False
    errors = [n for n in invocation["toolExecutionNotifications"] if n["level"] == "error"]
    return code, json.dumps(errors)


# --- unreadable directories and files --------------------------------------------------------

def _tree_with_locked_dir(tmp_path):
    tree = tmp_path / "src"
    (tree / "locked").mkdir(parents=True)
    (tree / "locked" / "hidden.py").write_text(LEGACY)
    (tree / "ok.py").write_text("x = 1\n")
    return tree


def _deny_scandir(monkeypatch, denied):
    real = os.scandir

    def scandir(path="."):
        if os.fspath(path) == str(denied):
            raise PermissionError(errno.EACCES, "Permission denied", str(denied))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_unreadable_directory_is_an_error_in_every_format(tmp_path, monkeypatch, capsys, fmt):
    tree = _tree_with_locked_dir(tmp_path)
    _deny_scandir(monkeypatch, tree / "locked")
    code, said = _report(fmt, [str(tree)], capsys, tmp_path)
    assert code == 2
    assert "locked" in said and "cannot read directory: Permission denied" in said
    if fmt == "text":
        assert "No legacy queue APIs found in the files that could be read" in said
        assert "1 path could not be checked (an error):" in said


@root_ignores_chmod
def test_unreadable_directory_by_permissions(tmp_path, capsys):
    tree = _tree_with_locked_dir(tmp_path)
    os.chmod(tree / "locked", 0)
    try:
        assert main([str(tree)]) == 2
    finally:
        os.chmod(tree / "locked", 0o755)
    out = capsys.readouterr().out
    assert "locked: cannot read directory: Permission denied" in out


def test_unreadable_directory_given_explicitly(tmp_path, monkeypatch, capsys):
    tree = _tree_with_locked_dir(tmp_path)
    _deny_scandir(monkeypatch, tree / "locked")
    assert main([str(tree / "locked")]) == 2
    assert "cannot read directory: Permission denied" in capsys.readouterr().out


def _deny_open(monkeypatch, denied):
    def fake_open(path, *args, **kwargs):
        if os.fspath(path) == str(denied):
            raise PermissionError(errno.EACCES, "Permission denied", str(denied))
        return builtins.open(path, *args, **kwargs)

    monkeypatch.setattr(engine, "open", fake_open, raising=False)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_unreadable_file_is_an_error_in_every_format(tmp_path, monkeypatch, capsys, fmt):
    secret = tmp_path / "secret.py"
    secret.write_text(LEGACY)
    (tmp_path / "ok.py").write_text("x = 1\n")
    _deny_open(monkeypatch, secret)
    code, said = _report(fmt, [str(tmp_path)], capsys, tmp_path)  # the report is not a .py
    assert code == 2
    assert "secret.py" in said and "cannot read: Permission denied" in said


@root_ignores_chmod
def test_unreadable_file_by_permissions(tmp_path, capsys):
    secret = tmp_path / "secret.py"
    secret.write_text(LEGACY)
    os.chmod(secret, 0)
    assert main([str(tmp_path)]) == 2
    assert "secret.py: cannot read: Permission denied" in capsys.readouterr().out


def test_errors_exit_2_even_with_exit_zero(tmp_path, monkeypatch, capsys):
    tree = _tree_with_locked_dir(tmp_path)
    _deny_scandir(monkeypatch, tree / "locked")
    assert main(["--exit-zero", "--format", "sarif", str(tree)]) == 2


# --- file names that are not UTF-8 -----------------------------------------------------------

@pytest.fixture
def latin1_named(tmp_path):
    try:
        raw = os.path.join(os.fsencode(str(tmp_path)), b"caf\xe9.py")
        with open(raw, "wb") as handle:
            handle.write(LEGACY.encode())
    except (OSError, UnicodeError):
        pytest.skip("this file system only takes UTF-8 file names")
    return tmp_path


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_non_utf8_file_name_with_output_file(latin1_named, tmp_path, capsys, fmt):
    out = tmp_path / f"report.{fmt}"
    assert main(["--format", fmt, "-o", str(out), str(latin1_named)]) == 1
    text = out.read_bytes().decode("utf-8")  # strict
    assert "internal error" not in capsys.readouterr().err
    if fmt == "text":
        assert "caf\\xe9.py:2:5: TFQ101" in text
    elif fmt == "json":
        document = json.loads(text)
        assert document["findings"][0]["path"].endswith("caf\\xe9.py")
    else:
        result = json.loads(text)["runs"][0]["results"][0]
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri.endswith("caf%E9.py")  # the file's real bytes, percent-encoded


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_non_utf8_file_name_on_stdout(latin1_named, fmt):
    result = _run("--format", fmt, str(latin1_named))
    assert result.returncode == 1, result.stderr
    text = result.stdout.decode("utf-8")  # strict
    if fmt == "text":
        assert "caf\\xe9.py:2:5: TFQ101" in text
    elif fmt == "json":
        assert json.loads(text)["findings"][0]["path"].endswith("/caf\\xe9.py")
    else:
        assert '"uri": "' in text and 'caf%E9.py"' in text
        json.loads(text)


def test_sarif_with_odd_names_is_valid(latin1_named, tmp_path, capsys):
    jsonschema = pytest.importorskip("jsonschema")
    with open(os.path.join(os.path.dirname(__file__), "data", "sarif-schema-2.1.0.json"),
              encoding="utf-8") as handle:
        validator = jsonschema.Draft7Validator(json.load(handle))
    (latin1_named / "loop.py").symlink_to("loop.py")
    out = tmp_path / "report.sarif"
    assert main(["--format", "sarif", "-o", str(out), str(latin1_named)]) == 2
    log = json.loads(out.read_bytes().decode("utf-8"))
    assert list(validator.iter_errors(log)) == []


# --- FIFOs, devices, sockets ---------------------------------------------------------------

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_is_skipped_never_opened(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "train.py").write_text(LEGACY)
    result = _run("--format", "json", str(tmp_path), timeout=120)  # an open() would hang
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    [(path, why)] = document["summary"]["skipped"]
    assert path.endswith("/pipe.py") and why == "a FIFO, not a regular file: skipped"
    assert [f["problem"] for f in document["files"] if f["path"] == path] == [why]
    assert document["summary"]["files_checked"] == 1
    text = _run(str(tmp_path), timeout=120).stdout.decode()
    assert "1 special file skipped (never opened):" in text and "pipe.py: a FIFO" in text


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_reading_a_fifo_does_not_block(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    with pytest.raises(sources.NotRegular, match="a FIFO"):
        sources.read_regular(str(tmp_path / "pipe.py"))
    with pytest.raises(sources.NotRegular, match="a FIFO"):
        sources.probe(str(tmp_path / "pipe.py"))


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no unix sockets here")
def test_socket_is_skipped(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # a short relative path: AF_UNIX paths are length-limited
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind("sock.py")
        assert main(["--format", "sarif", "."]) == 0
    finally:
        server.close()
    notifications = json.loads(capsys.readouterr().out)["runs"][0]["invocations"][0][
        "toolExecutionNotifications"]
    assert [n["message"]["text"] for n in notifications] == [
        "sock.py: a socket, not a regular file: skipped"]


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="no /dev/null")
def test_device_given_explicitly_is_skipped(capsys):
    assert main(["/dev/null"]) == 0
    assert "/dev/null: a character device, not a regular file: skipped" in capsys.readouterr().out


# --- size limit ------------------------------------------------------------------------------

def test_default_size_limit(tmp_path, monkeypatch, capsys):
    big = tmp_path / "generated.py"
    with open(big, "w") as handle:
        handle.write(LEGACY)
        handle.write("x = 1\n" * (sources.DEFAULT_MAX_FILE_SIZE // 6 + 1))
    (tmp_path / "small.py").write_text(LEGACY)
    real = engine.check_file
    monkeypatch.setattr(engine, "check_file",
                        lambda path: pytest.fail("read") if path == str(big) else real(path))
    assert main([str(tmp_path)]) == 2
    out = capsys.readouterr().out
    assert "1 queue API site in 1 file" in out
    assert "generated.py: " in out and "over the 5242880-byte --max-file-size limit" in out


@pytest.mark.parametrize("limit,code", [("100", 2), ("1K", 1), ("1kb", 1), ("0", 1)])
def test_max_file_size_option(tmp_path, capsys, limit, code):
    path = tmp_path / "train.py"
    path.write_text(LEGACY + "#" * 200 + "\n")
    size = os.path.getsize(path)
    assert main(["--max-file-size", limit, str(path)]) == code
    if code == 2:
        assert f"train.py: {size} bytes, over the 100-byte --max-file-size limit" in \
            capsys.readouterr().out


@pytest.mark.parametrize("limit", ["-1", "five", "5T"])
def test_bad_max_file_size_is_a_usage_error(limit, capsys):
    assert main(["--max-file-size", limit, "."]) == 2
    assert "compat-check: error:" in capsys.readouterr().err


def test_size_limit_applies_to_fix(tmp_path, capsys):
    path = tmp_path / "train.py"
    path.write_text(LEGACY)
    assert main(["--fix", "-q", "--max-file-size", "10", str(path)]) == 2
    assert path.read_text() == LEGACY


# --- symlink loops and broken links ---------------------------------------------------------

@pytest.mark.parametrize("explicit", [True, False])
def test_symlink_loop_is_reported_as_such(tmp_path, capsys, explicit):
    (tmp_path / "a.py").symlink_to("b.py")
    (tmp_path / "b.py").symlink_to("a.py")
    assert main([str(tmp_path / "a.py") if explicit else str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert "a.py: symbolic link loop" in captured.out
    assert "no such file" not in captured.out + captured.err


def test_broken_symlink_given_explicitly(tmp_path, capsys):
    (tmp_path / "gone.py").symlink_to("missing.py")
    assert main([str(tmp_path / "gone.py")]) == 2
    out = capsys.readouterr().out
    assert "gone.py: broken symbolic link (its target missing.py does not exist)" in out


def test_missing_path_is_still_a_usage_error(capsys):
    assert main(["/no/such/path.py"]) == 2
    assert "no such file or directory: /no/such/path.py" in capsys.readouterr().err


# --- exit codes and the report file ---------------------------------------------------------

@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_exit_codes_are_the_same_in_every_format(tmp_path, capsys, fmt):
    dirty = tmp_path / "dirty.py"
    dirty.write_text(LEGACY)
    clean = tmp_path / "clean.py"
    clean.write_text("x = 1\n")
    assert main(["--format", fmt, str(dirty)]) == 1
    assert main(["--format", fmt, "--exit-zero", str(dirty)]) == 0
    assert main(["--format", fmt, str(clean)]) == 0
    assert main(["--format", fmt, "--exit-zero", str(clean)]) == 0
    assert main(["--format", fmt, "--diff", str(dirty)]) == 1
    assert main(["--format", fmt, "--diff", "--exit-zero", str(dirty)]) == 0


def test_help_and_docs_document_exit_codes(capsys):
    assert main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--exit-zero" in text and "--max-file-size" in text
    assert "exit status: 0 nothing --fail-on fails on" in text
    assert "1 sites at a stage --fail-on fails on (default: legacy" in text
    assert "--fail-on {legacy,shim,any}" in text
    assert "2 an error" in text
    with open(os.path.join(ROOT, "docs", "checker.md"), encoding="utf-8") as handle:
        page = handle.read()
    section = page.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    assert "--exit-zero" in section and "--max-file-size" in section
    assert "could not be read" in section


def test_unwritable_output_file_is_a_clean_error(tmp_path, capsys):
    (tmp_path / "clean.py").write_text("x = 1\n")
    assert main(["-o", str(tmp_path / "no" / "such" / "dir.txt"), str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "compat-check: error: cannot write the report to" in err
    assert "internal error" not in err


def test_discover_matches_the_engine(tmp_path):
    """cli.discover (which also reports unlistable directories) picks engine.discover's files."""
    for name in ("a.py", "b.ipynb", "c.txt", "sub/d.pyw", "__pycache__/e.py", "skip/f.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n")
    args = ([str(tmp_path), str(tmp_path / "c.txt")], ["skip"])
    files, unlisted = cli.discover(*args)
    assert files == engine.discover(*args) and unlisted == {}


def test_progress_and_subprocess_still_fine(tmp_path):
    (tmp_path / "train.py").write_text(LEGACY)
    result = run_cli("--exit-zero", str(tmp_path))
    assert result.returncode == 0 and "1 queue API site in 1 file" in result.stdout
