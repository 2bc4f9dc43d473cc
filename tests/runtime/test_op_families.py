"""Whatever TF1 runs between two queue stages runs under the shim and gives TF1's values.

One pipeline per op family, written as TF1 input code was (a producer, per-element ops, a
batch), compared bit for bit with `tensorflow.compat.v1` under a graph seed; random ops get
no op seed, so their seeds come from the graph's counter as in TF1.
"""
import numpy as np
import pytest

from conftest import run_stream
from streams import assert_streams_equal

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(300)]

COUNT = 9
WORDS = np.array([b"the quick brown fox", b"jumps over", b"the lazy dog 42", b"", b"a b c",
                  b"7 8 9", b"hello world", b"x", b"tf one"])


def _index(tf):
    return tf.train.range_input_producer(COUNT, num_epochs=2, shuffle=False).dequeue()


def python_functions(tf):
    index = _index(tf)
    tripled = tf.py_func(lambda value: np.int64(value) * 3, [index], tf.int64, stateful=False)
    in_cond = tf.cond(index % 2 > 0,
                      lambda: tf.py_func(lambda v: np.float32(v) / np.float32(3), [index], tf.float32),
                      lambda: tf.cast(index, tf.float32))
    eager = tf.py_function(lambda v: v * 7, [index], tf.int32)
    for tensor in (tripled, in_cond, eager):
        tensor.set_shape([])
    return [tripled, in_cond, eager]


def strings(tf):
    line = tf.gather(tf.constant(WORDS), _index(tf))
    words = tf.string_split([line], " ")
    return [tf.strings.regex_replace(line, "[aeiou]", "_"), tf.strings.length(line),
            tf.strings.substr(line, 0, 3), tf.sparse.to_dense(words, default_value="-")[:, :2],
            tf.strings.to_hash_bucket_fast(line, 100), tf.as_string(tf.strings.length(line) * 2)]


def sparse(tf):
    index = _index(tf)
    values = tf.range(index % 4)
    sparse = tf.SparseTensor(tf.expand_dims(tf.cast(tf.range(index % 4), tf.int64), 1),
                             values, [4])
    example = tf.train.Example(features=tf.train.Features(feature={
        "ids": tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 5, 9]))}))
    parsed = tf.parse_single_example(tf.constant(example.SerializeToString()),
                                     {"ids": tf.VarLenFeature(tf.int64)})["ids"]
    return [sparse, tf.sparse.reduce_sum(sparse), tf.sparse.to_dense(parsed) + tf.cast(index, tf.int64)]


def random_ops(tf):
    index = tf.cast(_index(tf), tf.float32)
    image = tf.reshape(tf.range(48, dtype=tf.float32), [4, 4, 3]) + index
    return [tf.random_uniform([3]) + index, tf.truncated_normal([2]), tf.random_crop(image, [2, 3, 3]),
            tf.image.random_flip_up_down(image), tf.random_shuffle(tf.range(6)),
            tf.multinomial(tf.log([[0.2, 0.3, 0.5]]), 4), tf.image.random_hue(image / 100.0, 0.2),
            tf.image.random_saturation(image / 100.0, 0.5, 1.5)]


def control_flow(tf):
    from tensorflow.python.ops import control_flow_ops
    index = _index(tf)
    image = tf.reshape(tf.range(12, dtype=tf.float32), [2, 2, 3]) + tf.cast(index, tf.float32)
    selector = tf.random_uniform([], maxval=3, dtype=tf.int32)
    # Inception's apply_with_random_selector: one switch per case, then a merge.
    cases = [control_flow_ops.switch(image, tf.equal(selector, case))[1] * (case + 1.5)
             for case in range(3)]
    selected = control_flow_ops.merge(cases)[0]
    cased = tf.case([(tf.equal(index % 3, 0), lambda: index * 10),
                     (tf.equal(index % 3, 1), lambda: index * 20)], default=lambda: -index)
    accumulated = tf.while_loop(
        lambda i, array: i < index, lambda i, array: (i + 1, array.write(i, i * i)),
        [0, tf.TensorArray(tf.int32, size=0, dynamic_size=True)])[1]
    squares = tf.reduce_sum(tf.concat([accumulated.stack(), [0]], 0))
    mapped = tf.map_fn(lambda word: tf.strings.length(word), tf.constant(WORDS[:3]), dtype=tf.int32)
    return [selected, cased, squares, mapped + index]


def images(tf):
    index = _index(tf)
    pixels = tf.cast(tf.reshape(tf.range(75) * (index + 1) % 255, [5, 5, 3]), tf.uint8)
    png = tf.image.decode_png(tf.image.encode_png(pixels))
    jpeg = tf.image.decode_jpeg(tf.image.encode_jpeg(pixels, quality=90))
    return [png, jpeg, tf.image.resize_images(jpeg, [3, 7], method=tf.image.ResizeMethod.BICUBIC),
            tf.image.resize_images(png, [8, 8], method=tf.image.ResizeMethod.AREA),
            tf.image.flip_left_right(tf.image.rot90(png)), tf.image.rgb_to_hsv(tf.cast(png, tf.float32) / 255.0)]


FAMILIES = [python_functions, strings, sparse, random_ops, control_flow, images]
# Families whose per-element shapes vary: batched padded to the batch maximum.
VARYING_SHAPES = {strings, images}


@pytest.mark.parametrize("family", FAMILIES, ids=[family.__name__ for family in FAMILIES])
def test_op_family_gives_tf1s_values(family, legacy, shim):
    def build(tf):
        return tf.train.batch(family(tf), batch_size=3, dynamic_pad=family in VARYING_SHAPES)

    assert_streams_equal(run_stream(legacy, build, graph_seed=11),
                         run_stream(shim, build, graph_seed=11))
