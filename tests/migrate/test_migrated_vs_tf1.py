"""Each TF1-style input function, migrated by compat-migrate, gives TF1's stream.

The legacy side is the program itself on real `tensorflow.compat.v1` queues (in both TF
behaviours); the migrated side is the new module's tf.data. Exact where TF1 gives one order
(unshuffled, one thread); else epochs, window bounds and shuffle statistics (the harness's
"auto"), as TF1's own threads allow.
"""
import pytest

from compat import harness

pytestmark = pytest.mark.needs_tf


def _labels(batch):
    return batch[1]


# (program, function, arguments from the inputs, level, graph seed, projection)
CASES = [
    ("digits_records", "inputs", lambda i: (i["digits"], 4, 2), "exact", None, None),
    ("digits_records", "train_inputs", lambda i: (i["digits"], 4, 2), "auto", None, None),
    ("digits_records", "compressed_inputs", lambda i: (i["digits_gzip"], 3), "exact", None, None),
    ("digits_records", "chunked_inputs", lambda i: (i["digits"], 5), "exact", None, None),
    ("digits_records", "even_digits", lambda i: (i["digits"], 4), "exact", None, None),
    ("digits_records", "kept_rows", lambda i: (i["digits"], 4), "exact", None, None),
    ("digits_records", "shuffled_odd_digits", lambda i: (i["digits"], 3), "auto", None, None),
    # Three preprocessing threads: TF1 hands the random crops to whichever record a thread
    # holds, so only the labels (not the augmented pixels) are TF1's whatever the timing.
    ("small_images", "distorted_inputs", lambda i: (i["binary_images"], 4), "auto", None,
     _labels),
    ("small_images", "eval_inputs", lambda i: (i["binary_images"], 4), "auto", None, None),
    ("small_images", "keyed_eval_inputs", lambda i: (i["binary_images"],), "exact", None, None),
    ("census_csv", "input_fn", lambda i: (i["csv"], 3), "exact", None, None),
    ("census_csv", "input_fn", lambda i: (i["csv"], 3, 2, True), "auto", None, None),
    ("census_csv", "keyed_lines", lambda i: (i["csv"],), "exact", None, None),
    ("photo_folder", "photo_batches",
     lambda i: (i["photos"], list(range(len(i["photos"]))), 4, 1), "exact", None, None),
    ("photo_folder", "shuffled_photos",
     lambda i: (i["photos"], list(range(len(i["photos"]))), 4), "exact", 3, None),
    ("photo_folder", "whole_files", lambda i: (i["photos"], 4), "exact", None, None),
    ("photo_folder", "indices", lambda i: (10, 4), "exact", 3, None),
    ("sentences", "padded_sequences", lambda i: (i["sequences"], 4), "exact", None, None),
    ("hand_queues", "threaded_batches", lambda i: (i["digits"], 4), "auto", None, None),
    ("hand_queues", "up_to_batches", lambda i: (i["digits"], 4), "exact", None, None),
    ("hand_queues", "shuffled_batches", lambda i: (i["digits"], 4), "auto", None, None),
    ("hand_queues", "padded_batches", lambda i: (i["sequences"], 4), "exact", None, None),
    ("hand_queues", "single_elements", lambda i: (i["digits"],), "exact", None, None),
    ("reading_guide", "input_pipeline", lambda i: (i["csv"], 4, 3, 2), "auto", None, None),
    ("reading_guide", "joined_in_order", lambda i: (i["csv"], 4), "auto", None, None),
    ("reading_guide", "endless", lambda i: (i["csv"], 5), "exact", None, None),
    ("reading_guide", "from_tensor", lambda i: ([[1, 2], [3, 4], [5, 6], [7, 8]], 3), "exact",
     2, None),
]


@pytest.mark.parametrize("program,function,arguments,level,graph_seed,projection", CASES,
                         ids=[f"{c[0]}.{c[1]}-{c[3]}-{n}" for n, c in enumerate(CASES)])
def test_migrated_function_gives_tf1s_stream(tf_behavior, migrated, inputs, program, function,
                                             arguments, level, graph_seed, projection):
    legacy, new, result = migrated(program)
    record = next(f for f in result.functions if f.name == function)
    assert record.migrated, record.reason
    if record.deterministic:  # TF1 gives one order whatever the arguments
        assert level == "exact"
    args = arguments(inputs)

    def original():
        out = getattr(legacy, function)(*args)
        return projection(out) if projection else out

    def candidate():
        dataset = getattr(new, function)(*args)
        return dataset.map(lambda *batch: projection(batch)) if projection else dataset

    endless = function == "endless"
    report = harness.compare(original, candidate=candidate, mode=level,
                             max_batches=12 if endless else None, graph_seed=graph_seed)
    assert report.equivalent, report.explain()
    if level == "exact":
        assert tuple(report.levels) == ("exact",)


def test_function_left_on_the_shim_still_gives_tf1s_stream(tf_behavior, migrated, inputs):
    """Overlapping fixed-length records have no tf.data reader: the function is reported and
    wrapped over compat.to_dataset of the original, which still gives TF1's batches."""
    legacy, new, result = migrated("small_images")
    record = next(f for f in result.functions if f.name == "overlapping_windows")
    assert not record.migrated
    assert "hop_bytes" in record.reason.construct and record.reason.line > 0
    files = inputs["binary_images"]
    report = harness.compare(lambda: legacy.overlapping_windows(files),
                             candidate=lambda: new.overlapping_windows(files), mode="exact",
                             max_batches=None)
    assert report.equivalent, report.explain()


def test_python_fed_queue_is_reported_with_the_generator_to_write(migrated):
    _, new, result = migrated("sentences")
    record = next(f for f in result.functions if f.name == "fed_sentences")
    assert not record.migrated
    assert record.reason.construct.startswith("FIFOQueue")
    assert "from_generator" in record.reason.advice
    assert "NOT MIGRATED" in new.fed_sentences.__doc__
    assert "NOT migrated: fed_sentences" in result.output
