"""The user's per-element ops between stages run inside the tf.data pipeline."""
import numpy as np
import pytest

from conftest import run_stream, tf_real
from session_streams import stream_until_error
from streams import assert_streams_equal

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
    x = tf.placeholder_with_default(tf.constant([1.0, 2.0, 3.0]), [3], name="user_features")
    index = tf.train.range_input_producer(4, num_epochs=2, shuffle=False).dequeue()
    return tf.train.batch([x * tf.cast(index, tf.float32)], batch_size=2)


def reads_a_variable(tf):
    scale = tf.Variable(2.0, name="user_scale")
    index = tf.train.range_input_producer(4, num_epochs=2, shuffle=False).dequeue()
    return tf.train.batch([scale * tf.cast(index, tf.float32)], batch_size=2)


def unfed_placeholder(tf):
    x = tf.placeholder(tf.float32, [3], name="user_features")
    index = tf.train.range_input_producer(4, num_epochs=2, shuffle=False).dequeue()
    return tf.train.batch([x * tf.cast(index, tf.float32)], batch_size=2)


@pytest.mark.parametrize("build", [fed_from_placeholder, reads_a_variable])
def test_inputs_no_pipeline_can_hold_run_on_tf1_queues(build, legacy, shim):
    """A placeholder (with a default) or a variable feeding the per-element computation
    cannot move into a tf.data pipeline: in graph mode the batch runs on TF1's own queue and
    runner thread (`tf1_fallback`), with TF1's batches."""
    expected = run_stream(legacy, build)
    assert len(expected) == 4
    assert_streams_equal(expected, run_stream(shim, build))


def test_a_placeholder_no_runner_can_feed_fails_as_in_tf1(legacy, shim):
    """TF1's runner thread cannot feed the placeholder: its enqueue fails, the Coordinator
    re-raises the error at join, and the consumer's run sees the closed queue."""
    expected = stream_until_error(legacy, unfed_placeholder)
    got = stream_until_error(shim, unfed_placeholder)
    assert type(got[1]) is type(expected[1]) is tf_real.errors.InvalidArgumentError
    assert got[0] == expected[0] == []


@pytest.mark.parametrize("build,op_name", [(unfed_placeholder, "user_features"),
                                           (reads_a_variable, "user_scale")])
def test_to_dataset_refuses_what_only_a_session_can_run(build, op_name):
    """Without a Session no TF1 runner can run the part that cannot be compiled: to_dataset
    refuses it, naming the op and what to do."""
    import compat
    with pytest.raises(ValueError, match="compat.to_dataset") as raised:
        compat.to_dataset(build)
    assert op_name in str(raised.value)
    assert "Use" in str(raised.value) or "Feed" in str(raised.value)


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


def _per_element_work(tf, image, v1_control_flow=True):
    """Per-image work with the parts a function must keep: seeded draws, several outputs of
    one op, and with `v1_control_flow` (TF1 mode: Switch/Merge) a cond and a stateful assert
    with no output."""
    flip = tf.random_uniform([], seed=3) < 0.5
    if v1_control_flow:
        flipped = tf.cond(flip, lambda: tf.reverse(image, [1]), lambda: image)
        with tf.control_dependencies([tf.debugging.assert_non_negative(image)]):
            scaled = flipped / 255.0 - 0.5
    else:
        scaled = tf.where(flip, tf.reverse(image, [1]), image) / 255.0 - 0.5
    top, bottom = tf.split(scaled, 2, axis=0)
    return [top * 2.0, tf.cast(bottom, tf.int32), scaled]


def _comparable(definition):
    """A FunctionDef without its name and its arguments' names: node names, ops, inputs and
    attributes, the signature's argument and result types, the arguments' attributes (the
    shapes grappler starts from)."""
    position = {arg.name: f"argument {index}"
                for index, arg in enumerate(definition.signature.input_arg)}
    nodes = sorted((node.name, node.op, tuple(position.get(name, name) for name in node.input),
                    tuple(sorted((key, value.SerializeToString(deterministic=True))
                                 for key, value in node.attr.items())))
                   for node in definition.node_def)
    signature = ([arg.type for arg in definition.signature.input_arg],
                 [arg.type for arg in definition.signature.output_arg],
                 definition.signature.is_stateful)
    arguments = sorted((index, attrs.SerializeToString(deterministic=True))
                       for index, attrs in definition.arg_attr.items())
    return nodes, signature, sorted(definition.ret.values()), arguments


