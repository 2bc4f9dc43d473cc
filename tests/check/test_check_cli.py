"""The command line: exit codes, selection, statistics, progress, and no TensorFlow import."""
import json
import os
import subprocess
import sys

import pytest

from check_helpers import FIXTURES, ROOT, run_cli
from compat.check import main


def fixture(name):
    return os.path.join(FIXTURES, name)


def test_exit_0_when_nothing_found(capsys):
    assert main([fixture("lookalikes.py")]) == 0
    assert "No legacy queue APIs found" in capsys.readouterr().out


def test_exit_1_when_findings(capsys):
    assert main([fixture("mnist_tutorial.py")]) == 1
    out = capsys.readouterr().out
    assert "TFQ202 tf.train.shuffle_batch(" in out
    assert "    tf.data: dataset.shuffle(2000, seed=None).batch(BATCH_SIZE, drop_remainder=True)" in out


@pytest.mark.parametrize("args", [
    ["--format", "xml", "."],
    ["--select", "TFQ999", "."],
    ["--ignore", "E501", "."],
    ["--fix", "--diff", "."],
    ["--jobs", "-1", "."],
    ["/no/such/path.py"],
    ["--no-such-option"],
])
def test_exit_2_on_usage_errors(args, capsys):
    assert main(args) == 2
    assert "compat-check: error:" in capsys.readouterr().err


def test_only_not_pipeline_notes_exit_0(capsys):
    path = fixture("sync_replicas_trainer.py")
    assert main(["--select", "TFQ421", path]) == 0
    out = capsys.readouterr().out
    assert "not an input pipeline; keep as is" in out


def test_unreadable_file_is_an_error(tmp_path, capsys):
    broken = tmp_path / "broken.py"
    broken.symlink_to(tmp_path / "missing-target.py")  # listed by the walk, cannot be read
    assert main([str(tmp_path)]) == 2
    assert "could not be checked" in capsys.readouterr().out


def test_select_and_ignore_prefixes(capsys):
    path = fixture("mnist_tutorial.py")
    main(["--select", "TFQ2,TFQ101", path])
    out = capsys.readouterr().out
    assert {line.split()[1] for line in out.splitlines() if ": TFQ" in line} == {"TFQ101", "TFQ202"}
    main(["--ignore", "TFQ3", "--ignore", "tfq401", path])
    out = capsys.readouterr().out
    assert {line.split()[1] for line in out.splitlines() if ": TFQ" in line} == {
        "TFQ101", "TFQ111", "TFQ202"}


def test_statistics(capsys):
    main(["--statistics", FIXTURES])
    out = capsys.readouterr().out
    assert "    7  TFQ201  train.batch  [covered]" in out


def test_summary_names_manual_sites(capsys):
    main([fixture("slim_pipeline.py")])
    lines = capsys.readouterr().out.strip().splitlines()
    summary = lines[-4]
    assert lines[-3:] == ["by stage: 5 legacy (TF1 queues), 0 on the shim (compat.v1), "
                          "0 bridged by compat.to_dataset",
                          "1 use of tf.contrib or tf.layers (TFQ901, TFQ902) stops the program "
                          "on TF 2.x whatever compat does: the shim's coverage alone does not "
                          "make these files run",
                          "--fail-on legacy: 5 sites at stage legacy and 1 TF 2.x blocker "
                          "(any --fail-on) fail the run"]
    assert summary.startswith("5 queue API sites in 1 file: 1 covered by the shim, 4 need manual work "
                              "(TFQ417 at ")


def test_list_rules(capsys):
    assert main(["--list-rules"]) == 0
    assert "TFQ421  not an input pipeline" in capsys.readouterr().out


def test_output_file(tmp_path):
    out = tmp_path / "report.json"
    assert main(["--format", "json", "-o", str(out), fixture("mnist_tutorial.py")]) == 1
    assert json.loads(out.read_text())["summary"]["sites"] == 6


def test_progress_on_stderr_for_large_trees(tmp_path):
    for index in range(520):
        (tmp_path / f"m{index}.py").write_text(
            "import tensorflow as tf\nq = tf.train.string_input_producer(files)\n"
            if index % 100 == 0 else "x = 1\n")
    result = run_cli(str(tmp_path))
    assert result.returncode == 1
    assert "compat-check: 520/520 files" in result.stderr
    assert "6 queue API sites in 6 files" in result.stdout
    quiet = run_cli("-q", str(tmp_path))
    assert quiet.stderr == ""


def test_python_dash_m_and_never_imports_tensorflow():
    code = ("import sys; from compat.check import main; "
            "codes = [main(['-q', '--format', f, %r]) for f in ('text', 'json', 'sarif')]; "
            "codes.append(main(['-q', '--diff', %r])); "
            "print(codes, 'tensorflow' in sys.modules, 'libcst' in sys.modules)"
            % (FIXTURES, FIXTURES))
    env = dict(os.environ, PYTHONPATH=ROOT)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=env, cwd=ROOT)
    assert result.stdout.strip().splitlines()[-1] == "[1, 1, 1, 1] False True", result.stderr


def test_console_entry_point_exits_with_main_code(monkeypatch):
    from compat import check
    monkeypatch.setattr(sys, "argv", ["compat-check", fixture("lookalikes.py")])
    with pytest.raises(SystemExit) as exit_info:
        check.console_main()
    assert exit_info.value.code == 0
