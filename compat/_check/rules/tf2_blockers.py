"""TFQ901, TFQ902: TF1 constructs that stop the program on TF 2.x whatever compat does.

A file whose queue sites are all "covered by compat.v1" still does not run on TF 2.x when it
uses `tf.contrib` (gone since TF 2.0: the import or attribute raises) or `tf.layers`
(tf.compat.v1.layers needs Keras 2: under Keras 3, TF 2.16's default, it raises). Reported
once per spelling that names them (an import, `tf.contrib.x.y`, `slim = tf.contrib.slim`), not
at every use of an alias, with what to do instead. Contrib APIs the mapping table has rows for
(slim's prefetch_queue, bucket_by_sequence_length, ...) are left to their own rules.
"""
from __future__ import annotations

import ast

from compat._check.model import COVERAGE_BLOCKS as BLOCKS
from compat._check.model import Finding

CONTRIB, LAYERS = "TFQ901", "TFQ902"
CODES = frozenset({CONTRIB, LAYERS})
# (code, name, what it is) for --list-rules and SARIF
DESCRIPTIONS = (
    (CONTRIB, "contrib", "tf.contrib does not exist in TF 2.x: the program stops there"),
    (LAYERS, "layers", "tf.layers (tf.compat.v1.layers) raises under Keras 3 (TF 2.16+)"),
)
_TF_MODULES = ("tensorflow", "tensorflow.compat.v1", "compat.v1")
_LAYERS_PIP = ("pip install tf-keras and set TF_USE_LEGACY_KERAS=1 before TensorFlow is "
               "imported (tf.compat.v1.layers needs Keras 2)")
# tf.contrib module -> where it went in TF 2.x (the first match of the longest prefix wins)
_CONTRIB_REPLACEMENTS = (
    ("slim", "tf_slim (pip install tf-slim; import tf_slim as slim)"),
    ("layers.xavier_initializer", "tf.keras.initializers.GlorotUniform()"),
    ("layers.variance_scaling_initializer", "tf.keras.initializers.VarianceScaling()"),
    ("layers.l2_regularizer", "tf.keras.regularizers.l2(scale)"),
    ("layers.l1_regularizer", "tf.keras.regularizers.l1(scale)"),
    ("layers", "tf_slim.layers (pip install tf-slim), or tf.keras.layers"),
    ("framework.arg_scope", "tf_slim.arg_scope (pip install tf-slim)"),
    ("framework.get_or_create_global_step", "tf.compat.v1.train.get_or_create_global_step()"),
    ("framework", "tf_slim (pip install tf-slim) or the tf.* function of the same name"),
    ("rnn", "tf.compat.v1.nn.rnn_cell (LSTMCell, GRUCell, MultiRNNCell, DropoutWrapper) or "
            "tf.keras.layers (LSTMCell, GRUCell, RNN)"),
    ("cudnn_rnn", "tf.keras.layers.LSTM / GRU (cuDNN kernels by default)"),
    ("data", "tf.data.experimental (the same names)"),
    ("lookup", "tf.lookup"),
    ("summary", "tf.summary"),
    ("metrics", "tf.compat.v1.metrics, or tf.keras.metrics"),
    ("distributions", "tensorflow_probability.distributions (pip install tensorflow-probability)"),
    ("opt", "tensorflow-addons' tfa.optimizers (pip install tensorflow-addons)"),
    ("seq2seq", "tensorflow-addons' tfa.seq2seq (pip install tensorflow-addons)"),
    ("image", "tensorflow-addons' tfa.image, or tf.image"),
    ("crf", "tensorflow-addons' tfa.text.crf_* (pip install tensorflow-addons)"),
    ("training.HParams", "a dict or a dataclass (HParams has no TF 2.x successor)"),
    ("learn", "tf.keras (tf.contrib.learn has no TF 2.x successor)"),
    ("tpu", "tf.distribute.TPUStrategy"),
)


def _contrib_advice(below: str) -> str:
    best = max((key for key, _ in _CONTRIB_REPLACEMENTS
                if below == key or below.startswith(key + ".")), key=len, default=None)
    if best is None:
        return ("no TF 2.x module of that name: tf_slim (pip install tf-slim) for slim, layers "
                "and framework code, tensorflow-addons for the rest, or rewrite it")
    return dict(_CONTRIB_REPLACEMENTS)[best]


