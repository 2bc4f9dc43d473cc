"""--fix / --diff: before/after pairs, idempotence, and what must never be touched."""
import os
import stat
import textwrap

import pytest

from check_helpers import FIXTURES, run_cli
from compat._check import engine, fix

FIX_CASES = [
    pytest.param(
        """
        import tensorflow as tf
        q = tf.train.string_input_producer(files)
        """,
        """
        import compat.v1 as tf
        q = tf.train.string_input_producer(files)
        """, id="import-tensorflow"),
    pytest.param(
        """
        import os
        import tensorflow.compat.v1 as tf  # the upgrade script put this here
        q = tf.train.string_input_producer(files)
        """,
        """
        import os
        import compat.v1 as tf  # the upgrade script put this here
        q = tf.train.string_input_producer(files)
        """, id="compat-v1-keeps-comment"),
    pytest.param(
        """
        from tensorflow.compat import v1 as tf
        tf.train.batch([x], 2)
        """,
        """
        from compat import v1 as tf
        tf.train.batch([x], 2)
        """, id="from-compat-import-v1"),
    pytest.param(
        """
        from tensorflow.python.training import input as tf_input
        tf_input.batch([x], 2)
        """,
        """
        from compat.v1 import train as tf_input
        tf_input.batch([x], 2)
        """, id="private-input-module"),
    pytest.param(
        """
        from tensorflow.python.ops import data_flow_ops
        from tensorflow.python.training import queue_runner
        q = data_flow_ops.FIFOQueue(3, [x])
        queue_runner.add_queue_runner(queue_runner.QueueRunner(q, [op]))
        """,
        """
        from compat.v1 import queue as data_flow_ops
        from compat.v1.train import queue_runner
        q = data_flow_ops.FIFOQueue(3, [x])
        queue_runner.add_queue_runner(queue_runner.QueueRunner(q, [op]))
        """, id="private-queue-modules"),
    pytest.param(
        """
        import os

        # the queue helpers
        from tensorflow.python.training import input, queue_runner as qr  # private paths
        input.batch(qr.QueueRunner(q, [op]), 2)
        """,
        """
        import os

        # the queue helpers
        from compat.v1 import train as input
        from compat.v1.train import queue_runner as qr  # private paths
        input.batch(qr.QueueRunner(q, [op]), 2)
        """, id="two-private-modules-split"),
    pytest.param(
        """
        import os; from tensorflow.python.training import input, coordinator; x = 1
        if True: from tensorflow.python.training import input, coordinator
        input.batch([coordinator.Coordinator()], 2)
        """,
        """
        import os; from compat.v1 import train as input; from compat.v1 import train as coordinator; x = 1
        if True: from compat.v1 import train as input; from compat.v1 import train as coordinator
        input.batch([coordinator.Coordinator()], 2)
        """, id="split-on-one-line"),
    pytest.param(
        """
        from tensorflow.python.training.input import (batch,
                                                      shuffle_batch as sb)  # two of them
        sb(batch([x], 2), 2, 10, 1)
        """,
        """
        from compat.v1.train import (batch,
                                                      shuffle_batch as sb)  # two of them
        sb(batch([x], 2), 2, 10, 1)
        """, id="names-from-private-module"),
    pytest.param(
        """
        from tensorflow.train import Coordinator, AdamOptimizer
        Coordinator()
        """,
        """
        from compat.v1.train import Coordinator, AdamOptimizer
        Coordinator()
        """, id="from-public-module"),
    pytest.param(
        '''
        """Train on CIFAR."""
        from __future__ import print_function

        import os
        import tensorflow as tf
        import numpy as np

        FLAGS = None  # set in main


        def main():
            images = tf.train.batch([x], 32)
            with tf.Session() as sess:
                tf.train.start_queue_runners(sess)
        ''',
        '''
        """Train on CIFAR."""
        from __future__ import print_function

        import os
        import compat.v1 as tf
        import numpy as np
        tf.disable_v2_behavior()

        FLAGS = None  # set in main


        def main():
            images = tf.train.batch([x], 32)
            with tf.Session() as sess:
                tf.train.start_queue_runners(sess)
        ''', id="adds-disable-v2-behavior"),
    pytest.param(
        """
        import tensorflow.compat.v1 as tf
        tf.disable_v2_behavior()
        sess = tf.Session()
        tf.train.start_queue_runners(sess)
        """,
        """
        import compat.v1 as tf
        tf.disable_v2_behavior()
        sess = tf.Session()
        tf.train.start_queue_runners(sess)
        """, id="disable-already-there"),
    pytest.param(
        """
        try:
            import tensorflow.compat.v1 as tf
        except ImportError:
            import tensorflow as tf
        sess = tf.train.MonitoredTrainingSession()
        """,
        """
        try:
            import compat.v1 as tf
        except ImportError:
            import compat.v1 as tf
        tf.disable_v2_behavior()
        sess = tf.train.MonitoredTrainingSession()
        """, id="import-in-try"),
    pytest.param(
        """
        import tensorflow as tf
        from tensorflow.python.ops import data_flow_ops
        q = data_flow_ops.FIFOQueue(3, [tf.int32])
        area = data_flow_ops.StagingArea([tf.int32])
        """,
        """
        import compat.v1 as tf
        from tensorflow.python.ops import data_flow_ops
        q = data_flow_ops.FIFOQueue(3, [tf.int32])
        area = data_flow_ops.StagingArea([tf.int32])
        """, id="private-module-with-unmapped-member-left-alone"),
]

