"""One function for the copies of a computation that differ only in their ops' names.

TF1 input code builds its per-element computation once per thread: an Inception-style input
(slim's `inception_preprocessing`, whose random selectors pick the resize method and colour
order) calls its image preprocessing for each of 4 preprocessing threads, so the graph holds
4 copies of ~250 ops whose names alone differ (`distort_image`, `distort_image_1`...);
im2txt's 4 threads build 2 computations (the colour order follows `thread_id % 2`), twice
each. Lifted one by one, each copy became a function of its own: made in C anew (~5 ms
each), sent to the Session anew, and optimized anew by the Session's grappler at the first
fetch (~40-90 ms for each of the Inception-style copies, measured).

Here a lifted computation whose GraphDef equals one already made for this graph once names
are set aside (the same ops in the same order, with the same attributes, edges, arguments
and results) calls that function instead. The values are the same: the ops, their
attributes (random seeds included) and grappler's rewrites of the body are.

What differs is which kernel runs the ops: the copies' calls now share one instance of the
function, so one kernel per op serves them all. That is the same computation only where a
kernel keeps no state of its own (`kernel_state_free`): stateless ops without seeds,
assertions, lookup tables found by name (every copy opens the same table), and random draws
without a seed, whose kernels TF seeds at random, so that draws from one kernel or from
several follow the same law. A seeded draw (`seed=` on the op, or a graph seed, which gives
each copy its own seeds anyway) keeps one kernel per copy, as TF1 does: each copy's stream
is its own. So does any other op with a seed (FractionalMaxPool draws its pooling pattern
once per kernel) and any other stateful op.

An error raised in a shared function names the ops of the copy that made it.
"""
from __future__ import annotations

import hashlib
import threading
from typing import Callable

from tensorflow.core.framework import graph_pb2
from tensorflow.python.framework import func_graph as func_graph_module
from tensorflow.python.framework import ops as framework_ops

# Stateful kernels that draw from a Philox stream seeded from their `seed` and `seed2`
# attributes, or at random when both are 0 (GuardedPhiloxRandom::Init).
_RANDOM_DRAWS = {
    "RandomUniform", "RandomUniformInt", "RandomStandardNormal", "TruncatedNormal",
    "ParameterizedTruncatedNormal", "RandomShuffle", "RandomCrop", "Multinomial",
    "RandomGamma", "RandomPoisson", "RandomPoissonV2", "SampleDistortedBoundingBox",
    "SampleDistortedBoundingBoxV2",
}


def kernel_state_free(op, state_found_by_name) -> bool:
    """Whether every call of `op` computes the same whichever kernel instance runs it.

    state_found_by_name: stateful op types whose state every kernel finds under one name
    (lookup tables, and the reads of their contents)."""
    if op.type in _RANDOM_DRAWS:
        try:
            return op.get_attr("seed") == 0 and op.get_attr("seed2") == 0
        except ValueError:  # a version of the op without seed attributes: not known
            return False
    # The graph keeps OpDefs by type; `op.node_def` and `op.op_def` are made on every access.
    op_def = op.graph.op_def_for_type(op.type)
    if any(attr.name in ("seed", "seed2") for attr in op_def.attr):
        return False  # a kernel that may draw its own seeds (FractionalMaxPool's)
    return not op_def.is_stateful or op.type == "Assert" or op.type in state_found_by_name


def state_only_draws(ops, state_found_by_name) -> bool:
    """Whether the only state any of `ops` keeps is a random stream (see
    `kernel_state_free`): calls made at once then differ from calls made in turn only in
    which call gets which draws."""
    return all(op.type in _RANDOM_DRAWS or kernel_state_free(op, state_found_by_name)
               for op in ops)


# A computation is compared with later ones through a copy of its GraphDef, kept with its
# function until a computation of the same outline comes (then only a digest of its
# canonical form is kept): not for one holding large constants (an embedded array), and no
# more than _KEPT_PER_GRAPH bytes of copies per graph, so that they add little to the
# process's peak memory.
_LARGEST_KEPT = 1 << 20
_KEPT_PER_GRAPH = 16 << 20
_lock = threading.Lock()


