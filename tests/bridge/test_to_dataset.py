"""`compat.to_dataset`: a legacy pipeline as a tf.data.Dataset, with TF1's (and the shim's)
elements.

The oracle is the same `build` run in graph mode: under `tensorflow.compat.v1` where TF1 is
deterministic (bit for bit), and under `compat.v1` with the same graph seed where it is not
(the shim's own graph-mode stream, itself checked against TF1 by the runtime tests).
"""
import collections

import numpy as np
import pytest

import bridge_pipelines as pipelines
from conftest import tf_real
from session_streams import run_stream

import compat

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(300)]


def _elements(dataset_of, max_steps=1000):
    """The elements of `dataset_of()`, iterated as the current TF behaviour allows: eagerly,
    or (TF1 behaviour) through a one-shot iterator in a Session, as a TF1 program would."""
    if tf_real.executing_eagerly():
        return list(dataset_of().take(max_steps).as_numpy_iterator())
    with tf_real.Graph().as_default():
        next_element = tf_real.compat.v1.data.make_one_shot_iterator(dataset_of()).get_next()
        values = []
        with tf_real.compat.v1.Session() as sess:
            try:
                for _ in range(max_steps):
                    values.append(sess.run(next_element))
            except tf_real.errors.OutOfRangeError:
                pass
    return values


def _assert_same_stream(expected, got):
    assert len(got) == len(expected), f"{len(got)} elements, expected {len(expected)}"
    for index, (want, have) in enumerate(zip(expected, got)):
        want_parts = tf_real.nest.flatten(want)
        have_parts = tf_real.nest.flatten(have)
        assert len(want_parts) == len(have_parts)
        for want_part, have_part in zip(want_parts, have_parts):
            assert np.array_equal(np.asarray(want_part), np.asarray(have_part)), \
                f"element {index} differs"


@pytest.fixture
def paths(tmp_path):
    return pipelines.write_records(tmp_path)


def test_a_deterministic_pipeline_gives_tf1s_elements_bit_for_bit(legacy, paths):
    def build(tf):
        return pipelines.ordered_batches(tf, paths, num_epochs=2)

    expected = run_stream(legacy, build)
    assert len(expected) == 2 * 120 // 8
    _assert_same_stream(expected, _elements(lambda: compat.to_dataset(build)))


@pytest.mark.parametrize("graph_seed", [1, 7])
def test_with_a_graph_seed_the_elements_are_the_graph_mode_shims(shim, paths, graph_seed):
    def build(tf):
        return pipelines.shuffled_batches(tf, paths, num_epochs=2)

    expected = run_stream(shim, build, graph_seed=graph_seed)
    assert len(expected) == 2 * 120 // 8
    got = _elements(lambda: compat.to_dataset(build, graph_seed=graph_seed))
    _assert_same_stream(expected, got)


def test_arguments_reach_build(legacy, paths):
    expected = run_stream(
        legacy, lambda tf: pipelines.ordered_batches(tf, paths, batch_size=5, num_epochs=1))
    got = _elements(lambda: compat.to_dataset(pipelines.ordered_batches, paths, batch_size=5,
                                              num_epochs=1))
    _assert_same_stream(expected, got)
    assert got[0][0].shape == (5, 16)


def test_an_unseeded_pipeline_delivers_every_record_once_per_epoch(paths):
    got = _elements(lambda: compat.to_dataset(pipelines.shuffled_batches, paths, batch_size=8,
                                              num_epochs=3))
    labels = collections.Counter(int(label) for batch in got for label in batch["label"])
    # 3 epochs of 120 records, batches of 8: exactly 45 batches, no remainder
    assert len(got) == 45
    assert labels == collections.Counter({label: 3 for label in range(120)})


@pytest.mark.eager
def test_each_iteration_replays_from_the_start_as_a_new_session_does(paths):
    dataset = compat.to_dataset(pipelines.shuffled_batches, paths, num_epochs=1, graph_seed=3)
    first = list(dataset.as_numpy_iterator())
    second = list(dataset.as_numpy_iterator())
    assert len(first) == 15
    _assert_same_stream(first, second)


@pytest.mark.eager
def test_an_unseeded_pipeline_draws_anew_each_iteration_as_unseeded_sessions_do(paths):
    dataset = compat.to_dataset(pipelines.shuffled_batches, paths, num_epochs=1)
    orders = [tuple(int(label) for batch in dataset.as_numpy_iterator()
                    for label in batch["label"]) for _ in range(3)]
    assert all(sorted(order) == list(range(120)) for order in orders)
    assert len(set(orders)) > 1, "three unseeded iterations gave the same order"


@pytest.mark.eager
def test_inside_tf_function_the_dataset_is_the_same(paths):
    dataset = compat.to_dataset(pipelines.ordered_batches, paths)
    eager_sum = sum(int(labels.sum()) for _, labels in dataset.as_numpy_iterator())

    @tf_real.function
    def label_sum():
        traced = compat.to_dataset(pipelines.ordered_batches, paths)
        return traced.reduce(tf_real.constant(0, tf_real.int64),
                             lambda total, batch: total + tf_real.reduce_sum(
                                 tf_real.cast(batch[1], tf_real.int64)))

    assert eager_sum == sum(range(120))
    assert int(label_sum()) == eager_sum


