"""Stages: legacy TF1 queues, on the shim, bridged by compat.to_dataset, plain tf.data;
--fail-on, and what a second --fix says."""
import json

import pytest

from check_helpers import check
from compat._check.cli import main

LEGACY_INPUT = '''\
import tensorflow.compat.v1 as tf


def inputs(filenames, batch_size):
    filename_queue = tf.train.string_input_producer(filenames, num_epochs=1)
    reader = tf.TFRecordReader()
    _, serialized = reader.read(filename_queue)
    features = tf.parse_single_example(
        serialized, features={"image_raw": tf.FixedLenFeature([], tf.string)})
    image = tf.decode_raw(features["image_raw"], tf.uint8)
    return tf.train.shuffle_batch([image], batch_size=batch_size, capacity=1000 + 3 * batch_size,
                                  min_after_dequeue=1000)
'''
SHIM_INPUT = LEGACY_INPUT.replace("import tensorflow.compat.v1 as tf", "import compat.v1 as tf")
BRIDGED_INPUT = '''\
import compat


def read_and_decode(tf, filenames):
    filename_queue = tf.train.string_input_producer(filenames, num_epochs=1, shuffle=False)
    _, serialized = tf.TFRecordReader().read(filename_queue)
    return tf.parse_single_example(
        serialized, features={"label": tf.FixedLenFeature([], tf.int64)})["label"]


def build(tf, filenames):
    label = read_and_decode(tf, filenames)
    return tf.train.batch([label], batch_size=32, allow_smaller_final_batch=True)


def train_dataset(filenames):
    return compat.to_dataset(build, filenames)
'''
TF_DATA_INPUT = '''\
import tensorflow as tf


def train_dataset(filenames):
    dataset = tf.data.TFRecordDataset(filenames)
    return dataset.shuffle(1000).batch(32)
'''


def _stages(source):
    return [(f.line, f.code, f.stage) for f in check(source).findings]


def test_tensorflow_import_is_legacy():
    assert {stage for _, _, stage in _stages(LEGACY_INPUT)} == {"legacy"}


def test_compat_v1_import_is_on_the_shim():
    stages = _stages(SHIM_INPUT)
    assert [code for _, code, _ in stages] == ["TFQ101", "TFQ111", "TFQ202"]
    assert {stage for _, _, stage in stages} == {"shim"}


def test_shim_instance_methods_are_on_the_shim():
    findings = check('''\
        from compat import v1 as tf
        sv = tf.train.Supervisor(logdir="/tmp/train")
        with sv.managed_session() as sess:
            threads = sv.start_queue_runners(sess)
        ''').findings
    assert findings and {f.stage for f in findings} == {"shim"}


def test_build_function_run_by_to_dataset_is_bridged():
    stages = _stages(BRIDGED_INPUT)
    # found although `tf` is a parameter: the build function and the helper it calls
    assert [(line, code) for line, code, _ in stages] == [
        (5, "TFQ101"), (6, "TFQ111"), (13, "TFQ201")]
    assert {stage for _, _, stage in stages} == {"bridged"}


def test_lambda_handed_to_to_dataset_bridges_the_function_it_calls():
    stages = _stages('''\
        import tensorflow.compat.v1 as tf
        from compat import to_dataset

        def cifar_batches(data_dir):
            files = tf.train.match_filenames_once(data_dir + "/data_batch_*.bin")
            queue = tf.train.string_input_producer(files)
            _, value = tf.FixedLengthRecordReader(record_bytes=3073).read(queue)
            return tf.train.batch([value], 128)

        def evaluate(data_dir):
            raw = tf.train.string_input_producer(["eval.bin"])
            return to_dataset(lambda shim: cifar_batches(data_dir)), raw
        ''')
    by_line = {line: stage for line, _, stage in stages}
    assert [by_line[n] for n in (5, 6, 7, 8)] == ["bridged"] * 4
    assert by_line[11] == "legacy"  # not in what to_dataset runs


def test_only_the_tf_parameter_is_taken_for_the_shim():
    stages = _stages('''\
        import compat


        class Cifar10Input(object):
            def parse(self, serialized):
                # `serialized` is a tensor, not the shim: its methods are no queue APIs
                return serialized.batch

            def build(self, tf, filenames):
                queue = tf.train.string_input_producer(filenames)
                _, serialized = tf.TFRecordReader().read(queue)
                return tf.train.batch([self.parse(serialized)], 128)

            def dataset(self, filenames):
                return compat.to_dataset(self.build, filenames)
        ''')
    assert stages == [(10, "TFQ101", "bridged"), (11, "TFQ111", "bridged"),
                      (12, "TFQ201", "bridged")]


def test_a_to_dataset_of_another_package_bridges_nothing():
    stages = _stages('''\
        import tensorflow as tf
        from mylib.data import to_dataset

        def build():
            return tf.train.batch([tf.constant(1)], 4)

        ds = to_dataset(build)
        ''')
    assert [stage for _, _, stage in stages] == ["legacy"]


@pytest.fixture
def tree(tmp_path):
    for name, text in (("legacy_input.py", LEGACY_INPUT), ("shim_input.py", SHIM_INPUT),
                       ("bridged_input.py", BRIDGED_INPUT), ("tf_data_input.py", TF_DATA_INPUT)):
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize("fail_on, without_legacy", [
    ("legacy", 0), ("shim", 1), ("any", 1)])
