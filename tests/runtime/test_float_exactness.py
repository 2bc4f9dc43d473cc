"""TF1's floats, bit for bit: one test per op family a per-element computation uses.

Each expression runs on the same pixels under `tensorflow.compat.v1` and `compat.v1`, batched
(where the shim may compute whole batches at once) and behind a random op (which keeps the
computation per element), and must agree to the last bit. TF1's Session rewrites some of
these graphs before running them (a division by a constant becomes a multiplication by its
reciprocal); the shim must give the rewritten graph's values, because those are TF1's.
"""
import numpy as np
import pytest

from conftest import run_stream
from streams import assert_streams_equal

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(300)]

IMAGES = 12
PIXELS = np.random.RandomState(7).uniform(0, 255, size=(IMAGES, 6, 5, 3)).astype(np.float32)
WEIGHTS = np.random.RandomState(8).randn(15, 7).astype(np.float32)
KERNEL = np.random.RandomState(9).randn(3, 3, 3, 4).astype(np.float32)


def _divisions(tf, image):
    return [image / 127.5 - 1.0, image / 255.0, (image - 127.0) / 58.5,
            image / tf.cast(255, tf.float32), image / tf.constant([1.0, 3.0, 7.0]),
            tf.math.truediv(image, 3.0), tf.div(image, 6.0), tf.math.divide_no_nan(image, 9.0),
            image / (image + 1.0)]


def _elementwise(tf, image):
    return [image * (1.0 / 255.0) + 0.5, tf.abs(image - 100.0), tf.maximum(image, 50.0),
            tf.square(image), tf.sqrt(image), tf.floor(image / 7.0), tf.clip_by_value(image, 10, 90),
            tf.round(image * 0.1), tf.nn.relu(image - 128.0), tf.cast(image, tf.uint8),
            tf.math.squared_difference(image, 3.0), tf.sign(image - 128.0)]


def _transcendental(tf, image):
    scaled = image / 255.0
    return [tf.exp(scaled), tf.log(1.0 + image), tf.log1p(image), tf.tanh(scaled),
            tf.sigmoid(scaled), tf.pow(scaled, 2.0), tf.pow(scaled, 1.7), tf.exp(scaled) - 1.0,
            tf.rsqrt(image + 1.0)]


def _accumulations(tf, image):
    flat = tf.reshape(image, [-1, 15])
    batch = tf.expand_dims(image, 0)
    return [tf.reduce_sum(image), tf.reduce_mean(image, axis=[0, 1]), tf.matmul(flat, WEIGHTS),
            tf.nn.conv2d(batch, KERNEL, [1, 1, 1, 1], "SAME"), tf.nn.l2_normalize(image, axis=-1),
            tf.nn.softmax(flat), tf.reduce_max(image, axis=2), tf.cumsum(image, axis=0),
            tf.nn.bias_add(tf.matmul(flat, WEIGHTS), tf.constant(np.arange(7, dtype=np.float32)))]


def _image_ops(tf, image):
    pixels = tf.cast(image, tf.uint8)
    return [tf.image.per_image_standardization(image),
            tf.image.convert_image_dtype(pixels, tf.float32),
            tf.image.resize_images(image, [4, 4]),
            tf.image.resize_images(image, [9, 7], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR),
            tf.image.adjust_brightness(image / 255.0, 0.1), tf.image.adjust_contrast(image, 1.4),
            tf.image.adjust_saturation(image / 255.0, 0.7), tf.image.adjust_hue(image / 255.0, 0.1),
            tf.image.rgb_to_grayscale(image), tf.image.central_crop(image, 0.5),
            tf.image.resize_image_with_crop_or_pad(image, 4, 8)]


def _control_flow(tf, image):
    mean = tf.reduce_mean(image)
    return [tf.cond(mean > 127.0, lambda: image / 255.0, lambda: image / 127.5),
            tf.map_fn(lambda row: row / 3.0, image),
            tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x / 2.0), [0, image])[1]]


FAMILIES = {"division_by_constants": _divisions, "elementwise": _elementwise,
            "transcendental": _transcendental, "accumulations": _accumulations,
            "image_ops": _image_ops, "control_flow": _control_flow}


def _pipeline(family, per_element):
    def build(tf):
        index = tf.train.range_input_producer(IMAGES, shuffle=False, num_epochs=2).dequeue()
        image = tf.gather(tf.constant(PIXELS), index)
        if per_element:  # a random op makes the computation stateful: never batched
            image = image + tf.floor(tf.random_uniform([], seed=3) * 0.0)
        return tf.train.batch(FAMILIES[family](tf, image), batch_size=4)
    return build


