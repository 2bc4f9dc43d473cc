"""compare() against legacy TF1 queues: legacy-vs-legacy passes, broken candidates are flagged."""
import json

import numpy as np
import pytest

from compat import harness

pytestmark = pytest.mark.needs_tf


def kinds(report):
    return {finding.kind for finding in report.findings}


# ----------------------------------------------------------------------- legacy vs legacy


def test_deterministic_pipeline_auto_picks_exact_and_passes(pipelines, tf_v1):
    report = harness.compare(pipelines.build_counting, candidate=tf_v1)
    assert report.equivalent, report.explain()
    assert report.levels == ("exact",)
    assert "deterministic" in report.reason
    assert report.legacy.batches == 5 and report.legacy.elements == 24


def test_module_level_tf_is_swapped_for_each_side(pipelines, tf_v1):
    report = harness.compare(pipelines.build_with_global_tf, candidate=tf_v1)
    assert report.equivalent, report.explain()
    assert report.legacy.elements == 7 and report.legacy.batches == 3


def test_bind_tf_swaps_module_globals_without_touching_them(pipelines, tf_v1):
    from compat._harness.runner import bind_tf
    seen = []

    class Recorder:
        __name__ = "recorder"

        def __getattr__(self, name):
            seen.append(name)
            return getattr(tf_v1, name)

    before = pipelines.tf
    bind_tf(pipelines.build_with_global_tf, Recorder())  # binding alone runs nothing
    assert seen == []
    with tf_v1.Graph().as_default():
        bind_tf(pipelines.build_with_global_tf, Recorder())()
    assert "train" in seen
    assert pipelines.tf is before  # the module's own global is untouched


def test_producer_shuffle_compares_per_epoch(pipelines, tf_v1):
    report = harness.compare(pipelines.build_producer_shuffled, candidate=tf_v1)
    assert report.equivalent, report.explain()
    assert report.levels[0] == "epochs"
    assert report.result("epochs").metrics["epoch_size"] == pipelines.EPOCH


def test_random_partial_epoch_is_compared_against_the_full_epoch(pipelines, tf_v1):
    for _ in range(4):  # each run keeps a different random part of the second epoch
        report = harness.compare(pipelines.build_partial_epoch, candidate=tf_v1)
        assert report.equivalent, report.explain()
        assert report.result("epochs").metrics["epoch_size"] == 4
    wrong = [np.array([0, 1, 2], np.int32), np.array([2, 0, 1], np.int32)]
    report = harness.compare(pipelines.build_partial_epoch, candidate=wrong)
    assert not report.equivalent, report.explain()


def test_shuffle_batch_legacy_runs_pass_every_level_including_stats(pipelines, tf_v1):
    for _ in range(3):  # the stats rule must not flag two legacy runs, run after run
        report = harness.compare(pipelines.build_shuffled, candidate=tf_v1,
                                 mode="epochs+window+stats")
        assert report.equivalent, report.explain()
        assert not report.result("stats").skipped


def test_shuffle_batch_auto_uses_epochs_window_stats(pipelines, tf_v1):
    report = harness.compare(pipelines.build_shuffled, candidate=tf_v1)
    assert report.equivalent, report.explain()
    assert report.levels == ("epochs", "window", "stats")
    assert "shuffle queue" in report.reason
    assert report.result("window").metrics["capacity"] == pipelines.SHUFFLE_CAPACITY


def test_input_order_from_a_component_carrying_it(pipelines, tf_v1):
    auto = harness.compare(pipelines.build_indexed_shuffle, candidate=tf_v1)
    assert auto.result("window").skipped  # unseeded producer: no re-run order
    report = harness.compare(pipelines.build_indexed_shuffle, candidate=tf_v1,
                             source_index="['position']")
    assert report.equivalent, report.explain()
    assert report.levels == ("epochs", "window", "stats")
    assert report.result("window").metrics["matched"] == 120


def test_input_order_from_a_source_function(pipelines, tf_v1):
    def in_order(tf):
        i = tf.train.range_input_producer(pipelines.SHUFFLE_N,
                                          num_epochs=pipelines.SHUFFLE_EPOCHS,
                                          shuffle=False).dequeue()
        return tf.train.batch({"index": i, "value": i * 3}, 10, allow_smaller_final_batch=True)

    report = harness.compare(pipelines.build_shuffled, candidate=pipelines.no_shuffle,
                             source=in_order, mode="window+stats")
    assert report.result("window").passed
    assert not report.result("stats").passed


def test_multithreaded_batch_is_not_exact_but_equivalent(pipelines, tf_v1):
    report = harness.compare(pipelines.build_threads, candidate=tf_v1)
    assert report.equivalent, report.explain()
    assert report.levels[:2] == ("epochs", "window")
    assert "3 enqueue threads" in report.reason


def test_sparse_strings_and_nested_tuples(pipelines, tf_v1):
    report = harness.compare(pipelines.build_sparse, candidate=tf_v1)
    assert report.equivalent, report.explain()
    batch = report.streams["legacy"].batches[0]
    assert isinstance(batch[0], harness.SparseValue)
    assert batch[1]["pair"][0].dtype == object


def test_both_sides_raising_the_same_error_is_equivalent(pipelines, tf_v1):
    report = harness.compare(pipelines.build_bad_capacity, candidate=tf_v1)
    assert report.equivalent, report.explain()
    # the error types, then what each side delivered before it (nothing: both failed to build)
    assert report.levels[0] == "run" and len(report.levels) > 1
    assert "ValueError" in report.legacy.error


