"""Per-element lookups in lookup tables run inside the tf.data pipeline as TF1 runs them.

The pipeline's copy of a table op opens the user's table by name, so the user's
`sess.run(tf.tables_initializer())` fills the table the pipeline reads. Expected streams and
error types are asked of TF1 at test time.
"""
import pytest

from conftest import build_error, run_stream, tf_real
from streams import assert_streams_equal

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(120)]

WORDS = ["emerson", "lake", "palmer", "yes", "genesis", "lake", "camel", "emerson"]


def run_with_tables(tf, build, initialize_tables=True):
    """`conftest.run_stream` with `tf.tables_initializer()` run before the queue runners start
    (unless `initialize_tables` is False)."""
    return run_stream(tf, build, max_steps=1000, initialize_tables=initialize_tables)


def assert_same_stream(build, legacy, shim):
    expected = run_with_tables(legacy, build)
    assert expected, "TF1 gives no batches; the case is wrong"
    assert_streams_equal(expected, run_with_tables(shim, build))


def _words(tf, num_epochs=2):
    return tf.train.string_input_producer(WORDS, num_epochs=num_epochs, shuffle=False).dequeue()


def _batch(tf, tensors):
    return tf.train.batch(tensors, batch_size=3, allow_smaller_final_batch=True)


def _band_table(tf):
    return tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["emerson", "lake", "palmer"],
                                            tf.constant([10, 20, 30], tf.int64)), -1)


# ----------------------------------------------------------------------------- tables that work

def static_string_to_int64(tf):
    word = _words(tf)
    return _batch(tf, [_band_table(tf).lookup(word), word])


def static_int64_to_string(tf):
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(tf.constant([0, 1, 2], tf.int64),
                                            ["zero", "one", "two"]), "UNK")
    index = tf.cast(tf.train.range_input_producer(5, num_epochs=2, shuffle=False).dequeue(),
                    tf.int64)
    return _batch(tf, [table.lookup(index), index])


def index_table_from_tensor_with_oov_buckets(tf):
    from tensorflow.python.ops import lookup_ops  # tf.contrib.lookup's, kept by TF 2
    table = lookup_ops.index_table_from_tensor(["emerson", "lake", "palmer"], num_oov_buckets=3)
    word = _words(tf)
    return _batch(tf, [table.lookup(word), tf.string_to_hash_bucket_fast(word, 7)])


def static_vocabulary_table(tf):
    table = tf.lookup.StaticVocabularyTable(
        tf.lookup.KeyValueTensorInitializer(["emerson", "lake", "palmer"],
                                            tf.constant([0, 1, 2], tf.int64)), num_oov_buckets=2)
    return _batch(tf, [table.lookup(_words(tf))])


def lookup_in_cond_branch(tf):
    table = _band_table(tf)
    word = _words(tf)
    value = tf.cond(tf.strings.length(word) > 4, lambda: table.lookup(word),
                    lambda: tf.constant(-7, tf.int64))
    return _batch(tf, [value, word])


def one_table_twice_and_after_the_batch(tf):
    """Two lookups per element, and one in the training step: all read one table."""
    table = _band_table(tf)
    word = _words(tf)
    of_word, of_prefix, batched_word = _batch(
        tf, [table.lookup(word), table.lookup(tf.strings.substr(word, 0, 4)), word])
    return of_word, of_prefix, table.lookup(batched_word)


def _raw_lookup(tf, handle, keys):
    from tensorflow.python.ops import gen_lookup_ops
    values = gen_lookup_ops.lookup_table_find_v2(handle, keys, tf.constant(0, tf.int64))
    values.set_shape(keys.shape)
    return values


def table_shared_by_node_name(tf):
    """A table op without a shared_name that shares by node name: the pipeline's copy, which
    has a node name of its own, still opens it."""
    from tensorflow.python.ops import gen_lookup_ops
    handle = gen_lookup_ops.hash_table_v2(key_dtype=tf.string, value_dtype=tf.int64,
                                          use_node_name_sharing=True, name="by_node_name")
    tf.add_to_collection(tf.GraphKeys.TABLE_INITIALIZERS, gen_lookup_ops.lookup_table_import_v2(
        handle, ["lake", "yes"], tf.constant([2, 3], tf.int64)))
    return _batch(tf, [_raw_lookup(tf, handle, _words(tf))])


WORKING = [static_string_to_int64, static_int64_to_string,
           index_table_from_tensor_with_oov_buckets, static_vocabulary_table,
           lookup_in_cond_branch, one_table_twice_and_after_the_batch, table_shared_by_node_name]


@pytest.mark.parametrize("build", WORKING, ids=[build.__name__ for build in WORKING])
def test_lookups_give_tf1s_batches(build, legacy, shim):
    assert_same_stream(build, legacy, shim)


