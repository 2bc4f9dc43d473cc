"""Element code rewritten for batches: the edits where every op is row-wise, None otherwise
(fix/no-op pairs); the tests against TF1 prove the values."""
import textwrap

import pytest

from compat._migrate.batched_code import batched


def _code(body):
    return "def parse_element(record):\n" + textwrap.indent(textwrap.dedent(body), "    ")


FIXES = [
    ("features = tf.parse_single_example(record, SPEC)\nreturn features['x']",
     "features = tf.parse_example(record, SPEC)\nreturn features['x']"),
    ("x = tf.decode_raw(record, tf.uint8)\nx.set_shape([784])\nreturn x",
     "x = tf.decode_raw(record, tf.uint8)\nx.set_shape([None, 784])\nreturn x"),
    ("x = tf.reshape(tf.decode_raw(record, tf.uint8), [side, side, 1])\nreturn x",
     "x = tf.reshape(tf.decode_raw(record, tf.uint8), [-1, side, side, 1])\nreturn x"),
    ("columns = tf.decode_csv(record, defaults(NUM))\nreturn tf.stack(columns[:-1])",
     "columns = tf.decode_csv(record, defaults(NUM))\nreturn tf.stack(columns[:-1], axis=1)"),
    ("x = tf.concat([tf.decode_raw(record, tf.uint8)] * 2, 0)\nreturn tf.expand_dims(x, -1)",
     "x = tf.concat([tf.decode_raw(record, tf.uint8)] * 2, 1)\nreturn tf.expand_dims(x, -1)"),
    ("# a comment stays\ncolumns = tf.decode_csv(record, DEFAULTS)\nreturn columns[0] * 2",
     "# a comment stays\ncolumns = tf.decode_csv(record, DEFAULTS)\nreturn columns[0] * 2"),
]

NOOPS = [
    "return tf.strided_slice(record, [0], [1])",            # slices a row: not row-wise here
    "if flag:\n    record = tf.identity(record)\nreturn record",  # control flow
    "return helper(record)",                                # a call on the element: unknown
    "x = tf.decode_raw(record, tf.uint8)\nx.set_shape(shape)\nreturn x",  # unknown shape list
    "return tf.image.decode_png(record)",
]


@pytest.mark.parametrize("before,after", FIXES)
def test_row_wise_code_is_rewritten_for_batches(before, after):
    assert batched(_code(before)) == _code(after)
    assert batched(_code(after).replace("parse_example", "parse_single_example")) is not None


@pytest.mark.parametrize("code", NOOPS)
def test_other_code_stays_per_element(code):
    assert batched(_code(code)) is None