NOOP_CASES = [
    pytest.param("import tensorflow as tf\nds = tf.data.Dataset.range(3)\n", id="no-sites"),
    pytest.param("import compat.v1 as tf\ntf.disable_v2_behavior()\nsess = tf.Session()\n"
                 "tf.train.batch([x], 2)\n", id="already-migrated"),
    pytest.param("import tensorflow\ntensorflow.train.batch([x], 2)\n", id="no-alias-to-keep"),
    pytest.param("import tensorflow as tf\nopt = tf.train.SyncReplicasOptimizer(o, 2)\n",
                 id="not-a-pipeline"),
    pytest.param("import tensorflow.contrib.slim as slim\nslim.queues.QueueRunners(s)\n",
                 id="contrib-left-alone"),
    pytest.param("if legacy:\n    import tensorflow.compat.v1 as tf\nelse:\n"
                 "    import compat.v1 as tf\ntf.disable_v2_behavior()\ntf.train.batch([x], 2)\n",
                 id="a-b-switch-left-alone"),
]


def _fix_once(tmp_path, source: str) -> bytes:
    path = tmp_path / "module.py"
    path.write_bytes(source.encode("utf-8"))
    edit = fix.plan(engine.check_file(str(path)))
    return source.encode("utf-8") if edit is None or not edit.after else edit.after


@pytest.mark.parametrize("before,after", FIX_CASES)
def test_fix(tmp_path, before, after):
    before, after = textwrap.dedent(before).lstrip("\n"), textwrap.dedent(after).lstrip("\n")
    assert _fix_once(tmp_path, before).decode() == after


@pytest.mark.parametrize("before,after", FIX_CASES)
def test_fix_is_idempotent(tmp_path, before, after):
    fixed = _fix_once(tmp_path, textwrap.dedent(before).lstrip("\n")).decode()
    assert _fix_once(tmp_path, fixed).decode() == fixed


@pytest.mark.parametrize("source", NOOP_CASES)
def test_fix_noop(tmp_path, source):
    assert _fix_once(tmp_path, source).decode() == source


def test_private_module_reason_is_reported(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("from tensorflow.python.ops import data_flow_ops\n"
                    "q = data_flow_ops.FIFOQueue(3, [x])\narea = data_flow_ops.StagingArea([x])\n")
    edit = fix.plan(engine.check_file(str(path)))
    assert edit.after == edit.before
    assert any("StagingArea" in reason for reason in edit.skipped)


def _tree(tmp_path):
    tree = tmp_path / "src"
    tree.mkdir()
    for name in ("mnist_tutorial.py", "py2_train.py", "syntax_error.py", "lookalikes.py",
                 "queue_walkthrough.ipynb", "latin1_legacy.py"):
        (tree / name).write_bytes(open(os.path.join(FIXTURES, name), "rb").read())
    return tree


def _snapshot(tree):
    return {p.name: p.read_bytes() for p in sorted(tree.iterdir())}


def test_cli_fix_rewrites_only_parsable_files_and_keeps_mode(tmp_path):
    tree = _tree(tmp_path)
    script = tree / "mnist_tutorial.py"
    os.chmod(script, 0o754)
    before = _snapshot(tree)
    result = run_cli("--fix", "-q", str(tree))
    # 1: the files not rewritten (not Python 3) keep their legacy sites
    assert result.returncode == 1, result.stderr
    after = _snapshot(tree)
    changed = {name for name in before if before[name] != after[name]}
    assert changed == {"mnist_tutorial.py"}
    text = after["mnist_tutorial.py"].decode()
    assert "import compat.v1 as tf\ntf.disable_v2_behavior()\n" in text
    assert stat.S_IMODE(os.stat(script).st_mode) == 0o754
    assert "not rewritten: not valid Python 3" in result.stderr
    assert not [p for p in tree.iterdir() if p.name.startswith(".compat-check-")]
    # a second run changes nothing
    again = run_cli("--fix", "-q", str(tree))
    assert _snapshot(tree) == after
    assert again.stderr.splitlines()[-1] == (
        "Nothing left that --fix can rewrite: 4 files with legacy sites need a hand edit "
        "(the reasons above); 1 file already on the shim or bridged")


def test_cli_diff_writes_nothing(tmp_path):
    tree = _tree(tmp_path)
    before = _snapshot(tree)
    result = run_cli("--diff", str(tree))
    assert result.returncode == 1
    assert _snapshot(tree) == before
    assert "-import tensorflow as tf\n+import compat.v1 as tf\n" in result.stdout
    assert "+tf.disable_v2_behavior()" in result.stdout
    assert "Would fix 1 file" in result.stderr


def test_without_fix_nothing_is_written(tmp_path):
    tree = _tree(tmp_path)
    before = _snapshot(tree)
    for args in ([], ["--format", "json"], ["--format", "sarif"], ["--statistics"]):
        run_cli(*args, str(tree))
    assert _snapshot(tree) == before
