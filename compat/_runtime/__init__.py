"""Private runtime of the shim: plan nodes, lifting, compilation to tf.data."""
