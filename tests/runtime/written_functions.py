"""Helpers of the tests comparing a function the shim writes with the one tf.data's trace
makes (`test_epoch_maps`, `test_unit_maps`): graphs as canonical text, and programs built
in a graph of their own or with functions made for several devices."""
import re

import numpy as np

from conftest import run_stream

UID = re.compile(r"\b(__inference_\w+?)_\d+\b")
_HASHED = re.compile(
    r"\b((?:_?make_dataset|make_shared_iterator|failing_factory)(?:_body)?_)[A-Za-z0-9_-]{11}\b")


def canonical(text: str, written: re.Pattern, traced: re.Pattern, token: str) -> str:
    """`text` with the written and the traced function's names both `token`, and the names
    that differ from graph to graph (trace counters, hashes of factories) made alike."""
    text = traced.sub(token, written.sub(token, text))
    return _HASHED.sub(r"\1HASH", UID.sub(r"\1_UID", text))


def graph_text(graph_def, canonicalize) -> list:
    """The graph's nodes, its functions (sorted) and its versions, as `canonicalize`d text."""
    return ([canonicalize(str(node)) for node in graph_def.node]
            + sorted(canonicalize(str(function)) for function in graph_def.library.function)
            + [str(graph_def.versions)])


def functions_named(graph_def, pattern: re.Pattern) -> int:
    """How many of the graph's functions have a name `pattern` matches."""
    return sum(bool(pattern.fullmatch(function.signature.name))
               for function in graph_def.library.function)


def run_in_graph(tf, program, graph_seed=3):
    """(the program's stream, the graph it was built in)."""
    import tensorflow as real_tf
    graph = real_tf.Graph()
    stream = run_stream(tf, program, graph_seed=graph_seed, graph=graph)
    return stream, graph


def on_devices(build, one_device):
    """`build`, or (not `one_device`) `build` with the shim's functions made as TF makes
    them, for several devices."""
    if one_device:
        return build
    from compat._runtime import build_context

    def program(tf):
        build_context.functions_as_tf_makes_them(tf.get_default_graph())
        return build(tf)
    return program


def datasets_created_as_tf_data_does(monkeypatch):
    """Make the shim create its dataset ops in the graph, as tf.data does, rather than write
    them (`written_datasets.can_write` false), for the rest of the test."""
    from compat._runtime import written_datasets
    monkeypatch.setattr(written_datasets, "can_write", lambda: False)


def written_then_traced(legacy, shim, build, program, monkeypatch, writer, library):
    """`program` (`build`, maybe on several devices) run with the shim as it is, then with
    `writer` ((module, name) of the function that writes the map) writing nothing, so
    that the map is traced; both streams checked equal to TF1's stream of `build`. Returns
    TF1's stream, and `library(graph)` of the written and of the traced run. Both runs
    create their dataset ops in the graph, as tf.data does (`written_datasets.can_write`
    false), for `library` to compare (test_written_datasets compares the factories written
    without them)."""
    datasets_created_as_tf_data_does(monkeypatch)
    expected, _ = run_in_graph(legacy, build)
    written_stream, written_graph = run_in_graph(shim, program)
    monkeypatch.setattr(*writer, lambda *args, **kwargs: None)
    traced_stream, traced_graph = run_in_graph(shim, program)
    np.testing.assert_equal(written_stream, expected)
    np.testing.assert_equal(traced_stream, expected)
    return expected, library(written_graph), library(traced_graph)
