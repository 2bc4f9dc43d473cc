"""Bad numeric arguments of the batching and producer functions (`num_threads`, `capacity`,
`min_after_dequeue`, `batch_size`, `num_epochs`, a None filename list).

Where TF1 fails, the shim fails with TF1's exception type at the same moment (graph build or
first run), with a message naming the argument and its value. Where TF1 accepts a value and
runs normally, so does the shim. Where TF1 accepts a value and then never delivers data (hangs,
or empty batches forever), the shim refuses it while building. TF1's behaviour is asked of
TF1 in every test, never written down here.
"""
import numpy as np
import pytest

from conftest import build_error, run_stream, tf_real

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(120)]

BATCHING = ["batch", "maybe_batch", "batch_join", "maybe_batch_join",
            "shuffle_batch", "maybe_shuffle_batch", "shuffle_batch_join",
            "maybe_shuffle_batch_join"]
SHUFFLING = [api for api in BATCHING if "shuffle" in api]
NOT_SHUFFLING = [api for api in BATCHING if "shuffle" not in api]
WITH_THREADS = [api for api in BATCHING if "join" not in api]
PRODUCERS = ["input_producer", "string_input_producer", "range_input_producer",
             "slice_input_producer"]
INPUT_SIZE = 10


class Tensor:
    """An argument given as a tensor (built in the pipeline's graph): a constant, whose value
    the shim can know while building, or a placeholder, whose value it cannot."""

    def __init__(self, value, constant=True):
        self.value = value
        self.constant = constant

    def __repr__(self):
        return f"{'constant' if self.constant else 'placeholder'}({self.value})"

    def build(self, tf):
        if self.constant:
            return tf.constant(self.value)
        return tf.placeholder_with_default(self.value, [])


class Pipeline:
    """A pipeline over one TF1 API with the given arguments; `build(tf)` builds it.

    The last argument given is the one under test."""

    def __init__(self, api, **arguments):
        self.api = api
        self.arguments = arguments

    def __repr__(self):
        given = ",".join(f"{name}={value!r}" for name, value in self.arguments.items())
        return f"{self.api}({given})"

    @property
    def tested(self):
        """(name, value) of the argument under test."""
        name, value = list(self.arguments.items())[-1]
        return name, value.value if isinstance(value, Tensor) else value

    def build(self, tf):
        arguments = {name: value.build(tf) if isinstance(value, Tensor) else value
                     for name, value in self.arguments.items()}
        if self.api in BATCHING:
            return self._batch(tf, arguments)
        if self.api == "limit_epochs":
            return tf.train.limit_epochs(tf.constant(1), **arguments)
        return self._produce(tf, arguments)

    def _batch(self, tf, arguments):
        element = tf.train.range_input_producer(INPUT_SIZE, num_epochs=1,
                                                shuffle=False).dequeue()
        arguments = {"batch_size": 2, **arguments}
        if "shuffle" in self.api:
            arguments = {"capacity": 32, "min_after_dequeue": 2, "seed": 7, **arguments}
        if self.api.startswith("maybe_"):
            arguments["keep_input"] = True
        if "join" in self.api:
            arguments["tensors_list"] = [[element]]
        else:
            arguments["tensors"] = [element]
        return getattr(tf.train, self.api)(**arguments)

    def _produce(self, tf, arguments):
        arguments = {"num_epochs": 2, "shuffle": False, **arguments}
        if self.api == "input_producer":
            return tf.train.input_producer(tf.constant([1, 2, 3]), **arguments).dequeue()
        if self.api == "string_input_producer":
            filenames = arguments.pop("string_tensor", ["a", "b", "c"])
            return tf.train.string_input_producer(filenames, **arguments).dequeue()
        if self.api == "range_input_producer":
            return tf.train.range_input_producer(3, **arguments).dequeue()
        return tf.train.slice_input_producer([tf.constant([1, 2, 3])], **arguments)


def _cases(*pipelines):
    return pytest.mark.parametrize("pipeline", pipelines, ids=repr)


def _names_tested_argument(pipeline, error):
    name, value = pipeline.tested
    return name in str(error) and str(value) in str(error)


# --- TF1 rejects the value while building the graph ------------------------------------------
@_cases(
    *[Pipeline(api, num_threads=n) for api in WITH_THREADS for n in (0, -1)],
    *[Pipeline(api, capacity=0) for api in NOT_SHUFFLING],
    *[Pipeline(api, batch_size=-1) for api in BATCHING],
    *[Pipeline(api, capacity=0) for api in PRODUCERS if api != "input_producer"],
    Pipeline("input_producer", summary_name="fraction_full", capacity=0),
    *[Pipeline(api, num_epochs=n) for api in PRODUCERS + ["limit_epochs"] for n in (0, -1)],
    Pipeline("string_input_producer", string_tensor=None),
    # shuffle_batch compares capacity with min_after_dequeue; a join's summary divides by 0.
    *[Pipeline(api, capacity=2, min_after_dequeue=2) for api in SHUFFLING],
    Pipeline("shuffle_batch", capacity=2, min_after_dequeue=3),
)
def test_build_error_matches_tf1(pipeline, legacy, shim):
    expected = build_error(legacy, pipeline.build)
    actual = build_error(shim, pipeline.build)
    assert expected is not None, "TF1 accepts this pipeline; the case is wrong"
    assert type(actual) is type(expected), (expected, actual)
    assert _names_tested_argument(pipeline, actual), actual


