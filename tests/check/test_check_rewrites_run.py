"""Every tf.data rewrite compat-check prints runs as printed under TF 2.x, faithfully.

For every table row with a rewrite, and for every alternative template of a row (enqueue_many
x dynamic_pad x keep_input for batching, shuffle=<expression> for producers, hop_bytes /
encoding for FixedLengthRecordReader, ...), representative legacy calls go through the
checker; the printed rewrite is executed exactly as printed after `import tensorflow as tf`,
with the names the call's arguments reference and the input the rewrite documents (`dataset`:
the examples the queue held; `filenames`: what a reader's queue held) bound to tiny inputs
(TFRecord/CSV/binary/LMDB files written to a temporary directory, small tensors). Its first
elements are then compared with what TF1 gives: either TF1 itself (the legacy ops of
tf.compat.v1 run in a graph and a Session, where their order is deterministic) or a model of
TF1's semantics, or checked for the properties that show faithfulness where TF1's order is
random (batch sizes, drop_remainder, epochs, padding, shuffling within the capacity window).

The rewrites are TF2 eager code, and the rest of the suite switches this process to TF1
behaviour (disable_v2_behavior), so they run in one fresh Python process per session; the
tests here only check what it reports. Tests without TensorFlow check that every template is
exercised and that every rewrite is one line.
"""
from __future__ import annotations

import ast
import dataclasses
import itertools
import linecache
import os
import pickle
import subprocess
import sys
import traceback

import pytest

from check_helpers import HERE, ROOT, check
from compat import _api_table as table
from compat._check import render

N_EXAMPLES = 7  # the examples a finite `dataset` holds
BATCH = 3


@dataclasses.dataclass(frozen=True)
class Case:
    """One legacy call whose printed rewrite is executed.

    inputs(tmp) -> {name: value}: the names the rewrite reads (runs in the TF process).
    probe(value, namespace) -> picklable: what to report of the rewrite's value (default:
        its first `take` elements and whether it ended before them).
    oracle(tmp) -> picklable: TF1's own output for the same call (TF process), or None.
    expect(run): assertions on the report (here).
    """

    id: str
    code: str
    source: str
    inputs: object
    expect: object
    probe: object = None
    oracle: object = None
    take: int = 40


@dataclasses.dataclass
class Run:
    snippet: str
    value: object = None
    oracle: object = None
    error: str = ""


# --- helpers that run in the TF process --------------------------------------------------

def _tf():
    import tensorflow as tf
    return tf


def _numpy(value):
    tf = _tf()
    return tf.nest.map_structure(lambda t: t.numpy() if hasattr(t, "numpy") else t, value)


def _elements(take):
    def probe(value, namespace):
        items = list(itertools.islice(iter(value), take))
        return {"elements": [_numpy(item) for item in items], "ended": len(items) < take}
    return probe


def _picklable(value):
    """TF's namedtuples (ReaderReadV2...) as plain tuples; arrays and scalars as they are."""
    if isinstance(value, dict):
        return {key: _picklable(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return tuple(_picklable(item) for item in value)
    if isinstance(value, list):
        return [_picklable(item) for item in value]
    return value


def _tf1(build, limit=40):
    """TF1's output: build(v1) -> fetch in a fresh graph, sess.run until OutOfRangeError."""
    tf = _tf()
    v1 = tf.compat.v1
    out = []
    with tf.Graph().as_default():
        fetch = build(v1)
        with v1.Session() as sess:
            sess.run([v1.global_variables_initializer(), v1.local_variables_initializer()])
            coord = v1.train.Coordinator()
            threads = v1.train.start_queue_runners(sess, coord)
            try:
                while len(out) < limit:
                    out.append(sess.run(fetch))
            except tf.errors.OutOfRangeError:
                pass
            finally:
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=5, ignore_live_threads=True)
    return {"elements": out, "ended": len(out) < limit}


def _tf1_reader(make_reader, paths, limit=60):
    """(key, value) pairs a TF1 reader gives for `paths`, read one by one from a queue."""
    def build(v1):
        queue = v1.FIFOQueue(len(paths), _tf().string)
        v1.add_to_collection("prepare", queue.enqueue_many([paths]))
        v1.add_to_collection("prepare", queue.close())
        return make_reader(v1).read(queue)
    tf = _tf()
    v1 = tf.compat.v1
    out = []
    with tf.Graph().as_default():
        fetch = build(v1)
        with v1.Session() as sess:
            for op in v1.get_collection("prepare"):
                sess.run(op)
            try:
                while len(out) < limit:
                    out.append(sess.run(fetch))
            except tf.errors.OutOfRangeError:
                pass
    return out


def _execute(snippet, namespace, name):
    """Runs the printed line; the value of its last statement if that is an expression."""
    filename = f"<rewrite {name}>"
    linecache.cache[filename] = (len(snippet), None, [snippet + "\n"], filename)  # autograph
    tree = ast.parse(snippet, filename)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, filename, "exec"), namespace)  # pylint: disable=exec-used
    if last is None:
        return None
    return eval(compile(last, filename, "eval"), namespace)  # pylint: disable=eval-used


def _child(request_path, result_path):
    """The TF process: run the requested cases, write a Run per case id."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    tf = _tf()
    tf.get_logger().setLevel("ERROR")
    with open(request_path, "rb") as handle:
        requests = pickle.load(handle)
    cases = {case.id: case for case in all_cases()}
    results = {}
    for case_id, snippet, tmp in requests:
        case = cases[case_id]
        run = Run(snippet)
        try:
            os.makedirs(tmp, exist_ok=True)
            namespace = {}
            exec("import tensorflow as tf", namespace)  # pylint: disable=exec-used
            namespace.update(case.inputs(tmp))
            value = _execute(snippet, namespace, case_id)
            run.value = _picklable((case.probe or _elements(case.take))(value, namespace))
            if case.oracle is not None:
                run.oracle = _picklable(case.oracle(tmp))
            pickle.dumps(run)
        except BaseException:  # pylint: disable=broad-except
            run = Run(snippet, error=traceback.format_exc())
        results[case_id] = run
    with open(result_path, "wb") as handle:
        pickle.dump(results, handle)


# --- helpers for the assertions ------------------------------------------------------------

def plain(value):
    """Nested lists / dicts / Python scalars, for comparing TF2, TF1 and model outputs."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def elements(run):
    return [plain(item) for item in run.value["elements"]]


def _same_as_tf1(run):
    assert elements(run) == [plain(item) for item in run.oracle["elements"]]
    assert run.value["ended"] == run.oracle["ended"]


