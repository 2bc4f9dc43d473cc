"""A producer whose input is computed from constants alone, by ops whose results cannot
depend on where they run (`producers._evaluated`), is computed once, at the first run, and
its epochs need no function. Each program runs with TF1's queues, with the shim, and with
the shim made to compute the input every epoch; the streams are all equal, and the shim
computes the input once exactly where it may."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from session_streams import run_stream, stream_until_error
from streams import assert_streams_equal

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(600)]


def language_model_steps(tf):
    """The RNN tutorial's reader: an epoch size worked out from the token count, guarded by
    an assertion, and each step's window cut out by the index dequeued."""
    tokens = tf.convert_to_tensor(np.arange(311, dtype=np.int32) * 7 % 23, name="tokens")
    batch_size, num_steps = 3, 6
    batch_len = tf.size(tokens) // batch_size
    data = tf.reshape(tokens[0: batch_size * batch_len], [batch_size, batch_len])
    epoch_size = (batch_len - 1) // num_steps
    check = tf.assert_positive(epoch_size, message="epoch_size == 0, decrease batch_size")
    with tf.control_dependencies([check]):
        epoch_size = tf.identity(epoch_size, name="epoch_size")
    step = tf.train.range_input_producer(epoch_size, num_epochs=3, shuffle=False).dequeue()
    inputs = tf.strided_slice(data, [0, step * num_steps], [batch_size, (step + 1) * num_steps])
    targets = tf.strided_slice(data, [0, step * num_steps + 1],
                               [batch_size, (step + 1) * num_steps + 1])
    return step, inputs, targets


def shuffled_windows(tf):
    """The same reader visiting its windows in a seeded random order."""
    windows = (tf.size(tf.zeros([97], tf.int32)) - 1) // 8
    return tf.train.range_input_producer(windows, num_epochs=4, seed=17).dequeue()


def examples_in_memory(tf):
    """A small dataset held in the graph, sliced one example at a time (float features:
    constants, so nothing computes them)."""
    features = tf.constant(np.linspace(0.0, 1.0, 35, dtype=np.float32).reshape(7, 5))
    labels = tf.constant([2, 0, 1, 1, 0, 2, 2])
    return tf.train.slice_input_producer([features, labels], num_epochs=2, seed=3)


def numbered_shard_names(tf):
    """Shard names made from a prefix and a count, read in a shuffled order."""
    names = tf.string_join(["train-", tf.as_string(tf.range(6), width=5, fill="0"),
                            "-of-00006"])
    return tf.train.input_producer(names, element_shape=[], num_epochs=3, seed=9).dequeue()


def grid_rows(tf):
    """Rows of an index grid, fed in order, under a check that holds."""
    grid = tf.reshape(tf.range(4 * 6), [4, 6]) * 2 + 1
    with tf.control_dependencies([tf.assert_less(tf.reduce_max(grid), 100)]):
        grid = tf.identity(grid)
    return tf.train.input_producer(grid, num_epochs=2, shuffle=False).dequeue()


def scaled_rows(tf):
    """Rows computed with float arithmetic, which the Session's grappler may rewrite: left
    to the per-epoch function."""
    rows = tf.reshape(tf.range(12, dtype=tf.float32), [4, 3]) / 3.0
    return tf.train.input_producer(rows, num_epochs=2, shuffle=False).dequeue()


def random_order_rows(tf):
    """An input drawn at random (stateful): a new draw every epoch in TF1."""
    rows = tf.random_shuffle(tf.range(5), seed=4)
    return tf.train.input_producer(rows, num_epochs=3, shuffle=False).dequeue()


def declared_shape_count(tf):
    """A count of a shape declared larger than the values it has (`set_shape` merges with
    an unknown one): TF's constant evaluation would take the declaration, the Session counts."""
    distinct = tf.unique(tf.constant([4, 4, 9]))[0]
    distinct.set_shape([3])
    count = tf.raw_ops.Shape(input=distinct)[0]
    return tf.train.range_input_producer(count, num_epochs=2, shuffle=False).dequeue()


def wide_rows(tf):
    """An input larger than what is worth a constant in the pipeline's functions."""
    rows = tf.reshape(tf.range(128 * 1024), [128, 1024])
    return tf.reduce_sum(
        tf.train.input_producer(rows, num_epochs=1, shuffle=False).dequeue())


EVALUATED = (language_model_steps, shuffled_windows, examples_in_memory, numbered_shard_names,
             grid_rows)
PER_EPOCH = (scaled_rows, random_order_rows, declared_shape_count, wide_rows)
PROGRAMS = {program.__name__: program for program in EVALUATED + PER_EPOCH}


def _recording(monkeypatch):
    """Record what `producers._evaluated` returns, per call."""
    from compat._runtime import producers

    results = []
    evaluated = producers._evaluated

    def recorded(*args):
        results.append(evaluated(*args))
        return results[-1]
    monkeypatch.setattr(producers, "_evaluated", recorded)
    return results


