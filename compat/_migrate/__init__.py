"""compat-migrate's implementation: legacy TF1 input functions rewritten as plain tf.data.

Modules, each importing only ones above it in this list:

- `records`: the frozen results (what was migrated, what was not and why).
- `statements`: a function's statements as source text and the names they read and bind.
- `source_file`: what the whole file tells (the legacy API each call reaches, through the
  checker's name resolution; its helper functions), and `Unfollowable`.
- `inlining`: helpers that read a queue or build a batch, inlined where they are called;
  `batch_join` over copies of a reading helper.
- `hand_queues`: queues built by hand and filled by QueueRunners, followed as batching.
- `recognize`: a function's pipeline, read from its statements (producer, reader, element
  code, batching, code on the batch), or the reason it cannot be followed.
- `dataset_code`: the tf.data statements that reproduce each TF1 API's semantics.
- `batched_code`: element code rewritten to run on a batch of records, where that is safe.
- `emit`: a recognized pipeline as the new function's source.
- `spelling`: the TF1 spellings as TF2 ones (tf_upgrade_v2), keeping TF1's values.
- `module`: a whole source file migrated; `test_file`: the harness tests for it.
- `cli`: the command line (the only place that prints).

The public surface is `compat.migrate`. Nothing here imports TensorFlow except `spelling`,
when it renames: `module.rewritable` (what compat-check reports) runs without it.
"""
