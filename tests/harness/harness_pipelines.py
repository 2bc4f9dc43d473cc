"""Small legacy pipelines and deliberately broken tf.data candidates for the harness tests.

Also the CLI/plugin example: ``python -m compat.harness tests/harness/harness_pipelines.py:build_counting``.
Every legacy function takes the ``tf`` module (``build(tf)``) except ``build_with_global_tf``,
which uses the module-level ``tf`` the way old scripts do.
"""
import tensorflow.compat.v1 as tf

EPOCH = 12       # elements per epoch of the counting pipelines
BATCH = 5
SHUFFLE_N = 150  # elements per epoch of the shuffled pipeline
SHUFFLE_EPOCHS = 2
SHUFFLE_CAPACITY = 60


def _record(tf_, i):
    return {"index": i, "square": i * i, "name": tf_.as_string(i)}


def build_counting(tf):
    """Deterministic: 2 epochs of 0..11 in order, batches 5,5,5,5,4 (smaller final batch kept)."""
    i = tf.train.range_input_producer(EPOCH, num_epochs=2, shuffle=False).dequeue()
    return tf.train.batch(_record(tf, i), BATCH, allow_smaller_final_batch=True)


def build_drop_remainder(tf):
    """Like build_counting but with TF1's default allow_smaller_final_batch=False."""
    i = tf.train.range_input_producer(EPOCH, num_epochs=2, shuffle=False).dequeue()
    return tf.train.batch(_record(tf, i), BATCH)


def build_with_global_tf():
    """Uses the module-level ``tf``; the harness swaps it for each side."""
    i = tf.train.range_input_producer(7, num_epochs=1, shuffle=False).dequeue()
    return tf.train.batch([i, i + 100], 3, allow_smaller_final_batch=True)


def build_producer_shuffled(tf):
    """Producer shuffles every epoch (unseeded), single thread: epochs are separable."""
    i = tf.train.range_input_producer(EPOCH, num_epochs=3, shuffle=True).dequeue()
    return tf.train.batch([i, i * 10], 4, allow_smaller_final_batch=True)


def build_shuffled(tf):
    """shuffle_batch over an in-order producer: epochs + window + stats."""
    i = tf.train.range_input_producer(SHUFFLE_N, num_epochs=SHUFFLE_EPOCHS,
                                      shuffle=False).dequeue()
    return tf.train.shuffle_batch({"index": i, "value": i * 3}, 10, capacity=SHUFFLE_CAPACITY,
                                  min_after_dequeue=30, allow_smaller_final_batch=True)


def build_indexed_shuffle(tf):
    """shuffle_batch whose elements carry 'position', their place in the order they entered
    the shuffle queue (a counter variable, so no re-run can tell it)."""
    tick = tf.train.range_input_producer(120, num_epochs=1, shuffle=True).dequeue()
    counter = tf.Variable(-1, dtype=tf.int64, trainable=False,
                          collections=[tf.GraphKeys.LOCAL_VARIABLES])
    with tf.control_dependencies([tick]):
        # A copy of the value: after disable_v2_behavior() the counter is a ref variable, and
        # an identity of it may share its buffer, so the queue would hold later increments.
        position = tf.assign_add(counter, 1, use_locking=True) + 0
    return tf.train.shuffle_batch({"position": position, "value": position * 3}, 8,
                                  capacity=40, min_after_dequeue=20,
                                  allow_smaller_final_batch=True)


def build_partial_epoch(tf):
    """Unseeded producer shuffle, 2 epochs of 4, batches of 3 with the remainder dropped:
    the run holds one full epoch and a random half of the next."""
    i = tf.train.range_input_producer(4, num_epochs=2, shuffle=True).dequeue()
    return tf.train.batch([i], 3)


def build_threads(tf):
    """batch with 3 enqueue threads: TF1 order is nondeterministic within a small window."""
    i = tf.train.range_input_producer(40, num_epochs=1, shuffle=False).dequeue()
    return tf.train.batch([i], 4, num_threads=3, allow_smaller_final_batch=True)


def build_sparse(tf):
    """Sparse and string components in a nested tuple."""
    i = tf.train.range_input_producer(6, num_epochs=1, shuffle=False).dequeue()
    sparse = tf.SparseTensor(indices=[[0]], values=tf.reshape(i, [1]), dense_shape=[3])
    sparse_b, name_b, index_b = tf.train.batch([sparse, tf.as_string(i), i], 4,
                                               allow_smaller_final_batch=True)
    return sparse_b, {"pair": (name_b, index_b)}  # TF1 batch is flat; the nesting is ours


def build_floats(tf):
    """Float arithmetic (a division), deterministic."""
    i = tf.train.range_input_producer(200, num_epochs=1, shuffle=False).dequeue()
    return tf.train.batch([tf.cast(i, tf.float32) / 7.0 - 0.3, i], 8)


