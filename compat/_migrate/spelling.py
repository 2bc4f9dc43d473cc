"""The element code's TF1 spellings as TF2 ones, keeping TF1's values.

TensorFlow's own `tf_upgrade_v2` knows the renames (`tf.parse_single_example` ->
`tf.io.parse_single_example`, `tf.to_float(x)` -> `tf.cast(x, tf.float32)`). A few of its
rewrites compute different values (TF2's `tf.image.resize` samples pixel centres, TF1's
resize ops do not): those keep TF1's op under `tf.compat.v1`, and the new module's header
lists each one. Each row is (TF1 spelling under `tf.`, why TF1's is kept).
"""
from __future__ import annotations

import contextlib
import io
import logging
import re

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


def to_tf2(text: str) -> tuple:
    """`text` (a module using `tf` for TensorFlow 2's root) with TF1 spellings renamed; and
    the (spelling, why) of each TF1 op kept for its values."""
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
            upgrader.process_opened_file("<source>", io.StringIO(text), "<migrated>", out)
    finally:
        logger.setLevel(level)
    text = out.getvalue()
    for pattern, replacement in _AFTER_UPGRADE:
        text = re.sub(pattern, replacement, text)
    listed = {spelled for spelled, _ in kept}
    for spelled in sorted(set(re.findall(r"(?<![\w.])tf\.compat\.v1\.([\w.]+)", text))):
        if f"tf.{spelled}" not in listed:
            kept.append((f"tf.{spelled}", "tf_upgrade_v2 knows no TF2 spelling of it"))
    return text, tuple(kept)