def _rows(batches):
    """The examples of a list of batches (tuple/list or dict components)."""
    rows = []
    for batch in batches:
        if isinstance(batch, dict):
            keys = sorted(batch)
            rows += [dict(zip(keys, parts)) for parts in zip(*(batch[k] for k in keys))]
        else:
            rows += [list(parts) for parts in zip(*batch)]
    return rows


def _row_key(row):
    return repr(row)


# --- tiny inputs -------------------------------------------------------------------------

def _example_x(i, ragged):
    import numpy as np
    return np.full((i % 3 + 1,) if ragged else (2,), i, np.int32)


def _examples_dataset(style, ragged):
    tf = _tf()

    def make(i):
        i = tf.cast(i, tf.int32)
        x = tf.fill(tf.reshape(i % 3 + 1, [1]), i) if ragged else tf.stack([i, i])
        return {"x": x, "y": i} if style == "dict" else (x, i)
    return tf.data.Dataset.range(N_EXAMPLES).map(make)


def _rows_xs(entry=0):
    import numpy as np
    return np.arange(10, dtype=np.int32).reshape(5, 2) + 100 * entry


def _rows_ys(entry=0):
    import numpy as np
    return np.arange(5, dtype=np.int32) + 100 * entry


def _write_tfrecords(tmp, names=("a", "b"), per_file=3, compression=None, payload=None):
    tf = _tf()
    paths = []
    for n, name in enumerate(names):
        path = os.path.join(tmp, f"{name}.tfrecord")
        with tf.io.TFRecordWriter(path, options=compression) as writer:
            for i in range(per_file):
                writer.write(payload(n, i) if payload else f"{name}{i}".encode())
        paths.append(path)
    return paths


def _write_text(tmp, names=("a", "b"), lines=3, header=True):
    paths = []
    for name in names:
        path = os.path.join(tmp, f"{name}.csv")
        with open(path, "w", encoding="utf-8") as handle:
            if header:
                handle.write("col1,col2\n")
            for i in range(lines):
                handle.write(f"{name}{i},{i}\n")
        paths.append(path)
    return paths


def _filenames(paths):
    return _tf().data.Dataset.from_tensor_slices(paths)


# --- batching: every template of the eight rows --------------------------------------------

@dataclasses.dataclass(frozen=True)
class BatchSpec:
    row: str              # "train.batch", ...
    enqueue_many: object  # True, False or "many" (an expression, bound to many_value)
    dynamic_pad: object   # True, False or "pad" (an expression, bound to True)
    keep: object          # None (not maybe_*), True (literal), "expr"
    style: str            # "list": [x, y]; "dict": a dict named tensors; "names": a list named pair
    allow_smaller: bool
    many_value: bool = True

    @property
    def join(self):
        return self.row.endswith("_join")

    @property
    def shuffle(self):
        return "shuffle" in self.row

    @property
    def many(self):
        return self.many_value if self.enqueue_many == "many" else self.enqueue_many

    @property
    def pad(self):
        return self.dynamic_pad is not False

    @property
    def ragged(self):
        return self.pad and not self.many

    def tensors_source(self):
        if self.join:
            if self.style == "dict":
                return "entries"
            return "[[xs, ys], [xs2, ys2]]" if self.many else "[[x, y], [x, y]]"
        if self.style == "dict":
            return "tensors"
        if self.style == "names":
            return "pair"
        return "[xs, ys]" if self.many else "[x, y]"

    def keep_source(self):
        if self.keep is True:
            return "True"
        if self.many:
            return "keep_rows"  # a vector: one flag per row
        if self.join or self.style != "list":
            return "keep"       # a scalar
        return "tf.equal(y % 2, 0)"  # per example: reads the element's own y

    def call(self):
        args = [self.tensors_source()]
        if self.keep is not None:
            args.append(f"keep_input={self.keep_source()}")
        args.append(f"batch_size={BATCH}")
        if self.shuffle:
            args += ["capacity=6", "min_after_dequeue=2", "seed=7"]
        em = self.enqueue_many
        args.append(f"enqueue_many={em}")
        if not self.shuffle:
            args.append(f"dynamic_pad={self.dynamic_pad}")
        args.append(f"allow_smaller_final_batch={self.allow_smaller}")
        return f"tf.{self.row}({', '.join(args)})"

    def keeps_row(self, y):
        if self.keep is True or self.keep is None:
            return True
        if self.many or self.style == "list" and not self.join:
            return y % 2 == 0  # keep_rows and tf.equal(y % 2, 0) both keep even ys
        return True            # keep: tf.constant(True)

    def input_rows(self, entry=0):
        """The examples TF1 enqueues, in order (one pass for enqueue_many)."""
        if self.many:
            xs, ys = _rows_xs(entry), _rows_ys(entry)
            return [[xs[r].tolist(), int(ys[r])] for r in range(len(ys))]
        return [[_example_x(i, self.ragged).tolist(), i] for i in range(N_EXAMPLES)]

    def kept_rows(self, entry=0):
        return [row for row in self.input_rows(entry) if self.keeps_row(row[1] - 100 * entry)]

    def structured(self, x, y):
        return {"x": x, "y": y} if self.style == "dict" else [x, y]

    def model_batches(self, count):
        """TF1's first `count` batches where its order is deterministic."""
        rows = self.kept_rows()
        stream = itertools.cycle(rows) if self.many else iter(rows)
        batches = []
        while len(batches) < count:
            chunk = list(itertools.islice(stream, BATCH))
            if not chunk or (len(chunk) < BATCH and not self.allow_smaller):
                break
            width = max(len(x) for x, _ in chunk)
            xs = [x + [0] * (width - len(x)) for x, _ in chunk]
            batches.append(self.structured(xs, [y for _, y in chunk]))
        return batches

    def inputs(self, tmp):
        tf = _tf()
        names = {"many": self.many_value, "pad": True, "keep": tf.constant(True)}
        names["keep_rows"] = tf.constant(_rows_ys() % 2 == 0)
        if self.many:
            xs, ys = tf.constant(_rows_xs()), tf.constant(_rows_ys())
            xs2, ys2 = tf.constant(_rows_xs(1)), tf.constant(_rows_ys(1))
            names.update(xs=xs, ys=ys, xs2=xs2, ys2=ys2, tensors={"x": xs, "y": ys}, pair=[xs, ys],
                         entries=[{"x": xs, "y": ys}, {"x": xs2, "y": ys2}])
        else:
            dataset = _examples_dataset(self.style, self.ragged)
            x, y = tf.constant(_example_x(0, self.ragged)), tf.constant(0)
            names.update(dataset=dataset, x=x, y=y, tensors={"x": x, "y": y}, pair=[x, y],
                         entries=[{"x": x, "y": y}, {"x": x, "y": y}])
            if self.enqueue_many == "many":  # the other branch still names the batches
                names.update(xs=x, ys=y)
        return names

    def oracle(self, tmp):
        """TF1's own batches (deterministic: one enqueue thread, no shuffle, no join)."""
        spec = self

        def build(v1):
            tf = _tf()
            if spec.many:
                x, y = tf.constant(_rows_xs()), tf.constant(_rows_ys())
                keep = tf.constant(_rows_ys() % 2 == 0) if spec.keep == "expr" else True
            else:
                i = v1.train.range_input_producer(N_EXAMPLES, num_epochs=1, shuffle=False).dequeue()
                x = tf.fill(tf.reshape(i % 3 + 1, [1]), i) if spec.ragged else tf.stack([i, i])
                y = i
                keep = tf.equal(y % 2, 0) if spec.keep == "expr" else True
            tensors = {"x": x, "y": y} if spec.style == "dict" else [x, y]
            kwargs = dict(enqueue_many=spec.many, dynamic_pad=spec.pad,
                          allow_smaller_final_batch=spec.allow_smaller)
            if spec.keep is None:
                return v1.train.batch(tensors, BATCH, **kwargs)
            return v1.train.maybe_batch(tensors, keep, BATCH, **kwargs)
        return _tf1(build, limit=6)

    def expect(self, run):
        batches = elements(run)
        assert batches, "no batch at all"
        sizes = [len(_rows([b])) for b in batches]
        if self.many:
            assert not run.value["ended"], "TF1 enqueues the batches again and again: endless"
        else:
            assert run.value["ended"]
        if not self.allow_smaller:
            assert set(sizes) == {BATCH}, f"drop_remainder: every batch is full, got {sizes}"
        rows = _rows(batches)
        if self.join and self.many:
            valid = {_row_key(self.structured(*r)) for e in (0, 1) for r in self.kept_rows(e)}
            assert {_row_key(r) for r in rows} <= valid
            assert {r[1] >= 100 if isinstance(r, list) else r["y"] >= 100 for r in rows} == \
                {True, False}, "rows of both inputs"
            return
        if not self.shuffle:
            assert batches == self.model_batches(len(batches) + 1)[:len(batches)]
            if not self.many:
                assert len(batches) == len(self.model_batches(100)), "the whole input, once"
            if run.oracle is not None:
                _same_as_tf1(run)
            return
        # shuffled: the same examples, reordered, each within the capacity window
        expected = [self.structured(*r) for r in self.kept_rows()]
        unshuffled = list(itertools.islice(itertools.cycle(expected), len(rows)))
        assert rows != unshuffled, "shuffle_batch reorders"
        assert {_row_key(r) for r in rows} <= {_row_key(r) for r in expected}
        if not self.many:
            keys = [_row_key(r) for r in expected]
            positions = [keys.index(_row_key(r)) for r in rows]
            assert len(set(positions)) == len(positions), "each example once"
            assert all(p < j + 6 for j, p in enumerate(positions)), "capacity=6 window"
            full = len(expected) if self.allow_smaller else len(expected) // BATCH * BATCH
            assert len(rows) == full


