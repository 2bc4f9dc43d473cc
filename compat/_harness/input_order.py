"""Each side's input order, for the window and stats levels.

TF1's order after a shuffle queue depends on thread timing and seeds; what it guarantees is
relative to the order elements were enqueued in (the *input order*). Each side is checked
against its own input order: the legacy pipeline re-run with every shuffle_batch turned into
a single-threaded batch; a candidate built from the same function (the shim, another module,
`to_dataset`) likewise; a tf.data candidate by its own dataset with its last shuffle taken
out (its other shuffles, e.g. of files, kept with their seeds). Never the other side's: a
tf.data file shuffle never reproduces TF1's seeded file order.
"""
from __future__ import annotations

import math
import types

from compat._harness import levels as L
from compat._harness.runner import legacy_module, run_side
from compat._harness.streams import Stream


def no_shuffle_module(tf):
    """``tf`` with shuffle_batch* replaced by single-threaded batch*: the input order."""
    train = tf.train

    def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue=0, num_threads=1,
                      seed=None, enqueue_many=False, shapes=None,
                      allow_smaller_final_batch=False, shared_name=None, name=None):
        return train.batch(tensors, batch_size, num_threads=1, capacity=capacity,
                           enqueue_many=enqueue_many, shapes=shapes,
                           allow_smaller_final_batch=True, shared_name=shared_name, name=name)

    def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input,
                            num_threads=1, seed=None, enqueue_many=False, shapes=None,
                            allow_smaller_final_batch=False, shared_name=None, name=None):
        return train.maybe_batch(tensors, keep_input, batch_size, num_threads=1,
                                 capacity=capacity, enqueue_many=enqueue_many, shapes=shapes,
                                 allow_smaller_final_batch=True, shared_name=shared_name,
                                 name=name)

    def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
              dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
        return train.batch(tensors, batch_size, num_threads=1, capacity=capacity,
                           enqueue_many=enqueue_many, shapes=shapes, dynamic_pad=dynamic_pad,
                           allow_smaller_final_batch=True, shared_name=shared_name, name=name)

    def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32,
                    enqueue_many=False, shapes=None, dynamic_pad=False,
                    allow_smaller_final_batch=False, shared_name=None, name=None):
        return train.maybe_batch(tensors, keep_input, batch_size, num_threads=1,
                                 capacity=capacity, enqueue_many=enqueue_many, shapes=shapes,
                                 dynamic_pad=dynamic_pad, allow_smaller_final_batch=True,
                                 shared_name=shared_name, name=name)

    def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None,
                   dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None,
                   name=None, **_):
        return train.batch_join(tensors_list, batch_size, capacity=capacity,
                                enqueue_many=enqueue_many, shapes=shapes, dynamic_pad=dynamic_pad,
                                allow_smaller_final_batch=True, shared_name=shared_name,
                                name=name)

    def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue=0, seed=None,
                           enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                           shared_name=None, name=None):
        return batch_join(tensors_list, batch_size, capacity=capacity, enqueue_many=enqueue_many,
                          shapes=shapes, shared_name=shared_name, name=name)

    def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False,
                         shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
                         shared_name=None, name=None):
        return train.maybe_batch_join(tensors_list, keep_input, batch_size, capacity=capacity,
                                      enqueue_many=enqueue_many, shapes=shapes,
                                      dynamic_pad=dynamic_pad, allow_smaller_final_batch=True,
                                      shared_name=shared_name, name=name)

    def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue,
                                 keep_input, seed=None, enqueue_many=False, shapes=None,
                                 allow_smaller_final_batch=False, shared_name=None, name=None):
        return maybe_batch_join(tensors_list, keep_input, batch_size, capacity=capacity,
                                enqueue_many=enqueue_many, shapes=shapes,
                                shared_name=shared_name, name=name)

    train_proxy = _Proxy(train, shuffle_batch=shuffle_batch, batch=batch,
                         maybe_shuffle_batch=maybe_shuffle_batch, maybe_batch=maybe_batch,
                         batch_join=batch_join, shuffle_batch_join=shuffle_batch_join,
                         maybe_batch_join=maybe_batch_join,
                         maybe_shuffle_batch_join=maybe_shuffle_batch_join)
    return _Proxy(tf, train=train_proxy, __name__="tensorflow.compat.v1")