@pytest.mark.parametrize("per_element", [False, True], ids=["batched", "per_element"])
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_values_are_tf1s_bit_for_bit(family, per_element, legacy, shim):
    build = _pipeline(family, per_element)
    assert_streams_equal(run_stream(legacy, build), run_stream(shim, build))



KERNELS_LEFT_ALONE = ("ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic", "ResizeArea",
                      "AdjustContrastv2", "AdjustSaturation", "AdjustHue")


def _kernel_left_alone(tf, image, kernel):
    """An expression whose only float kernel (besides casts) is `kernel`: one of those the
    shim prepares on one device when it runs element by element."""
    methods = tf.image.ResizeMethod
    return {
        "ResizeBilinear": lambda: tf.image.resize_images(image, [4, 9]),
        "ResizeNearestNeighbor": lambda: tf.image.resize_images(
            image, [9, 7], method=methods.NEAREST_NEIGHBOR),
        "ResizeBicubic": lambda: tf.image.resize_images(image, [8, 3], method=methods.BICUBIC),
        "ResizeArea": lambda: tf.image.resize_images(image, [4, 4], method=methods.AREA),
        "AdjustContrastv2": lambda: tf.image.adjust_contrast(image, 1.4),
        "AdjustSaturation": lambda: tf.image.adjust_saturation(image, 0.7),
        "AdjustHue": lambda: tf.image.adjust_hue(image, 0.1),
    }[kernel]()


def _ops_of(expression):
    """The ops `expression(tf, image)` creates on an image, in a graph of their own."""
    import tensorflow.compat.v1 as tf

    with tf.Graph().as_default() as graph:
        image = tf.identity(tf.zeros([6, 5, 3]))
        ops_before = set(graph.get_operations())
        expression(tf, image)
        return [op for op in graph.get_operations() if op not in ops_before]


def _behind_an_assert(expression):
    """A pipeline computing `expression(tf, image)` per image behind an assert (stateful,
    computes no float): never batched, prepared on one device when its ops allow it."""
    def build(tf):
        index = tf.train.range_input_producer(IMAGES, shuffle=False, num_epochs=2).dequeue()
        with tf.control_dependencies([tf.debugging.assert_non_negative(index)]):
            image = tf.gather(tf.constant(PIXELS), index)
        return tf.train.batch(expression(tf, image), batch_size=4)
    return build


def test_the_kernels_left_alone_are_the_shims():
    import tensorflow.compat.v1 as tf
    from compat._runtime import vectorize

    assert set(KERNELS_LEFT_ALONE) == vectorize._FLOAT_KERNELS_LEFT_ALONE
    for kernel in KERNELS_LEFT_ALONE:
        ops = _ops_of(lambda tf, image, kernel=kernel: _kernel_left_alone(tf, image, kernel))
        assert kernel in {op.type for op in ops}
        # So the test below runs it on one device: nothing else computes a float.
        assert vectorize.same_floats_on_one_device(ops), [op.type for op in ops]


@pytest.mark.parametrize("kernel", KERNELS_LEFT_ALONE)
def test_kernel_left_alone_per_element_is_tf1s(kernel, legacy, shim):
    """Behind an assert (stateful, computes no float): computed per element on one device."""
    build = _behind_an_assert(lambda tf, image: [_kernel_left_alone(tf, image, kernel)])
    assert_streams_equal(run_stream(legacy, build), run_stream(shim, build))


def _one_rounding(tf, image):
    """One correctly rounded operation per element, also where oneDNN's relu and max would
    differ from Eigen's: NaN and -0.0 inputs, compared by their bits (a bitcast is data
    movement)."""
    odd = tf.where(image > 170.0, tf.fill(tf.shape(image), np.float32(np.nan)),
                   tf.where(image > 85.0, image * -0.0, image - 128.0))
    bits = [tf.bitcast(value, tf.int32) for value in (
        tf.maximum(odd, 0.0), tf.minimum(odd, 0.0), tf.clip_by_value(odd, -1.0, 1.0),
        odd + 0.0, odd * 1.0, tf.abs(odd), -odd, odd - odd)]
    return bits + [image * (1.0 / 255.0) + 0.5, tf.abs(image - 100.0), tf.maximum(image, 50.0),
                   tf.square(image), tf.sqrt(image), tf.floor(image / 7.0),
                   tf.round(image * 0.1), tf.cast(image, tf.uint8),
                   tf.math.squared_difference(image, 3.0), tf.sign(image - 128.0)]


