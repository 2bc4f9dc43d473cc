"""The shim's graph functions are made outside TF's Python function builders (for startup
speed) but are the functions TF's builders make: tf.data functions traced without
tf.function's dispatch (`dataset_functions`), one-shot iterator factories copied in C
(`dataset_factories`). Each is compared with what TF itself makes, in both TF behaviours."""
import re
from collections import Counter

import numpy as np
import pytest

from conftest import run_stream
from written_functions import datasets_created_as_tf_data_does

_UID = re.compile(r"(__inference_[\w.]+?)_\d+\b")
_HASHED = re.compile(
    r"\b((?:_?make_dataset|make_shared_iterator|function)(?:_body)?_)[A-Za-z0-9_-]{11}\b")
_SHARED_NAME = re.compile(r"\bcompat_stream_[0-9a-f]{32}\b")
# A pull written by `pull_maps` is named after its body; traced, after the function traced.
# So is a constant input's shuffle, written by `epoch_maps.written_shuffles`.
_WRITTEN_PULL = re.compile(r"\bcompat_pull_[0-9a-f]{16}\b")
_WRITTEN_SHUFFLE = re.compile(r"\bcompat_shuffle_[0-9a-f]{16}\b")


def _canonical(text: str) -> str:
    """A FunctionDef's text without the uids, hashes and shared streams' random names that
    differ from build to build."""
    text = _SHARED_NAME.sub("compat_stream_NAME", text)
    text = _HASHED.sub(r"\1HASH", _UID.sub(r"\1_UID", text))
    text = _WRITTEN_SHUFFLE.sub("__inference_Dataset_map_lambda_UID", text)
    return _WRITTEN_PULL.sub("__inference_Dataset_map_pull_UID", text)


def _tf_data_functions(graph) -> list:
    library = graph.as_graph_def().library.function
    return sorted(_canonical(str(function)) for function in library
                  if "_tf_data_function" in function.attr)


def _repeats_made_once(shims, tfs, made_once: tuple) -> None:
    """`shims` are TF's functions `tfs` but for the copies TF traces of a function the shim
    makes once (one whose name contains one of `made_once`)."""
    shim_counts, tf_counts = Counter(shims), Counter(tfs)
    assert not shim_counts - tf_counts
    extra = tf_counts - shim_counts
    assert extra and all(any(f"{name}_UID" in text for name in made_once)
                         and shim_counts[text] == 1 for text in extra)


def mnist_like(tf):
    """Records, a shuffled producer, per-record parsing, a shuffle batch."""
    serialized = [tf.train.Example(features=tf.train.Features(feature={
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[index]))}))
        .SerializeToString() for index in range(20)]
    record = tf.train.string_input_producer(serialized, num_epochs=2, seed=7).dequeue()
    label = tf.parse_single_example(record, {"label": tf.FixedLenFeature([], tf.int64)})
    return tf.train.shuffle_batch([label["label"] * 2], 4, capacity=12, min_after_dequeue=5,
                                  seed=3)


def preprocessing_threads(tf):
    """One queue dequeued by three preprocessing threads, then a batch_join (shared
    streams), with a seeded flip."""
    queue = tf.train.range_input_producer(12, num_epochs=1, shuffle=False)
    index = queue.dequeue()
    per_thread = []
    for _ in range(3):
        value = tf.cast(queue.dequeue(), tf.float32)
        flipped = tf.cond(tf.random_uniform([], seed=5) < 0.5, lambda: -value, lambda: value)
        per_thread.append([flipped])
    del index
    return tf.train.batch_join(per_thread, 3, allow_smaller_final_batch=True)


def padded_captions(tf):
    length = tf.train.range_input_producer(7, shuffle=False, num_epochs=1).dequeue() % 3 + 1
    return tf.train.batch([tf.range(length)], 2, dynamic_pad=True,
                          allow_smaller_final_batch=True)


