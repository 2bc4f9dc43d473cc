"""The user's per-element ops optimized once per graph, as the Session's grappler optimizes
them, not again at every new run signature.

The user's ops run in functions of their own (`lifting.called_as_function`), which the
Session's grappler optimizes as TF1's Session optimizes its graph: that is what makes their
floats TF1's. But a Session optimizes every function a run can reach each time it prepares a
new run signature, although the pipeline's iterator was made at the first: a second fetch
signature (a step, then a step that also fetches a summary) took the shim 47-97 ms for
CIFAR-10's input and 105-219 ms for the Inception training input, TF1 10-22 ms (now 25-49
and 64-77 ms: each new run still passes the whole function library through grappler).

So each such function is optimized here once, by the same grappler
(`tf_optimizer.OptimizeGraph`), as the Session would optimize it (a function of the library a
run reaches), and just before a Session first extends with it (`graph_hooks`), its definition
in the graph is replaced by the result, marked as tf.data marks its functions: the Session's
grappler leaves it alone from then on, and tf.data runs it as it is. The float tests give
TF1's bits with every function prepared; marked without the pass, 50 of their 88 differ.

The pass starts on a thread as soon as the function is made (grappler lets the GIL go), so
that for a pipeline built with the graph (FaceNet's input) it runs while the rest of the
graph is built and the Session made, under default options. A Session whose graph options
are others optimizes the function again under its own, before it extends.

Only functions of at least `_MIN_NODES` nodes are worth it: a pass costs ~5 ms more than the
Session spends on a small function. A function that calls functions (v2 control flow) is
left to the Session: a pass may specialize its callees under new names. A later trace of the
same computation calls the prepared function by its name, which the graph has. The
functions belong to the graph, so a second Session with other graph options runs them as
the first Session's options optimized them.
"""
from __future__ import annotations

import threading

from tensorflow.core.framework import function_pb2, graph_pb2, types_pb2
from tensorflow.core.protobuf import config_pb2, meta_graph_pb2
from tensorflow.python.framework import func_graph as _func_graph
from tensorflow.python.framework import function as legacy_function
from tensorflow.python.framework import op_def_registry
from tensorflow.python.framework import ops as _ops
from tensorflow.python.platform import tf_logging as logging

# Smaller functions cost the Session less per run signature than a pass of their own.
_MIN_NODES = 64
# A pass not done by then is left to the Session (which then optimizes the function itself).
_PASS_TIMEOUT_S = 60
_DEFAULT_CONFIG = config_pb2.ConfigProto()
_cluster_lock = threading.Lock()
_pass_lock = threading.Lock()
_clusters: list = []


class _Pass:
    """One function's pass under default options, on a thread of its own."""

    __slots__ = ("definition", "done", "result", "error")

    def __init__(self, definition, versions):
        self.definition = definition
        self.done = threading.Event()
        self.result = None  # the optimized FunctionDef, or None
        self.error = None
        threading.Thread(target=self._run, args=(versions,), daemon=True,
                         name="compat_prepare_function").start()

    def _run(self, versions):
        try:
            self.result = _optimized([self.definition], versions, _DEFAULT_CONFIG).get(
                self.definition.signature.name)
        except Exception as error:  # noqa: BLE001 - reported where the result is used
            self.error = error
        finally:
            self.done.set()


def note(call: _ops.Operation) -> None:
    """Note that the pipelines of `call`'s graph call a legacy function of the user's ops
    (`call` is that call) for the Session's grappler to optimize; start its pass if it is
    worth one."""
    function = call.graph._get_function(call.type)  # pylint: disable=protected-access
    if function is not None:  # else not a function call
        note_function(function, call.graph)


def note_function(function, graph) -> None:
    """`note` for a call of `function` (a legacy function of the user's ops) written into a
    function of `graph` rather than made there by a trace."""
    while isinstance(graph, _func_graph.FuncGraph) and graph.outer_graph is not None:
        graph = graph.outer_graph
    if isinstance(graph, _func_graph.FuncGraph):
        return  # in a function's graph, which no Session runs
    passes = getattr(graph, "_compat_function_passes", None)
    if passes is None:
        passes = graph._compat_function_passes = {}  # pylint: disable=protected-access
    if function.name in passes:  # every name prepared was noted here first
        return
    definition = function.definition
    worth_it = len(definition.node_def) >= _MIN_NODES and not _calls_functions(definition)
    passes[function.name] = _Pass(definition, graph.graph_def_versions) if worth_it else None