def _batching_specs():
    rows = ("train.batch", "train.maybe_batch", "train.shuffle_batch", "train.maybe_shuffle_batch",
            "train.batch_join", "train.maybe_batch_join", "train.shuffle_batch_join",
            "train.maybe_shuffle_batch_join")
    styles = itertools.cycle(("list", "dict", "names"))
    allow = itertools.cycle((False, True, False))
    for row in rows:
        maybe = row.startswith("train.maybe")
        pads = (False,) if "shuffle" in row else (True, False, "pad")
        for keep in ((True, "expr") if maybe else (None,)):
            for enqueue_many in (True, False, "many"):
                for dynamic_pad in pads:
                    style = next(styles)
                    if keep == "expr" and enqueue_many is False and not row.endswith("_join"):
                        style = "list"  # a per-example keep_input over the tensors' names
                    if row.endswith("_join") and style == "names":
                        style = "list"
                    yield BatchSpec(row, enqueue_many, dynamic_pad, keep, style, next(allow))
    # enqueue_many=<expression> that is False at run time
    yield BatchSpec("train.batch", "many", False, None, "list", True, many_value=False)


def _batching_cases():
    for spec in _batching_specs():
        row = table.rows_by_name()[spec.row]
        deterministic = spec.row in ("train.batch", "train.maybe_batch")
        name = (f"{spec.row.rpartition('.')[2]}-em_{spec.enqueue_many}-pad_{spec.dynamic_pad}"
                f"-keep_{spec.keep}-{spec.style}-allow_{spec.allow_smaller}"
                + ("" if spec.many_value else "-many_false"))
        yield Case(name, row.code, spec.call(), spec.inputs, spec.expect,
                   probe=_elements(6 if spec.many else 40),
                   oracle=spec.oracle if deterministic else None)


# --- producers -----------------------------------------------------------------------------

FILES = [b"f0", b"f1", b"f2", b"f3", b"f4"]


def _producer_inputs(tmp):
    import numpy as np
    tf = _tf()
    images = tf.constant(np.arange(10, dtype=np.int32).reshape(5, 2))
    labels = tf.constant([0, 1, 2, 3, 4])
    return {"files": [f.decode() for f in FILES], "images": images, "labels": labels,
            "tensor_list": [images, labels], "values": tf.constant([10, 11, 12, 13, 14]),
            "is_training": True, "not_training": False, "t": tf.constant([1, 2])}


def _epochs(items, size):
    return [items[i:i + size] for i in range(0, len(items), size)]


def _permutation_epochs(expected, epochs, seeded_shuffle=True):
    def expect(run):
        items = elements(run)
        assert len(items) == len(expected) * epochs
        for epoch in _epochs(items, len(expected)):
            assert sorted(map(repr, epoch)) == sorted(map(repr, expected)), "epochs never mix"
        if seeded_shuffle:
            assert any(epoch != expected for epoch in _epochs(items, len(expected))), "shuffled"
        else:
            assert all(epoch == expected for epoch in _epochs(items, len(expected)))
    return expect