@pytest.mark.parametrize("build", [mnist_like, preprocessing_threads, padded_captions])
def test_tf_data_functions_are_tf_s_own(build, shim, monkeypatch):
    """The same pipeline traced through `dataset_functions` (its pulls from shared streams
    written by `pull_maps`) and through TF's StructuredFunctionWrapper has the same tf.data
    functions, uids and hashes aside, and the same first batch. (Dataset ops created as
    tf.data creates them both times: see `written_functions.written_then_traced`.)"""
    import tensorflow as real_tf
    from compat._runtime import dataset_functions

    datasets_created_as_tf_data_does(monkeypatch)

    def traced():
        graph = real_tf.Graph()
        with graph.as_default():
            real_tf.compat.v1.set_random_seed(1)
            fetches = build(shim)
            with shim.Session() as sess:
                sess.run(shim.local_variables_initializer())
                first = sess.run(fetches)
        written = [function.signature.name for function in graph.as_graph_def().library.function
                   if _WRITTEN_PULL.fullmatch(function.signature.name)]
        return _tf_data_functions(graph), first, written

    fast, fast_first, written = traced()
    # The three threads pull from one shared stream: one written function for the three.
    assert len(written) == (1 if build is preprocessing_threads else 0)
    calls = []
    real_can_trace = dataset_functions.can_trace
    monkeypatch.setattr(dataset_functions, "can_trace",
                        lambda kwargs: calls.append(real_can_trace(kwargs)) and False)
    tfs, tfs_first, traced_written = traced()
    assert not traced_written
    assert calls and all(calls), "the shim's own functions did not go through the fast path"
    assert fast
    if written:  # TF traces the pull once per thread
        _repeats_made_once(fast, tfs, ("Dataset_map_pull",))
    else:
        assert fast == tfs
    if build is not preprocessing_threads:  # three threads: TF1's order is timing's
        for got, want in zip(real_tf.nest.flatten(fast_first), real_tf.nest.flatten(tfs_first)):
            np.testing.assert_array_equal(got, want)


def _factory_body(graph, name):
    """A function's nodes as the set of their computations (op, attributes, and what their
    inputs compute, recursively), and what it returns: the same for copies that name their
    nodes differently or copy a constant twice (Defun does both when a name scope has taken
    a copy's name)."""
    definition = next(function for function in graph.as_graph_def().library.function
                      if function.signature.name == name)
    nodes = {node.name: node for node in definition.node_def}
    computed = {}

    def computation(node_name):
        if node_name not in computed:
            node = nodes[node_name]
            inputs = []
            for source in node.input:
                control = source.startswith("^")
                producer, *output = source.lstrip("^").split(":", 1)
                inputs.append((control, computation(producer), tuple(output)))
            attrs = tuple(sorted((key, value.SerializeToString(deterministic=True))
                                 for key, value in node.attr.items()))
            computed[node_name] = repr((node.op, attrs, tuple(inputs)))
        return computed[node_name]

    returned = sorted(computation(source.split(":")[0]) + source.partition(":")[2]
                      for source in definition.ret.values())
    signature = ([arg.type for arg in definition.signature.output_arg],
                 definition.signature.is_stateful)
    return sorted({computation(name) for name in nodes}), signature, returned


@pytest.mark.parametrize("mapped", [True, False], ids=["mapped", "no_function"])
def test_one_shot_factory_copies_what_tf_copies(mapped, shim):
    """`dataset_factories.of_dataset` makes the function make_one_shot_iterator's Defun
    makes: the dataset's ops copied by value, control inputs left behind."""
    import tensorflow as real_tf
    from compat._runtime import dataset_factories

    graph = real_tf.Graph()
    with graph.as_default():
        tf = real_tf.compat.v1
        files = tf.constant(["a", "b", "c"])
        with tf.control_dependencies([tf.debugging.assert_positive(tf.size(files))]):
            files = tf.identity(files)
        with tf.colocate_with(files):  # with an op the copy leaves out, as TF's copy keeps it
            count = tf.identity(tf.constant(2, tf.int64))
        dataset = tf.data.Dataset.from_tensor_slices(files).shuffle(3, seed=2).repeat(count)
        if mapped:
            dataset = dataset.map(tf.strings.length)
        dataset = dataset.batch(2)
        theirs = tf.data.make_one_shot_iterator(dataset)._iterator_resource.op  # pylint: disable=protected-access
        ours = dataset_factories.of_dataset(dataset)
        want = _factory_body(graph, theirs.get_attr("dataset_factory").name)
        library = {function.signature.name: function
                   for function in graph.as_graph_def().library.function}
        body = ours.func.name
        if mapped:  # ours calls the function of the dataset's ops (see `dataset_factories`)
            [call] = library[ours.func.name].node_def
            body = call.op
        assert library[body].attr["_tf_data_function"].b
        assert library[ours.func.name].attr["_tf_data_function"].b is not mapped
        got = _factory_body(graph, body)
    assert want == got


