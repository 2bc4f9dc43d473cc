"""TF1 constructs that stop a program on TF 2.x whatever compat does: tf.contrib, tf.layers."""
import json

from check_helpers import check
from compat._check.cli import main

# cifar10-style model code already switched to the shim: the input pipeline is covered,
# the model is not
ON_THE_SHIM = '''\
import compat.v1 as tf


def inputs(filenames, batch_size):
    filename_queue = tf.train.string_input_producer(filenames)
    _, value = tf.FixedLengthRecordReader(record_bytes=3073).read(filename_queue)
    record = tf.reshape(tf.decode_raw(value, tf.uint8), [3073])
    return tf.train.shuffle_batch([record], batch_size, capacity=2000, min_after_dequeue=1000)


def inference(images):
    net = tf.layers.conv2d(images, 64, 5, padding="same", activation=tf.nn.relu)
    net = tf.layers.max_pooling2d(net, 3, 2)
    weights = tf.get_variable("local3", [4096, 384],
                              initializer=tf.contrib.layers.xavier_initializer())
    return tf.matmul(tf.layers.flatten(net), weights)
'''


def test_each_blocker_says_what_to_do_instead():
    found = {f.line: f for f in check(ON_THE_SHIM).findings if f.code in ("TFQ901", "TFQ902")}
    assert sorted(found) == [12, 13, 15, 16]
    assert found[12].code == "TFQ902" and found[12].coverage == "stops on TF 2.x"
    assert "pip install tf-keras and set TF_USE_LEGACY_KERAS=1" in found[12].message
    assert found[12].message.endswith("or tf.keras.layers.Conv2D")
    assert found[13].message.endswith("or tf.keras.layers.MaxPooling2D")
    assert found[15].code == "TFQ901"
    assert found[15].message.endswith("stops on TF 2.x: tf.keras.initializers.GlorotUniform()")
    assert {f.stage for f in found.values()} == {"legacy"}  # the shim does not change them


def test_covered_file_with_blockers_still_fails_the_run(tmp_path, capsys):
    (tmp_path / "cifar10.py").write_text(ON_THE_SHIM)
    for fail_on in ("legacy", "shim", "any"):
        assert main(["-q", "--fail-on", fail_on, str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "3 queue API sites in 1 file: 3 covered by the shim" in out
    assert ("4 uses of tf.contrib or tf.layers (TFQ901, TFQ902) stop the program on TF 2.x "
            "whatever compat does") in out
    assert "--fail-on legacy: 4 TF 2.x blockers (any --fail-on) fail the run" in out


def test_json_and_sarif_carry_the_blockers(tmp_path, capsys):
    (tmp_path / "cifar10.py").write_text(ON_THE_SHIM)
    main(["--format", "json", str(tmp_path)])
    document = json.loads(capsys.readouterr().out)
    assert document["summary"]["blockers"] == 4
    assert [f["code"] for f in document["findings"]].count("TFQ902") == 3
    main(["--format", "sarif", str(tmp_path)])
    run = json.loads(capsys.readouterr().out)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    blockers = [r for r in run["results"] if r["ruleId"] in ("TFQ901", "TFQ902")]
    assert len(blockers) == 4 and {r["level"] for r in blockers} == {"error"}
    assert {r["level"] for r in run["results"] if r not in blockers} == {"note"}  # on the shim


def test_fix_leaves_blockers_to_the_user(tmp_path, capsys):
    path = tmp_path / "cifar10.py"
    path.write_text(ON_THE_SHIM)
    assert main(["-q", "--fix", str(tmp_path)]) == 1
    assert path.read_text() == ON_THE_SHIM
    assert "Nothing left to fix" in capsys.readouterr().err


def test_list_rules_names_the_blocker_rules(capsys):
    assert main(["--list-rules"]) == 0
    out = capsys.readouterr().out
    assert "TFQ901  stops on TF 2.x" in out and "TFQ902  stops on TF 2.x" in out


def test_columns_count_characters_on_non_ascii_lines():
    [found] = check('import tensorflow as tf\n'
                    'étiquettes = tf.layers.dense(x, 10)  # « couche dense »\n').findings
    assert (found.line, found.col, found.end_col) == (2, 14, 29)  # tf.layers.dense
