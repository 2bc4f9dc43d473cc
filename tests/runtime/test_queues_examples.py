"""The queue examples run under the shim, as programs and as pipelines compared with TF1."""
import importlib.util
import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
import tensorflow.compat.v1 as legacy_tf  # noqa: E402

import compat.v1 as shim_tf  # noqa: E402

pytestmark = [pytest.mark.needs_tf]

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def load_example(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}",
                                                  os.path.join(ROOT, "examples", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name, arguments", [("python_feeder", ["--utterances", "100"]),
                                             ("hand_built_stages", ["--epochs", "1"])])
@pytest.mark.extended
def test_example_program_runs_under_the_shim(name, arguments):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, os.path.join("examples", f"{name}.py"), *arguments], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=110)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "compat.v1" in result.stdout and "legacy" not in result.stdout


@pytest.mark.timeout(60)
def test_python_feeder_example_feeds_every_utterance_once(tmp_path):
    example = load_example("python_feeder")
    utterances = example.synthetic_utterances(count=120, seed=3)
    results = {}
    for tf in (legacy_tf, shim_tf):
        seen, batches, _, _ = example.train(tf, utterances=utterances, batch_size=16)
        results[tf.__name__] = (seen, batches)
    assert results["compat.v1"] == results[legacy_tf.__name__] == (120, 8)


@pytest.mark.timeout(60)
def test_hand_built_stages_example_gives_tf1s_elements(tmp_path):
    example = load_example("hand_built_stages")
    paths = example.write_csv_files(str(tmp_path), num_files=2, rows_per_file=50, seed=1)
    streams = {}
    for tf in (legacy_tf, shim_tf):
        with tf_real.Graph().as_default():
            features, labels = example.build(tf, paths=paths, num_epochs=2, batch_size=8)
            rows = []
            with tf.Session() as sess:
                sess.run(tf.local_variables_initializer())
                coord = tf.train.Coordinator()
                threads = tf.train.start_queue_runners(sess, coord)
                try:
                    while True:
                        batch_features, batch_labels = sess.run([features, labels])
                        rows.extend(zip(map(tuple, np.round(batch_features, 5)),
                                        batch_labels.tolist()))
                except tf_real.errors.OutOfRangeError:
                    pass
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=10)
        streams[tf.__name__] = (rows, len(threads))
    legacy_rows, legacy_threads = streams[legacy_tf.__name__]
    shim_rows, shim_threads = streams["compat.v1"]
    assert len(shim_rows) == len(legacy_rows) == 200  # 2 files x 50 rows x 2 epochs
    assert Counter(shim_rows) == Counter(legacy_rows)
    assert shim_threads == 0 and legacy_threads > 0
