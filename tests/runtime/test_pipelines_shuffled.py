"""Pipelines where TF1 itself depends on thread timing: shuffle_batch, num_threads > 1, *_join.

TF1 guarantees no order here, so the shim must match it by what TF1 does guarantee: the
number and sizes of batches, the multiset of elements per run (components aligned), and the
shuffle window (the j-th output is among the first j + capacity inputs). The harness checks
those levels; each configuration is drawn by hypothesis.
"""
import pytest
from hypothesis import given, strategies as st

from compat import harness

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(600)]


@st.composite
def shuffle_configs(draw):
    capacity = draw(st.integers(2, 60))
    return dict(
        size=draw(st.integers(1, 40)),
        num_epochs=draw(st.integers(1, 3)),
        function=draw(st.sampled_from(["shuffle_batch", "maybe_shuffle_batch", "batch_threads"])),
        batch_size=draw(st.integers(1, 8)),
        capacity=capacity,
        min_after_dequeue=draw(st.integers(0, capacity - 1)),
        num_threads=draw(st.integers(1, 3)),
        allow_smaller_final_batch=draw(st.booleans()),
        seed=draw(st.one_of(st.none(), st.integers(0, 1000))),
    )


def shuffle_pipeline(config):
    def build(tf):
        position = tf.train.range_input_producer(
            config["size"] * config["num_epochs"], num_epochs=1, shuffle=False).dequeue()
        # One epoch of positions stands for num_epochs epochs of `size` rows, so that every
        # element carries its input position for the window check.
        row = position % config["size"]
        tensors = [position, tf.strings.as_string(row), tf.cast(row, tf.float32) * 0.5]
        common = dict(batch_size=config["batch_size"], capacity=config["capacity"],
                      num_threads=config["num_threads"],
                      allow_smaller_final_batch=config["allow_smaller_final_batch"])
        if config["function"] == "batch_threads":
            return tf.train.batch(tensors, **common)
        shuffle_args = dict(min_after_dequeue=config["min_after_dequeue"], seed=config["seed"])
        if config["function"] == "maybe_shuffle_batch":
            return tf.train.maybe_shuffle_batch(tensors, keep_input=tf.equal(row % 3, 1),
                                                **shuffle_args, **common)
        return tf.train.shuffle_batch(tensors, **shuffle_args, **common)
    return build


@given(config=shuffle_configs())
def test_shuffled_and_threaded_batching_match_tf1(config):
    # TF1's window counts enqueued elements: with a keep_input filter the input order is the
    # filtered one, which the harness takes from a single-threaded re-run of the pipeline.
    filtered = config["function"] == "maybe_shuffle_batch"
    report = harness.compare(shuffle_pipeline(config), mode="epochs+window",
                             source_index=None if filtered else "[0]", max_batches=None)
    assert report.equivalent, report.explain()


@st.composite
def join_configs(draw):
    capacity = draw(st.integers(2, 40))
    return dict(
        files=draw(st.lists(st.integers(0, 8), min_size=1, max_size=4)),
        readers=draw(st.integers(1, 3)),
        num_epochs=draw(st.integers(1, 2)),
        function=draw(st.sampled_from(["batch_join", "shuffle_batch_join",
                                       "maybe_batch_join", "maybe_shuffle_batch_join"])),
        batch_size=draw(st.integers(1, 6)),
        capacity=capacity,
        min_after_dequeue=draw(st.integers(0, capacity - 1)),
        allow_smaller_final_batch=draw(st.booleans()),
        seed=draw(st.one_of(st.none(), st.integers(0, 1000))),
    )


def join_pipeline(config, paths):
    def build(tf):
        filenames = tf.train.string_input_producer(paths, num_epochs=config["num_epochs"],
                                                   seed=config["seed"])
        entries = []
        for _ in range(config["readers"]):
            key, line = tf.TextLineReader().read(filenames)
            number = tf.strings.to_number(line, tf.int32)
            entries.append([key, number, number * 3])
        common = dict(batch_size=config["batch_size"], capacity=config["capacity"],
                      allow_smaller_final_batch=config["allow_smaller_final_batch"])
        shuffle_args = dict(min_after_dequeue=config["min_after_dequeue"], seed=config["seed"])
        # One keep_input serves every entry; computed from one reader, TF1 would make each
        # entry's enqueue also read from that reader (a timing-dependent stream), so with
        # several readers it is a constant.
        keep = (tf.not_equal(entries[0][1] % 4, 0) if config["readers"] == 1
                else tf.constant(True))
        function = config["function"]
        if function == "batch_join":
            return tf.train.batch_join(entries, **common)
        if function == "maybe_batch_join":
            return tf.train.maybe_batch_join(entries, keep_input=keep, **common)
        if function == "shuffle_batch_join":
            return tf.train.shuffle_batch_join(entries, **shuffle_args, **common)
        return tf.train.maybe_shuffle_batch_join(entries, keep_input=keep, **shuffle_args,
                                                 **common)
    return build


@given(config=join_configs())
def test_join_family_matches_tf1(config, tmp_path_factory):
    directory = tmp_path_factory.mktemp("lines")
    paths = []
    for index, count in enumerate(config["files"]):
        path = directory / f"part{index}.txt"
        path.write_text("".join(f"{index * 100 + line}\n" for line in range(count)))
        paths.append(str(path))
    report = harness.compare(join_pipeline(config, paths), mode="epochs", max_batches=None)
    assert report.equivalent, report.explain()


def test_shuffle_batch_mixes_epochs_and_drains_like_tf1():
    """min_after_dequeue is ignored once the input ends: every element comes out."""
    def build(tf):
        row = tf.train.range_input_producer(10, num_epochs=3, shuffle=False).dequeue()
        return tf.train.shuffle_batch([row], batch_size=4, capacity=25, min_after_dequeue=20,
                                      allow_smaller_final_batch=True, seed=1)
    report = harness.compare(build, mode="epochs", max_batches=None)
    assert report.equivalent, report.explain()


@given(entries=st.integers(2, 4), size=st.integers(1, 12), num_epochs=st.integers(1, 3),
       shuffle=st.booleans(), batch_size=st.integers(1, 5),
       function=st.sampled_from(["batch_join", "shuffle_batch_join"]))
def test_join_entries_sharing_one_queue_split_its_elements(entries, size, num_epochs, shuffle,
                                                            batch_size, function):
    """`[[image, label]] * n` over one producer: TF1 enqueues each element once, by one of
    the n enqueue ops; the shim must not copy the input n times."""
    def build(tf):
        index, label = tf.train.slice_input_producer(
            [tf.range(size), tf.range(size) * 7], num_epochs=num_epochs, shuffle=shuffle)
        common = dict(batch_size=batch_size, capacity=16, allow_smaller_final_batch=True)
        if function == "shuffle_batch_join":
            return tf.train.shuffle_batch_join([[index, label]] * entries, min_after_dequeue=3,
                                               **common)
        return tf.train.batch_join([[index, label]] * entries, **common)
    report = harness.compare(build, mode="epochs", max_batches=None)
    assert report.equivalent, report.explain()
