"""The user's per-element ops between stages run inside the tf.data pipeline."""
import numpy as np
import pytest

from conftest import build_error, run_stream

pytestmark = pytest.mark.needs_tf


def augmented_images(tf):
    index = tf.train.range_input_producer(12, num_epochs=2, shuffle=False).dequeue()
    image = tf.reshape(tf.cast(tf.range(index, index + 48), tf.float32), [4, 4, 3])
    image = tf.random_crop(image, [3, 3, 3])
    image = tf.image.random_flip_left_right(image)
    noisy = image + tf.random_normal([3, 3, 3], stddev=0.1)
    return tf.train.batch([noisy, index], batch_size=5)


def test_seeded_random_ops_are_lifted_bit_exact(legacy, shim):
    expected = run_stream(legacy, augmented_images, graph_seed=11)
    actual = run_stream(shim, augmented_images, graph_seed=11)
    assert len(actual) == len(expected) > 0
    for (want_image, want_index), (got_image, got_index) in zip(expected, actual):
        np.testing.assert_array_equal(got_index, want_index)
        np.testing.assert_array_equal(got_image, want_image)


def static_shapes(tf):
    _, line = tf.TextLineReader().read(tf.train.string_input_producer(["unused"]))
    values = tf.strings.to_number(tf.strings.split([line], ",").values)
    values.set_shape([3])
    return tf.train.batch([values, line], batch_size=4)


def test_set_shape_and_static_batch_shapes_survive_lifting(legacy, shim):
    import tensorflow as real_tf
    shapes = []
    for tf1 in (legacy, shim):
        with real_tf.Graph().as_default():
            shapes.append([tensor.shape.as_list() for tensor in static_shapes(tf1)])
    assert shapes[0] == shapes[1]


def fed_from_placeholder(tf):
    x = tf.placeholder(tf.float32, [3], name="user_features")
    index = tf.train.range_input_producer(4).dequeue()
    return tf.train.batch([x * tf.cast(index, tf.float32)], batch_size=2)


def reads_a_variable(tf):
    scale = tf.Variable(2.0, name="user_scale")
    index = tf.train.range_input_producer(4).dequeue()
    return tf.train.batch([scale * tf.cast(index, tf.float32)], batch_size=2)


@pytest.mark.parametrize("build,op_name", [(fed_from_placeholder, "user_features"),
                                           (reads_a_variable, "user_scale")])
def test_unliftable_op_is_named_with_what_to_do(build, op_name, shim):
    from compat._runtime.lifting import LiftError
    error = build_error(shim, build)
    assert isinstance(error, LiftError)
    assert op_name in str(error)
    assert "Use" in str(error) or "Feed" in str(error)


def constant_source(tf):
    """No upstream stage: TF1's runner enqueues the constant forever."""
    return tf.train.batch([tf.constant([1, 2]), tf.constant("x")], batch_size=3)


def test_inputs_without_a_stage_repeat_forever(legacy, shim):
    expected = run_stream(legacy, constant_source, max_steps=5)
    actual = run_stream(shim, constant_source, max_steps=5)
    assert len(expected) == len(actual) == 5
    for want, got in zip(expected, actual):
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
