"""Measuring one variant of one workload in THIS process (the suite runs each in its own).

`measure(...)` returns a `Measurement`; nothing here prints. Timings:

    build_s        from the start of graph/dataset construction until the batch tensors
                   exist (before Session creation; for eager tf.data: the Dataset exists)
    first_batch_s  from the same start until the first batch is in hand (Session creation,
                   initializers, queue runners and filling shuffle buffers included)
    first_run_s    the first Session run alone (the initializers; the shim traces its
                   pipelines there, before the graph first runs); None for eager tf.data
    records_per_s  records after the first batch / seconds after the first batch, over
                   `params.batches` batches and at least `min_seconds`, or until the input
                   ends
    peak_rss_mb    ru_maxrss of this process at the end (TensorFlow's own footprint included)
    rss_growth_mb  peak_rss_mb less ru_maxrss once the graph (or dataset) is built: the
                   memory the running pipeline added (a reader holding a whole file shows
                   here)
    speeds_ms      how long a fixed pure-Python loop took (the fastest of 3) just before the
                   start and after the end, the pipeline's threads stopped: the machine's
                   speed around the measurement (see `machine_speed_ms`)
"""
from __future__ import annotations

import dataclasses
import os
import resource
import sys
import time
from typing import Optional

from . import Pipeline, load, make_params

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VARIANTS = ("legacy", "shim", "tf_data", "migrated")
TF_DATA_MODES = ("eager", "graph")


@dataclasses.dataclass
class Measurement:
    workload: str
    variant: str
    ok: bool = False
    error: Optional[str] = None
    mode: str = ""                 # "tf1 session" | "eager" | "tf1 session (tf.data)"
    records_per_s: Optional[float] = None
    first_batch_s: Optional[float] = None
    build_s: Optional[float] = None
    first_run_s: Optional[float] = None
    peak_rss_mb: Optional[float] = None
    rss_growth_mb: Optional[float] = None
    batch_size: Optional[int] = None   # records in the first batch
    batch_signature: Optional[list] = None  # [[shape, dtype], ...] of the first batch
    batches: int = 0                   # batches measured after the first
    records: int = 0                   # records measured after the first batch
    steady_s: Optional[float] = None
    input_ended: bool = False          # True: OutOfRangeError before the batch cap and
                                       # min_seconds were both reached
    tf_version: str = ""
    speeds_ms: Optional[list] = None   # [before the start, after the end]

    def to_dict(self):
        return dataclasses.asdict(self)


def prepare(workload: str, overrides: dict, data_dir: str) -> None:
    """Write the workload's data into data_dir (the caller decides whether it is cached)."""
    module = load(workload)
    module.prepare(make_params(module, overrides), data_dir)


def machine_speed_ms(rounds: int = 3) -> float:
    """The fastest of `rounds` timings (ms) of a fixed pure-Python loop: the machine's speed
    at the moment. The development VM runs at one of a few speeds (this loop: ~7, ~13 or
    ~25 ms) for a second or for minutes, so two processes a few seconds apart can build the
    same graph 1.5x apart. Not timed while a pipeline's threads run: they would compete for
    the cores and the GIL."""
    best = float("inf")
    for _ in range(rounds):
        began, table = time.perf_counter(), {}
        for index in range(100_000):
            table[index % 1000] = index
        best = min(best, time.perf_counter() - began)
    return best * 1e3


def _count(values) -> int:
    """Records in one batch: the leading dimension of its first component."""
    import tensorflow as tf
    first = tf.nest.flatten(values)[0]
    return int(first.shape[0]) if getattr(first, "ndim", 0) else 1


def _signature(values) -> list:
    """[[shape, dtype], ...] of a batch's components, to check that variants agree."""
    import numpy as np
    import tensorflow as tf
    return [[list(np.shape(value)), str(np.asarray(value).dtype)]
            for value in tf.nest.flatten(values)]


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _as_pipeline(built) -> Pipeline:
    return built if isinstance(built, Pipeline) else Pipeline(fetches=built)


class _Loop:
    """Counts batches; knows the first batch's time and when to stop."""

    def __init__(self, start, max_batches, min_seconds=0.0):
        self.start, self.max_batches, self.min_seconds = start, max_batches, min_seconds
        self.first_batch_s = self.steady_start = self.steady_end = None
        self.batch_size = self.signature = None
        self.batches = self.records = 0

    def add(self, values) -> bool:
        """Record one batch; False when `max_batches` are in and `min_seconds` have passed."""
        now = time.perf_counter()
        count = _count(values)
        if self.first_batch_s is None:
            self.first_batch_s, self.batch_size = now - self.start, count
            self.signature = _signature(values)
            self.steady_start = self.steady_end = time.perf_counter()
            return self.max_batches > 0
        self.batches += 1
        self.records += count
        self.steady_end = now
        return (self.batches < self.max_batches
                or now - self.steady_start < self.min_seconds)

    def fill(self, result: Measurement):
        result.first_batch_s, result.batch_size = self.first_batch_s, self.batch_size
        result.batch_signature = self.signature
        result.batches, result.records = self.batches, self.records
        if self.steady_start is not None:
            result.steady_s = self.steady_end - self.steady_start
            if self.records and result.steady_s > 0:
                result.records_per_s = self.records / result.steady_s