class _Proxy(types.ModuleType):
    def __init__(self, base, **overrides):
        super().__init__(overrides.pop("__name__", getattr(base, "__name__", "proxy")))
        self.__dict__["_base"] = base
        self.__dict__.update(overrides)

    def __getattr__(self, name):
        return getattr(self.__dict__["_base"], name)


class Inputs:
    """The pipeline's input, from the legacy build re-run with shuffle queues replaced by
    single-threaded ``batch`` (run at most once, and only when a level needs it)."""

    def __init__(self, build, facts, legacy_run, graph_seed, timeout, legacy):
        self.build, self.facts, self.legacy_run = build, facts, legacy_run
        self.graph_seed, self.timeout, self.legacy = graph_seed, timeout, legacy
        self._rerun = None

    def rerun(self):
        if self._rerun is None:
            stream = self.legacy_run.stream
            batches = None
            if stream.truncated:
                per_batch = max(1, max(stream.batch_sizes() or [1]))
                extra = self.facts.window_capacity + self.facts.window_slack
                batches = len(stream.batches) + math.ceil(extra / per_batch) + 2
            self._rerun = run_side(self.build, no_shuffle_module(legacy_module()),
                                   max_batches=batches, graph_seed=self.graph_seed,
                                   timeout=self.timeout, origin="input order")
        return self._rerun

    def _can_rerun(self) -> bool:
        # A golden file may come from a TensorFlow we no longer have queues in: its input
        # order must be given (source_index=/source=), not re-run.
        from compat._harness.golden import Golden
        return not isinstance(self.legacy, Golden)

    def everything(self):
        """All input elements in some order (the order may differ from run to run)."""
        if not self._can_rerun():
            return None
        run = self.rerun()
        if run.stream.error or run.facts.shuffle_queues:
            return None
        return run.stream.with_options(batched=self.legacy_run.stream.batched,
                                       unpad=self.legacy_run.stream.unpad)

    def ordered(self, source):
        """(input order stream or None, note)."""
        facts, stream = self.facts, self.legacy_run.stream
        if source is not None:
            if isinstance(source, (Stream, list, tuple)):
                return L.as_stream(source, batched=stream.batched), None
            run = run_side(source, legacy_module(), max_batches=None,
                           graph_seed=self.graph_seed, timeout=self.timeout, origin="source")
            if run.stream.error:
                return None, f"source order run failed: {run.stream.error}"
            return run.stream, None
        if not (facts.shuffle_queues or facts.max_enqueue_threads > 1):
            return None, None
        if facts.joins:
            return None, "input order unknown: *_join readers interleave nondeterministically"
        if facts.unseeded_shuffles and self.graph_seed is None:
            return None, ("input order unknown: producers shuffle without a seed; window/stats "
                          "need graph_seed=, seeded producers, source= or source_index=")
        if not self._can_rerun():
            return None, "input order unknown for a recorded legacy side: pass source_index="
        run = self.rerun()
        usable = (not run.stream.error and not run.facts.shuffle_queues
                  and run.facts.max_enqueue_threads <= 1 and not run.facts.joins)
        if not usable:
            return None, ("input order unknown: the pipeline could not be re-run without "
                          "shuffling" + (f" ({run.stream.error})" if run.stream.error else ""))
        return run.stream.with_options(batched=stream.batched, unpad=stream.unpad), \
            "input order taken from the legacy pipeline re-run with shuffle_batch -> batch"


# ------------------------------------------------------------------ the candidate's own order
_SHUFFLES = ("ShuffleDataset", "ShuffleDatasetV2", "ShuffleDatasetV3",
             "ShuffleAndRepeatDataset", "ShuffleAndRepeatDatasetV2")