class _Made:
    """A function made for this graph, with the digest of its canonical form, or until that
    is asked for, a copy of the GraphDef it was made of."""

    __slots__ = ("function", "_graph_def", "_used", "_dtypes", "_computed", "_digest")

    def __init__(self, function, used, dtypes, computed, *, graph_def=None, digest=None):
        self.function = function
        self._graph_def, self._used, self._dtypes = graph_def, used, dtypes
        self._computed = computed
        self._digest = digest

    def digest(self) -> bytes:
        if self._digest is None:
            self._digest = _canonical_digest(self._graph_def, self._used, self._dtypes,
                                             self._computed)
            self._graph_def = None
        return self._digest


def function_of(graph_def: graph_pb2.GraphDef, used, arguments, computed, shareable: bool,
                make: Callable):
    """`make(graph_def, used, arguments, computed)`, or the function it made for an earlier
    copy of the same computation in this graph (see the module docstring).

    shareable: every op of the computation is `kernel_state_free`. `make` may rewrite
    `graph_def` in place."""
    size = graph_def.ByteSize() if shareable else None
    if size is None or size > _LARGEST_KEPT:
        return make(graph_def, used, arguments, computed)
    dtypes = tuple(value.dtype for value in arguments)
    results = tuple((tensor.op.name, tensor.value_index) for tensor in computed)
    outline = (tuple(node.op for node in graph_def.node), dtypes, len(results))
    with _lock:  # pipelines may be built from several threads
        made_here = _made_in(_root_graph())
        earlier = made_here.by_outline.setdefault(outline, [])
        if earlier:
            digest = _canonical_digest(graph_def, used, dtypes, results)
            for made in earlier:
                if made.digest() == digest:
                    return made.function
            # Another computation of a known outline: its digest is known, no copy is kept.
            function = make(graph_def, used, arguments, computed)
            earlier.append(_Made(function, tuple(used), dtypes, results, digest=digest))
            return function
        if made_here.kept_bytes + size > _KEPT_PER_GRAPH:
            return make(graph_def, used, arguments, computed)
        made_here.kept_bytes += size
        kept = graph_pb2.GraphDef()
        kept.CopyFrom(graph_def)
        function = make(graph_def, used, arguments, computed)
        earlier.append(_Made(function, tuple(used), dtypes, results, graph_def=kept))
        return function


class _MadeInGraph:
    """The functions made for one graph, by outline, and the bytes of GraphDef copies kept."""

    __slots__ = ("by_outline", "kept_bytes")

    def __init__(self):
        self.by_outline: dict = {}
        self.kept_bytes = 0


def _root_graph():
    """The graph the functions end up in: the user's, not the tf.data trace being built."""
    graph = framework_ops.get_default_graph()
    while isinstance(graph, func_graph_module.FuncGraph) and graph.outer_graph is not None:
        graph = graph.outer_graph
    return graph


def _made_in(graph) -> _MadeInGraph:
    made = getattr(graph, "_compat_lifted_functions", None)
    if made is None:
        made = graph._compat_lifted_functions = _MadeInGraph()  # pylint: disable=protected-access
    return made


def _canonical_digest(graph_def, used, dtypes, computed) -> bytes:
    """A digest (SHA-256) of the computation with every node named by its position and every
    argument by its place in `used`: equal for copies that differ only in names."""
    position_of = {node.name: position for position, node in enumerate(graph_def.node)}
    argument_of = {name: position for position, name in enumerate(used)}
    canonical = graph_pb2.GraphDef()
    for position, node in enumerate(graph_def.node):
        copy = canonical.node.add()
        copy.CopyFrom(node)
        copy.name = f"n{position}"
        del copy.input[:]
        for source in node.input:
            if source.startswith("^"):
                copy.input.append(f"^{_named(source[1:], position_of)}")
                continue
            tensor_name = source if ":" in source else f"{source}:0"
            if tensor_name in argument_of:
                copy.input.append(f"a{argument_of[tensor_name]}")
            else:
                op_name, _, output = tensor_name.rpartition(":")
                copy.input.append(f"{_named(op_name, position_of)}:{output}")
    digest = hashlib.sha256(canonical.SerializeToString(deterministic=True))
    digest.update(repr((tuple(dtype.name for dtype in dtypes),
                        tuple((_named(name, position_of), index) for name, index in computed)))
                  .encode())
    return digest.digest()


def _named(op_name, position_of) -> str:
    """A node's canonical name; a name from outside the GraphDef stays as it is."""
    position = position_of.get(op_name)
    return op_name if position is None else f"n{position}"
