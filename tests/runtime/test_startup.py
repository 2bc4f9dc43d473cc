"""What a pipeline costs before its first batch: tracing and the preparation of functions.

Stream equality with TF1 is tested elsewhere; this checks the compiled graph, so that a change
which traces batch stages at build time again, blocks a Session thread that a fed queue needs,
or prepares the user's per-element ops on the one-device path (which changes their floats)
fails here instead of only in the benchmark.
"""
import threading

import numpy as np
import pytest

from conftest import run_stream

ONE_DEVICE = "experimental_ints_on_device"


def _dataset_functions(graph_def):
    """name -> (the function, whether it is prepared for one device), for tf.data's functions."""
    return {function.signature.name: (function, function.attr[ONE_DEVICE].b)
            for function in graph_def.library.function
            if function.attr["_tf_data_function"].b}


def _calls_user_ops(function, functions, library=None, op_type=None):
    """Whether `function` calls a function that holds the user's lifted ops (a Defun); with
    `op_type`, one holding an op of that type (`library`: every function, by name)."""
    def holds(node):
        if op_type is None:
            return True
        return any(inner.op == op_type for inner in library[node.op].node_def)

    return any((node.op.startswith("function_") or node.op == "batched") and holds(node)
               or node.op in functions
               and _calls_user_ops(functions[node.op][0], functions, library, op_type)
               for node in function.node_def)


def test_batch_stage_is_traced_when_its_graph_first_runs(shim):
    import tensorflow as real_tf

    graph = real_tf.Graph()
    with graph.as_default():
        index = shim.train.range_input_producer(40, shuffle=False, num_epochs=1).dequeue()
        value = shim.cast(index, shim.float32) * 0.5
        batch = shim.train.batch([value], batch_size=8)
        traced_at_build = set(graph._functions)  # pylint: disable=protected-access
        assert batch.op.type == "IteratorGetNextSync"  # no fed queue: waits on its own thread
        assert batch.shape.as_list() == [8]  # TF1's dequeue_many spec, declared at build
        with shim.Session() as sess:
            first = sess.run(batch)
        traced_at_run = set(graph._functions) - traced_at_build  # pylint: disable=protected-access
    assert not any("compute_batch" in name for name in traced_at_build)
    assert any("compute_batch" in name for name in traced_at_run)
    np.testing.assert_array_equal(first, np.arange(8) * 0.5)


def test_batch_of_a_fed_queue_does_not_hold_a_session_thread(shim):
    import tensorflow as real_tf

    graph = real_tf.Graph()
    with graph.as_default():
        values = shim.placeholder(shim.int64, [None])
        queue = shim.FIFOQueue(4, [shim.int64], shapes=[[]])
        fill, close = queue.enqueue_many([values]), queue.close()
        batch = shim.train.batch([queue.dequeue() * 2], batch_size=3)
        assert batch.op.type == "IteratorGetNext"
        with shim.Session() as sess:
            feeder = threading.Thread(target=lambda: (sess.run(fill, {values: np.arange(9)}),
                                                      sess.run(close)))
            feeder.start()
            batches = [sess.run(batch).tolist() for _ in range(3)]
            feeder.join()
    assert batches == [[0, 2, 4], [6, 8, 10], [12, 14, 16]]


def test_user_ops_per_element_keep_the_multi_device_preparation(shim):
    import tensorflow as real_tf

    graph = real_tf.Graph()
    with graph.as_default():
        def image():
            index = shim.train.range_input_producer(16, shuffle=False, num_epochs=1).dequeue()
            return shim.reshape(shim.cast(index, shim.float32), [1, 1])

        batched = shim.train.batch([image() / 255.0], batch_size=4)  # exact: vectorized
        per_element = shim.train.batch([shim.exp(image())], batch_size=4)  # not vectorized
        with shim.Session() as sess:
            sess.run([batched, per_element])
    graph_def = graph.as_graph_def()
    functions = _dataset_functions(graph_def)
    library = {function.signature.name: function for function in graph_def.library.function}
    marked = {name for name, (_, one_device) in functions.items() if one_device}
    user_ops = {name for name, (function, _) in functions.items()
                if _calls_user_ops(function, functions)}
    assert marked, "the shim's own functions (readers, producers, batches) are one-device"
    exp_per_element = {name for name, (function, _) in functions.items()
                       if _calls_user_ops(function, functions, library, "Exp")}
    assert exp_per_element and not exp_per_element & marked
    assert any("compute_batch" in name for name in user_ops & marked)