def _endless_permutations(expected):
    def expect(run):
        assert not run.value["ended"]
        items = elements(run)
        for epoch in _epochs(items, len(expected))[:-1]:
            assert sorted(map(repr, epoch)) == sorted(map(repr, expected))
    return expect


def _producer_cases():
    files = [f.decode() for f in FILES]
    pairs = [[[2 * i, 2 * i + 1], i] for i in range(5)]
    yield Case("string_input_producer-seeded-2-epochs", "TFQ101",
               "tf.train.string_input_producer(files, num_epochs=2, seed=3)",
               _producer_inputs, _permutation_epochs([f.encode() for f in files], 2))
    yield Case("string_input_producer-positional-no-shuffle", "TFQ101",
               "tf.train.string_input_producer(files, 2, False)", _producer_inputs,
               _same_as_tf1, oracle=lambda tmp: _tf1(
                   lambda v1: v1.train.string_input_producer(files, 2, False).dequeue()))
    yield Case("string_input_producer-shuffle-expression-true", "TFQ101",
               "tf.train.string_input_producer(files, num_epochs=3, shuffle=is_training, seed=8)",
               _producer_inputs, _permutation_epochs(list(FILES), 3))
    yield Case("string_input_producer-shuffle-expression-false", "TFQ101",
               "tf.train.string_input_producer(files, num_epochs=2, shuffle=not_training)",
               _producer_inputs, _permutation_epochs(list(FILES), 2, seeded_shuffle=False))
    yield Case("string_input_producer-endless", "TFQ101", "tf.train.string_input_producer(files)",
               _producer_inputs, _endless_permutations(list(FILES)), take=12)
    yield Case("slice_input_producer-seeded", "TFQ102",
               "tf.train.slice_input_producer([images, labels], num_epochs=2, seed=1)",
               _producer_inputs, _permutation_epochs(pairs, 2))
    yield Case("slice_input_producer-no-shuffle", "TFQ102",
               "tf.train.slice_input_producer([images, labels], num_epochs=2, shuffle=False)",
               _producer_inputs, _same_as_tf1, oracle=lambda tmp: _tf1(
                   lambda v1: v1.train.slice_input_producer(
                       [_tf().constant(_rows_xs()), _tf().constant(_rows_ys())],
                       num_epochs=2, shuffle=False)))
    yield Case("slice_input_producer-named-list-shuffle-expression", "TFQ102",
               "tf.train.slice_input_producer(tensor_list, num_epochs=2, shuffle=is_training, "
               "seed=5)",
               _producer_inputs, _permutation_epochs(pairs, 2))
    yield Case("range_input_producer-seeded", "TFQ103",
               "tf.train.range_input_producer(5, num_epochs=2, seed=2)",
               _producer_inputs, _permutation_epochs(list(range(5)), 2))
    yield Case("range_input_producer-no-shuffle-int32", "TFQ103",
               "tf.train.range_input_producer(5, num_epochs=2, shuffle=False)",
               _producer_inputs, _same_as_tf1, probe=_elements_and_dtype(40),
               oracle=lambda tmp: _tf1(lambda v1: v1.train.range_input_producer(
                   5, num_epochs=2, shuffle=False).dequeue()))
    yield Case("range_input_producer-shuffle-expression", "TFQ103",
               "tf.train.range_input_producer(5, num_epochs=2, shuffle=not_training)",
               _producer_inputs, _permutation_epochs(list(range(5)), 2, seeded_shuffle=False))
    yield Case("input_producer-seeded", "TFQ104",
               "tf.train.input_producer(values, num_epochs=2, seed=4)",
               _producer_inputs, _permutation_epochs(list(range(10, 15)), 2))
    yield Case("input_producer-no-shuffle", "TFQ104",
               "tf.train.input_producer(values, num_epochs=2, shuffle=False)", _producer_inputs,
               _same_as_tf1, oracle=lambda tmp: _tf1(lambda v1: v1.train.input_producer(
                   _tf().constant([10, 11, 12, 13, 14]), num_epochs=2, shuffle=False).dequeue()))
    yield Case("input_producer-shuffle-expression", "TFQ104",
               "tf.train.input_producer(values, num_epochs=2, shuffle=is_training, seed=6)",
               _producer_inputs, _permutation_epochs(list(range(10, 15)), 2))
    yield Case("limit_epochs", "TFQ105", "tf.train.limit_epochs(t, 3)", _producer_inputs,
               _same_as_tf1, oracle=lambda tmp: _tf1(
                   lambda v1: v1.train.limit_epochs(_tf().constant([1, 2]), 3)))

    def match_inputs(tmp):
        for name in ("b-2.rec", "a-1.rec", "c-3.rec", "other.txt"):
            open(os.path.join(tmp, name), "wb").close()
        return {"pattern": os.path.join(tmp, "*.rec")}

    def match_oracle(tmp):
        pattern = os.path.join(tmp, "*.rec")
        return _tf1(lambda v1: v1.train.match_filenames_once(pattern), limit=1)

    def match_expect(run):
        (names,) = run.oracle["elements"]
        assert plain(run.value) == plain(names)
        assert [os.path.basename(n) for n in plain(run.value)] == [
            b"a-1.rec", b"b-2.rec", b"c-3.rec"], "sorted, as TF1's"
    yield Case("match_filenames_once", "TFQ106", "tf.train.match_filenames_once(pattern)",
               match_inputs, match_expect, probe=lambda value, namespace: _numpy(value),
               oracle=match_oracle)


def _elements_and_dtype(take):
    def probe(value, namespace):
        report = _elements(take)(value, namespace)
        report["dtype"] = value.element_spec.dtype.name
        return report
    return probe


# --- readers -------------------------------------------------------------------------------

def _reader_case(case_id, code, source, write, make_reader, values_only=True, extra=None):
    """The rewrite gives the values (or (key, value) pairs) TF1's reader gives."""
    def inputs(tmp):
        names = {"filenames": _filenames(write(tmp))}
        names.update(extra(tmp) if extra else {})
        return names

    def oracle(tmp):
        return _tf1_reader(make_reader, write(tmp))

    def expect(run):
        pairs = [plain(pair) for pair in run.oracle]
        assert pairs, "TF1 read something"
        assert run.value["ended"]
        assert elements(run) == ([value for _, value in pairs] if values_only else pairs)
    return Case(case_id, code, source, inputs, expect, oracle=oracle)


