"""Verdict details a user can trust: the root cause of an error, the legacy side's thread
timing never turning into a failure, and level summaries that say what they compared."""
import threading

import numpy as np
import pytest

from compat import harness
from compat._harness import runner

HEADER, ROWS = "id,value", ["1,10", "2,20", "3,30", "4,40", "5,50"]


@pytest.fixture
def csv_file(tmp_path):
    path = tmp_path / "records.csv"
    path.write_text("\n".join([HEADER] + ROWS) + "\n")
    return str(path)


def _legacy_csv(path):
    def build(tf):
        """TF1 reader that skips the header line."""
        files = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
        _, line = tf.TextLineReader(skip_header_lines=1).read(files)
        ident, value = tf.decode_csv(line, [[0], [0]])
        return tf.train.batch([ident, value], 2, allow_smaller_final_batch=True)
    return build


def _candidate_forgets_header(path):
    def candidate(tf):
        """tf.data rewrite that forgot `.skip(1)`: the header fails to parse as int32."""
        return tf.data.TextLineDataset(path) \
            .map(lambda line: tuple(tf.io.decode_csv(line, [[0], [0]]))).batch(2)
    return candidate


def test_candidate_csv_error_reports_the_root_cause(csv_file):
    """A candidate failing in decode_csv is reported with TF's reason for it (the field that
    is not an int32), in explain() and in the JSON, not with "Graph execution error:"."""
    report = harness.compare(_legacy_csv(csv_file),
                             candidate=_candidate_forgets_header(csv_file))
    assert not report.equivalent
    error = report.to_json()["candidate"]["error"]
    assert error.startswith("InvalidArgumentError: "), error
    assert "not a valid int32" in error, error
    assert "Graph execution error" not in error and 'File "' not in error, error
    assert "\n" not in error and len(error) <= runner.ERROR_TEXT_LIMIT
    assert "not a valid int32" in report.explain()
    assert report.to_json()["legacy"]["error"] == ""


def _op_error(message):
    import tensorflow as tf
    return tf.errors.InvalidArgumentError(None, None, message)


def test_error_text_drops_tensorflow_wrapping_and_keeps_the_node():
    """The graph-execution header, "Detected at node" blocks (frames, source lines,
    "<stack traces unavailable>", "Node:") go; the op's message and [[{{node X}}]] stay."""
    message = ("Graph execution error:\n\n"
               "Detected at node 'DecodeCSV' defined at (most recent call last):\n"
               '    File "/job/input.py", line 12, in build\n'
               "      fields = tf.decode_csv(line, defaults)\n"
               "Node: 'DecodeCSV'\n"
               "Detected at node IteratorGetNext defined at (most recent call last):\n"
               "<stack traces unavailable>\n"
               "Field 0 in record 0 is not a valid int32: id\n"
               "\t [[{{node DecodeCSV}}]]\n"
               "\t [[IteratorGetNext]]")
    assert runner._error_text(_op_error(message)) == (
        "InvalidArgumentError: Field 0 in record 0 is not a valid int32: id "
        "[[{{node DecodeCSV}}]] [[IteratorGetNext]]")
    # AutoGraph "in user code:" errors: the error under the frames, without its type twice
    autograph = ('in user code:\n\n    File "/job/input.py", line 5, in None  *\n'
                 '        lambda x: x + "a"\n\n'
                 "    TypeError: Input 'y' of 'AddV2' Op has type string\n")
    assert runner._error_text(TypeError(autograph)) == \
        "TypeError: Input 'y' of 'AddV2' Op has type string"
    assert runner._error_text(ValueError("first line\nsecond line")) == \
        "ValueError: first line second line"


def test_long_error_text_is_cut_inside_the_message_only():
    """A huge message (a dump of values) is shortened; the type and node tag survive."""
    text = runner._error_text(_op_error(
        "Graph execution error:\n\nbad value " + "7 " * 2000 + "\n\t [[{{node Cast_3}}]]"))
    assert len(text) <= runner.ERROR_TEXT_LIMIT
    assert text.startswith("InvalidArgumentError: bad value 7")
    assert text.endswith("... [[{{node Cast_3}}]]"), text


class _Straggler:
    """A queue runner whose thread ignores request_stop until the test releases it."""

    def __init__(self, release):
        self.release = release

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        thread = threading.Thread(target=self.release.wait, args=(120,), daemon=True,
                                  name="straggler-thread")
        if start:
            thread.start()
        return [thread]