def build_bad_capacity(tf):
    """TF1 raises ValueError: capacity must exceed min_after_dequeue."""
    i = tf.train.range_input_producer(5, shuffle=False).dequeue()
    return tf.train.shuffle_batch([i], 2, capacity=10, min_after_dequeue=10)


# --------------------------------------------------------------------------- candidates
# tf.data versions of build_counting; only the first is right.


def _as_record(x):
    i = tf.cast(x, tf.int32)
    return _record(tf, i)


def counting_dataset(tf):
    """Correct tf.data rewrite of build_counting."""
    return tf.data.Dataset.range(EPOCH).repeat(2).map(_as_record).batch(BATCH)


def dropped_element(tf):
    """Loses the 8th element (index 7 of epoch 0)."""
    ds = tf.data.Dataset.range(2 * EPOCH).filter(lambda x: tf.not_equal(x, 7))
    return ds.map(lambda x: _as_record(x % EPOCH)).batch(BATCH)


def duplicated_element(tf):
    """Element 3 of epoch 0 appears twice; the run then ends one element early."""
    ds = tf.data.Dataset.range(2 * EPOCH)
    ds = ds.flat_map(lambda x: tf.data.Dataset.from_tensors(x).repeat(
        tf.where(tf.equal(x, 3), tf.constant(2, tf.int64), tf.constant(1, tf.int64))))
    return ds.take(2 * EPOCH).map(lambda x: _as_record(x % EPOCH)).batch(BATCH)


def swapped_batches(tf):
    """Batches 0 and 1 change places (same elements, same epoch, wrong order)."""
    order = list(range(5, 10)) + list(range(0, 5)) + list(range(10, 24))
    ds = tf.data.Dataset.from_tensor_slices(tf.constant(order, tf.int64))
    return ds.map(lambda x: _as_record(x % EPOCH)).batch(BATCH)


def wrong_final_batch(tf):
    """The classic migration bug: Dataset.batch keeps the remainder that TF1 dropped."""
    return tf.data.Dataset.range(EPOCH).repeat(2).map(_as_record).batch(BATCH)


def misaligned_components(tf):
    """'square' comes from the element after this one: each column is right, rows are not."""
    def record(x):
        i = tf.cast(x % EPOCH, tf.int32)
        nxt = tf.cast((x + 1) % EPOCH, tf.int32)
        return {"index": i, "square": nxt * nxt, "name": tf.as_string(i)}
    return tf.data.Dataset.range(2 * EPOCH).map(record).batch(BATCH)


def _shuffled_records(x):
    i = tf.cast(x % SHUFFLE_N, tf.int32)
    return {"index": i, "value": i * 3}


def no_shuffle(tf):
    """Forgot to shuffle: build_shuffled's elements in input order."""
    return tf.data.Dataset.range(SHUFFLE_N * SHUFFLE_EPOCHS).map(_shuffled_records).batch(10)


def shuffle_window_too_small(tf):
    """Shuffles with a buffer of 3 where TF1 mixed over up to 60 elements."""
    return tf.data.Dataset.range(SHUFFLE_N * SHUFFLE_EPOCHS).shuffle(3, seed=1) \
        .map(_shuffled_records).batch(10)


def shuffle_window_too_large(tf):
    """Shuffles the whole run at once: elements arrive far earlier than TF1 allows."""
    n = SHUFFLE_N * SHUFFLE_EPOCHS
    return tf.data.Dataset.range(n).shuffle(n, seed=1).map(_shuffled_records).batch(10)


def shuffled_like_tf1(tf):
    """A correct rewrite of build_shuffled (buffer = capacity)."""
    return tf.data.Dataset.range(SHUFFLE_N * SHUFFLE_EPOCHS) \
        .shuffle(SHUFFLE_CAPACITY, seed=7).map(_shuffled_records).batch(10)


def raises_at_run(tf):
    """Fails after two batches."""
    ds = tf.data.Dataset.range(2 * EPOCH).map(
        lambda x: tf.debugging.check_numerics(tf.cast(tf.where(x < 10, 1.0, float("nan")),
                                                      tf.float32), "boom"))
    return ds.map(lambda _: _as_record(tf.constant(0, tf.int64))).batch(BATCH)


def floats_rounded_differently(tf):
    """Computes i / 7 as (3 i) / 21: values differ from build_floats in the last bit."""
    def record(x):
        i = tf.cast(x, tf.int32)
        return tf.cast(i, tf.float32) * 3.0 / 21.0 - 0.3, i
    return tf.data.Dataset.range(200).map(record).batch(8, drop_remainder=True)