def _fixed_length(tmp, compression=None, size=23):
    """Two binary files of `size` bytes (a body that is a multiple of record_bytes, except
    where overlapping records are read: FixedLengthRecordDataset refuses a partial last
    record, TF1 drops it; see the row's notes)."""
    import gzip
    import zlib
    paths = []
    for n in range(2):
        data = bytes(range(40 * n, 40 * n + size))
        path = os.path.join(tmp, f"f{n}.bin")
        if compression == "ZLIB":
            data = zlib.compress(data)
        elif compression == "GZIP":
            data = gzip.compress(data)
        with open(path, "wb") as handle:
            handle.write(data)
        paths.append(path)
    return paths


def _lmdb_file(tmp):
    import lmdb
    path = os.path.join(tmp, "data.mdb")
    env = lmdb.open(path, subdir=False, map_size=1 << 20)
    with env.begin(write=True) as txn:
        for key in (b"k2", b"k0", b"k1"):
            txn.put(key, b"value-" + key)
    env.close()
    return [path]


def _lmdb_expect(run):
    """TF1's LMDBReader gives every (key, value) of the database in key order (TF 2.21 has
    dropped its kernel, so this is the lmdb package's cursor order, which is TF1's)."""
    assert elements(run) == [[b"k0", b"value-k0"], [b"k1", b"value-k1"], [b"k2", b"value-k2"]]
    assert run.value["ended"]


def _reader_cases():
    tf_ = _tf  # make_reader gets tf.compat.v1
    yield _reader_case("TFRecordReader", "TFQ111", "r = tf.TFRecordReader()",
                       _write_tfrecords, lambda v1: v1.TFRecordReader())
    yield _reader_case(
        "TFRecordReader-gzip-options", "TFQ111", "r = tf.TFRecordReader(options=opts)",
        lambda tmp: _write_tfrecords(tmp, compression="GZIP"),
        lambda v1: v1.TFRecordReader(options=tf_().io.TFRecordOptions(compression_type="GZIP")),
        extra=lambda tmp: {"opts": _tf().io.TFRecordOptions(compression_type="GZIP")})
    yield _reader_case("TextLineReader", "TFQ112", "r = tf.TextLineReader()",
                       lambda tmp: _write_text(tmp, header=False), lambda v1: v1.TextLineReader())
    yield _reader_case("TextLineReader-skip-header", "TFQ112",
                       "r = tf.TextLineReader(skip_header_lines=1)", _write_text,
                       lambda v1: v1.TextLineReader(skip_header_lines=1))
    yield _reader_case("FixedLengthRecordReader", "TFQ113",
                       "r = tf.FixedLengthRecordReader(4, header_bytes=3, footer_bytes=2)",
                       lambda tmp: _fixed_length(tmp, size=21),
                       lambda v1: v1.FixedLengthRecordReader(4, 3, 2))
    yield _reader_case("FixedLengthRecordReader-zlib", "TFQ113",
                       "r = tf.FixedLengthRecordReader(record_bytes=5, encoding='ZLIB')",
                       lambda tmp: _fixed_length(tmp, "ZLIB", size=25),
                       lambda v1: v1.FixedLengthRecordReader(5, encoding="ZLIB"))
    yield _reader_case("FixedLengthRecordReader-hop", "TFQ113",
                       "r = tf.FixedLengthRecordReader(4, header_bytes=3, footer_bytes=2, "
                       "hop_bytes=2)", _fixed_length,
                       lambda v1: v1.FixedLengthRecordReader(4, 3, 2, hop_bytes=2))
    yield _reader_case("FixedLengthRecordReader-hop-gzip", "TFQ113",
                       "r = tf.FixedLengthRecordReader(5, hop_bytes=3, encoding='GZIP')",
                       lambda tmp: _fixed_length(tmp, "GZIP"),
                       lambda v1: v1.FixedLengthRecordReader(5, hop_bytes=3, encoding="GZIP"))
    yield _reader_case("WholeFileReader", "TFQ114", "r = tf.WholeFileReader()",
                       lambda tmp: _write_text(tmp, lines=2), lambda v1: v1.WholeFileReader(),
                       values_only=False)
    yield _reader_case("IdentityReader", "TFQ115", "r = tf.IdentityReader()",
                       lambda tmp: ["work-0", "work-1", "work-2"], lambda v1: v1.IdentityReader(),
                       values_only=False)
    yield Case("LMDBReader", "TFQ116", "r = tf.LMDBReader()",
               lambda tmp: {"filenames": _filenames(_lmdb_file(tmp))}, _lmdb_expect)

    def reader_base_expect(run):  # a placeholder: it runs, one (key, value) per work unit
        assert elements(run) == [[b"w0", b"w0"], [b"w1", b"w1"]]
    yield Case("ReaderBase-subclass", "TFQ117", "class MyReader(tf.ReaderBase):\n    pass",
               lambda tmp: {"filenames": _filenames(["w0", "w1"])}, reader_base_expect)


# --- queues, runners, coordination, idioms --------------------------------------------------

def _range_dataset(n=50):
    return lambda tmp: {"dataset": _tf().data.Dataset.range(n)}


def _in_order(n):
    def expect(run):
        assert elements(run) == list(range(n)) and run.value["ended"]
    return expect


def _shuffle_queue_expect(run):
    items = elements(run)
    assert sorted(items) == list(range(40)), "every element once"
    assert items != list(range(40)), "shuffled: a RandomShuffleQueue samples from all it holds"
    assert all(p < j + 100 for j, p in enumerate(items)), "within capacity"
    assert max(p - j for j, p in enumerate(items)) > 1, "a window wider than min_after_dequeue"


def _padding_inputs(tmp):
    tf = _tf()
    return {"dataset": tf.data.Dataset.range(70).map(
        lambda i: tf.fill(tf.stack([tf.cast(i % 5 + 1, tf.int32), 1]), tf.cast(i, tf.float32)))}


def _padding_oracle(tmp):
    import numpy as np
    tf = _tf()

    def build(v1):
        queue = v1.PaddingFIFOQueue(100, [tf.float32], shapes=[(None, 1)])
        for i in range(70):
            v1.add_to_collection("prepare", queue.enqueue(
                [np.full((i % 5 + 1, 1), i, np.float32)]))
        v1.add_to_collection("prepare", queue.close())
        return queue.dequeue_many(32)
    v1 = tf.compat.v1
    out = []
    with tf.Graph().as_default():
        fetch = build(v1)
        with v1.Session() as sess:
            for op in v1.get_collection("prepare"):
                sess.run(op)
            try:
                while True:
                    out.append(sess.run(fetch))
            except tf.errors.OutOfRangeError:
                pass
    return {"elements": out, "ended": True}