def test_per_element_function_made_in_c_is_the_defun_path_s(tf_behavior):
    """`lifting._function_of` (the C path) gives the FunctionDef that importing the ops into a
    Defun gives: same nodes, inputs, attributes and signature."""
    import tensorflow as real_tf
    from compat._runtime import lifting

    user_graph = real_tf.Graph()
    with user_graph.as_default():
        image = real_tf.compat.v1.placeholder(real_tf.float32, [4, 6, 3])
        ops_before = set(user_graph.get_operations())
        # In TF2 mode a cond (an assert's too) is an If calling branch functions, for which
        # the Defun path is kept.
        computed = _per_element_work(real_tf.compat.v1, image,
                                     v1_control_flow=tf_behavior == "tf1")
        ops = sorted((op for op in user_graph.get_operations() if op not in ops_before),
                     key=lambda op: op._id)  # pylint: disable=protected-access
    names = {op.name for op in ops}
    graph_def = lifting._graph_def_of(ops, names)  # pylint: disable=protected-access
    assert not graph_def.library.function

    definitions = []
    for make in ("c", "defun"):
        graph = real_tf.Graph()
        with graph.as_default():
            argument = real_tf.compat.v1.placeholder(real_tf.float32, [4, 6, 3])
            before = {function.signature.name
                      for function in graph.as_graph_def().library.function}
            if make == "c":
                function = lifting._function_of(graph_def, [image.name], [argument], computed)  # pylint: disable=protected-access
                outputs = lifting._call_of(function, [argument])  # pylint: disable=protected-access
            else:
                outputs = lifting.called_as_function(
                    lambda parameter: lifting._import_into_current_graph(  # pylint: disable=protected-access
                        ops, names, {image.name: parameter}, computed), [argument])
            assert [output.dtype for output in outputs] == [t.dtype for t in computed]
            added = [function for function in graph.as_graph_def().library.function
                     if function.signature.name not in before]
            assert len(added) == 1, [function.signature.name for function in added]
            definitions.append(added[0])
    c_made, defun_made = definitions
    assert c_made.signature.name.startswith("function_")
    assert _comparable(c_made) == _comparable(defun_made)


def _queue_element(shim):
    queue = shim.FIFOQueue(10, [shim.int32, shim.float32], shapes=[[], [2]])
    index, row = queue.dequeue()
    return index * 2, row + 1.0


def test_a_lift_is_kept_only_while_the_graph_and_its_stages_stay_as_they_were(shim):
    import tensorflow as real_tf
    from compat._runtime import element_source
    with real_tf.Graph().as_default():
        doubled, shifted = _queue_element(shim)
        first = element_source.lifted((doubled, shifted), "batch")
        assert element_source.lifted((doubled, shifted), "batch") is first
        # Another nesting of the same tensors is lifted on its own: its function packs the
        # results in that nesting. The computation is the same.
        as_list = element_source.lifted([doubled, shifted], "batch")
        assert as_list is not first
        assert as_list.ops == first.ops and as_list.sources == first.sources
        # A new op, or a new stage (a queue's dequeue adds both), may change what the
        # computation reads: lifted again.
        again = element_source.lifted((doubled, shifted), "batch")
        shim.constant(0)
        after_op = element_source.lifted((doubled, shifted), "batch")
        assert after_op is not again
        assert after_op.ops == again.ops and after_op.sources == again.sources
        _queue_element(shim)
        assert element_source.lifted((doubled, shifted), "batch") is not after_op


def _dense_list(tf):
    return [tf.constant([1.0, 2.0]), tf.range(3), tf.constant("a")]


def _with_sparse(tf):
    return [tf.constant(1.0), tf.sparse.from_dense(tf.constant([[0, 4], [5, 0]]))]


def _nested(tf):
    return ({"image": tf.zeros([2, 2])}, [tf.constant(3)])


@pytest.mark.parametrize("structure", [_dense_list, _with_sparse, _nested])
def test_lifted_outputs_are_flattened_as_tf_nest_flattens_them(structure):
    import tensorflow as tf
    from compat._runtime import lifting, plan
    with tf.Graph().as_default():
        built = structure(tf)
        lifted = lifting.lift(built, plan.stage_of, "test")
        assert [tensor.name for tensor in lifted.outputs] == [
            tensor.name for tensor in tf.nest.flatten(built, expand_composites=True)]
        assert lifted.outputs and not lifted.sources
