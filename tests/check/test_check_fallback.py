"""Files Python 3 cannot parse still get a result: a token-level scan, said so in the report."""
import json
import os

import pytest

from check_helpers import FIXTURES
from compat._check import engine
from compat._check.model import SCAN_AST, SCAN_SKIPPED, SCAN_TOKENS


def report(name):
    return engine.check_file(os.path.join(FIXTURES, name))


@pytest.mark.parametrize("name,problem,codes", [
    ("py2_train.py", "Missing parentheses in call to 'print'",
     ["TFQ101", "TFQ112", "TFQ201", "TFQ321", "TFQ313", "TFQ401"]),
    ("tab_error.py", "TabError", ["TFQ101", "TFQ114"]),
    ("latin1_legacy.py", "not valid UTF-8", ["TFQ102", "TFQ201"]),
    ("syntax_error.py", "SyntaxError", ["TFQ101", "TFQ201", "TFQ111"]),
])
def test_unparsable_files_fall_back_to_tokens(name, problem, codes):
    result = report(name)
    assert result.scan == SCAN_TOKENS
    assert problem in result.problem
    assert [f.code for f in result.findings] == codes
    assert all(f.scan == SCAN_TOKENS for f in result.findings)


def test_token_scan_resolves_aliases_and_renders_arguments():
    result = report("py2_train.py")
    batch = next(f for f in result.findings if f.code == "TFQ201")
    assert batch.message.startswith("tf_input.batch([tf.stack([a, b]), label], batch_size, "
                                    "allow_smaller_final_batch=True) [tf.train.batch]")
    assert batch.tf_data == "dataset.batch(batch_size, drop_remainder=False)"
    assert (batch.line, batch.col) == (16, 12)


def test_token_scan_ignores_strings_comments_and_lookalikes():
    source = ("import queue\nprint 'tf.train.batch(x)'  # tf.train.batch\n"
              "q = queue.Queue()\nclass Coordinator: pass\nCoordinator()\n")
    result = engine.check_source(source)
    assert result.scan == SCAN_TOKENS
    assert result.findings == ()


def test_latin1_with_declaration_is_parsed_normally(tmp_path):
    path = tmp_path / "declared.py"
    path.write_bytes(b"# -*- coding: latin-1 -*-\n# \xe9t\xe9\nimport tensorflow as tf\n"
                     b"q = tf.FIFOQueue(3, [tf.int32])  # \xe0\n")
    result = engine.check_file(str(path))
    assert result.scan == SCAN_AST and result.problem == ""
    assert [f.code for f in result.findings] == ["TFQ301"]


def test_notebook_cells_are_scanned_with_cell_positions():
    result = report("queue_walkthrough.ipynb")
    assert result.scan == SCAN_AST
    assert [(f.cell, f.line, f.code) for f in result.findings] == [
        (3, 1, "TFQ101"), (3, 2, "TFQ112"), (4, 3, "TFQ202"), (6, 2, "TFQ321"), (6, 3, "TFQ313")]
    assert result.findings[0].location.endswith("queue_walkthrough.ipynb:cell_3:1:18")


def test_broken_notebook_is_reported_not_fatal(tmp_path):
    path = tmp_path / "broken.ipynb"
    path.write_text('{"cells": [{"source": "tf.train.batch([x], 2)"')  # cut off mid-way
    result = engine.check_file(str(path))
    assert result.error == ""
    assert result.scan == SCAN_TOKENS and "not a valid notebook" in result.problem
    assert [f.code for f in result.findings] == ["TFQ201"]


def test_notebook_with_python2_cell_falls_back(tmp_path):
    notebook = {"cells": [{"cell_type": "code", "source": ["import tensorflow as tf\n",
                                                           "print 'hi'"]},
                          {"cell_type": "code", "source": "tf.train.batch([x], 2)"}],
                "nbformat": 4, "nbformat_minor": 2, "metadata": {}}
    path = tmp_path / "py2.ipynb"
    path.write_text(json.dumps(notebook))
    result = engine.check_file(str(path))
    assert result.scan == SCAN_TOKENS
    assert [(f.cell, f.line, f.code) for f in result.findings] == [(2, 1, "TFQ201")]


@pytest.mark.parametrize("data", [
    b"\x00\x01\x02 binary junk tf.train.batch",
    b"import tensorflow as tf\n" + b"(" * 500 + b"tf.train.batch" + b")" * 500 + b"\n",
    b"\xef\xbb\xbf# coding: latin-1\nimport tensorflow as tf\n",
    b"# coding: no-such-codec\nimport tensorflow as tf\ntf.train.batch([x], 1)\n",
    b"import tensorflow as tf\ns = '''unterminated tf.train.batch(\n",
    b"",
])
def test_never_crashes(tmp_path, data):
    path = tmp_path / "odd.py"
    path.write_bytes(data)
    result = engine.check_file(str(path))
    assert result.error == ""


def test_files_without_tensorflow_are_not_parsed():
    result = engine.check_source("print 'python 2, but no TF here'\n")
    assert result.scan == SCAN_SKIPPED and result.findings == () and result.problem == ""


def test_every_fixture_gets_a_result():
    files = engine.discover([FIXTURES])
    assert len(files) == 13
    reports = [engine.check_file(f) for f in files]
    assert all(r.error == "" for r in reports)