def prepare(graph, session) -> None:
    """Replace the functions whose passes were started in `graph` by their results (see the
    module docstring); called before `session` extends its copy of the graph."""
    passes = getattr(graph, "_compat_function_passes", None)
    names = [name for name, started in (passes or {}).items() if started is not None]
    if not names:
        return
    started = [passes[name] for name in names]
    passes.update(dict.fromkeys(names))  # never again: the Session has them now
    config = session._config or _DEFAULT_CONFIG  # pylint: disable=protected-access
    if _grappler_options(config) == _grappler_options(_DEFAULT_CONFIG):
        results = []
        for one in started:
            if not one.done.wait(_PASS_TIMEOUT_S):
                logging.vlog(1, "compat.v1: a function left to the Session's grappler: its "
                             "pass took over %s s", _PASS_TIMEOUT_S)
                continue
            results.append(one.result)
            if one.error is not None:
                logging.vlog(1, "compat.v1: a function left to the Session's grappler: %s",
                             one.error)
    else:
        definitions = [one.definition for one in started]
        try:
            optimized = _optimized(definitions, graph.graph_def_versions, config)
        except Exception as error:  # noqa: BLE001 - the Session optimizes them as before
            logging.vlog(1, "compat.v1: functions left to the Session's grappler: %s", error)
            return
        results = [optimized.get(definition.signature.name) for definition in definitions]
    _replace(graph, [result for result in results
                     if result is not None and not _calls_functions(result)])


def _grappler_options(config: config_pb2.ConfigProto):
    """What of a Session's ConfigProto its grappler reads."""
    return (config.graph_options.SerializeToString(deterministic=True),
            config.experimental.SerializeToString(deterministic=True))


def _replace(graph, results) -> None:
    if not results:
        return
    prepared = _prepared_in(graph)
    was_finalized = graph.finalized
    if was_finalized:
        graph._unsafe_unfinalize()  # pylint: disable=protected-access
    try:
        for result in results:
            name = result.signature.name
            if not graph._is_function(name):  # pylint: disable=protected-access
                continue
            result.attr["_tf_data_function"].b = True
            made = legacy_function._from_definition(result)  # pylint: disable=protected-access
            graph._remove_function(name)  # pylint: disable=protected-access
            prepared.add(name)
            graph._add_function(made)  # pylint: disable=protected-access
    finally:
        if was_finalized:
            graph.finalize()


def _prepared_in(graph) -> set:
    """The names of the functions prepared in `graph`."""
    prepared = getattr(graph, "_compat_prepared_functions", None)
    if prepared is None:
        prepared = graph._compat_prepared_functions = set()  # pylint: disable=protected-access
    return prepared


def _calls_functions(definition: function_pb2.FunctionDef) -> bool:
    for node in definition.node_def:
        if op_def_registry.get(node.op) is None:
            return True
        for value in node.attr.values():
            if value.HasField("func") or value.list.func:
                return True
    return False


def _optimized(definitions, versions, config) -> dict:
    """The definitions as the Session's grappler optimizes functions a run reaches: each
    named by a node's function attribute, as a one-shot iterator names its factory."""
    item = graph_pb2.GraphDef()
    item.versions.CopyFrom(versions)
    item.library.function.extend(definitions)
    for index, definition in enumerate(definitions):
        node = item.node.add(name=f"prepared_{index}", op="OneShotIterator")
        node.attr["dataset_factory"].func.name = definition.signature.name
        node.attr["output_types"].list.type.append(types_pb2.DT_INT32)
        node.attr["output_shapes"].list.shape.add()
    meta_graph = meta_graph_pb2.MetaGraphDef(graph_def=item)
    meta_graph.collection_def["train_op"].node_list.value.extend(
        node.name for node in item.node)
    from tensorflow.python.grappler import tf_optimizer  # pylint: disable=import-outside-toplevel
    with _pass_lock:  # one pass at a time over the one cluster
        result = tf_optimizer.OptimizeGraph(config, meta_graph, verbose=False,
                                            cluster=_cluster())
    return {function.signature.name: function for function in result.library.function}


def _cluster():
    """A grappler cluster of this process's CPU, as a Session's grappler sees its devices
    (made once: a virtual cluster, with no session or devices of its own)."""
    with _cluster_lock:
        if not _clusters:
            from tensorflow.core.protobuf import device_properties_pb2  # pylint: disable=import-outside-toplevel
            from tensorflow.python.grappler import cluster  # pylint: disable=import-outside-toplevel
            cpu = device_properties_pb2.NamedDevice(
                name="/job:localhost/replica:0/task:0/device:CPU:0",
                properties=device_properties_pb2.DeviceProperties(type="CPU"))
            _clusters.append(cluster.Cluster(devices=[cpu]))
        return _clusters[0]
