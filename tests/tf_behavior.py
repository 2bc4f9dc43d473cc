"""Switching a test process between TF1 behaviour and TF2 graph mode.

TF1 programs call `tf.disable_v2_behavior()` (v1 control flow: Switch/Merge, Enter/Exit;
ref variables; v1 shapes and datasets); TF2 code builds graphs with v2 control flow (If,
While). Every runtime test runs under both: the TF2 tests first, then the process switches once with
TF's own `disable_v2_behavior()`, as a TF1 program does at its start. Going back (only if
pytest interleaves the two) calls `enable_v2_behavior()` after forgetting the global default
graph that TF would otherwise refuse to leave (tests build their own graphs).
"""
import tensorflow as tf
from tensorflow.python.framework import ops

MODES = ("tf1", "tf2")


def use(mode: str) -> None:
    if mode == "tf1":
        tf.compat.v1.disable_v2_behavior()
    elif mode == "tf2":
        ops._default_graph_stack._global_default_graph = None  # pylint: disable=protected-access
        tf.compat.v1.enable_v2_behavior()
    else:
        raise ValueError(f"unknown TF behaviour {mode!r}; expected one of {MODES}")


def current() -> dict:
    """The switches that differ between the two behaviours, as seen now."""
    from tensorflow.python import tf2
    from tensorflow.python.data.ops import dataset_ops
    from tensorflow.python.framework import tensor_shape
    from tensorflow.python.ops import control_flow_util, resource_variables_toggle
    return {
        "tf2": tf2.enabled(),
        "eager": tf.executing_eagerly(),
        "v2_tensorshape": tensor_shape._TENSORSHAPE_V2_OVERRIDE,  # pylint: disable=protected-access
        "control_flow_v2": control_flow_util.ENABLE_CONTROL_FLOW_V2,
        "resource_variables": resource_variables_toggle.resource_variables_enabled(),
        "dataset_class": dataset_ops.Dataset.__name__,
    }