def test_max_batches_truncates_both_sides(pipelines, tf_v1):
    report = harness.compare(pipelines.build_shuffled, candidate=tf_v1, max_batches=7)
    assert report.equivalent, report.explain()
    assert report.legacy.batches == report.candidate.batches == 7
    assert report.legacy.ended == "max_batches"


def test_correct_tf_data_rewrite_is_equivalent(pipelines):
    report = harness.compare(pipelines.build_counting, candidate=pipelines.counting_dataset)
    assert report.equivalent, report.explain()


def test_correct_shuffled_rewrite_is_equivalent(pipelines):
    report = harness.compare(pipelines.build_shuffled, candidate=pipelines.shuffled_like_tf1)
    assert report.equivalent, report.explain()


# ----------------------------------------------------------------------- broken candidates


def test_flags_dropped_element(pipelines):
    report = harness.compare(pipelines.build_counting, candidate=pipelines.dropped_element)
    assert not report.equivalent
    first = report.result("exact").findings[0]
    assert first.batch == 1 and first.path == "['index']"
    assert report.result("exact").metrics["missing_elements"] == 1
    assert "1 element(s) missing from the candidate, 0 extra" in report.explain()
    epochs = harness.compare(pipelines.build_counting, candidate=pipelines.dropped_element,
                             mode="epochs")
    assert "missing" in kinds(epochs), epochs.explain()
    assert "element #7" in epochs.explain()


def test_flags_duplicated_element(pipelines):
    report = harness.compare(pipelines.build_counting, candidate=pipelines.duplicated_element,
                             mode="epochs")
    assert not report.equivalent
    assert "duplicated" in kinds(report), report.explain()


def test_flags_swapped_batches(pipelines):
    report = harness.compare(pipelines.build_counting, candidate=pipelines.swapped_batches)
    assert not report.equivalent
    assert report.result("exact").findings[0].batch == 0
    assert "2 differing batch(es)" in report.result("exact").summary
    assert "order" in kinds(report)  # same elements, in a different order
    # Same elements: the weaker level cannot see it, which is why auto picks exact here.
    assert harness.compare(pipelines.build_counting, candidate=pipelines.swapped_batches,
                           mode="epochs").equivalent


def test_flags_wrong_final_batch(pipelines):
    report = harness.compare(pipelines.build_drop_remainder,
                             candidate=pipelines.wrong_final_batch)
    assert not report.equivalent
    assert "batch_count" in kinds(report)
    assert "legacy produced 4 batch(es), candidate 5" in report.explain()


def test_flags_misaligned_components(pipelines):
    report = harness.compare(pipelines.build_counting, candidate=pipelines.misaligned_components,
                             mode="epochs")
    assert not report.equivalent
    assert "misaligned" in kinds(report), report.explain()


def test_flags_no_shuffle_where_one_was_expected(pipelines):
    report = harness.compare(pipelines.build_shuffled, candidate=pipelines.no_shuffle)
    assert not report.equivalent
    assert report.result("epochs").passed and report.result("window").passed
    stats = report.result("stats")
    assert not stats.passed and "unshuffled" in stats.findings[0].message


def test_flags_shuffle_window_too_small(pipelines):
    report = harness.compare(pipelines.build_shuffled,
                             candidate=pipelines.shuffle_window_too_small)
    assert not report.equivalent
    assert "distribution" in kinds(report), report.explain()


def test_flags_shuffle_window_too_large(pipelines):
    report = harness.compare(pipelines.build_shuffled,
                             candidate=pipelines.shuffle_window_too_large)
    assert not report.equivalent
    window = report.result("window")
    assert not window.passed and "TF1 guarantees input <" in window.findings[0].message


def test_flags_candidate_error(pipelines):
    report = harness.compare(pipelines.build_counting, candidate=pipelines.raises_at_run)
    assert not report.equivalent
    assert report.candidate.error.startswith("InvalidArgumentError")
    assert "error" in kinds(report)


def test_float_tolerance_accepts_last_bit_differences(pipelines):
    strict = harness.compare(pipelines.build_floats,
                             candidate=pipelines.floats_rounded_differently)
    assert not strict.equivalent
    assert "value" in kinds(strict)
    assert any("only float rounding differs" in note for note in strict.notes), strict.explain()
    for mode in ("exact", "epochs"):
        loose = harness.compare(pipelines.build_floats,
                                candidate=pipelines.floats_rounded_differently, mode=mode,
                                rtol=1e-6, atol=1e-6)
        assert loose.equivalent, loose.explain()


# ----------------------------------------------------------------------- report


def test_json_report_matches_schema(pipelines):
    jsonschema = pytest.importorskip("jsonschema")
    report = harness.compare(pipelines.build_counting, candidate=pipelines.dropped_element)
    document = json.loads(report.to_json_text())
    jsonschema.validate(document, harness.REPORT_JSON_SCHEMA)
    assert document["equivalent"] is False
    assert document["results"][0]["findings"][0]["path"] == "['index']"


def test_explain_names_batch_component_and_values(pipelines):
    text = harness.compare(pipelines.build_counting,
                           candidate=pipelines.dropped_element).explain()
    assert text.startswith("NOT EQUIVALENT")
    assert "batch 1" in text and "component ['index']" in text
    assert "legacy:" in text and "candidate:" in text


def test_candidate_none_runs_against_the_shim(pipelines):
    # The shim is still landing: this only asserts the harness drives compat.v1 and reports.
    report = harness.compare(pipelines.build_counting)
    assert report.candidate.origin == "compat.v1"
    assert report.explain()


def test_plot_writes_png(pipelines, tf_v1, tmp_path):
    pytest.importorskip("matplotlib")
    report = harness.compare(pipelines.build_shuffled, candidate=tf_v1)
    path = report.plot(tmp_path / "report.png")
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