def _rewritten_chains(tf, image):
    """Chains of one-rounding ops that TF1's Session rewrites into other roundings."""
    scaled = image * 0.3
    return [(image * 2.0) * 3.0, image * 3.0 + image * 5.0, image + image + image,
            (image - 1.0) - 2.0, -(-image) / 3.0, image * 7.0 / 7.0, image - (-scaled),
            (image + 0.1) + 0.2, image * 0.1 * 0.2, -image * -scaled, image - (0.5 - scaled),
            (image + scaled) - scaled, image / 3.0 / 7.0]


def _random_draws(tf, image):
    return [image + tf.random_uniform([3], seed=5), image * tf.random_normal([], seed=6),
            image - tf.truncated_normal([5, 1], seed=7),
            tf.cast(tf.random_uniform([], maxval=9, dtype=tf.int32, seed=8), tf.float32) * image,
            tf.random_shuffle(image, seed=9)]


def _v1_control_flow(tf, image):
    """Only in TF1 mode is tf.cond a Switch/Merge (in TF2 graph mode an If computes floats)."""
    flip = tf.random_uniform([], seed=4) < 0.5
    return [tf.cond(flip, lambda: tf.reverse(image, [1]), lambda: image * 0.5),
            tf.image.random_flip_left_right(image, seed=2)]


ONE_DEVICE_FAMILIES = {"division_by_constants": _divisions, "one_rounding": _one_rounding,
                       "rewritten_chains": _rewritten_chains, "random_draws": _random_draws,
                       "v1_control_flow": _v1_control_flow}


@pytest.mark.parametrize("family", sorted(ONE_DEVICE_FAMILIES))
def test_one_device_expressions_per_element_are_tf1s(family, legacy, shim, tf_behavior):
    """Expressions the shim prepares on one device when they run element by element (behind
    an assert, which is stateful and computes no float): TF1's values to the last bit."""
    from compat._runtime import vectorize

    ops = _ops_of(ONE_DEVICE_FAMILIES[family])
    types = {op.type for op in ops}
    # TF2 mode makes a cond an If, which computes floats; oneDNN 2 (TF 2.15) has kernels of its
    # own for the elementwise arithmetic, so it stays multi-device there.
    expected = not (family == "v1_control_flow" and tf_behavior == "tf2") and not (
        vectorize.onednn_2_kernels() and types & vectorize._ONEDNN_2_ELEMENTWISE)  # pylint: disable=protected-access
    assert vectorize.same_floats_on_one_device(ops) == expected, sorted(types)
    build = _behind_an_assert(ONE_DEVICE_FAMILIES[family])
    assert_streams_equal(run_stream(legacy, build, graph_seed=11),
                         run_stream(shim, build, graph_seed=11))


def _float_reductions(tf, image):
    """Float sums, means, norms and Rsqrt per image, which oneDNN has no kernels for, and a
    normalization by moments (the pattern grappler's remapper may fuse into oneDNN's layer
    norm, which TF1's Session and the shim's functions must then both get)."""
    mean, variance = tf.nn.moments(image, axes=[0, 1, 2])
    return [tf.reduce_mean(image), tf.reduce_sum(image, axis=[0, 1]), tf.reduce_prod(
        image[:2, :2] / 100.0), tf.norm(image), tf.math.reduce_std(image),
            tf.math.rsqrt(image + 1.0), tf.image.per_image_standardization(image),
            (image - mean) * tf.math.rsqrt(variance + 1e-3)]