def _priority_inputs(tmp):
    tf = _tf()
    priorities = [5, 3, 9, 1, 7, 2, 8, 0, 6, 4]
    return {"dataset": tf.data.Dataset.from_tensor_slices(
        (tf.constant(priorities, tf.int64), tf.constant([f"v{p}" for p in priorities])))}


def _priority_expect(run):
    items = elements(run)
    assert [p for p, _ in items] == [1, 3, 5, 9, 0, 2, 7, 8, 4, 6], "each window of 4 sorted"
    assert all(value == f"v{p}".encode() for p, value in items)


def _from_list_inputs(tmp):
    tf = _tf()
    return {"q1": tf.data.Dataset.range(3), "q2": tf.data.Dataset.range(10, 14), "index": 1}


def _from_list_expect(run):
    assert elements(run) == [10, 11, 12, 13] and run.value["ended"], "the second queue's"


def _none_expect(run):
    assert run.value is None


def _no_threads_expect(run):
    assert run.value == [], "no threads, and coord.join(threads) still works"


def _join_threads(value, namespace):
    namespace["coord"].join(value)  # what the rewritten program does with the threads next
    return value


def _loop_expect(run):
    assert run.value == {"batch": 4}, "the loop went through the whole dataset"


def _loop_probe(value, namespace):
    return {"batch": int(namespace["batch"])}


def _looper_inputs(tmp):
    tf = _tf()
    ticks = []
    return {"coord": tf.train.Coordinator(), "tick": lambda: ticks.append(1), "ticks": ticks}


def _looper_probe(value, namespace):
    import time
    value.start()
    time.sleep(0.3)
    namespace["coord"].request_stop()
    namespace["coord"].join([value])
    return {"ticks": len(namespace["ticks"]), "alive": value.is_alive()}


def _looper_expect(run):
    assert run.value["ticks"] >= 3 and not run.value["alive"]


def _queue_cases():
    yield Case("FIFOQueue", "TFQ301", "q = tf.FIFOQueue(capacity=4, dtypes=[tf.int64])",
               _range_dataset(20), _in_order(20))
    yield Case("RandomShuffleQueue-capacity-100-min-1", "TFQ302",
               "q = tf.RandomShuffleQueue(capacity=100, min_after_dequeue=1, dtypes=[tf.int64], "
               "seed=5)", _range_dataset(40), _shuffle_queue_expect)
    yield Case("PaddingFIFOQueue-None-1", "TFQ303",
               "q = tf.PaddingFIFOQueue(100, [tf.float32], shapes=[(None, 1)])",
               _padding_inputs, _same_as_tf1, oracle=_padding_oracle)
    yield Case("PriorityQueue", "TFQ304", "q = tf.PriorityQueue(4, [tf.string], shapes=[[]])",
               _priority_inputs, _priority_expect)

    def queue_base_expect(run):
        assert run.value == {"first": 0, "second": 1}
    yield Case("QueueBase-subclass", "TFQ305", "class Q(tf.QueueBase):\n    pass",
               _range_dataset(3), queue_base_expect,
               probe=lambda value, namespace: {"first": int(next(value)),
                                               "second": int(next(value))})
    yield Case("QueueBase.from_list", "TFQ306", "q = tf.QueueBase.from_list(index, [q1, q2])",
               _from_list_inputs, _from_list_expect)
    yield Case("QueueRunner", "TFQ311", "qr = tf.train.QueueRunner(q, [enqueue_op] * 2)",
               _range_dataset(10), _in_order(10))
    yield Case("add_queue_runner", "TFQ312", "tf.train.add_queue_runner(qr)",
               lambda tmp: {}, _none_expect, probe=lambda value, namespace: value)
    yield Case("start_queue_runners", "TFQ313",
               "threads = tf.train.start_queue_runners(sess, coord)",
               lambda tmp: {"coord": _tf().train.Coordinator()},
               _no_threads_expect, probe=_join_threads)
    yield Case("Coordinator", "TFQ321", "coord = tf.train.Coordinator()", _range_dataset(5),
               _loop_expect, probe=_loop_probe)
    yield Case("LooperThread", "TFQ322",
               "thread = tf.train.LooperThread(coord, 0.01, target=tick)", _looper_inputs,
               _looper_expect, probe=_looper_probe)
    loops = [
        ("OutOfRangeError", "TFQ401",
         "try:\n    sess.run(batch)\nexcept tf.errors.OutOfRangeError:\n    pass"),
        ("Supervisor", "TFQ402", "sv = tf.train.Supervisor(logdir=d)"),
        ("MonitoredTrainingSession", "TFQ403",
         "with tf.train.MonitoredTrainingSession() as s:\n    pass"),
        ("MonitoredSession", "TFQ404", "s = tf.train.MonitoredSession(hooks=h)"),
        ("SingularMonitoredSession", "TFQ405", "s = tf.train.SingularMonitoredSession()"),
        ("slim.queues", "TFQ411",
         "slim = tf.contrib.slim\nwith slim.queues.QueueRunners(sess):\n    pass"),
    ]
    for case_id, code, source in loops:
        yield Case(case_id, code, source, _range_dataset(5), _loop_expect, probe=_loop_probe)


# --- tf.contrib helpers --------------------------------------------------------------------

def _tokens_inputs(tmp):
    tf = _tf()
    lengths = [1, 4, 2, 6, 3, 5, 2, 6, 1, 4]
    return {"dataset": tf.data.Dataset.from_tensor_slices(tf.constant(lengths)).map(
        lambda n: (tf.range(1, n + 1),)), "tokens": tf.constant([1]), "keep": True}


def _bucket_expect(keep_even=False):
    def expect(run):
        seen = []
        for lengths, (tokens,) in elements(run):
            buckets = {(length >= 3) + (length >= 5) for length in lengths}
            assert len(buckets) == 1, f"one bucket per batch: {lengths}"
            assert all(len(row) == max(lengths) for row in tokens), "padded to the batch max"
            assert all(row[:n] == list(range(1, n + 1)) for row, n in zip(tokens, lengths))
            assert len(lengths) <= 2
            seen += lengths
        expected = [1, 4, 2, 6, 3, 5, 2, 6, 1, 4]
        if keep_even:
            expected = [n for n in expected if n % 2 == 0]
        assert sorted(seen) == sorted(expected), "allow_smaller_final_batch keeps every element"
    return expect