def _epoch_maps_written(graph) -> int:
    return sum(function.signature.name.startswith("compat_epochs_")
               for function in graph.as_graph_def().library.function)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_inputs_of_constants_are_computed_once_and_give_tf1s_stream(name, legacy, shim,
                                                                     tf_behavior, monkeypatch):
    import tensorflow as tf_real
    from compat._runtime import producers

    program = PROGRAMS[name]
    expected = run_stream(legacy, program, graph_seed=5)
    results = _recording(monkeypatch)
    graph = tf_real.Graph()
    assert_streams_equal(expected, run_stream(shim, program, graph_seed=5, graph=graph))
    assert len(expected) > 1
    evaluated = program in EVALUATED
    assert [result is not None for result in results] == [evaluated]
    if evaluated:
        assert _epoch_maps_written(graph) == 0
        # The same program computing its input every epoch gives the same stream.
        monkeypatch.setattr(producers, "_evaluated", lambda *args: None)
        per_epoch_graph = tf_real.Graph()
        assert_streams_equal(expected, run_stream(shim, program, graph_seed=5,
                                                  graph=per_epoch_graph))
        assert _epoch_maps_written(per_epoch_graph) == 1


def too_short_for_a_window(tf):
    """Too few tokens for one window: an empty epoch, and a check that fails."""
    epoch_size = (tf.size(tf.zeros([9], tf.int32)) // 4 - 1) // 5
    check = tf.assert_positive(epoch_size, message="epoch_size == 0")
    with tf.control_dependencies([check]):
        epoch_size = tf.identity(epoch_size)
    return tf.train.range_input_producer(epoch_size, num_epochs=1, shuffle=False).dequeue()


def grid_out_of_bounds(tf):
    """Rows of a grid under a check that fails: the rows alone could be computed."""
    grid = tf.reshape(tf.range(4 * 6), [4, 6]) * 2 + 1
    with tf.control_dependencies([tf.assert_less(tf.reduce_max(grid), 40,
                                                 message="grid too large")]):
        grid = tf.identity(grid)
    return tf.train.input_producer(grid, num_epochs=2, shuffle=False).dequeue()


def assert_with_failing_data(tf):
    """A check that holds, whose message data cannot be computed (an index out of range):
    TF's Assert computes its data first, and fails."""
    bad_index = tf.unique(tf.constant([7]))[0]
    with tf.control_dependencies([tf.Assert(tf.constant(True),
                                            [tf.gather(tf.range(3), bad_index)])]):
        rows = tf.range(4) * 3
    return tf.train.input_producer(rows, num_epochs=1, shuffle=False).dequeue()


def rows_of_another_shape(tf):
    """Rows declared 3 wide that are 2 wide once computed: TF1's enqueue refuses them."""
    distinct = tf.unique(tf.constant([1, 2, 3, 4]))[0]
    rows = tf.reshape(distinct, [2, -1])
    return tf.train.input_producer(rows, element_shape=[3], num_epochs=1,
                                   shuffle=False).dequeue()


@pytest.mark.parametrize("program, message", [
    (too_short_for_a_window, "assertion failed"), (grid_out_of_bounds, "assertion failed"),
    (assert_with_failing_data, "not in [0, 3)"),
    (rows_of_another_shape, "expected [3] but got [2]")],
    ids=lambda value: getattr(value, "__name__", None))
def test_inputs_that_fail_fail_as_in_tf1(program, message, legacy, shim, tf_behavior,
                                         monkeypatch):
    """Nothing is computed ahead, and the pipeline fails as TF1's does: the same error type,
    and no element."""
    import tensorflow as tf_real

    expected_values, expected_error = stream_until_error(legacy, program)
    results = _recording(monkeypatch)
    values, error = stream_until_error(shim, program)
    assert results == [None]
    assert values == expected_values == []
    assert type(error) is type(expected_error) is tf_real.errors.InvalidArgumentError
    assert message in error.message


@st.composite
def language_model_configs(draw):
    shuffle = draw(st.booleans())
    batch_size = draw(st.integers(1, 6))
    # At least one token per row: fewer make a negative epoch size, which TF1 refuses as
    # it builds the range (a check of the program, not of the pipeline).
    tokens = batch_size * draw(st.integers(1, 70)) + draw(st.integers(0, batch_size - 1))
    return dict(tokens=tokens, batch_size=batch_size,
                num_steps=draw(st.integers(1, 12)), num_epochs=draw(st.integers(1, 3)),
                shuffle=shuffle, seed=draw(st.integers(0, 2**31 - 1)) if shuffle else None)


@given(config=language_model_configs())
def test_language_model_readers_give_tf1s_steps(config, legacy, shim, tf_behavior):
    """Readers of every shape, including those too short for a window, whose check fails."""
    def reader(tf):
        tokens = tf.constant(np.arange(config["tokens"], dtype=np.int32) % 31)
        batch_len = tf.size(tokens) // config["batch_size"]
        data = tf.reshape(tokens[0: config["batch_size"] * batch_len],
                          [config["batch_size"], batch_len])
        epoch_size = (batch_len - 1) // config["num_steps"]
        check = tf.assert_positive(epoch_size, message="epoch_size == 0")
        with tf.control_dependencies([check]):
            epoch_size = tf.identity(epoch_size)
        step = tf.train.range_input_producer(
            epoch_size, num_epochs=config["num_epochs"], shuffle=config["shuffle"],
            seed=config["seed"]).dequeue()
        return step, data[:, step * config["num_steps"]:(step + 1) * config["num_steps"]]

    expected_values, expected_error = stream_until_error(legacy, reader)
    values, error = stream_until_error(shim, reader)
    assert_streams_equal(expected_values, values)
    assert type(error) is type(expected_error)