@pytest.mark.parametrize("shape", [(24, 24, 3), (299, 299, 3)], ids=["cifar", "inception"])
def test_float_reductions_per_element_are_tf1s(shape, legacy, shim):
    """Per-image float reductions (per_image_standardization, as CIFAR-10 and FaceNet use it),
    prepared on one device, at the sizes where Eigen adds in one block and in several."""
    from compat._runtime import vectorize

    import tensorflow.compat.v1 as tf

    with tf.Graph().as_default() as graph:
        image = tf.identity(tf.zeros(shape))
        ops_before = set(graph.get_operations())
        _float_reductions(tf, image)
        ops = [op for op in graph.get_operations() if op not in ops_before]
    # oneDNN 2 (TF 2.15) has kernels of its own for the subtraction and max in them.
    expected = not (vectorize.onednn_2_kernels()
                    and {op.type for op in ops} & vectorize._ONEDNN_2_ELEMENTWISE)  # pylint: disable=protected-access
    assert vectorize.same_floats_on_one_device(ops) == expected
    # A 299x299 image is large enough for Eigen to add on several threads, as TF1's Session
    # lets it: the pipeline must too. A 24x24 one is added in one block anyway.
    assert vectorize.adds_as_threads_split(ops) == (shape[0] > 100)
    images = np.random.RandomState(5).uniform(0, 255, size=(3,) + shape).astype(np.float32)

    def build(tf):
        index = tf.train.range_input_producer(3, shuffle=False, num_epochs=1).dequeue()
        with tf.control_dependencies([tf.debugging.assert_non_negative(index)]):
            image = tf.gather(tf.constant(images), index)
        return tf.train.batch(_float_reductions(tf, image), batch_size=3)
    assert_streams_equal(run_stream(legacy, build), run_stream(shim, build))


ROWS = np.array([[1, 5, 3], [-3, -1, -2], [2, 2, 9], [np.iinfo(np.int32).min, 0, 7]], np.int32)
WITH_NAN = np.array([[1.0, -2.0], [np.nan, 0.0], [-0.0, 3.0], [np.nan, -1.0]], np.float32)


@pytest.mark.parametrize("expression", [
    lambda tf, row, _: tf.argmax(tf.sign(row)),
    lambda tf, row, _: tf.argmax(tf.nn.relu(row)),
    lambda tf, row, _: tf.reduce_max(-row),
    lambda tf, _, pair: tf.logical_not(tf.less(pair, 0.0)),
    lambda tf, _, pair: tf.logical_not(tf.greater_equal(pair, 0.0)),
], ids=["argmax_sign", "argmax_relu", "max_of_negation", "not_less_nan", "not_ge_nan"])
def test_integer_and_bool_results_are_tf1s(expression, legacy, shim):
    """TF1's Session rewrites integer and bool expressions too (argmax(sign(x)) ->
    argmax(x), max(-x) -> -min(x), not(a < b) -> a >= b), which changes results at ties,
    INT_MIN and NaN: the shim's per-element functions must get the same rewrites."""
    def build(tf):
        index = tf.train.range_input_producer(4, shuffle=False, num_epochs=2).dequeue()
        with tf.control_dependencies([tf.debugging.assert_non_negative(index)]):
            row = tf.gather(tf.constant(ROWS), index)
            pair = tf.gather(tf.constant(WITH_NAN), index)
        return tf.train.batch([expression(tf, row, pair)], batch_size=2)
    assert_streams_equal(run_stream(legacy, build), run_stream(shim, build))


LOGITS = [[1.0, 2.0, 3.0], [0.5, -1.5, 2.25], [3.0, 3.0, -7.0], [0.1, 0.2, 0.3]]


@pytest.mark.parametrize("consumer", ["producer", "shuffled_producer", "limit_epochs", "batch"])
@pytest.mark.parametrize("operation", ["softmax", "tanh", "matmul"])
def test_results_computed_from_constants_are_folded_as_tf1_folds_them(operation, consumer,
                                                                      legacy, shim):
    """TF1's Session folds a computation of constants (with TF's own kernels, where oneDNN's
    would run it at run time): a class prior as softmax of fixed logits, fed to a producer or
    a batch, gives TF1's floats bit for bit, though it is the result of the shim's function."""
    def build(tf):
        logits = tf.constant(LOGITS)
        values = {"softmax": lambda: tf.nn.softmax(logits),
                  "tanh": lambda: tf.tanh(logits),
                  "matmul": lambda: tf.matmul(logits, logits, transpose_b=True)}[operation]()
        if consumer == "producer":
            return tf.train.input_producer(values, num_epochs=2, shuffle=False).dequeue()
        if consumer == "shuffled_producer":
            return tf.train.input_producer(values, num_epochs=2, seed=4).dequeue()
        if consumer == "limit_epochs":
            return tf.train.batch([tf.train.limit_epochs(values, 2)], batch_size=1)
        return tf.train.batch([values], batch_size=2)
    assert_streams_equal(run_stream(legacy, build, max_steps=8, graph_seed=2),
                         run_stream(shim, build, max_steps=8, graph_seed=2))