# --- TF1 builds the graph and fails when it first runs -----------------------------------------
def _steps_until_error(tf, build):
    """(batches fetched, the error the next fetch raised), or (batches, None) at the end."""
    with tf_real.Graph().as_default():
        fetches = build(tf)
        steps = 0
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            try:
                while True:
                    sess.run(fetches)
                    steps += 1
            except tf_real.errors.OutOfRangeError:
                return steps, None
            except tf_real.errors.OpError as error:
                return steps, error
            finally:
                coord.request_stop()
                try:  # TF1's runner threads saw the same error: not what is compared here
                    coord.join(threads, stop_grace_period_secs=10)
                except tf_real.errors.OpError:
                    pass


@_cases(
    *[Pipeline(api, min_after_dequeue=-3) for api in SHUFFLING],
    *[Pipeline(api, capacity=capacity, min_after_dequeue=-3)
      for api in ("shuffle_batch", "shuffle_batch_join") for capacity in (0, -1)],
    # A join's queue op, not Python, rejects a bounded capacity below min_after_dequeue.
    *[Pipeline(api, capacity=capacity, min_after_dequeue=3)
      for api in ("shuffle_batch_join", "maybe_shuffle_batch_join") for capacity in (0, 2)],
)
def test_min_after_dequeue_the_queue_rejects_fails_at_first_run_like_tf1(pipeline, legacy,
                                                                         shim):
    assert build_error(legacy, pipeline.build) is None, "TF1 rejects it while building"
    assert build_error(shim, pipeline.build) is None  # not while building, like TF1
    expected_steps, expected = _steps_until_error(legacy, pipeline.build)
    actual_steps, actual = _steps_until_error(shim, pipeline.build)
    assert expected is not None, "TF1 runs this pipeline; the case is wrong"
    assert (actual_steps, type(actual)) == (expected_steps, type(expected)), (expected, actual)
    assert _names_tested_argument(pipeline, actual), actual


# --- TF1 builds the graph, then never delivers data: the shim refuses it while building -------
@_cases(
    *[Pipeline(api, batch_size=0) for api in BATCHING],
    Pipeline("batch", batch_size=Tensor(0)),
    Pipeline("batch_join", allow_smaller_final_batch=True, batch_size=0),
)
def test_zero_batch_size_is_refused_like_a_negative_one(pipeline, legacy, shim):
    assert build_error(legacy, pipeline.build) is None, "TF1 rejects it while building"
    # TF1 returns empty batches forever, more of them than the input could ever fill, and
    # never reads its input: a loop until OutOfRangeError never ends.
    batches = run_stream(legacy, pipeline.build, max_steps=INPUT_SIZE + 2)
    assert len(batches) == INPUT_SIZE + 2
    assert all(np.size(batch) == 0 for batch in batches)
    # So the shim refuses 0 as TF1 refuses a negative size.
    negative_error = build_error(legacy, Pipeline(pipeline.api, batch_size=-1).build)
    actual = build_error(shim, pipeline.build)
    assert type(actual) is type(negative_error), (negative_error, actual)
    assert _names_tested_argument(pipeline, actual), actual


def _first_fetch_blocks(tf, build, seconds=2):
    with tf_real.Graph().as_default():
        fetches = build(tf)
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            try:
                sess.run(fetches, options=tf.RunOptions(timeout_in_ms=seconds * 1000))
            except tf_real.errors.DeadlineExceededError:
                return True
            finally:
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=10)
    return False


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("empty_input", ["range", "strings"])
def test_an_empty_producer_blocks_as_tf1s_does(empty_input, shuffle, legacy, shim):
    """Endless epochs of nothing: TF1's dequeue waits, and a run timeout ends the wait."""
    def build(tf):
        if empty_input == "range":
            return tf.train.range_input_producer(0, shuffle=shuffle).dequeue()
        return tf.train.input_producer(tf.constant([], tf.string), shuffle=shuffle).dequeue()

    assert _first_fetch_blocks(legacy, build)
    assert _first_fetch_blocks(shim, build)


def test_zero_capacity_input_producer_is_refused_instead_of_hanging(legacy, shim):
    pipeline = Pipeline("input_producer", capacity=0)
    assert build_error(legacy, pipeline.build) is None, "TF1 rejects it while building"
    assert _first_fetch_blocks(legacy, pipeline.build), "TF1 no longer hangs: follow it"
    actual = build_error(shim, pipeline.build)
    assert isinstance(actual, ValueError), actual
    assert _names_tested_argument(pipeline, actual), actual


# --- TF1 accepts the value and runs normally: so does the shim -------------------------------
@_cases(
    *[Pipeline(api, capacity=-1) for api in NOT_SHUFFLING + PRODUCERS],
    *[Pipeline(api, capacity=1) for api in NOT_SHUFFLING + PRODUCERS],
    *[Pipeline(api, capacity=1, min_after_dequeue=0) for api in SHUFFLING],
    *[Pipeline(api, capacity=-1, min_after_dequeue=2)  # a join's queue: unbounded
      for api in ("shuffle_batch_join", "maybe_shuffle_batch_join")],
    Pipeline("batch", batch_size=Tensor(3, constant=False)),
)
def test_accepted_like_tf1(pipeline, legacy, shim):
    expected = run_stream(legacy, pipeline.build)
    actual = run_stream(shim, pipeline.build)
    assert expected, "TF1 delivers nothing; the case is wrong"
    if pipeline.api in SHUFFLING:  # TF1's shuffle order is its own: compare the elements
        expected, actual = (sorted(np.concatenate([np.ravel(v) for v in values]))
                            for values in (expected, actual))
    np.testing.assert_equal(actual, expected)