def _stratified_inputs(tmp):
    tf = _tf()
    labels = tf.constant([0] * 8 + [1] * 2)
    data = tf.range(10)
    return {"dataset": tf.data.Dataset.from_tensor_slices(((data,), labels)).repeat(),
            "x": data, "xs": data, "label": labels, "labels": labels}


def _stratified_expect(run):
    batches = elements(run)
    assert len(batches) == 50 and not run.value["ended"]
    ones = zeros = 0
    for (xs,), labels in batches:
        assert len(labels) == 4
        assert all((x >= 8) == (label == 1) for x, label in zip(xs, labels))
        ones += sum(labels)
        zeros += len(labels) - sum(labels)
    assert 0.3 < ones / (ones + zeros) < 0.7, "resampled to the target 50/50 (input 80/20)"


def _rejection_inputs(tmp):
    tf = _tf()
    xs = tf.range(20) * 10
    ys = tf.range(20)
    return {"dataset": tf.data.Dataset.from_tensor_slices((xs, ys)), "x": xs, "y": ys,
            "xs": xs, "ys": ys,
            "accept": lambda t: tf.cast(t[1] % 2, tf.float32)}  # TF1 passes the list


def _rejection_expect(endless):
    def expect(run):
        batches = elements(run)
        for xs, ys in batches:
            assert len(ys) == 4, "full batches"
            assert all(y % 2 == 1 and x == 10 * y for x, y in zip(xs, ys)), "only accepted rows"
        if endless:
            assert not run.value["ended"] and len(batches) == 10
        else:
            assert run.value["ended"] and sum(len(ys) for _, ys in batches) == 8
    return expect


def _provider_inputs(tmp):
    import types
    tf = _tf()

    def payload(n, i):
        feature = {"v": tf.train.Feature(int64_list=tf.train.Int64List(value=[10 * n + i]))}
        return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
    _write_tfrecords(tmp, names=("p0", "p1", "p2"), per_file=4, payload=payload)

    class Decoder:  # the slim decoder's interface: decode(serialized, items), list_items()
        def list_items(self):
            return ["v"]

        def decode(self, serialized, items):
            parsed = tf.io.parse_single_example(
                serialized, {"v": tf.io.FixedLenFeature([], tf.int64)})
            return [parsed[item] for item in items]
    slim_dataset = types.SimpleNamespace(data_sources=os.path.join(tmp, "p*.tfrecord"),
                                         decoder=Decoder(), reader=None)
    return {"slim_dataset": slim_dataset, "is_training": True, "pattern":
            os.path.join(tmp, "p*.tfrecord"), "shuffle_files": False}


_PROVIDED = [10 * n + i for n in range(3) for i in range(4)]


def _provider_expect(epochs, shuffled):
    def expect(run):
        values = [item[0] for item in elements(run)]
        assert run.value["ended"]
        assert sorted(values) == sorted(_PROVIDED * epochs), "every record once per epoch"
        if shuffled:
            assert values != sorted(values)
        else:
            assert values == [10 * n + i for i in range(4) for n in range(3)], \
                "three readers interleaved, files in sorted order"
    return expect


def _parallel_read_expect(epochs, shuffled):
    def expect(run):
        pairs = elements(run)
        assert run.value["ended"]
        values = [value for _, value in pairs]
        assert sorted(values) == sorted([f"{n}{i}".encode() for n in ("a", "b") for i in range(3)]
                                        * epochs)
        assert all(os.path.basename(key).startswith(value[:1]) for key, value in pairs), \
            "(key, value): the key names the file"
        in_order = [f"{n}{i}".encode() for i in range(3) for n in ("a", "b")] * epochs
        assert (values != in_order) == shuffled, "two readers interleave files in sorted order"
    return expect


def _parallel_read_inputs(tmp):
    _write_tfrecords(tmp)
    return {"pattern": os.path.join(tmp, "*.tfrecord"), "is_training": True}


def _contrib_cases():
    yield Case("prefetch_queue", "TFQ412",
               "from tensorflow.contrib.slim.python.slim.data import prefetch_queue\n"
               "prefetch_queue.prefetch_queue([images, labels], capacity=2)",
               _range_dataset(6), _in_order(6))
    yield Case("bucket_by_sequence_length", "TFQ413",
               "tf.contrib.training.bucket_by_sequence_length(tf.size(tokens), [tokens], "
               "batch_size=2, bucket_boundaries=[3, 5], dynamic_pad=True, "
               "allow_smaller_final_batch=True)", _tokens_inputs, _bucket_expect())
    yield Case("bucket_by_sequence_length-keep-input", "TFQ413",
               "tf.contrib.training.bucket_by_sequence_length(tf.size(tokens), [tokens], 2, "
               "[3, 5], dynamic_pad=True, allow_smaller_final_batch=True, "
               "keep_input=tf.equal(tf.size(tokens) % 2, 0))", _tokens_inputs,
               _bucket_expect(keep_even=True))

    def sequences_expect(run):
        batches = elements(run)
        assert [len(tokens) for (tokens,) in batches] == [4, 4, 2] and run.value["ended"]
        lengths = [1, 4, 2, 6, 3, 5, 2, 6, 1, 4]
        for index, (tokens,) in enumerate(batches):
            assert {len(row) for row in tokens} == {max(lengths[4 * index:4 * index + 4])}
    yield Case("batch_sequences_with_states", "TFQ414",
               "tf.contrib.training.batch_sequences_with_states(key, sequences, context, "
               "length, states, num_unroll=2, batch_size=4)", _tokens_inputs, sequences_expect)
    yield Case("stratified_sample", "TFQ415",
               "tf.contrib.training.stratified_sample([x], label, [0.5, 0.5], 4)",
               _stratified_inputs, _stratified_expect, take=50)
    yield Case("stratified_sample-enqueue-many", "TFQ415",
               "tf.contrib.training.stratified_sample([xs], labels, [0.5, 0.5], 4, "
               "enqueue_many=True)", _stratified_inputs, _stratified_expect, take=50)
    yield Case("rejection_sample", "TFQ416",
               "tf.contrib.training.rejection_sample([x, y], accept, 4)", _rejection_inputs,
               _rejection_expect(endless=False))
    yield Case("rejection_sample-enqueue-many-lambda", "TFQ416",
               "tf.contrib.training.rejection_sample([xs, ys], lambda t: tf.cast(t[1] % 2, "
               "tf.float32), 4, enqueue_many=True)", _rejection_inputs,
               _rejection_expect(endless=True), take=10)
    provider = ("import tensorflow.contrib.slim as slim\n"
                "slim.dataset_data_provider.DatasetDataProvider(slim_dataset, num_readers=3, %s)")
    yield Case("DatasetDataProvider-no-shuffle", "TFQ417",
               provider % "shuffle=False, num_epochs=1", _provider_inputs,
               _provider_expect(1, shuffled=False))
    yield Case("DatasetDataProvider-shuffle", "TFQ417",
               provider % "num_epochs=2, common_queue_capacity=8, common_queue_min=2, seed=1",
               _provider_inputs, _provider_expect(2, shuffled=True))
    yield Case("DatasetDataProvider-shuffle-expression", "TFQ417",
               provider % "shuffle=is_training, num_epochs=1, seed=3", _provider_inputs,
               _provider_expect(1, shuffled=True))
    parallel = ("from tensorflow.contrib import slim\n"
                "slim.parallel_reader.parallel_read(pattern, %s)")
    yield Case("parallel_read-no-shuffle", "TFQ418",
               parallel % "tf.TFRecordReader, num_epochs=1, shuffle=False",
               _parallel_read_inputs, _parallel_read_expect(1, shuffled=False))
    yield Case("parallel_read-shuffle", "TFQ418",
               parallel % "tf.TFRecordReader, num_epochs=2, capacity=8, min_after_dequeue=1, "
                          "seed=2", _parallel_read_inputs, _parallel_read_expect(2, shuffled=True))
    yield Case("parallel_read-shuffle-expression", "TFQ418",
               parallel % "tf.TFRecordReader, num_epochs=1, shuffle=is_training, seed=5",
               _parallel_read_inputs, _parallel_read_expect(1, shuffled=True))