@pytest.fixture
def straggler(monkeypatch):
    """(a build wrapper adding a _Straggler, the release event); grace period 0.05 s."""
    monkeypatch.setattr(runner, "JOIN_GRACE_SECONDS", 0.05)
    release = threading.Event()

    def with_straggler(build):
        def build_with_straggler(tf):
            fetches = build(tf)
            tf.add_to_collection(tf.GraphKeys.QUEUE_RUNNERS, _Straggler(release))
            return fetches
        return build_with_straggler
    yield with_straggler
    release.set()


def test_runner_thread_outliving_the_grace_period_is_a_note(pipelines, straggler):
    """A legacy runner thread still alive after the join grace period records a note on the
    SideRun, not an error, and the comparison with a correct candidate stays equivalent."""
    build = straggler(pipelines.build_counting)
    side = runner.run_side(build, runner.legacy_module(), origin="tensorflow.compat.v1")
    assert side.stream.error == "" and side.stream.ended == "out_of_range"
    assert len(side.stream.batches) == 5
    assert len(side.notes) == 1 and "straggler-thread" in side.notes[0]
    assert "still running" in side.notes[0] and "ignored" in side.notes[0]

    report = harness.compare(build, candidate=pipelines.counting_dataset)
    assert report.equivalent, report.explain()
    assert report.legacy.error == ""
    assert any("straggler-thread" in note for note in report.notes), report.explain()


def test_error_reported_by_a_runner_thread_is_still_the_side_error(tmp_path, straggler):
    """A reader's NotFoundError, raised in a runner thread and reported to the coordinator,
    stays the side's error (with its cause), even when another thread also lingers."""
    missing = str(tmp_path / "missing.csv")

    def build(tf):
        files = tf.train.string_input_producer([missing], num_epochs=1, shuffle=False)
        _, line = tf.TextLineReader().read(files)
        return tf.train.batch([line], 2)

    side = runner.run_side(straggler(build), runner.legacy_module())
    assert side.stream.ended == "error"
    assert side.stream.error.startswith("NotFoundError: "), side.stream.error
    assert "missing.csv" in side.stream.error
    assert any("straggler-thread" in note for note in side.notes)


def _rows(order, size=10):
    return [{"index": np.array(order[k:k + size], np.int64)}
            for k in range(0, len(order), size)]


def test_stats_summary_never_presents_a_degenerate_test_as_a_result():
    """Unshuffled streams (all displacements 0) and a one-sided D of 0 are described as what
    they are; no "p=1" or "D=0.000" as if the KS test had measured something."""
    in_order = _rows(list(range(100)))
    unmoved = harness.stats(in_order, in_order, source_index="['index']")
    assert unmoved.passed and "degenerate" in unmoved.summary
    shuffled = _rows([int(x) for x in np.random.default_rng(0).permutation(100)])
    reference = harness.tf1_minimum_displacements(100, 2, 100)
    more = harness.stats(in_order, shuffled, source_index="['index']", reference=reference,
                         direction="less")
    assert more.passed and more.metrics["ks_statistic"] == 0
    assert "no sign of weaker shuffling" in more.summary and "window" in more.summary
    for result in (unmoved, more):
        assert "p=" not in result.summary and "D=0.000" not in result.summary, result.summary


def test_epochs_summary_says_when_elements_were_not_compared():
    """With check_counts off, the summary says the elements were NOT compared (instead of
    "match as multisets (multisets not compared ...)"); otherwise it says over what scope."""
    legacy, candidate = _rows(list(range(40))), _rows(list(range(40, 80)))
    uncounted = harness.epochs(legacy, candidate, check_counts=False)
    assert uncounted.passed and "NOT compared" in uncounted.summary
    assert "multiset" not in uncounted.summary
    counted = harness.epochs(legacy, legacy, epoch_size=20)
    assert "epoch by epoch (20 per epoch)" in counted.summary
    assert "order within an epoch not compared" in counted.summary


def test_empty_streams_say_nothing_was_compared():
    """Levels over empty streams do not read like checks that passed on data."""
    assert "nothing was compared" in harness.exact([], []).summary
    assert "nothing to bound" in harness.window([], 5, source_index="['index']").summary