def candidate_order(candidate, build, facts, graph_seed, timeout, batched, unpad):
    """(the candidate's own input order as a Stream, or None; why it is None, or a note).

    candidate: what `compare` got: a tf module (the build runs under it), "to_dataset" (the
    build through the shim), or a callable (a tf.data candidate, or a build of its own)."""
    from compat._harness.runner import takes_tf_argument
    if isinstance(candidate, str) and candidate == "to_dataset":
        from compat._harness.runner import shim_module
        candidate = shim_module()
    if isinstance(candidate, types.ModuleType):
        if facts.unseeded_shuffles and graph_seed is None:
            return None, ("the candidate's input order is unknown: its producers shuffle "
                          "without a seed (pass graph_seed=, source= or source_index=)")
        run = run_side(build, no_shuffle_module(candidate), graph_seed=graph_seed,
                       timeout=timeout, origin="candidate input order")
        return _usable(run, batched, unpad, "the candidate's build re-run without shuffle "
                                             "queues")
    if not callable(candidate):
        return None, ("the candidate's input order is unknown (a recorded stream): pass "
                      "source_index=")
    built = _dataset_without_last_shuffle(candidate, graph_seed, takes_tf_argument(candidate))
    if isinstance(built, str):
        return None, built
    if built is None:  # not a dataset: a build of its own, written against TF1's queues
        run = run_side(candidate, no_shuffle_module(legacy_module()), graph_seed=graph_seed,
                       timeout=timeout, origin="candidate input order")
        return _usable(run, batched, unpad, "the candidate re-run without shuffle queues")
    graph_def, element_spec = built
    run = run_side(lambda tf: _rebuilt(graph_def, element_spec), None, graph_seed=graph_seed,
                   timeout=timeout, origin="candidate input order")
    return _usable(run, batched, unpad, "the candidate's dataset without its last shuffle")


def _usable(run, batched, unpad, what):
    if run.stream.error:
        return None, f"the candidate's input order is unknown: {what} failed ({run.stream.error})"
    if run.facts.shuffle_queues or run.facts.max_enqueue_threads > 1 or run.facts.joins:
        return None, f"the candidate's input order is unknown: {what} still reorders"
    return run.stream.with_options(batched=batched, unpad=unpad), f"candidate input order: {what}"


def _dataset_without_last_shuffle(candidate, graph_seed, takes_tf):
    """(GraphDef, element_spec) of the candidate's dataset with the shuffle nearest its output
    taken out; None if the candidate gives no dataset; a str saying why it cannot be done."""
    tf = legacy_module()
    from compat._bridge import dataset_graphs
    from compat._harness.runner import _is_dataset  # pylint: disable=protected-access
    with tf.Graph().as_default():
        try:
            if graph_seed is not None:
                tf.set_random_seed(graph_seed)
            dataset = candidate(tf) if takes_tf else candidate()
            if not _is_dataset(dataset):
                return None
            graph_def = dataset_graphs.serialized(dataset)
        except Exception as error:  # noqa: BLE001 - the reason is reported, not raised
            return f"the candidate's input order is unknown: its dataset could not be read ({error})"
        element_spec = dataset.element_spec
    nodes = {node.name: node for node in graph_def.node}
    every_node = list(graph_def.node) + [node for function in graph_def.library.function
                                         for node in function.node_def]
    if any(node.op in _SHUFFLES and not _seeded(node, nodes) for node in every_node):
        return ("the candidate's input order is unknown: it shuffles without a seed (pass "
                "graph_seed=, seed its shuffles, or pass source_index=)")
    node = dataset_graphs.producer(nodes, dataset_graphs.output_node(graph_def).input[0])
    while node is not None and node.op not in _SHUFFLES:
        node = dataset_graphs.producer(nodes, node.input[0]) if node.input else None
    if node is None:
        return graph_def, element_spec  # no shuffle: the stream is its own input order
    if node.op.startswith("ShuffleAndRepeat"):
        return "the candidate's input order is unknown: its last shuffle is fused with repeat"
    replacement = node.input[0]
    for other in graph_def.node:
        other.input[:] = [replacement if dataset_graphs.producer(nodes, reference) is node
                          and not reference.startswith("^") else reference
                          for reference in other.input]
    return graph_def, element_spec


def _seeded(node, nodes) -> bool:
    """Whether a shuffle node has a fixed seed pair (TF's (0, 0) means "draw one"). Seeds
    are looked up among the top-level nodes: a shuffle inside a function counts as unseeded,
    which only makes its input order unknown."""
    from compat._bridge import dataset_graphs
    from tensorflow.python.framework import tensor_util
    if node.op not in ("ShuffleDataset", "ShuffleDatasetV3", "ShuffleAndRepeatDataset",
                       "ShuffleAndRepeatDatasetV2"):
        return False
    seeds = []
    for reference in node.input[2:4]:
        constant = dataset_graphs.producer(nodes, reference)
        if constant is None or constant.op != "Const":
            return False
        seeds.append(int(tensor_util.MakeNdarray(constant.attr["value"].tensor)))
    return any(seeds)


def _rebuilt(graph_def, element_spec):
    from compat._bridge import dataset_graphs
    return dataset_graphs.dataset_of(graph_def, element_spec)