def _keras_name(function: str) -> str:
    """tf.layers.max_pooling2d -> MaxPooling2D (the tf.keras.layers class)."""
    name = "".join(part[:1].upper() + part[1:] for part in function.split("_"))
    for dims in ("1d", "2d", "3d"):
        if name.endswith(dims):
            name = name[:-1] + "D"
    return name


def _tf_names(tree) -> dict:
    """{local name: what it is below TensorFlow ("" for tf itself, "contrib", "layers", ...)}."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in _TF_MODULES and alias.asname:
                    names[alias.asname] = ""
                elif alias.name == "tensorflow":
                    names["tensorflow"] = ""
        elif isinstance(node, ast.ImportFrom) and node.module in ("tensorflow.compat", "compat"):
            names.update((a.asname or a.name, "") for a in node.names if a.name == "v1")
    if "tf" not in names and not any(
            isinstance(n, (ast.Import, ast.ImportFrom)) and any(
                (a.asname or a.name).split(".")[0] == "tf" for a in n.names)
            for n in ast.walk(tree)):
        names["tf"] = ""  # a snippet's bare tf, as the resolver takes it
    return names


def _chain(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


def _below_tf(module: str):
    for root in ("tensorflow.compat.v1", "compat.v1", "tensorflow"):
        if module == root or module.startswith(root + "."):
            return module[len(root) + 1:]
    return None


def _advice(path: str):
    """(code, message, what to do) for a path below TensorFlow, or None."""
    head, _, rest = path.partition(".")
    if head == "contrib":
        spelled = f"tf.contrib.{rest}" if rest else "tf.contrib"
        return (CONTRIB, f"{spelled}: tf.contrib was removed in TF 2.0, compat.v1 cannot bring "
                         "it back", _contrib_advice(rest))
    if head == "layers":
        function = rest.split(".")[0]
        keras = f"tf.keras.layers.{_keras_name(function)}" if function else "tf.keras.layers"
        return (LAYERS, f"tf.layers{'.' + rest if rest else ''}: raises under Keras 3 "
                        "(TF 2.16+), with or without compat.v1", f"{_LAYERS_PIP}; or {keras}")
    return None


def _char_col(context, line: int, byte_col: int) -> int:
    """ast's columns count UTF-8 bytes; findings count characters."""
    lines = context.source.text.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if text.isascii():
        return byte_col
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def _finding(context, node, path, end=None) -> Finding:
    code, message, todo = _advice(path)
    end = end or node
    cell, line = context.source.locate(node.lineno)
    end_cell, end_line = context.source.locate(getattr(end, "end_lineno", None) or node.lineno)
    last = getattr(end, "end_lineno", None) or node.lineno
    return Finding(path=context.path, line=line,
                   col=_char_col(context, node.lineno, node.col_offset) + 1,
                   end_line=end_line if end_cell == cell else line,
                   end_col=_char_col(context, last, getattr(end, "end_col_offset", None)
                                     or node.col_offset) + 1,
                   code=code, api="tf." + path.split(".")[0], coverage=BLOCKS,
                   message=f"{message} — {BLOCKS}: {todo}", tf_data="", notes="",
                   scan=context.scan, cell=cell)


def _import_findings(context, node, table_roots):
    """An import's blockers; not one whose name only reaches table APIs (their rules say)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            below = _below_tf(alias.name)
            local = alias.asname or alias.name.split(".")[0]
            if below and _advice(below) and local not in table_roots:
                yield _finding(context, node, below)
    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
        below = _below_tf(node.module)
        if below is None:
            return
        for alias in node.names:
            path = f"{below}.{alias.name}" if below else alias.name
            if _advice(path) and (alias.asname or alias.name) not in table_roots:
                yield _finding(context, node, path)


def check(context):
    if context.tree is None:
        return  # a token scan: no tree to tell `tf.contrib` from a comment about it
    taken = {(site.line, site.col) for site in context.sites}
    table_roots = {site.root for site in context.sites}
    names = _tf_names(context.tree)
    inner = set()
    for node in ast.walk(context.tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield from _import_findings(context, node, table_roots)
        elif isinstance(node, ast.Attribute) and id(node) not in inner:
            parts = _chain(node)
            if not parts or parts[0] not in names:
                continue
            child = node.value
            while isinstance(child, ast.Attribute):  # the outer chain speaks for all of it
                inner.add(id(child))
                child = child.value
            below = parts[1:]
            if below[:2] == ["compat", "v1"]:
                below = below[2:]
            if below and _advice(".".join(below)) and (node.lineno, node.col_offset) not in taken:
                yield _finding(context, node, ".".join(below))
