"""What a hand-built queue is for, from how the file uses it: the advice depends on it.

An input pipeline's queue (filled by a QueueRunner) is a buffer: `dataset.prefetch(capacity)`.
Two other uses are not, and must not get that advice (facenet's placeholder-fed queue of
capacity 2000000 would have been told `prefetch(2000000)`):
- PYTHON_FED: enqueued with placeholders that Python feeds (`sess.run(enqueue_op,
  feed_dict=...)`, often from threads): the values come from Python, so the tf.data source
  is a generator (`Dataset.from_generator`).
- STATE: enqueued and dequeued in the same function and run by no QueueRunner: model state
  carried from step to step (wavenet's fast generation pushes each layer's output and pops
  the previous one per sample). Not an input pipeline at all.
"""
from __future__ import annotations

import ast
from typing import Optional

INPUT, PYTHON_FED, STATE = "input", "python-fed", "state"
_ENQUEUES = frozenset({"enqueue", "enqueue_many"})
_DEQUEUES = frozenset({"dequeue", "dequeue_many", "dequeue_up_to"})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _leaf(func) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _parents(tree) -> dict:
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    return parents


def _constructor(tree, line: int, name: str):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.lineno == line and _leaf(node.func) == name:
            return node
    return None


def _enclosing_function(node, parents):
    while node is not None and not isinstance(node, _FUNCTIONS):
        node = parents.get(id(node))
    return node


def _placeholders(tree) -> set:
    """Names assigned a placeholder (`x = tf.placeholder(...)`, `self.x = ...`)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and _leaf(node.value.func).startswith("placeholder"):
            names.update(ast.unparse(t) for t in node.targets)
    return names


def _is_placeholder(node, placeholders) -> bool:
    for part in ast.walk(node):
        if isinstance(part, ast.Call) and _leaf(part.func).startswith("placeholder"):
            return True
        if isinstance(part, (ast.Name, ast.Attribute)) and ast.unparse(part) in placeholders:
            return True
    return False


def _fed_by_run(tree, op_names) -> bool:
    """`sess.run(enqueue_op, feed_dict=...)` (or the feed as second argument)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _leaf(node.func) == "run" and node.args \
                and ast.unparse(node.args[0]) in op_names \
                and (len(node.args) > 1 or any(k.arg == "feed_dict" for k in node.keywords)):
            return True
    return False


def role(tree, line: int, name: str) -> str:
    """The role of the queue built by the call of `name` at `line` (1-based)."""
    if tree is None:
        return INPUT
    call = _constructor(tree, line, name)
    parents = _parents(tree)
    assign = parents.get(id(call)) if call is not None else None
    if not isinstance(assign, ast.Assign) or len(assign.targets) != 1:
        return INPUT
    queue = ast.unparse(assign.targets[0])
    home = _enclosing_function(assign, parents)
    # a local name means this queue only in its function (another `q` elsewhere is another
    # queue); `self.queue` may be used by any method
    scope = home if home is not None and isinstance(assign.targets[0], ast.Name) else tree
    placeholders = _placeholders(tree)
    enqueued_in, dequeued_in, enqueue_ops = set(), set(), set()
    fed = False
    for node in ast.walk(scope):
        if not isinstance(node, ast.Call):
            continue
        if _leaf(node.func) == "QueueRunner":
            given = node.args[0] if node.args else next(
                (k.value for k in node.keywords if k.arg == "queue"), None)
            if given is not None and ast.unparse(given) == queue:
                return INPUT  # threads fill it: the pipeline's buffer
        if not (isinstance(node.func, ast.Attribute) and ast.unparse(node.func.value) == queue):
            continue
        where = id(_enclosing_function(node, parents))
        if node.func.attr in _ENQUEUES:
            enqueued_in.add(where)
            fed = fed or any(_is_placeholder(a, placeholders)
                             for a in (*node.args, *(k.value for k in node.keywords)))
            target = parents.get(id(node))
            if isinstance(target, ast.Assign):
                enqueue_ops.update(ast.unparse(t) for t in target.targets)
        elif node.func.attr in _DEQUEUES:
            dequeued_in.add(where)
    if fed or (enqueue_ops and _fed_by_run(tree, enqueue_ops)):  # run anywhere in the file
        return PYTHON_FED
    if home is not None and id(home) in enqueued_in and id(home) in dequeued_in:
        return STATE
    return INPUT


def _elements(text: Optional[str]) -> Optional[list]:
    try:
        value = ast.parse(text, mode="eval").body if text else None
    except SyntaxError:
        return None
    if isinstance(value, (ast.List, ast.Tuple)):
        return [ast.unparse(e) for e in value.elts]
    return None if value is None else [ast.unparse(value)]


def generator_advice(arguments) -> str:
    """`Dataset.from_generator` with an output_signature built from dtypes= and shapes=."""
    given = dict(arguments or ())
    dtypes = _elements(given.get("dtypes"))
    shapes = _elements(given.get("shapes"))
    if dtypes and shapes and len(shapes) == len(dtypes):
        specs = [f"tf.TensorSpec({shape}, {dtype})" for shape, dtype in zip(shapes, dtypes)]
    elif dtypes:
        specs = [f"tf.TensorSpec(None, {dtype})" for dtype in dtypes]
    else:
        specs = ["tf.TensorSpec(...)"]
    signature = specs[0] if len(specs) == 1 else "(" + ", ".join(specs) + ")"
    return (f"tf.data.Dataset.from_generator(generator, output_signature={signature})"
            "  # generator: yields what Python fed the placeholders, one element at a time "
            "(enqueue_many: each row); no capacity to carry over, the queue was not a prefetch "
            "buffer")


STATE_ADVICE = ("none: not an input pipeline. Keep the queue (tf.compat.v1 still has it, in "
                "graph mode), or carry the state in a tf.Variable (assign/read per step) or a "
                "tf.TensorArray in a tf.while_loop")