def all_cases():
    return [*_producer_cases(), *_reader_cases(), *_batching_cases(), *_queue_cases(),
            *_contrib_cases()]


CASES = all_cases()
CASE_IDS = [f"{case.code}-{case.id}" for case in CASES]
ROWS_WITH_REWRITES = [row for row in table.ROWS if row.tf_data]


def _finding(case):
    findings = [f for f in check("import tensorflow as tf\n" + case.source).findings
                if f.code == case.code]
    assert len(findings) == 1, (case.source, [f.code for f in check(
        "import tensorflow as tf\n" + case.source).findings])
    return findings[0]


def _rendered_templates(case):
    """The templates of the case's row that the checker rendered for it (instrumented)."""
    original = render.template
    used = []

    def recording(row, values):
        chosen = original(row, values)
        if row.code == case.code:
            used.append(chosen)
        return chosen
    render.template = recording
    try:
        _finding(case)
    finally:
        render.template = original
    return used


# --- tests that need no TensorFlow ---------------------------------------------------------

def test_every_row_with_a_rewrite_has_a_case():
    assert {row.code for row in ROWS_WITH_REWRITES} == {case.code for case in CASES}


def test_every_template_of_every_row_is_executed():
    """Each alternative a row can print (enqueue_many x dynamic_pad x keep_input, shuffle as
    an expression, hop_bytes...) is rendered by at least one case."""
    used = {}
    for case in CASES:
        used.setdefault(case.code, set()).update(_rendered_templates(case))
    for row in ROWS_WITH_REWRITES:
        templates = {row.tf_data} | {template for _, template in row.tf_data_when}
        missing = templates - used.get(row.code, set())
        assert not missing, (row.code, missing)


def test_template_fields_are_declared_parameters_with_known_forms():
    """`{name}` / `{name:form}`: a declared parameter (or its not_ negation), a known form."""
    import string
    for row in ROWS_WITH_REWRITES:
        params = {spec.partition("=")[0] for spec in row.params}
        params |= {"not_" + param for param in params}
        for template in [row.tf_data] + [t for _, t in row.tf_data_when]:
            for _, field, form, _ in string.Formatter().parse(template):
                if field is None:
                    continue
                assert field in params, (row.code, field)
                forms = render._FORMS  # pylint: disable=protected-access
                assert not form or form in forms, (row.code, form)


def test_case_ids_are_unique():
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_printed_rewrite_is_one_line_of_python(case):
    """What the checker prints for the case: one line, every field filled, valid Python."""
    text = _finding(case).tf_data
    assert text and "\n" not in text
    assert "{" not in text.split("  #")[0], text
    ast.parse(text)


@pytest.mark.parametrize("row", table.ROWS, ids=[row.code for row in table.ROWS])
def test_default_rewrite_is_one_line_of_python(row):
    """The guide shows each rewrite with TF1's defaults: still one line that parses."""
    text = render.tf_data(row)
    if not row.tf_data:
        return
    assert "\n" not in text
    ast.parse(text)


# --- the executions (TensorFlow, in a fresh process) ---------------------------------------

@pytest.fixture(scope="module")
def runs(request, tmp_path_factory):
    """Runs the selected cases' printed rewrites in one TF2 process; {case id: Run}."""
    wanted = {item.callspec.params["case"].id for item in request.session.items
              if item.originalname == "test_rewrite_runs_faithfully"
              and hasattr(item, "callspec")}
    base = tmp_path_factory.mktemp("rewrites")
    requests = [(case.id, _finding(case).tf_data, str(base / f"case{index}"))
                for index, case in enumerate(CASES) if case.id in wanted]
    request_path, result_path = base / "requests.pickle", base / "results.pickle"
    with open(request_path, "wb") as handle:
        pickle.dump(requests, handle)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONHASHSEED="0",
               PYTHONPATH=os.pathsep.join([HERE, ROOT, os.environ.get("PYTHONPATH", "")]))
    script = ("import sys, test_check_rewrites_run as cases; "
              "cases._child(sys.argv[1], sys.argv[2])")
    result = subprocess.run([sys.executable, "-c", script, str(request_path), str(result_path)],
                            capture_output=True, text=True, env=env, timeout=800, cwd=HERE)
    if result.returncode != 0 or not result_path.exists():
        pytest.fail(f"the TF process failed ({result.returncode}):\n{result.stderr[-6000:]}")
    with open(result_path, "rb") as handle:
        return pickle.load(handle)


@pytest.mark.needs_tf
@pytest.mark.timeout(900)
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_rewrite_runs_faithfully(case, runs):
    run = runs[case.id]
    assert not run.error, f"{run.snippet}\n\n{run.error}"
    try:
        case.expect(run)
    except AssertionError as error:
        raise AssertionError(f"rewrite: {run.snippet}\nreport: {run.value!r}\n"
                             f"TF1: {run.oracle!r}\n{error}") from error
