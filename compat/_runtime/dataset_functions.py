"""The shim's tf.data functions, traced as tf.data traces them minus tf.function's dispatch.

tf.data turns every `map`/`flat_map`/`filter`... function into a graph function through
`StructuredFunctionWrapper`, which wraps it in a `tf.function` and asks for its one concrete
function: a polymorphic function, its function type, a trace cache and a second pass through
that cache, for a function traced exactly once. That machinery was ~60% of the wrapper's
~3 ms per function, and an Inception-style input traces 22 of them when its graph first runs.

`trace` makes the same function by the steps `tf.function` takes for a new trace: the
argument placeholders named as `tf.function` names them, the body traced into a `FuncGraph`
with automatic control dependencies, the `ConcreteFunction` made from that graph with the
same attributes (`_tf_data_function` and the caller's), its graph kept alive as
`get_concrete_function` keeps it. The FunctionDef is the same, but for its uid-numbered name
(tested). Only the shim's own builds use it (see `build_context`), whose functions create no
variables, ask for no XLA and take no outer-graph seed (so tf.function's variable-creator
scope, XLA context and seed warning have nothing to do); anything unusual (legacy functions,
tf.data's debug mode, eager execution, functions run eagerly, a graph transform or function
callback registered, as tfdbg registers one) takes TF's path.
"""
from __future__ import annotations

from tensorflow.python.data.ops import structured_function
from tensorflow.python.eager.polymorphic_function import concrete_function, transform
from tensorflow.python.framework import func_graph

# What tf.data's own wrapper uses, as it imports it.
autograph = structured_function.autograph
autograph_ctx = structured_function.autograph_ctx
context = structured_function.context
debug_mode = structured_function.debug_mode
def_function = structured_function.def_function
function_utils = structured_function.function_utils
ops = structured_function.ops
structure = structured_function.structure
variable_utils = structured_function.variable_utils


def can_trace(kwargs) -> bool:
    """Whether `trace` makes what TF would for a wrapper built with these keyword arguments."""
    return (not kwargs.get("use_legacy_function") and not debug_mode.DEBUG_MODE
            and not def_function.functions_run_eagerly() and not context.executing_eagerly()
            and not transform.FUNC_GRAPH_TRANSFORMS
            and not transform.CONCRETE_FUNCTION_CALLBACKS)


def _input_structure(dataset, input_classes, input_shapes, input_types, input_structure):
    """The arguments' structure, from whichever of TF's ways the caller gave it."""
    if input_structure is not None:
        return input_structure
    if dataset is not None:
        return dataset.element_spec
    return structure.convert_legacy_structure(input_types, input_shapes, input_classes)


def _function_name(func, transformation_name: str) -> str:
    readable = transformation_name.replace(".", "_")[:-2] if len(transformation_name) > 2 else ""
    name = "_".join([readable, function_utils.get_func_name(func)])
    for symbol in ["<", ">", "\\", "'", " "]:
        name = name.replace(symbol, "")
    return name


def reusable(func, key):
    """`func`, traced once per graph and `key` (for the same transformation, arguments and
    preparation): later uses take that trace's function, as one traced function can serve
    several datasets. Only for a function whose body depends on nothing but `key` and its
    arguments (Inception's 4 readers of one kind each flat_map the same reader op over their
    files: one trace, ~3-5 ms, instead of 4)."""
    def reused(*args):
        return func(*args)
    reused.__name__ = function_utils.get_func_name(func)  # the traced function's name
    reused._compat_reuse_key = key  # pylint: disable=protected-access
    return reused


def trace(wrapper, func, transformation_name, dataset=None, input_classes=None,
          input_shapes=None, input_types=None, input_structure=None, add_to_graph=True,
          use_legacy_function=False, defun_kwargs=None) -> None:
    """Fill `wrapper` (a `StructuredFunctionWrapper` being initialized) as its `__init__`
    would, for the arguments `can_trace` accepts."""
    del use_legacy_function  # False: see `can_trace`
    # pylint: disable=protected-access
    wrapper._input_structure = _input_structure(dataset, input_classes, input_shapes,
                                                input_types, input_structure)
    wrapper._func = func
    reuse_key = getattr(func, "_compat_reuse_key", None)
    graph = ops.get_default_graph()
    if len(graph._device_function_stack) or len(graph._colocation_stack):
        reuse_key = None  # a trace takes in the device and colocation scopes it is made in
    if reuse_key is not None:
        reused = getattr(graph, "_compat_reused_functions", None)
        if reused is None:
            reused = graph._compat_reused_functions = {}
        reuse_key = (reuse_key, transformation_name, wrapper._input_structure,
                     tuple(sorted((defun_kwargs or {}).items())))
        try:
            found = reused.get(reuse_key)
        except TypeError:  # a structure that cannot be a key: traced every time
            reuse_key = found = None
        if found is not None:
            wrapper._function, wrapper._output_structure = found
            if add_to_graph:
                wrapper._function.add_to_graph(graph)
            return
    _trace(wrapper, func, transformation_name, add_to_graph, defun_kwargs)
    if reuse_key is not None and not wrapper._function.captured_inputs:
        reused[reuse_key] = wrapper._function, wrapper._output_structure
    # pylint: enable=protected-access


def _trace(wrapper, func, transformation_name, add_to_graph, defun_kwargs) -> None:
    # pylint: disable=protected-access
    name = _function_name(func, transformation_name)
    autograph_status = autograph_ctx.control_status_ctx()

    def traced(*args):
        nested_args = structure.from_compatible_tensor_list(wrapper._input_structure, args)
        if not structured_function._should_unpack(nested_args):
            nested_args = (nested_args,)
        returned = autograph.tf_convert(wrapper._func, autograph_status)(*nested_args)
        returned = variable_utils.convert_variables_to_tensors(returned)
        if structured_function._should_pack(returned):
            returned = tuple(returned)
        try:
            wrapper._output_structure = structure.type_spec_from_value(returned)
        except (ValueError, TypeError) as e:
            raise TypeError(f"Unsupported return value from function passed to "
                            f"{transformation_name}: {returned}.") from e
        flat = structure.to_tensor_list(wrapper._output_structure, returned)
        return [ops.convert_to_tensor(tensor) for tensor in flat]

    specs = structure.get_flat_tensor_specs(wrapper._input_structure)
    graph = func_graph.func_graph_from_py_func(
        name, traced, specs, {}, add_control_dependencies=True,
        arg_names=[f"args_{index}" for index in range(len(specs))])
    attributes = {**(defun_kwargs or {}), "_tf_data_function": True}
    wrapper._function = concrete_function.ConcreteFunction.from_func_graph(
        graph, None, attributes, shared_func_graph=False)
    # As get_concrete_function does: tensors and datasets made in the function's graph stay
    # usable after the function object is gone.
    wrapper._function._garbage_collector.release()
    if add_to_graph:
        wrapper._function.add_to_graph(ops.get_default_graph())
    # pylint: enable=protected-access