@pytest.mark.parametrize("callee_returns", ["dataset", "shuffled dataset", "constant"])
def test_calling_function_is_the_one_made_in_c(callee_returns, shim):
    """`c_functions.calling` writes the FunctionDef that TF_GraphToFunction makes of a GraphDef
    whose one node calls the callee (what a mapped pipeline's factory was made from)."""
    import tensorflow as real_tf
    from tensorflow.core.framework import graph_pb2
    from compat._runtime import c_functions

    with real_tf.Graph().as_default() as graph:
        tf = real_tf.compat.v1
        if callee_returns == "constant":
            returned = tf.constant([1, 2])
        else:
            dataset = tf.data.Dataset.range(4)
            if callee_returns == "shuffled dataset":
                dataset = dataset.shuffle(4)
            returned = dataset._variant_tensor  # pylint: disable=protected-access
        callee = c_functions.of_graph_def(graph.as_graph_def(), [], [(returned.op.name, 0)],
                                          "callee").definition
    calling = graph_pb2.GraphDef()
    calling.library.function.add().CopyFrom(callee)
    calling.node.add(name="made", op=callee.signature.name)
    want = c_functions.of_graph_def(calling, [], [("made", 0)], "caller").definition
    got = c_functions.calling(callee, want.signature.name).definition
    assert got == want


@pytest.mark.parametrize("source", ["placeholder", "stateful op"])
def test_one_shot_factory_refuses_what_tf_refuses(source, shim):
    """What make_one_shot_iterator cannot copy (a placeholder, a stateful op) fails with its
    own error."""
    import tensorflow as real_tf
    from compat._runtime import dataset_factories

    def dataset(tf):
        value = (tf.placeholder(tf.float32, []) if source == "placeholder"
                 else tf.random_uniform([]))
        return tf.data.Dataset.from_tensors(value)

    errors = []
    for make in (real_tf.compat.v1.data.make_one_shot_iterator, dataset_factories.of_dataset):
        with real_tf.Graph().as_default():
            refused = dataset(real_tf.compat.v1)
            assert dataset_factories._by_value(refused) is None  # pylint: disable=protected-access
            with pytest.raises(ValueError) as raised:
                make(refused)
            errors.append(str(raised.value))
    assert errors[0] == errors[1]


def test_shared_stream_factory_gives_each_element_once(legacy, shim):
    """Three dequeues of one queue (shared through an iterator the C-made factory creates)
    split its elements as TF1's queue does."""
    def build(tf):
        queue = tf.train.range_input_producer(30, num_epochs=1, shuffle=False)
        return [queue.dequeue(), queue.dequeue(), queue.dequeue()]

    import tensorflow as real_tf

    def elements(tf, graph=None):
        return sorted(int(value) for step in run_stream(tf, build, graph=graph)
                      for value in step)

    graph = real_tf.Graph()
    assert elements(shim, graph) == elements(legacy) == list(range(30))
    assert any(function.signature.name.startswith("make_shared_iterator_")
               for function in graph.as_graph_def().library.function)


def test_one_shot_factory_over_a_function_call(shim):
    """A dataset over a value that a function of the graph computes (a Defun called in the
    user's graph) takes TF's own path, and its error (TF cannot copy such a call)."""
    import tensorflow as real_tf
    from tensorflow.python.framework import function as legacy_function
    from compat._runtime import dataset_factories, stage_iterators

    errors = []
    for make in (real_tf.compat.v1.data.make_one_shot_iterator,
                 stage_iterators.one_shot_iterator):
        with real_tf.Graph().as_default():
            tf = real_tf.compat.v1

            @legacy_function.Defun(tf.int32, func_name="doubled")
            def doubled(x):
                return x * 2

            dataset = tf.data.Dataset.from_tensor_slices(doubled(tf.range(5)))
            assert dataset_factories._by_value(dataset) is None  # pylint: disable=protected-access
            with pytest.raises(ValueError) as raised:
                make(dataset)
            errors.append(str(raised.value))
    assert errors[0] == errors[1] and "doubled" in errors[0]


