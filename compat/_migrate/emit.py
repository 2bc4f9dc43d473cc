"""A recognized pipeline as the new function's source: same name and parameters, returning a
`tf.data.Dataset` whose elements are the structures the legacy function returned."""
from __future__ import annotations

import ast
import textwrap

from compat._migrate import batched_code, dataset_code
from compat._migrate.recognize import BatchChoice, Pipeline, Unfollowable
from compat._migrate.statements import header, is_docstring, read_names

_INDENT = "    "


def _names_in(function: ast.FunctionDef) -> set:
    found = {a.arg for a in ast.walk(function) if isinstance(a, ast.arg)}
    found |= {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}
    return found


def _fresh(name: str, taken: set) -> str:
    candidate, number = name, 2
    while candidate in taken:
        candidate, number = f"{name}{number}", number + 1
    taken.add(candidate)
    return candidate


def _as_tuple(text: str) -> str:
    """A returned list literal as a tuple (tf.data elements are tuples, TF1 gave lists); a
    one-element list as its element (TF1's batch gives the bare tensor)."""
    node = ast.parse(text, mode="eval").body
    if isinstance(node, ast.List):
        items = [ast.get_source_segment(text, item) for item in node.elts]
        if len(items) == 1:
            return items[0]
        return "(" + ", ".join(items) + ")"
    return text


def _structure_kind(text: str) -> str:
    """"many" for a tuple/list literal of several items, "one" for a dict, a single item or
    a bare tensor, "unknown" for a name (whose value may be either)."""
    node = ast.parse(text, mode="eval").body
    if isinstance(node, (ast.List, ast.Tuple)):
        return "many" if len(node.elts) > 1 else "one"
    if isinstance(node, ast.Dict):
        return "one"
    return "unknown" if isinstance(node, ast.Name) else "one"


def _target_params(targets: str, kind: str, taken: set) -> tuple:
    """Parameters for a function receiving an element assigned to `targets` in TF1, and the
    statements binding the targets from them when they are not plain names."""
    node = ast.parse(targets, mode="eval").body if "=" not in targets else None
    if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Name) for e in node.elts):
        return [e.id for e in node.elts], []
    if isinstance(node, ast.Name):
        if kind == "many":
            return [f"*{node.id}"], []
        if kind == "unknown":
            return [f"*{node.id}"], [f"{node.id} = {node.id}[0] if len({node.id}) == 1 "
                                     f"else {node.id}"]
        return [node.id], []
    if isinstance(node, ast.Tuple):
        params = [_fresh(f"part{i}", taken) for i in range(len(node.elts))]
        return params, [f"{targets} = {', '.join(params)}"]
    element = _fresh("element", taken)
    return [element], [f"{targets} = {element}"]


def _read_params(pipeline: Pipeline, taken: set, later_reads: set) -> tuple:
    """The element function's parameters for a reader's (key, value), whether the key is
    read at all, and the statements binding the read's targets."""
    targets = pipeline.read.targets
    node = ast.parse(targets, mode="eval").body if "=" not in targets else None
    if not (isinstance(node, ast.Tuple) and len(node.elts) == 2):
        raise Unfollowable("the read's result", pipeline.read.line,
                           "unpack it: `key, value = reader.read(queue)`")
    key, value = node.elts
    plain_value = isinstance(value, ast.Name)
    if isinstance(key, ast.Name) and (key.id == "_" or key.id not in later_reads):
        if plain_value:
            return [value.id], False, []
        param = _fresh("value", taken)
        return [param], False, [f"{ast.get_source_segment(targets, value)} = {param}"]
    if isinstance(key, ast.Name) and plain_value:
        return [key.id, value.id], True, []
    params = [_fresh("key", taken), _fresh("value", taken)]
    return params, True, [f"{targets} = {', '.join(params)}"]


def _block(lines, depth=1) -> list:
    return [(_INDENT * depth + line) if line else "" for line in lines]


