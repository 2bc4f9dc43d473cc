"""Graph functions made in C from a GraphDef, without TF's Python function builders (Defun,
tf.function), which create a Python object per op and trace the body in Python: ~1-3 ms per
function, most of a small pipeline's first Session run. A function of one call
(`calling`) is written as a FunctionDef directly."""
from __future__ import annotations

import tensorflow as tf
from tensorflow.core.framework import function_pb2, graph_pb2
from tensorflow.python.client import pywrap_tf_session as c_api
from tensorflow.python.framework import c_api_util
from tensorflow.python.framework import function as legacy_function


def of_graph_def(graph_def: graph_pb2.GraphDef, inputs, outputs, name: str, prefix: str = "",
                 skipped_by_grappler: bool = False):
    """A legacy function (`_DefinedFunction`) of every node of `graph_def`, taking the tensors
    `inputs` (Placeholder nodes) and returning `outputs`, both given as (node name, output
    index); named `name` plus a hash of its body. The nodes are imported under `prefix`
    (node names in the FunctionDef are those of the import). A GraphDef TF cannot import
    raises ValueError, as `import_graph_def` reports it.

    skipped_by_grappler: mark it as tf.data marks its functions, which the Session's grappler
    leaves alone, and as never to be inlined into its callers (see `dataset_factories`)."""
    scratch = tf.Graph()
    options = c_api.TF_NewImportGraphDefOptions()
    try:
        if prefix:
            c_api.TF_ImportGraphDefOptionsSetPrefix(options, prefix)
        # A node may be colocated with one left outside (as in the graph it was copied from).
        c_api.TF_ImportGraphDefOptionsSetValidateColocationConstraints(options, False)
        for node, index in list(inputs) + list(outputs):
            c_api.TF_ImportGraphDefOptionsAddReturnOutput(options, node, index)
        with c_api_util.tf_buffer(graph_def.SerializeToString()) as serialized, \
                scratch._c_graph.get() as c_graph:  # pylint: disable=protected-access
            try:
                results = c_api.TF_GraphImportGraphDefWithResults(c_graph, serialized, options)
            except tf.errors.InvalidArgumentError as error:
                raise ValueError(str(error)) from None
            results = c_api_util.ScopedTFImportGraphDefResults(results)
            returned = c_api.TF_ImportGraphDefResultsReturnOutputs(results.results)
            made = c_api_util.ScopedTFFunction(c_api.TF_GraphToFunction_wrapper(
                c_graph, name, True, None, returned[:len(inputs)], returned[len(inputs):],
                [], [], [], None, None), name)
    finally:
        c_api.TF_DeleteImportGraphDefOptions(options)
    with c_api_util.tf_buffer() as buffer, made.get() as c_function:
        c_api.TF_FunctionToFunctionDef(c_function, buffer)
        definition = function_pb2.FunctionDef.FromString(c_api.TF_GetBuffer(buffer))
    if skipped_by_grappler:
        definition.attr["_tf_data_function"].b = True
        definition.attr["_noinline"].b = True
    return legacy_function._from_definition(definition)  # pylint: disable=protected-access


def calling(callee, name: str):
    """A legacy function named `name` of one node calling the function `callee` (a
    FunctionDef of no inputs and one output) and returning its output: the FunctionDef
    `of_graph_def` makes of such a GraphDef, written directly (importing the GraphDef
    imported the callee, with all its constants, once more: ~1.5-2 ms of a JPEG folder's
    first run)."""
    returned = callee.signature.output_arg[0]
    definition = function_pb2.FunctionDef()
    definition.signature.name = name
    definition.signature.output_arg.add(name="made", type=returned.type)
    definition.signature.is_stateful = callee.signature.is_stateful
    definition.node_def.add(name="made_0", op=callee.signature.name)
    definition.ret["made"] = f"made_0:{returned.name}:0"
    return legacy_function._from_definition(definition)  # pylint: disable=protected-access


def add_once(function, graph: tf.Graph) -> None:
    """Add `function` (made once per process) to `graph` unless it is there already."""
    if not graph._is_function(function.name):  # pylint: disable=protected-access
        function.add_to_graph(graph)