@pytest.mark.parametrize("kind", ["index_table_from_file", "TextFileInitializer"])
def test_vocabulary_file_tables_give_tf1s_batches(kind, tmp_path, legacy, shim):
    vocabulary = tmp_path / "vocabulary.txt"
    vocabulary.write_text("emerson\nlake\npalmer\ngenesis\n")
    data = tmp_path / "words.txt"
    data.write_text("\n".join(WORDS) + "\n")

    def build(tf):
        if kind == "index_table_from_file":
            from tensorflow.python.ops import lookup_ops  # tf.contrib.lookup's, kept by TF 2
            table = lookup_ops.index_table_from_file(str(vocabulary), num_oov_buckets=1)
        else:
            table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
                str(vocabulary), tf.string, tf.lookup.TextFileIndex.WHOLE_LINE,
                tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER), -1)
        _, line = tf.TextLineReader().read(
            tf.train.string_input_producer([str(data)], num_epochs=2, shuffle=False))
        return _batch(tf, [table.lookup(line), line])

    assert_same_stream(build, legacy, shim)


def test_lookup_needs_no_initializer_op_and_keeps_no_state(shim):
    """The pipeline re-creates the table op (found by name) and the lookup, never the table's
    initializer; reading a static table does not depend on the order of the calls."""
    from compat._runtime import lifting, plan
    with tf_real.Graph().as_default():
        word = _words(shim)
        lifted = lifting.lift(_band_table(shim).lookup(word), plan.stage_of, "test")
    types = {op.type for op in lifted.ops}
    assert {"HashTableV2", "LookupTableFindV2"} <= types
    assert not any("Initialize" in kind or "Import" in kind for kind in types), types
    assert not lifted.stateful


def test_lookup_before_tables_initializer_fails_as_tf1(legacy, shim):
    def error_of(tf):
        try:
            run_with_tables(tf, static_string_to_int64, initialize_tables=False)
        except Exception as error:  # noqa: BLE001 - the type is what the test compares
            return error
        return None

    expected, actual = error_of(legacy), error_of(shim)
    assert expected is not None, "TF1 runs lookups in an uninitialized table; the case is wrong"
    assert type(actual) is type(expected), (expected, actual)
    assert "not initialized" in str(actual)


# ------------------------------------------------------------------ tables the pipeline refuses

def mutable_table(tf):
    table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1, name="counts")
    tf.add_to_collection(tf.GraphKeys.TABLE_INITIALIZERS,
                         table.insert(["lake", "yes"], tf.constant([2, 3], tf.int64)))
    return table, _words(tf)


def mutable_table_per_element(tf):
    table, word = mutable_table(tf)
    return _batch(tf, [table.lookup(word)])


def mutable_table_after_the_batch(tf):
    table, word = mutable_table(tf)
    return table.lookup(_batch(tf, [word]))


def table_without_a_name(tf):
    from tensorflow.python.ops import gen_lookup_ops
    handle = gen_lookup_ops.hash_table_v2(key_dtype=tf.string, value_dtype=tf.int64,
                                          name="private_table")
    return _batch(tf, [_raw_lookup(tf, handle, _words(tf))])


def initializer_as_dependency(tf):
    table = _band_table(tf)
    word = _words(tf)
    with tf.control_dependencies([table.initializer]):
        return _batch(tf, [table.lookup(word)])


REFUSED = [(mutable_table_per_element, "counts"), (table_without_a_name, "private_table"),
           (initializer_as_dependency, "LookupTableImportV2")]


@pytest.mark.parametrize("build,named", REFUSED, ids=[build.__name__ for build, _ in REFUSED])
def test_tables_the_pipeline_cannot_find_run_on_tf1_queues(build, named, legacy, shim):
    """A table no pipeline can find (mutable, private to its op, initialized as the lookup
    runs): in graph mode the batch runs on TF1's own queue and runner (`tf1_fallback`), with
    TF1's batches; `to_dataset`, which has no Session, refuses it, naming it and the fix."""
    def outcome(tf):
        try:
            return run_with_tables(tf, build), None
        except Exception as error:  # noqa: BLE001 - the type is what the test compares
            return None, error

    (expected, expected_error), (got, error) = outcome(legacy), outcome(shim)
    assert type(error) is type(expected_error), (expected_error, error)
    if expected_error is None:
        assert_streams_equal(expected, got)
    import compat
    with pytest.raises(ValueError, match="compat.to_dataset") as raised:
        compat.to_dataset(build)
    assert named in str(raised.value)
    assert "after batching" in str(raised.value)


def test_looking_up_after_the_batch_is_the_fix_that_works(legacy, shim):
    assert_same_stream(mutable_table_after_the_batch, legacy, shim)