def _run_session(tf, fetches, pipeline: Pipeline, loop: _Loop, out_of_range, result):
    with tf.Session() as sess:
        began = time.perf_counter()
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        result.first_run_s = time.perf_counter() - began
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        if pipeline.start is not None:
            threads = list(threads) + list(pipeline.start(sess, coord))
        try:
            while loop.add(sess.run(fetches)):
                pass
        except out_of_range:
            result.input_ended = True
        finally:
            coord.request_stop()
            if pipeline.stop is not None:
                pipeline.stop(sess)
        coord.join(threads, stop_grace_period_secs=10)


def _migrated(module, data_dir):
    """The workload's legacy `build`, rewritten by compat-migrate: `(tf, loaded, params) ->
    dataset`. A workload whose pipeline lives elsewhere names it with `MIGRATE = (path,
    function, call)`, `call(function, tf, loaded, params)` adapting the arguments."""
    import importlib.util
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    from compat import migrate
    path, name, call = getattr(module, "MIGRATE", (module.__file__, "build", None))
    result = migrate.migrate_file(path, functions=[name])
    record = result.functions[0]
    if not record.migrated:
        raise RuntimeError(f"compat-migrate left {name} on the shim: {record.reason}")
    stem = os.path.splitext(os.path.basename(path))[0]
    target = os.path.join(data_dir, f"migrated_{stem}.py")
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(result.output)
    # In the workload's package, so that its relative imports still resolve.
    package = module.__name__.rpartition(".")[0] if path == module.__file__ else ""
    name_in = f"{package}.migrated_{stem}" if package else f"migrated_{stem}"
    spec = importlib.util.spec_from_file_location(name_in, target)
    migrated = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = migrated
    spec.loader.exec_module(migrated)
    function = getattr(migrated, name)
    if call is None:
        return function
    return lambda tf, loaded, params: call(function, tf, loaded, params)


def measure(workload: str, variant: str, overrides: dict, data_dir: str,
            tf_data_mode: str = "eager", min_seconds: float = 0.0) -> Measurement:
    """Measure one variant here; exceptions propagate (the caller records them)."""
    module = load(workload)
    params = make_params(module, overrides)
    result = Measurement(workload=workload, variant=variant)

    if variant == "legacy":
        import tensorflow.compat.v1 as tf
    elif variant == "shim":
        if ROOT not in sys.path:
            sys.path.insert(0, ROOT)
        import compat.v1 as tf
    elif variant in ("tf_data", "migrated"):
        import tensorflow.compat.v1 as tf
    else:
        raise ValueError(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
    import tensorflow as real_tf
    result.tf_version = real_tf.__version__

    graph_mode = variant not in ("tf_data", "migrated") or tf_data_mode == "graph"
    make_dataset = module.tf_data
    if variant == "migrated":
        make_dataset = _migrated(module, data_dir)
    if graph_mode:
        tf.disable_v2_behavior()  # first, as TF1 programs do (through the shim for "shim")
    loaded = module.load(params, data_dir)
    out_of_range = real_tf.errors.OutOfRangeError
    speed_before_ms = machine_speed_ms()

    if variant in ("tf_data", "migrated") and not graph_mode:
        result.mode = "eager"
        start = time.perf_counter()
        dataset = make_dataset(real_tf, loaded, params)
        result.build_s = time.perf_counter() - start
        built_rss_mb = _rss_mb()
        loop = _Loop(start, params.batches, min_seconds)
        for batch in dataset:  # iter() (the iterator's creation) counts toward first batch
            if not loop.add([component.numpy() for component in real_tf.nest.flatten(batch)]):
                break
        else:
            result.input_ended = True
    else:
        with tf.Graph().as_default():
            start = time.perf_counter()
            if variant in ("tf_data", "migrated"):
                result.mode = "graph (tf1 session)"
                dataset = make_dataset(real_tf, loaded, params)
                pipeline = Pipeline(tf.data.make_one_shot_iterator(dataset).get_next())
            else:
                result.mode = "tf1 session"
                pipeline = _as_pipeline(module.build(tf, loaded, params))
            result.build_s = time.perf_counter() - start
            built_rss_mb = _rss_mb()
            loop = _Loop(start, params.batches, min_seconds)
            _run_session(tf, pipeline.fetches, pipeline, loop, out_of_range, result)

    loop.fill(result)
    result.speeds_ms = [speed_before_ms, machine_speed_ms()]
    if loop.first_batch_s is None:
        raise RuntimeError("the pipeline produced no batch (input ended before the first)")
    result.peak_rss_mb = _rss_mb()
    result.rss_growth_mb = result.peak_rss_mb - built_rss_mb
    result.ok = True
    return result