@pytest.mark.eager
def test_an_endless_pipeline_can_be_taken_from(paths):
    dataset = compat.to_dataset(pipelines.shuffled_batches, paths, num_epochs=None,
                                graph_seed=5)
    assert len(list(dataset.take(40).as_numpy_iterator())) == 40


def _fed_queue(tf):
    value = tf.placeholder(tf.float32, [])
    queue = tf.FIFOQueue(10, [tf.float32], shapes=[[]])
    queue.enqueue([value])
    return tf.train.batch([queue.dequeue()], batch_size=2)


def _placeholder_input(tf):
    scale = tf.placeholder(tf.float32, [])
    index = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    return tf.train.batch([tf.cast(index, tf.float32) * scale], batch_size=2)


def _fed_batch_size(tf):
    size = tf.placeholder(tf.int32, [])
    index = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    return tf.train.batch([index], batch_size=size)


def _queue_from_list(tf):
    queues = [tf.FIFOQueue(10, [tf.int32], shapes=[[]]) for _ in range(2)]
    return tf.QueueBase.from_list(0, queues).dequeue()


def _lookup_table(tf):
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["cat", "dog"], [0, 1]), -1, name="labels")
    names = tf.train.string_input_producer(["cat", "dog"], num_epochs=1, shuffle=False)
    return tf.train.batch([table.lookup(names.dequeue())], batch_size=2)


def _reader_counters(tf):
    files = tf.train.string_input_producer(["a.tfrecord"], num_epochs=1, shuffle=False)
    reader = tf.TFRecordReader()
    _, value = reader.read(files)
    return tf.train.batch([value, reader.num_records_produced()], batch_size=2)


@pytest.mark.parametrize("build, says", [
    (_lookup_table, "lookup table"),
    (_reader_counters, "VarHandleOp"),
    (_fed_queue, "queue fed from Python"),
    (_placeholder_input, "placeholder"),
    (_fed_batch_size, "batch_size fed per run"),
    (_queue_from_list, "from_list"),
])
@pytest.mark.timeout(60)
def test_what_only_a_session_can_give_is_refused_when_the_dataset_is_made(build, says):
    with pytest.raises(ValueError, match="compat.to_dataset") as raised:
        compat.to_dataset(build)
    assert says in str(raised.value)


def _returns_nothing(tf):
    tf.train.range_input_producer(4, num_epochs=1, shuffle=False)


def _returns_a_number(tf):
    index = tf.train.range_input_producer(4, num_epochs=1, shuffle=False).dequeue()
    return [tf.train.batch([index], batch_size=2), 3]


@pytest.mark.parametrize("build, returned", [
    (_returns_nothing, "returned NoneType"),
    (lambda tf: [], "returned list []"),
    (_returns_a_number, "returned list holding int 3"),
    (lambda tf: {"name": "not a tensor"}, "returned dict holding str"),
])
@pytest.mark.timeout(60)
def test_what_build_returned_is_checked_and_named(build, returned):
    with pytest.raises(TypeError, match="compat.to_dataset") as raised:
        compat.to_dataset(build)
    assert returned in str(raised.value)
    assert "a Tensor, a SparseTensor, or a (nested) list, tuple or dict of them" in str(
        raised.value)


def test_a_placeholder_with_default_crosses_with_its_default(legacy):
    def build(tf):
        scale = tf.placeholder_with_default(3.0, [])
        index = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
        return tf.train.batch([tf.cast(index, tf.float32) * scale], batch_size=2)

    expected = run_stream(legacy, build)
    _assert_same_stream(expected, _elements(lambda: compat.to_dataset(build)))


@pytest.mark.eager
def test_eager_errors_of_compat_v1_point_to_to_dataset(shim):
    with pytest.raises(RuntimeError, match=r"compat\.to_dataset\(build\)"):
        shim.train.string_input_producer(["a.tfrecord"])


@pytest.mark.eager
def test_a_seeded_join_gives_the_same_batches_every_iteration(paths):
    """In a Session the shim takes a join's entries as they are ready, as TF1 does; the
    dataset of `to_dataset` must repeat itself (the tf.data service's data sharding has each
    worker compute the whole pipeline and keep its share)."""
    dataset = compat.to_dataset(pipelines.joined_batches, paths, graph_seed=1)
    iterations = [list(dataset.as_numpy_iterator()) for _ in range(5)]
    assert len(iterations[0]) == 15
    for other in iterations[1:]:
        _assert_same_stream(iterations[0], other)


def test_large_per_image_reductions_give_tf1s_floats(legacy):
    """A 299x299 image's mean and standard deviation: TF1's Session adds such a tensor on
    several threads, in an order the dataset's functions must follow to give its last bits."""
    images = np.random.RandomState(5).uniform(0, 255, size=(3, 299, 299, 3)).astype(np.float32)

    def build(tf):
        index = tf.train.range_input_producer(3, shuffle=False, num_epochs=1).dequeue()
        image = tf.gather(tf.constant(images), index)
        return tf.train.batch([tf.math.reduce_std(image),
                               tf.image.per_image_standardization(image)], batch_size=3)

    expected = run_stream(legacy, build)
    got = _elements(lambda: compat.to_dataset(build))
    assert len(got) == len(expected) == 1
    for want, have in zip(expected[0], got[0]):
        assert np.array_equal(np.asarray(want).view(np.uint32), np.asarray(have).view(np.uint32))
