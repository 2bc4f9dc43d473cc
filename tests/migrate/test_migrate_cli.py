"""compat-migrate's command line, its output module and the tests it writes."""
import ast
import os
import subprocess
import sys
import textwrap

import pytest

from compat import migrate

pytestmark = pytest.mark.needs_tf

PROGRAMS = os.path.join(os.path.dirname(__file__), "programs")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ALL_MIGRATED = ("digits_records", "census_csv", "photo_folder", "reading_guide")


def _program(name):
    return os.path.join(PROGRAMS, f"{name}.py")


def test_exit_codes_say_whether_everything_was_migrated(tmp_path, capsys):
    assert migrate.main([_program("digits_records"), "-o", str(tmp_path / "a.py")]) == 0
    assert migrate.main([_program("sentences"), "-o", str(tmp_path / "b.py")]) == 1
    err = capsys.readouterr().err
    assert "fed_sentences: NOT migrated: line" in err and "padded_sequences: migrated" in err
    assert migrate.main([str(tmp_path / "missing.py")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_one_function_can_be_chosen_and_an_unknown_one_is_an_error(tmp_path, capsys):
    out = tmp_path / "only.py"
    assert migrate.main([_program("digits_records"), "--function", "inputs", "-o", str(out)]) == 0
    text = out.read_text()
    assert "def inputs(" in text and "tf.data" in text
    # The functions not chosen stay as they were (renamed to TF2 spellings by tf_upgrade_v2).
    assert "def train_inputs(" in text
    assert migrate.main([_program("digits_records"), "--function", "nope"]) == 2
    assert "no legacy input function named nope" in capsys.readouterr().err


def test_a_migrated_module_has_nothing_left_to_migrate(tmp_path, capsys):
    """Running the tool on its own output finds no input function: the rewrite is complete."""
    for name in ALL_MIGRATED:
        out = tmp_path / f"{name}_tf2.py"
        assert migrate.main([_program(name), "-o", str(out)]) == 0
        assert migrate.main([str(out), "-o", str(tmp_path / "again.py")]) == 2
        assert "no legacy input function" in capsys.readouterr().err


def test_migrated_modules_use_tensorflow_2_alone(tmp_path):
    """No compat import, no TF1 queue, reader, producer, runner, Session or placeholder; TF1
    spellings only where their values differ from TF2's (listed in the header)."""
    banned = ("Reader", "QueueRunner", "Coordinator", "Session", "placeholder", "producer",
              "Queue", "start_queue_runners", "batch_join", "shuffle_batch")
    for name in ALL_MIGRATED:
        result = migrate.migrate_file(_program(name))
        tree = ast.parse(result.output)
        imported = {alias.name for node in ast.walk(tree)
                    if isinstance(node, (ast.Import, ast.ImportFrom))
                    for alias in node.names} | {node.module for node in ast.walk(tree)
                                                 if isinstance(node, ast.ImportFrom)}
        assert not any(m and m.split(".")[0] == "compat" for m in imported), (name, imported)
        used = {ast.unparse(node) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        for spelled in used:
            assert not any(word in spelled for word in banned), (name, spelled)
            if spelled.startswith("tf.compat.v1.") and spelled.count(".") >= 3:
                root = "tf." + spelled[len("tf.compat.v1."):]
                assert any(root.startswith(kept) or kept.startswith(root + ".")
                           for kept, _ in result.tf1_values_kept), spelled
        for spelled, why in result.tf1_values_kept:
            assert f"Kept TF1's {spelled}" in result.output


def test_migrated_modules_run_eagerly_without_compat(tmp_path, inputs):
    """The new modules run in plain TF2 eager, in a process where compat cannot be imported."""
    for name in ALL_MIGRATED:
        (tmp_path / f"{name}_tf2.py").write_text(migrate.migrate_file(_program(name)).output)
    script = textwrap.dedent(f"""
        import sys
        sys.modules["compat"] = None  # any import of compat fails
        sys.path.insert(0, {str(tmp_path)!r})
        import tensorflow as tf
        assert tf.executing_eagerly()
        import digits_records_tf2, census_csv_tf2, photo_folder_tf2, reading_guide_tf2
        digits, csv, photos = {inputs['digits']!r}, {inputs['csv']!r}, {inputs['photos']!r}
        images, labels = next(iter(digits_records_tf2.inputs(digits, 4, 1)))
        assert images.shape == (4, 64) and labels.dtype == tf.int32
        features, label = next(iter(census_csv_tf2.input_fn(csv, 3)))
        assert sorted(features) == ["age", "hours", "workclass"] and label.shape == (3,)
        batch = next(iter(photo_folder_tf2.photo_batches(photos, list(range(6)), 2, 1)))
        assert batch[0].shape == (2, 5, 7, 3)
        examples = [e for e, _ in reading_guide_tf2.input_pipeline(csv, 4, 2, 1)]
        assert sum(int(e.shape[0]) for e in examples) == 12  # 14 rows, remainder dropped
        print("ran")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ran")


def test_written_tests_prove_the_migration_once_arguments_are_filled_in(tmp_path, inputs):
    source = tmp_path / "digits_records.py"
    source.write_text(open(_program("digits_records")).read())
    out, tests = tmp_path / "digits_records_tf2.py", tmp_path / "test_digits_records_tf2.py"
    assert migrate.main([str(source), "-o", str(out), "--tests", str(tests)]) == 0
    written = tests.read_text()
    assert written.count("\ndef test_") == 7  # one per migrated function
    assert "FILL IN" in written
    files = inputs["digits"]
    filled = written.replace("'inputs': None", f"'inputs': ({files!r}, 4, 2)").replace(
        "'chunked_inputs': None", f"'chunked_inputs': ({files!r}, 5)")
    tests.write_text(filled)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT]))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         str(tests)], capture_output=True, text=True, timeout=600, cwd=str(tmp_path), env=env)
    # The two filled in pass against TF1; the others fail, saying what to fill in.
    assert "5 failed, 2 passed" in done.stdout, done.stdout[-3000:]
    assert "fill in ARGUMENTS['train_inputs']" in done.stdout


def test_checker_names_the_functions_compat_migrate_rewrites(capsys):
    from compat import check
    assert check.main([_program("sentences")]) == 1
    out = capsys.readouterr().out
    assert "compat-migrate can rewrite padded_sequences()" in out
    assert "fed_sentences()" not in out  # a Python-fed queue: not rewritten


def test_the_guides_example_is_the_tools_output_and_gives_tf1s_batches(tf_behavior, inputs,
                                                                        tmp_path):
    guide = os.path.join(ROOT, "migration_guide")
    result = migrate.migrate_file(os.path.join(guide, "example_inputs.py"))
    with open(os.path.join(guide, "example_inputs_tf2.py"), encoding="utf-8") as handle:
        assert handle.read() == result.output, (
            "regenerate: compat-migrate migration_guide/example_inputs.py "
            "-o migration_guide/example_inputs_tf2.py")
    assert [f.name for f in result.migrated] == ["train_input", "eval_input"]
    legacy, new = (_import_path(os.path.join(guide, name)) for name in
                   ("example_inputs.py", "example_inputs_tf2.py"))
    files = inputs["digits"]
    from compat import harness
    report = harness.compare(lambda: legacy.eval_input(files, 4),
                             candidate=lambda: new.eval_input(files, 4), mode="exact",
                             max_batches=None)
    assert report.equivalent, report.explain()
    report = harness.compare(lambda: legacy.train_input(files, 4)[1],
                             candidate=lambda: new.train_input(files, 4).map(lambda f, l: l),
                             max_batches=15)
    assert report.equivalent, report.explain()


def _import_path(path):
    import importlib.util
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
