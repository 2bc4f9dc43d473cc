"""compat-migrate's implementation: legacy TF1 input functions rewritten as plain tf.data.

Layers, each importing only the ones above it in this list:

- `records`: the frozen results (what was migrated, what was not and why).
- `statements`: a function's statements as source text and the names they read and bind.
- `recognize`: a function's pipeline, read from its statements (producer, reader, element
  code, batching, code on the batch), or the reason it cannot be followed.
- `dataset_code`: the tf.data statements that reproduce each TF1 API's semantics.
- `emit`: a recognized pipeline as the new function's source.
- `spelling`: the element code's TF1 spellings as TF2 ones, keeping TF1's values.
- `module`: a whole source file migrated; `test_file`: the harness tests for it.
- `cli`: the command line (the only place that prints).

The public surface is `compat.migrate`.
"""