def _statement_lines(statements) -> list:
    out = []
    for statement in statements:
        out.extend(statement.text.splitlines())
    return out


def function_source(pipeline: Pipeline, text: str) -> str:
    function = pipeline.function
    lines = text.splitlines()
    signature = header(function, lines)
    taken = _names_in(function)
    body = []
    first_stmt = function.body[0]
    if is_docstring(first_stmt):
        doc = lines[first_stmt.lineno - 1:first_stmt.end_lineno]
        body.extend(textwrap.dedent("\n".join(doc)).splitlines())
    body.extend(_statement_lines(pipeline.outside))
    body.extend(dataset_code.source_lines(pipeline.source))

    later_reads = set()
    for statement in pipeline.element + pipeline.post:
        later_reads |= statement.reads
    for batching in pipeline.batchings:
        later_reads |= read_names(ast.parse(dataset_code.tensors_of(batching), mode="eval"))
        if dataset_code.keeps(batching):
            later_reads |= read_names(ast.parse(dataset_code.argument(batching, "keep_input"),
                                                mode="eval"))
    if pipeline.returned not in (None, "__batch__"):
        later_reads |= read_names(ast.parse(pipeline.returned, mode="eval"))
    prelude = []
    if pipeline.read is not None:
        params, with_keys, prelude = _read_params(pipeline, taken, later_reads)
        body.extend(dataset_code.reader_lines(pipeline.reader, pipeline.read, with_keys,
                                              pipeline.copies))
    elif pipeline.dequeued or pipeline.source_targets:
        kind = "many" if pipeline.source.api == "train.slice_input_producer" else "one"
        if kind == "many" and not isinstance(ast.parse(pipeline.source_targets, mode="eval").body,
                                             (ast.Tuple, ast.Name)):
            kind = "unknown"
        params, prelude = _target_params(pipeline.source_targets, kind, taken)
    else:
        raise Unfollowable("the producer's queue", pipeline.source.line,
                           "it is never read: read it with a reader or dequeue()")

    element_fn = _fresh("parse_element" if pipeline.reader else "make_element", taken)
    element_body = prelude + _statement_lines(
        [s for s in pipeline.element if not isinstance(s.node, ast.Return)])
    batchings = pipeline.batchings
    if batchings:
        returns = {_as_tuple(dataset_code.tensors_of(b)) + (
            f", {dataset_code.argument(b, 'keep_input')}" if dataset_code.keeps(b) else "")
            for b in batchings}
        if len(returns) != 1:
            raise Unfollowable("if/else between batchings", batchings[0].line,
                               "both branches must batch the same tensors")
        element_body.append(f"return {returns.pop()}")
    else:
        element_body.append(f"return {_as_tuple(pipeline.returned)}")
    element_code = "\n".join([f"def {element_fn}({', '.join(params)}):"]
                             + _block(element_body))

    # Element code that draws no random numbers and keeps no state gives the same elements
    # in the same order whatever runs it in parallel (map keeps the order): TF1's one thread
    # becomes tf.data's autotuned parallelism. Random draws stay in TF1's order on one thread.
    order_free = not _draws_or_keeps_state(element_body, pipeline.helpers)
    batch_code = None
    if order_free and _batchable(pipeline):
        batch_code = batched_code.batched(element_code)
    if batch_code is not None:
        # The records are batched (shuffled first, where TF1 shuffles) and the element code
        # runs on each batch: a batch's parse is one op where a record's is one per record.
        element_fn = _fresh("parse_batch", taken)
        body.append("# The element code, run on a whole batch of records at once.")
        body.extend(batch_code.replace(f"def {element_code.split('(')[0][4:]}(",
                                       f"def {element_fn}(", 1).splitlines())
    else:
        body.extend(element_code.splitlines())

    def threads_for(batching) -> str:
        threads = dataset_code.threads_of(batching, pipeline.copies)
        if order_free and threads.strip() in ("1", "None"):
            return "tf.data.AUTOTUNE"
        return threads

    def batched(batching) -> list:
        threads = threads_for(batching)
        if batch_code is not None:
            return dataset_code.batching_lines(batching) + [
                dataset_code.map_line(element_fn, threads)]
        return ([dataset_code.map_line(element_fn, threads)]
                + dataset_code.batching_lines(batching))

    if not batchings:
        body.append(dataset_code.map_line(element_fn, "tf.data.AUTOTUNE" if order_free else "1"))
    elif isinstance(pipeline.batching, BatchChoice):
        true, false = (batched(b) for b in pipeline.batching.branches)
        if true[0] == false[0]:  # the same map either way
            body.append(true[0])
            true, false = true[1:], false[1:]
        body.append(f"if {pipeline.batching.test}:")
        body.extend(_block(true))
        body.append("else:")
        body.extend(_block(false))
    else:
        body.extend(batched(pipeline.batching))

    if batchings:
        body.extend(_post_lines(pipeline, taken))
    body.append("return dataset.prefetch(tf.data.AUTOTUNE)")
    return "\n".join(signature + _block(body))