@pytest.mark.parametrize("one_device", [True, False], ids=["one_device", "multi_device"])
def test_written_pulls_are_traced_pulls(one_device, shim, monkeypatch):
    """A pull from a shared stream, written by `pull_maps`, is the function and the map op
    tf.data's trace makes: components of unknown dimensions and rank, prepared for one device
    (a Session's pipelines) or not (`compat.to_dataset`'s)."""
    import tensorflow as real_tf
    from compat._runtime import build_context, pull_maps

    datasets_created_as_tf_data_does(monkeypatch)  # map ops in the graph
    spec = (real_tf.TensorSpec([None, 3], real_tf.float32), real_tf.TensorSpec([], real_tf.string),
            real_tf.TensorSpec(None, real_tf.int64))
    attrs = dict(shared_name="compat_stream_" + "5" * 32, container="",
                 output_types=[part.dtype for part in spec],
                 output_shapes=[part.shape for part in spec])

    def built(make):
        graph = real_tf.Graph()
        if not one_device:
            build_context.functions_as_tf_makes_them(graph)
        with build_context.building(graph):
            dataset = make(attrs, spec)
        assert dataset.element_spec == spec
        nodes = [node for node in graph.as_graph_def().node if node.op == "MapDataset"]
        return _tf_data_functions(graph), [_canonical(str(node)) for node in nodes], graph

    written, written_maps, graph = built(pull_maps.pulled)
    assert any(_WRITTEN_PULL.fullmatch(function.signature.name)
               for function in graph.as_graph_def().library.function)
    traced, traced_maps, _ = built(pull_maps.traced)
    assert written == traced
    assert written_maps == traced_maps
    assert ("experimental_ints_on_device" in written[0]) == one_device


_FED_QUEUES = {
    # FaceNet's input queue: name=None, so its kernel is named after its type.
    "fifo_unnamed": lambda tf: tf.FIFOQueue(10, [tf.string, tf.int32, tf.int32],
                                            shapes=[(1,), (1,), (1,)], name=None,
                                            shared_name="fed"),
    "padding_in_scope": lambda tf: tf.PaddingFIFOQueue(10, [tf.float32, tf.int64],
                                                       shapes=[[None, 3], []],
                                                       shared_name="fed"),
    "shuffle_seeded": lambda tf: tf.RandomShuffleQueue(10, 2, [tf.float32], shapes=[[2]],
                                                       seed=7, shared_name="fed",
                                                       name="shuffled"),
    "fifo_no_shapes": lambda tf: tf.FIFOQueue(5, [tf.int32], shared_name="fed"),
    # Sorted before the dequeue among the function's control outputs.
    "named_before_the_dequeue": lambda tf: tf.FIFOQueue(5, [tf.int32], shared_name="fed",
                                                        name="A_queue"),
    # Named as a node of the trace (in any case), which the trace renames: traced.
    "named_as_a_trace_node": lambda tf: tf.FIFOQueue(5, [tf.int32], shared_name="fed",
                                                     name="NoOp"),
    "named_as_a_trace_node_lower": lambda tf: tf.FIFOQueue(5, [tf.int32], shared_name="fed",
                                                           name="identity_1"),
}
_TRACED_FED_QUEUES = ("named_as_a_trace_node", "named_as_a_trace_node_lower")


@pytest.mark.parametrize("one_device", [True, False], ids=["one_device", "multi_device"])
@pytest.mark.parametrize("kind", list(_FED_QUEUES))
def test_written_fed_dequeues_are_traced_dequeues(kind, one_device, shim, monkeypatch):
    """A fed queue read by tf.data one element per dequeue (FaceNet's input queue under a
    batch), its map written by `pull_maps.dequeued`, is the function and the map op
    tf.data's trace makes, for each kind of queue kernel, named or not, in a name scope,
    with shapes or none, prepared for one device or not; a kernel named as one of the
    trace's own nodes is traced. Either way the build knows it waits on Session runs."""
    import tensorflow as real_tf
    from compat._runtime import build_context, pull_maps

    datasets_created_as_tf_data_does(monkeypatch)  # map ops in the graph

    def built():
        graph = real_tf.Graph()
        if not one_device:
            build_context.functions_as_tf_makes_them(graph)
        with graph.as_default(), shim.name_scope("input"):
            queue = _FED_QUEUES[kind](shim)
            spec = tuple(real_tf.TensorSpec(shape, dtype)
                         for shape, dtype in zip(queue.shapes, queue.dtypes))
            with build_context.building(graph) as frame:
                dataset = queue._fed_dequeues(spec)  # pylint: disable=protected-access
        assert frame.waits_on_runs
        assert dataset.element_spec == spec
        nodes = [node for node in graph.as_graph_def().node if node.op == "MapDataset"]
        written_here = any(_WRITTEN_PULL.fullmatch(function.signature.name)
                           for function in graph.as_graph_def().library.function)
        return ([_as_pull(text) for text in _tf_data_functions(graph)],
                [_as_pull(_canonical(str(node))) for node in nodes], written_here)

    written, written_maps, was_written = built()
    assert was_written == (kind not in _TRACED_FED_QUEUES)
    monkeypatch.setattr(pull_maps, "writable", lambda spec: False)
    traced, traced_maps, was_written = built()
    assert not was_written
    assert written == traced
    assert written_maps == traced_maps
    assert ("experimental_ints_on_device" in written[0]) == one_device