def test_fail_on_sets_the_exit_code(tree, fail_on, without_legacy, capsys):
    assert main(["-q", "--fail-on", fail_on, str(tree)]) == 1
    (tree / "legacy_input.py").unlink()
    assert main(["-q", "--fail-on", fail_on, str(tree)]) == without_legacy
    (tree / "shim_input.py").unlink()
    assert main(["-q", "--fail-on", fail_on, str(tree)]) == (fail_on == "any")
    assert main(["-q", "--fail-on", fail_on, "--exit-zero", str(tree)]) == 0


def test_unknown_fail_on_is_a_usage_error(tree, capsys):
    assert main(["--fail-on", "bridged", str(tree)]) == 2
    assert "--fail-on: invalid choice: 'bridged'" in capsys.readouterr().err


def test_text_summary_counts_sites_per_stage(tree, capsys):
    assert main(["--fail-on", "shim", str(tree)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert "9 queue API sites in 3 files" in lines[-3]
    assert lines[-2] == ("by stage: 3 legacy (TF1 queues), 3 on the shim (compat.v1), "
                         "3 bridged by compat.to_dataset; 1 file on plain tf.data")
    assert lines[-1] == "--fail-on shim: 6 sites at stage legacy or shim fail the run"


def test_json_has_a_stage_per_finding_and_per_stage_counts(tree, capsys):
    assert main(["--format", "json", str(tree)]) == 1
    document = json.loads(capsys.readouterr().out)
    by_file = {}
    for finding in document["findings"]:
        by_file.setdefault(finding["path"].rsplit("/", 1)[1], set()).add(finding["stage"])
    assert by_file == {"legacy_input.py": {"legacy"}, "shim_input.py": {"shim"},
                       "bridged_input.py": {"bridged"}}
    summary = document["summary"]
    assert summary["stages"] == {"legacy": 3, "shim": 3, "bridged": 3, "tf.data": 1}
    assert (summary["fail_on"], summary["failing"]) == ("legacy", 3)


@pytest.mark.parametrize("fail_on, notes", [
    ("legacy", {"shim", "bridged"}), ("shim", {"bridged"}), ("any", set())])
def test_sarif_level_follows_fail_on(tree, fail_on, notes, capsys):
    main(["--format", "sarif", "--fail-on", fail_on, str(tree)])
    run = json.loads(capsys.readouterr().out)["runs"][0]
    levels = {}
    for result in run["results"]:
        levels.setdefault(result["properties"]["stage"], set()).add(result["level"])
    assert {stage for stage, seen in levels.items() if seen == {"note"}} == notes
    assert all("note" not in seen for stage, seen in levels.items() if stage not in notes)
    assert run["invocations"][0]["properties"]["failOn"] == fail_on


def test_fix_then_fix_again_says_nothing_is_left(tree, capsys):
    (tree / "shim_input.py").unlink()
    assert main(["-q", "--fix", str(tree)]) == 0  # the tree as --fix left it: on the shim
    captured = capsys.readouterr()
    assert "legacy_input.py: import tensorflow.compat.v1 as tf -> import compat.v1 as tf" \
        in captured.err
    assert "by stage: 0 legacy (TF1 queues), 3 on the shim (compat.v1)" in captured.out
    fixed = (tree / "legacy_input.py").read_text()
    assert fixed == SHIM_INPUT

    assert main(["-q", "--fix", str(tree)]) == 0
    err = capsys.readouterr().err
    assert err.strip() == ("Nothing left to fix: the queue sites in 2 files are already on the "
                           "shim (compat.v1) or bridged by compat.to_dataset; the next step is "
                           "tf.data (compat-migrate, or the tf.data rewrite printed for each "
                           "site)")
    assert (tree / "legacy_input.py").read_text() == fixed  # idempotent


def test_fix_on_a_tree_without_queues_says_there_is_nothing_to_fix(tmp_path, capsys):
    (tmp_path / "input.py").write_text(TF_DATA_INPUT)
    assert main(["-q", "--fix", str(tmp_path)]) == 0
    assert capsys.readouterr().err.strip() == "Nothing to fix: no legacy TF1 queue site found"
    assert (tmp_path / "input.py").read_text() == TF_DATA_INPUT


def test_diff_of_a_tree_on_the_shim_is_empty(tree, capsys):
    (tree / "legacy_input.py").unlink()
    assert main(["-q", "--diff", str(tree)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("Nothing left to fix")


def test_second_fix_names_what_only_a_hand_edit_can_fix(tree, capsys):
    # a Python 2 script: found by the token scan, never rewritten
    (tree / "py2_input.py").write_text(
        "import tensorflow as tf\n"
        "queue = tf.train.string_input_producer(['train.csv'])\n"
        "print 'queue ready'\n")
    main(["-q", "--fix", str(tree)])
    capsys.readouterr()
    assert main(["-q", "--fix", str(tree)]) == 1  # py2_input.py is still legacy
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == ("Nothing left that --fix can rewrite: 1 file with legacy sites needs a "
                       "hand edit (the reasons above); 3 files already on the shim or bridged")
    assert any("py2_input.py: not rewritten: not valid Python 3" in line for line in err)


def test_python2_file_on_the_shim_is_on_the_shim():
    report = check('''\
        import compat.v1 as tf
        queue = tf.train.string_input_producer(["train.csv"])
        print "reading", queue
        ''')
    assert report.scan == "tokens"
    assert [(f.code, f.stage) for f in report.findings] == [("TFQ101", "shim")]


def test_an_api_the_shim_does_not_cover_stays_legacy_on_the_shim():
    stages = _stages('''\
        import compat.v1 as tf
        files = tf.train.string_input_producer(["a.tfr"])
        batches = tf.contrib.training.bucket_by_sequence_length(length, tensors, 32, [10, 20])
        ''')
    assert stages == [(2, "TFQ101", "shim"), (3, "TFQ413", "legacy")]