_STATEFUL_WORDS = ("random", "py_func", "py_function", "numpy_function", "Variable", "assign",
                   "summary", "Print", "print", "lookup", "Table", "shuffle")


def _draws_or_keeps_state(element_body, helpers=()) -> bool:
    """Whether the element code (or a function of the module it calls) may draw random
    numbers or keep state; a call of a function defined elsewhere counts as may."""
    try:
        trees = [ast.parse("\n".join(element_body))] + [ast.parse(h) for h in helpers]
    except SyntaxError:
        return True
    defined = {tree.body[0].name for tree in trees[1:]}
    for tree in trees:
        words = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        words |= {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        if any(word in name for name in words for word in _STATEFUL_WORDS):
            return True
        if any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
               and node.func.id not in _BUILTINS | defined for node in ast.walk(tree)):
            return True
    return False


# Calls of these in element code are plain Python.
_BUILTINS = frozenset({"int", "float", "str", "len", "list", "tuple", "dict", "range", "min",
                       "max", "abs", "zip", "enumerate", "isinstance", "bool", "sorted",
                       "sum", "round"})


def _batchable(pipeline: Pipeline) -> bool:
    """Whether the records may be batched before the element code runs: they come from a
    reader's read (one record per element) into a plain or shuffled batch."""
    if pipeline.read is None or pipeline.read.method != "read" or not pipeline.batchings:
        return False
    for batching in pipeline.batchings:
        if dataset_code.truth(dataset_code.argument(batching, "enqueue_many")) is not False:
            return False
        if dataset_code.argument(batching, "batch_size").strip() == "None":
            return False
        if dataset_code.keeps(batching):
            return False
        if batching.api in ("train.batch", "train.batch_join") and dataset_code.truth(
                dataset_code.argument(batching, "dynamic_pad")) is not False:
            return False
    return True


def _post_lines(pipeline: Pipeline, taken: set) -> list:
    returned = pipeline.returned
    post = [s for s in pipeline.post if not isinstance(s.node, ast.Return)]
    if returned == "__batch__" or (not post and _same_structure(returned,
                                                                pipeline.batch_targets)):
        return []
    tensors = dataset_code.tensors_of(pipeline.batchings[0])
    params, prelude = _target_params(pipeline.batch_targets, _structure_kind(tensors), taken)
    post_fn = _fresh("on_batch", taken)
    lines = [f"def {post_fn}({', '.join(params)}):"]
    lines.extend(_block(prelude + _statement_lines(post) + [f"return {_as_tuple(returned)}"]))
    lines.append(f"dataset = dataset.map({post_fn})")
    return lines


def _same_structure(returned: str, targets: str) -> bool:
    try:
        a = ast.dump(ast.parse(returned, mode="eval").body)
        b = ast.dump(ast.parse(targets, mode="eval").body)
    except SyntaxError:
        return False
    return a == b
