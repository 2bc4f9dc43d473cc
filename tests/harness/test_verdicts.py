"""Verdicts a user can trust: each rule of `compare`, on the case that once broke it.

- The window level checks each side against its own input order: a correct tf.data rewrite
  that shuffles its files (seeded) is EQUIVALENT with any graph seed, though its file order
  is never TF1's; a rewrite that drops a file's rows is not.
- A level that could not be checked is never a pass: it is listed as not checked, with why,
  in the verdict line, `explain()` and the JSON.
- Streams that end in an error are equivalent only if the error types match AND the
  elements before the error are equivalent.
"""
import pytest

from compat import harness

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(600)]

ROWS_PER_FILE = 30


@pytest.fixture
def csv_paths(tmp_path):
    paths = []
    for shard in range(4):
        path = tmp_path / f"part-{shard}.csv"
        path.write_text("".join(f"{shard * ROWS_PER_FILE + row},{row * 0.5}\n"
                                for row in range(ROWS_PER_FILE)))
        paths.append(str(path))
    return paths


def _legacy_csv(paths, shuffle_files=True):
    def build(tf):
        files = tf.train.string_input_producer(paths, num_epochs=1, shuffle=shuffle_files)
        _, line = tf.TextLineReader().read(files)
        number, value = tf.decode_csv(line, record_defaults=[[0], [0.0]])
        return tf.train.shuffle_batch([number, value], batch_size=10, capacity=60,
                                      min_after_dequeue=20, allow_smaller_final_batch=True)
    return build


def _tf_data_csv(paths):
    """The checker's rewrite: files shuffled in tf.data too, lines, decode, shuffle, batch."""
    def rewrite(tf):
        files = tf.data.Dataset.from_tensor_slices(paths).shuffle(len(paths))
        rows = files.flat_map(tf.data.TextLineDataset).map(
            lambda line: tuple(tf.io.decode_csv(line, record_defaults=[[0], [0.0]])))
        return rows.shuffle(60).batch(10)
    return rewrite


@pytest.mark.parametrize("graph_seed", [1, 2, 3])
def test_a_correct_rewrite_that_shuffles_its_files_is_equivalent(csv_paths, graph_seed):
    report = harness.compare(_legacy_csv(csv_paths), candidate=_tf_data_csv(csv_paths),
                             graph_seed=graph_seed, max_batches=None)
    assert report.equivalent, report.explain()
    assert "window" in report.levels, report.explain()
    assert any("candidate input order" in note for note in report.notes), report.notes


def test_a_rewrite_that_drops_one_files_rows_is_not_equivalent(csv_paths):
    report = harness.compare(_legacy_csv(csv_paths), candidate=_tf_data_csv(csv_paths[:-1]),
                             graph_seed=1, max_batches=None)
    assert not report.equivalent
    assert not report.result("epochs").passed, report.explain()


def test_a_level_that_cannot_be_checked_is_listed_as_not_checked(csv_paths):
    """Unseeded file shuffles: neither side's input order can be re-run, so the window level
    checks nothing; it must say so rather than pass."""
    report = harness.compare(_legacy_csv(csv_paths), candidate=_tf_data_csv(csv_paths),
                             max_batches=None)
    assert "window" not in report.levels
    assert [level for level, _ in report.skipped] == ["window"]
    window = report.result("window")
    assert window.skipped and not window.passed
    assert "not checked: window (" in report.verdict()
    assert "[window] NOT CHECKED" in report.explain()
    as_json = report.to_json()
    assert as_json["skipped"][0]["level"] == "window" and as_json["skipped"][0]["why"]
    assert not [r for r in as_json["results"] if r["skipped"] and r["passed"]]
    # what was checked still decides: the epochs level compared the rows
    assert report.levels == ("epochs",) and report.equivalent, report.explain()


def test_requesting_only_an_uncheckable_level_is_not_a_pass(csv_paths):
    report = harness.compare(_legacy_csv(csv_paths), candidate=_tf_data_csv(csv_paths),
                             mode="window", max_batches=None)
    assert report.levels == ()
    assert not report.equivalent
    assert report.verdict().startswith("NOT EQUIVALENT (checked: nothing)")


def _good_then_missing(tmp_path):
    good = tmp_path / "good.csv"
    good.write_text("".join(f"{row},{row * 0.5}\n" for row in range(40)))
    return [str(good), str(tmp_path / "missing.csv")]


def _legacy_ordered_csv(paths):
    def build(tf):
        files = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
        _, line = tf.TextLineReader().read(files)
        number, value = tf.decode_csv(line, record_defaults=[[0], [0.0]])
        return tf.train.batch([number, value], batch_size=10)
    return build


def _tf_data_ordered_csv(paths, skip=0):
    def rewrite(tf):
        rows = tf.data.TextLineDataset(paths).skip(skip).map(
            lambda line: tuple(tf.io.decode_csv(line, record_defaults=[[0], [0.0]])))
        return rows.batch(10, drop_remainder=True)
    return rewrite


def test_streams_ending_in_the_same_error_after_the_same_rows_are_equivalent(tmp_path):
    paths = _good_then_missing(tmp_path)
    report = harness.compare(_legacy_ordered_csv(paths),
                             candidate=_tf_data_ordered_csv(paths), max_batches=None)
    assert "NotFoundError" in report.legacy.error and "NotFoundError" in report.candidate.error
    assert report.levels[0] == "run" and len(report.levels) > 1
    assert report.equivalent, report.explain()
    assert report.legacy.elements == report.candidate.elements == 40


def test_a_stream_that_loses_rows_before_the_same_error_is_not_equivalent(tmp_path):
    paths = _good_then_missing(tmp_path)
    report = harness.compare(_legacy_ordered_csv(paths),
                             candidate=_tf_data_ordered_csv(paths, skip=10), max_batches=None)
    assert "NotFoundError" in report.candidate.error
    assert report.result("run").passed  # the same error type ...
    assert not report.equivalent, report.explain()  # ... after fewer rows
    assert "NotFoundError" in report.explain()


def test_when_tf1_cannot_finish_the_report_says_so(monkeypatch, csv_paths):
    """A legacy side cut off by the harness's timeout is TF1 not finishing, not a candidate
    fault: the report says so and compares the batches TF1 did deliver."""
    from compat._harness import compare as compare_module
    real_run_side = compare_module.run_side

    def legacy_cut_after_two_batches(*args, **kwargs):
        run = real_run_side(*args, **kwargs)
        if kwargs.get("origin") != "tensorflow.compat.v1":
            return run
        stream = run.stream.with_options(batches=run.stream.batches[:2], ended="timeout")
        return type(run)(stream, run.facts, run.seconds, run.origin)

    monkeypatch.setattr(compare_module, "run_side", legacy_cut_after_two_batches)
    build = _legacy_csv(csv_paths, shuffle_files=False)

    def ordered(tf):
        files = tf.train.string_input_producer(csv_paths, num_epochs=1, shuffle=False)
        _, line = tf.TextLineReader().read(files)
        number, value = tf.decode_csv(line, record_defaults=[[0], [0.0]])
        return tf.train.batch([number, value], batch_size=10)
    del build
    report = harness.compare(ordered, candidate="to_dataset", max_batches=None)
    assert report.legacy.ended == "timeout"
    assert any("did not finish" in note and "first 2 batch(es)" in note
               for note in report.notes), report.notes
    assert not any("cut at max_batches" in note for note in report.notes)
    assert report.equivalent, report.explain()
