"""The element code's TF1 spellings as TF2 ones, keeping TF1's values.

TensorFlow's own `tf_upgrade_v2` knows the renames (`tf.parse_single_example` ->
`tf.io.parse_single_example`, `tf.to_float(x)` -> `tf.cast(x, tf.float32)`). A few of its
rewrites compute different values (TF2's `tf.image.resize` samples pixel centres, TF1's
resize ops do not): those keep TF1's op under `tf.compat.v1`, and the new module's header
lists each one. Each row is (TF1 spelling under `tf.`, why TF1's is kept).
"""
from __future__ import annotations

import ast
import contextlib
import io
import logging
import re

from compat._migrate.statements import first_line

TF1_VALUES_KEPT = (
    ("image.resize_images", "TF2's tf.image.resize samples pixel centres (half_pixel_centers)"),
    ("image.resize_bilinear", "TF2's tf.image.resize samples pixel centres (half_pixel_centers)"),
    ("image.resize_bicubic", "TF2's tf.image.resize samples pixel centres (half_pixel_centers)"),
    ("image.resize_nearest_neighbor",
     "TF2's tf.image.resize samples pixel centres (half_pixel_centers)"),
    ("image.resize_area", "TF2's tf.image.resize(method='area') rounds differently"),
    ("image.resize_image_with_pad", "TF2's tf.image.resize_with_pad resizes with TF2's resize"),
)


# TF1 spellings tf_upgrade_v2 leaves under tf.compat.v1 that TF2 spells otherwise.
_AFTER_UPGRADE = (
    # TFRecordOptions takes the compression's name.
    (r"(?<![\w.])tf\.compat\.v1\.(?:python_io|io)\.TFRecordCompressionType\.(GZIP|ZLIB)\b",
     r'"\1"'),
    (r"(?<![\w.])tf\.compat\.v1\.(?:python_io|io)\.TFRecordCompressionType\.NONE\b", '""'),
)


_MARKER = "import tensorflow as tf  # compat-migrate: removed after tf_upgrade_v2\n"


class TensorFlowMissing(RuntimeError):
    pass


def _upgrader():
    try:
        from tensorflow.tools.compatibility import ast_edits, tf_upgrade_v2
    except ImportError as error:
        raise TensorFlowMissing(
            "compat-migrate renames TF1 ops with TensorFlow's own tf_upgrade_v2, which comes "
            "with TensorFlow: pip install tensorflow-cpu (or tensorflow)") from error
    return ast_edits.ASTCodeUpgrader(tf_upgrade_v2.TFAPIChangeSpec())


def _imports_tf1_itself(node) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Import) and any(
                a.name in ("tensorflow.compat.v1", "compat.v1") for a in sub.names):
            return True
        if isinstance(sub, ast.ImportFrom) and sub.module in ("tensorflow.compat", "compat") \
                and any(a.name == "v1" for a in sub.names):
            return True
    return False


def to_tf2(text: str) -> tuple:
    """`text` (a module using `tf` for TensorFlow 2's root) with TF1 spellings renamed; and
    the (spelling, why) of each TF1 op kept for its values. A function that imports TF1's API
    itself (`import tensorflow.compat.v1 as tf` inside it) is left as it is: its `tf` is
    TF1's, and tf_upgrade_v2, which does not look at scopes, would rename nothing at all."""
    lines = text.splitlines()
    held = {}
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _imports_tf1_itself(node):
            for index in range(first_line(node), node.end_lineno):
                held[index] = lines[index]
                lines[index] = f"# compat-migrate held line {index}"
    renamed, kept = _renamed("\n".join(lines) + "\n")
    out = renamed.splitlines()
    if len(out) != len(lines):
        raise AssertionError("tf_upgrade_v2 changed the number of lines")
    for index, line in held.items():
        if out[index] != f"# compat-migrate held line {index}":
            raise AssertionError("tf_upgrade_v2 changed a line it was not given")
        out[index] = line
    return "\n".join(out) + "\n", kept


def _renamed(text: str) -> tuple:
    kept = []
    for spelling, why in TF1_VALUES_KEPT:
        pattern = re.compile(r"(?<![\w.])tf\." + re.escape(spelling) + r"\b")
        if pattern.search(text):
            text = pattern.sub("tf.compat.v1." + spelling, text)
            kept.append((f"tf.{spelling}", why))
    out = io.StringIO()
    upgrader = _upgrader()
    # tf_upgrade_v2 logs every rename; the records and the header say what matters.
    logger = logging.getLogger()
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            # tf_upgrade_v2 renames `tf.` only in a module that imports TensorFlow as tf;
            # a module whose functions take it as a parameter gets the import for the pass (at
            # its end: a module may begin with `from __future__` imports).
            text = text if text.endswith("\n") else text + "\n"
            upgrader.process_opened_file("<source>", io.StringIO(text + _MARKER), "<migrated>",
                                         out)
    finally:
        logger.setLevel(level)
    text = out.getvalue()
    if not text.endswith(_MARKER):
        raise AssertionError("tf_upgrade_v2 changed the line compat-migrate added")
    text = text[:-len(_MARKER)]
    for pattern, replacement in _AFTER_UPGRADE:
        text = re.sub(pattern, replacement, text)
    listed = {spelled for spelled, _ in kept}
    for spelled in sorted(set(re.findall(r"(?<![\w.])tf\.compat\.v1\.([\w.]+)", text))):
        if f"tf.{spelled}" not in listed:
            kept.append((f"tf.{spelled}", "tf_upgrade_v2 knows no TF2 spelling of it"))
    return text, tuple(kept)
