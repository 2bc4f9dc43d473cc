"""--fix never ends a run because of one file: files that do not parse, or nest deeper than
the rewriter can walk, are named and skipped; the rest are fixed."""
import pytest

from compat._check import fix
from compat.check import main

LEGACY = "import tensorflow as tf\nq = tf.train.string_input_producer(files)\n"
FIXED = "import compat.v1 as tf\nq = tf.train.string_input_producer(files)\n"


def _deep_tree(tmp_path):
    chain = " + ".join(["'a'"] * 400)
    nested = "f(" * 150 + "x" + ")" * 150
    (tmp_path / "chain.py").write_text(LEGACY + f"prefix = {chain}\n")
    (tmp_path / "nested.py").write_text(LEGACY + f"value = {nested}\n")
    (tmp_path / "broken.py").write_text(LEGACY + "def broken(:\n    pass\n")
    (tmp_path / "good.py").write_text(LEGACY)


def test_deeply_nested_files_are_fixed_and_a_broken_one_is_named(tmp_path, capsys):
    _deep_tree(tmp_path)
    assert main(["--fix", "-q", str(tmp_path)]) == 1  # broken.py keeps its legacy site
    for name in ("chain.py", "nested.py", "good.py"):
        assert (tmp_path / name).read_text().startswith(FIXED), name
    assert (tmp_path / "broken.py").read_text().startswith(LEGACY)
    err = capsys.readouterr().err
    assert "broken.py: not rewritten: not valid Python 3 (SyntaxError: invalid syntax" in err
    assert "Fixed 3 files (1 with legacy sites left unchanged)" in err
    assert "internal error" not in err


@pytest.mark.parametrize("error, said", [
    (RecursionError("maximum recursion depth exceeded"),
     "not rewritten: too deeply nested for the rewriter (RecursionError): switch its imports "
     "to compat.v1 by hand"),
    (ValueError("unexpected node"),
     "not rewritten: internal error (ValueError: unexpected node): switch its imports to "
     "compat.v1 by hand"),
])
def test_a_file_the_rewriter_fails_on_is_named_and_skipped(tmp_path, monkeypatch, capsys,
                                                          error, said):
    _deep_tree(tmp_path)
    real = fix._rewrite

    def rewrite(report, *args):
        if report.path.endswith("chain.py"):
            raise error
        return real(report, *args)

    monkeypatch.setattr(fix, "_rewrite", rewrite)
    assert main(["--fix", "-q", str(tmp_path)]) == 1
    assert (tmp_path / "chain.py").read_text().startswith(LEGACY)
    assert (tmp_path / "nested.py").read_text().startswith(FIXED)
    assert (tmp_path / "good.py").read_text() == FIXED
    err = capsys.readouterr().err
    assert f"chain.py: {said}" in err
    assert "Fixed 2 files (2 with legacy sites left unchanged)" in err