@pytest.mark.parametrize("kernel, expression", [
    ("ResizeBilinear", lambda tf, image: tf.image.resize_images(image, [2, 2])),
    # Inception's and im2txt's per-image work: draws, flips, one-rounding arithmetic.
    ("ReverseV2", lambda tf, image: (tf.reverse(image, [1]) * tf.random_uniform([]) - 0.5)),
    ("RealDiv", lambda tf, image: tf.clip_by_value(
        image / 255.0 + tf.random_uniform([], -0.1, 0.1), 0.0, 1.0)),
    # CIFAR-10's and FaceNet's: float means and Rsqrt, which oneDNN has no kernels for.
    ("Mean", lambda tf, image: tf.image.per_image_standardization(image)),
], ids=["resize", "flip_and_scale", "brightness_and_clip", "standardization"])
def test_user_ops_giving_tf1s_floats_either_way_are_prepared_for_one_device(
        shim, kernel, expression):
    import tensorflow as real_tf

    graph = real_tf.Graph()
    with graph.as_default():
        index = shim.train.range_input_producer(16, shuffle=False, num_epochs=1).dequeue()
        with shim.control_dependencies([shim.debugging.assert_non_negative(index)]):
            image = shim.reshape(shim.cast(index, shim.float32), [1, 1, 1])
        computed = shim.train.batch([expression(shim, image)], batch_size=4)
        with shim.Session() as sess:
            sess.run(computed)
    graph_def = graph.as_graph_def()
    functions = _dataset_functions(graph_def)
    library = {function.signature.name: function for function in graph_def.library.function}
    # The user's ops stay in a function of their own, which the Session's grappler rewrites.
    computing = {name: one_device for name, (function, one_device) in functions.items()
                 if _calls_user_ops(function, functions, library, kernel)}
    # oneDNN 2 (TF 2.15) has kernels of its own for the arithmetic: multi-device there.
    from compat._runtime import vectorize
    expected = kernel == "ResizeBilinear" or not vectorize.onednn_2_kernels()
    assert computing and all(one_device == expected for one_device in computing.values()), (
        computing)


def test_padded_batch_stage_is_traced_when_its_graph_first_runs(legacy, shim):
    """batch(dynamic_pad=True), as im2txt pads its captions: TF1's dequeue shape declared at
    build, the pipeline traced at the first run."""
    import tensorflow as real_tf

    def build(tf):
        length = tf.train.range_input_producer(9, shuffle=False, num_epochs=1).dequeue() % 4 + 1
        caption = tf.range(length)
        return tf.train.batch([caption, length], batch_size=3, dynamic_pad=True,
                              allow_smaller_final_batch=True)

    with real_tf.Graph().as_default():
        tf1_shapes = [tensor.shape.as_list() for tensor in build(legacy)]
    graph = real_tf.Graph()
    with graph.as_default():
        batch = build(shim)
        traced_at_build = set(graph._functions)  # pylint: disable=protected-access
        assert [tensor.shape.as_list() for tensor in batch] == tf1_shapes
        with shim.Session() as sess:
            first = sess.run(batch)
        traced_at_run = set(graph._functions) - traced_at_build  # pylint: disable=protected-access
    # At build: only the stand-in factories of its iterators (see `dataset_factories`).
    from compat._runtime import dataset_factories
    stand_ins = {factory.name for factory in dataset_factories._failing.values()}  # pylint: disable=protected-access
    assert traced_at_build and traced_at_build <= stand_ins, traced_at_build
    assert any("Dataset_padded_batch" in name or "Dataset_map" in name
               for name in traced_at_run), traced_at_run
    tf1_first = run_stream(legacy, build, max_steps=1)[0]
    for got, want in zip(first, tf1_first):
        np.testing.assert_array_equal(got, want)


def test_producer_dequeues_are_traced_when_their_graph_first_runs(legacy, shim):
    """PTB's pattern: one index per step, dequeued straight from a range producer."""
    import tensorflow as real_tf

    dequeues = {"dequeue": lambda queue: queue.dequeue(),
                "dequeue_many": lambda queue: queue.dequeue_many(2),
                "dequeue_up_to": lambda queue: queue.dequeue_up_to(4)}
    for dequeue in dequeues.values():
        shapes = {}
        for name, tf in (("legacy", legacy), ("shim", shim)):
            with real_tf.Graph().as_default() as graph:
                queue = tf.train.range_input_producer(6, shuffle=False, num_epochs=1)
                shapes[name] = dequeue(queue).shape.as_list()
                traced = [name for name in graph._functions  # pylint: disable=protected-access
                          if "Dataset_map" in name]
        assert shapes["shim"] == shapes["legacy"]
        assert not traced


def _intra_op_limits(graph_def):
    """The max_intra_op_parallelism each OptionsDataset of the graph's pipelines sets (None
    where it leaves tf.data's default, one thread)."""
    from tensorflow.core.framework import dataset_options_pb2

    limits = []
    for function in graph_def.library.function:
        for node in function.node_def:
            if node.op == "OptionsDataset":
                options = dataset_options_pb2.Options.FromString(
                    node.attr["serialized_options"].s)
                threading_options = options.threading_options
                limits.append(threading_options.max_intra_op_parallelism
                              if threading_options.WhichOneof(
                                  "optional_max_intra_op_parallelism") else None)
    return limits


@pytest.mark.parametrize("side", [24, 299])
def test_pipelines_use_tf1s_intra_op_threads_only_where_floats_depend_on_them(shim, side):
    """A 299x299 image's mean is added on the device's threads, as TF1's Session adds it
    (tf.data's one thread changes its last bits); a 24x24 one keeps tf.data's faster
    default, since Eigen adds it in one block either way."""
    import tensorflow as real_tf

    graph = real_tf.Graph()
    with graph.as_default():
        index = shim.train.range_input_producer(4, shuffle=False, num_epochs=1).dequeue()
        image = shim.fill([side, side, 3], shim.cast(index, shim.float32))
        batch = shim.train.batch([shim.image.per_image_standardization(image)], batch_size=2)
        with shim.Session() as sess:
            sess.run(batch)
    limits = _intra_op_limits(graph.as_graph_def())
    assert limits and all(limit == (0 if side == 299 else None) for limit in limits), limits
