"""Run the ```python blocks of markdown pages: each page's blocks in order, in one namespace.

    python tests/docs_samples.py PAGE.md [PAGE.md ...]

Each page runs in a namespace and a fresh temporary directory of its own, holding the small
input files the samples read (see `write_inputs`); a block that raises ends its page with
the block's line and the traceback on stderr. One line on stdout per page says how it went
(`RESULT ok PAGE` or `RESULT failed PAGE`). tests/test_docs.py runs every page of docs/ and
README.md through this, the pages that switch the process to TF1 behaviour
(`disable_v2_behavior()`) in a process apart from the others, since that switch is for the
whole process.
"""
from __future__ import annotations

import linecache
import os
import re
import sys
import tempfile
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCK = re.compile(r"^( *)```python\n(.*?)^\1```$", re.S | re.M)
SNIPPET = re.compile(r'^--8<-- "([^"]+)"\n', re.M)   # pymdownx.snippets, base_path: the repo


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, code) of every ```python block of a markdown text, in order."""
    blocks = []
    for match in BLOCK.finditer(text):
        indent = len(match.group(1))
        code = "".join(line[indent:] for line in match.group(2).splitlines(True))
        code = SNIPPET.sub(lambda snippet: _read(os.path.join(ROOT, snippet.group(1))), code)
        blocks.append((text.count("\n", 0, match.start()) + 2, code))
    return blocks


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def write_inputs(directory: str) -> None:
    """The files the samples read, small: `train.csv` (a header and 200 lines of
    `label,value`), `mnist.tfrecord` (256 MNIST-shaped records, the demo's layout), and the
    migration guide's `example_inputs.py` with `pixels.tfrecord` (10 records of 8x8 images
    of their label's value, as its FEATURES describe)."""
    import shutil

    import numpy as np
    import tensorflow as tf

    shutil.copy(os.path.join(ROOT, "migration_guide", "example_inputs.py"), directory)
    with tf.io.TFRecordWriter(os.path.join(directory, "pixels.tfrecord")) as writer:
        for label in range(10):
            feature = {"pixels": tf.train.Feature(bytes_list=tf.train.BytesList(
                           value=[np.full(64, label, np.uint8).tobytes()])),
                       "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label]))}
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature))
                         .SerializeToString())
    with open(os.path.join(directory, "train.csv"), "w", encoding="utf-8") as handle:
        handle.write("label,value\n")
        handle.writelines(f"{i % 10},{i / 10:.1f}\n" for i in range(200))
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        from mnist_queue_pipeline import write_mnist_like_tfrecord
    finally:
        sys.path.pop(0)
    write_mnist_like_tfrecord(os.path.join(directory, "mnist.tfrecord"), num_records=256)


def run_page(path: str) -> int:
    with open(path, encoding="utf-8") as handle:
        blocks = python_blocks(handle.read())
    os.chdir(tempfile.mkdtemp(prefix="compat_docs_"))
    write_inputs(os.getcwd())
    sys.path.insert(0, os.getcwd())     # the samples import modules next to them, as you would
    for name in ("example_inputs", "example_inputs_tf2"):   # a module a page imported
        sys.modules.pop(name, None)
    namespace = {"__name__": "__docs__"}
    for line, code in blocks:
        name = f"{path}:{line}"
        # The source where inspect (and so autograph, for the samples' lambdas) looks for it.
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        try:
            exec(compile(code, name, "exec"), namespace)
        except BaseException:  # noqa: BLE001 - every failure is the page's
            print(f"{path}, the block at line {line} failed:\n{code}", file=sys.stderr)
            traceback.print_exc()
            return 1
    print(f"{path}: {len(blocks)} block(s) ran")
    return 0


def main(pages: list[str]) -> int:
    failed = 0
    for page in [os.path.abspath(page) for page in pages]:   # each page changes directory
        status = run_page(page)
        print(f"RESULT {'failed' if status else 'ok'} {page}", flush=True)
        failed += bool(status)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
