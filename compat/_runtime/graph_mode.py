"""Checks shared by the graph-mode pipeline builders."""
import tensorflow as tf


def require_graph_mode(api: str, error=RuntimeError) -> None:
    """TF1's queue APIs raise in eager mode (producers RuntimeError, batching ValueError);
    so do ours, with the same types, saying what to do instead."""
    if tf.executing_eagerly():
        raise error(
            f"{api}: queue-based input pipelines need graph mode, and eager execution is "
            "enabled. Call tf.disable_v2_behavior() (or build inside "
            "`with tf.Graph().as_default():`) to run legacy code unchanged, or hand the "
            "pipeline-building code to TF2 as a tf.data.Dataset: "
            "`compat.to_dataset(build)`, where build(tf) is that code taking the tf module.")