@pytest.mark.parametrize("scope", ["device_name", "device_function", "colocation"])
def test_fed_dequeues_under_device_scopes_are_traced_where_the_trace_takes_them_in(scope, shim):
    """A trace takes a device function's devices and a colocation into its nodes, which a
    written map would not: built under either, the fed dequeue's map is traced. Under a
    device given by name (Inception's `tf.device('/cpu:0')`), which the trace does not take
    in, it is written."""
    import tensorflow as real_tf
    from compat._runtime import build_context

    graph = real_tf.Graph()
    with graph.as_default():
        queue = shim.FIFOQueue(5, [shim.int32], shapes=[[]], shared_name="fed")
        anchor = shim.constant(0, name="anchor")
        context = {"device_name": lambda: graph.device("/device:CPU:0"),
                   "device_function": lambda: graph.device(lambda op: "/device:CPU:0"),
                   "colocation": lambda: graph.colocate_with(anchor)}[scope]
        with context(), build_context.building(graph):
            queue._fed_dequeues((real_tf.TensorSpec([], real_tf.int32),))  # pylint: disable=protected-access
    names = [function.signature.name for function in graph.as_graph_def().library.function]
    written = [name for name in names if _WRITTEN_PULL.fullmatch(name)]
    traced = [name for name in names if "dequeue_in_function" in name]
    assert (len(written), len(traced)) == ((1, 0) if scope == "device_name" else (0, 1))


def _as_pull(text: str) -> str:
    """A traced dequeue's text, its function named as `_canonical` names a written one."""
    return text.replace("__inference_Dataset_map_dequeue_in_function_UID",
                        "__inference_Dataset_map_pull_UID")


def test_readers_of_one_kind_share_one_traced_function(shim, legacy, tmp_path, monkeypatch):
    """Three TFRecordReaders on one filename queue (Inception's readers, in small): the
    reader function their files are flat-mapped through is traced once and used by all
    three (`dataset_functions.reusable`), where TF's path traces three identical ones; the
    records read are TF1's."""
    import tensorflow as real_tf
    from compat._runtime import dataset_functions

    datasets_created_as_tf_data_does(monkeypatch)  # factories alike

    files = []
    for index in range(4):
        files.append(str(tmp_path / f"shard-{index}.tfrecord"))
        with real_tf.io.TFRecordWriter(files[-1]) as writer:
            for record in range(5):
                writer.write(f"{index}-{record}".encode())

    def build(tf):
        queue = tf.train.string_input_producer(files, num_epochs=2, shuffle=False)
        values = [[tf.TFRecordReader().read(queue)[1]] for _ in range(3)]
        return tf.train.batch_join(values, 4, allow_smaller_final_batch=True)

    def reader_functions():
        graph = real_tf.Graph()
        batches = run_stream(shim, build, graph=graph)
        names = [function.signature.name for function in graph.as_graph_def().library.function
                 if "_values_of_units" in function.signature.name]
        return names, _tf_data_functions(graph), batches

    names, functions, batches = reader_functions()
    real_can_trace = dataset_functions.can_trace
    monkeypatch.setattr(dataset_functions, "can_trace", lambda kwargs: False)
    tf_names, tf_functions, _ = reader_functions()
    monkeypatch.setattr(dataset_functions, "can_trace", real_can_trace)
    assert (len(names), len(tf_names)) == (1, 3)
    _repeats_made_once(functions, tf_functions, ("_values_of_units", "Dataset_map_pull"))

    def records(stream):
        return sorted(value for batch in stream for value in batch)
    assert records(batches) == records(run_stream(legacy, build))


def test_pull_ticks_take_no_scope_of_their_first_caller(shim):
    """The tick dataset every pull of a graph shares is made outside the scopes of whichever
    pull came first (a fed batch is built where the user calls it): no control input and
    no device that later pulls would inherit."""
    import tensorflow as real_tf
    from compat._runtime import pull_maps

    graph = real_tf.Graph()
    with graph.as_default():
        marker = real_tf.no_op(name="marker")
        with real_tf.control_dependencies([marker]), real_tf.device("/cpu:0"):
            ticks = pull_maps.ticks()
        assert pull_maps.ticks() is ticks
    made = [op for op in graph.get_operations() if op is not marker]
    assert {op.type for op in made} >= {"TensorDataset", "RepeatDataset"}
    assert all(not op.control_inputs and not op.device for op in made)
