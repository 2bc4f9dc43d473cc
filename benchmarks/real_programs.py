"""Real-program input pipelines: legacy TF1 queues vs the compat.v1 shim.

The programs are tests/runtime/real_programs/*.py (CIFAR-10, Inception, im2txt, FaceNet, PTB,
pix2pix input code as those models wrote it) over larger synthetic data than the tests' (made
once per program and size in --data-dir), num_epochs=None. Each variant runs in its OWN
subprocess: tf.disable_v2_behavior() via the module under test (legacy: tensorflow.compat.v1,
shim: compat.v1), build, Session, initializers, queue runners under a Coordinator (plus
FaceNet's feeder thread), batches for --seconds after the first, a clean stop. Reported:
records/s after the first batch (median over rounds), shim/legacy (median of within-round
ratios), time to first batch from the start of graph building, and its phases (a second
table): the build, the first Session run (the initializers; the shim traces its pipelines
there), the first batch's own Session run. Rounds interleave the variants so machine noise
hits both alike; a failed variant is recorded and the run goes on. First batches vary more
than records/s from process to process: for startup, run more rounds (`--rounds 7 --seconds
0.5` measures 7 fresh processes per variant; records/s from rounds that short mean little).

    python benchmarks/real_programs.py                  # all programs, 3 rounds of 3 s
    python benchmarks/real_programs.py --quick          # smoke run (numbers mean nothing)
    python benchmarks/real_programs.py --programs ptb,facenet --rounds 5 --json out.json
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import math
import os
import sys
import tempfile
import threading
import time
from typing import NoReturn, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROGRAMS_DIR = os.path.join(ROOT, "tests", "runtime", "real_programs")
if HERE not in sys.path:
    sys.path.insert(0, HERE)

# The suite's helpers, so that tables, subprocesses and machine info match its own; none of
# these modules imports TensorFlow.
from report import (SHORT_STEADY_S, cell, cpus_text, markdown, median,  # noqa: E402
                    progress_printer, ratio_text, records_text, seconds_text)
from processes import (cached_data, compat_fingerprint, machine_info,  # noqa: E402
                       report_and_exit, run_child)

VARIANTS = ("legacy", "shim")
DEFAULT_ROUNDS, DEFAULT_SECONDS, QUICK_SECONDS = 3, 3.0, 0.5
DEFAULT_TIMEOUT_S = 300.0
DEFAULT_DATA_DIR = os.path.join(tempfile.gettempdir(), "compat_real_programs_data")
MIN_BATCHES = 20       # fewer after the first batch: records/s is mostly timer noise
STOP_GRACE_S = 5.0     # a thread still running after this is reported, not waited for
FACENET_FED_SIZES = (5, 2, 7, 4, 3)  # as the FaceNet test feeds them, in turn
# facenet_input.feed closes its queue after the paths it is given: give it enough epochs
# to outlast a run at this many images/s.
FACENET_IMAGES_PER_S_BOUND = 20_000


@dataclasses.dataclass
class Program:
    name: str
    module: str          # in tests/runtime/real_programs
    data: dict           # write_data kwargs: the benchmark's data size
    build: dict          # build kwargs beyond (tf, data_dir); sizes describe the larger data
    counted: str = "images"  # the fetched component whose leading dim counts records
    unit: str = "images"
    count_elements: bool = False       # count all of `counted`'s elements instead
    fed_sizes: Optional[tuple] = None  # batch sizes fed on successive runs (FaceNet)


# The programs' own defaults otherwise (batch sizes, threads, num_epochs=None).
_INCEPTION, _IM2TXT = {"records_per_shard": 250}, {"records_per_shard": 300}
_FACENET = {"num_people": 20, "per_person": 50}
PROGRAMS = {p.name: p for p in (
    Program("cifar10", "cifar10_input", {"records_per_file": 1000}, {"examples_per_epoch": 5000}),
    Program("inception-train", "inception_input", _INCEPTION,
            {"train": True, "examples_per_shard": 250}),
    Program("inception-eval", "inception_input", _INCEPTION,
            {"train": False, "examples_per_shard": 250}),
    Program("im2txt-train", "im2txt_input", _IM2TXT,
            {"is_training": True, "values_per_shard": 300}, unit="image-caption pairs"),
    Program("im2txt-eval", "im2txt_input", _IM2TXT,
            {"is_training": False, "values_per_shard": 300}, unit="image-caption pairs"),
    Program("facenet", "facenet_input", _FACENET, {}, fed_sizes=FACENET_FED_SIZES),
    Program("facenet-fixed5", "facenet_input", _FACENET, {"batch_size": 5}),
    Program("ptb", "ptb_reader", {"sentences": (20000, 200, 200)}, {}, counted="input_data",
            unit="tokens (batch_size x num_steps)", count_elements=True),
    Program("pix2pix", "pix2pix_input", {"num_pairs": 200}, {}, counted="inputs",
            unit="image pairs"),
)}


def _call(function, kwargs):
    return f"{function}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"


# --------------------------------------------------------------------------- child side


@dataclasses.dataclass
class Measurement:
    program: str
    variant: str
    ok: bool = False
    error: Optional[str] = None
    records_per_s: Optional[float] = None
    first_batch_s: Optional[float] = None   # from the start of graph building
    build_s: Optional[float] = None         # until the batch tensors exist
    first_run_s: Optional[float] = None     # the initializers' Session run alone
    first_fetch_s: Optional[float] = None   # the first batch's Session run alone
    steady_s: Optional[float] = None        # first batch to last batch
    batches: int = 0                        # after the first
    records: int = 0                        # after the first
    signature: Optional[list] = None        # [[name, shape, dtype]]; None for dims that varied
    input_ended: bool = False
    stop_s: Optional[float] = None
    stop_problem: Optional[str] = None      # threads left running, errors seen at the stop


def _program_module(program: Program):
    for path in (ROOT, PROGRAMS_DIR):
        if path not in sys.path:
            sys.path.insert(0, path)
    return importlib.import_module(program.module)


def _signature(values: dict, previous: Optional[list] = None) -> list:
    """[[name, shape, dtype]] of a batch; dims that differ from `previous` become None
    (dynamic padding, fed batch sizes), so variants compare by the shapes they produce."""
    import numpy as np
    current = [[name, list(np.shape(value)), str(np.asarray(value).dtype)]
               for name, value in sorted(values.items())]
    if previous is None:
        return current
    return [[name, None if old is None or len(old) != len(new) else
             [a if a == b else None for a, b in zip(old, new)], dtype]
            for (name, old, dtype), (_, new, _) in zip(previous, current)]


def _start_facenet_feeder(sess, inputs, module, data_dir, seconds, coord):
    paths, labels = module.dataset(data_dir)
    epochs = math.ceil(FACENET_IMAGES_PER_S_BOUND * (seconds + 30) / len(paths))
    paths, labels = paths * epochs, labels * epochs
    flags = module.control_flags(len(paths))

    def feed():
        with coord.stop_on_exception():
            module.feed(sess, inputs, paths, labels, flags, coord=coord)

    thread = threading.Thread(target=feed, daemon=True, name="facenet-feeder")
    thread.start()
    return thread


def _stop(sess, coord, threads, feeder, result) -> None:
    began, problems = time.perf_counter(), []
    coord.request_stop()
    try:
        coord.join(threads, stop_grace_period_secs=STOP_GRACE_S, ignore_live_threads=True)
    except Exception as error:  # noqa: BLE001 - an error a runner hit before the stop
        problems.append(f"coord.join: {type(error).__name__}: {error}".splitlines()[0])
    # The feeder may be blocked on a full queue nobody dequeues any more; closing the
    # session cancels its pending enqueue.
    sess.close()
    if feeder is not None:
        feeder.join(STOP_GRACE_S)
    alive = [t.name for t in list(threads) + [feeder] if t is not None and t.is_alive()]
    if alive:
        problems.append(f"{len(alive)} thread(s) still running: {', '.join(alive[:5])}")
    result.stop_s, result.stop_problem = time.perf_counter() - began, "; ".join(problems) or None


def measure_child(program: Program, variant: str, data_dir: str, seconds: float
                  ) -> Measurement:
    module = _program_module(program)
    if variant == "legacy":
        import tensorflow.compat.v1 as tf
    else:
        import compat.v1 as tf
    import tensorflow as real_tf
    tf.disable_v2_behavior()
    result = Measurement(program.name, variant)
    with tf.Graph().as_default():
        start = time.perf_counter()
        built = module.build(tf, data_dir, **program.build)
        fetches = built.fetches() if hasattr(built, "fetches") else built
        result.build_s = time.perf_counter() - start
        sess = tf.Session()
        initializers = [tf.global_variables_initializer(), tf.local_variables_initializer()]
        began = time.perf_counter()
        sess.run(initializers)
        result.first_run_s = time.perf_counter() - began
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        feeder = (_start_facenet_feeder(sess, built, module, data_dir, seconds, coord)
                  if program.module == "facenet_input" else None)
        sizes = program.fed_sizes

        def step(index):
            return sess.run(fetches, feed_dict={built.batch_size: sizes[index % len(sizes)]}
                            if sizes else None)

        try:
            began = time.perf_counter()
            values = step(0)
            now = steady_start = time.perf_counter()
            result.first_fetch_s = now - began
            result.first_batch_s, result.signature = now - start, _signature(values)
            while now - steady_start < seconds:
                values = step(result.batches + 1)
                now = time.perf_counter()
                counted = values[program.counted]
                result.records += counted.size if program.count_elements else len(counted)
                result.batches += 1
                result.steady_s = now - steady_start
                result.signature = _signature(values, result.signature)
        except real_tf.errors.OutOfRangeError:
            if result.first_batch_s is None:
                raise RuntimeError("the input ended before the first batch") from None
            result.input_ended = True
        finally:
            _stop(sess, coord, threads, feeder, result)
    if result.records and result.steady_s:
        result.records_per_s = result.records / result.steady_s
    result.ok = True
    return result


def child_main(request: dict) -> NoReturn:
    def produce():
        program = PROGRAMS[request["program"]]
        if request["action"] == "prepare":
            _program_module(program).write_data(request["data_dir"], **program.data)
            return {"ok": True}
        return dataclasses.asdict(measure_child(program, request["variant"],
                                                request["data_dir"], request["seconds"]))

    report_and_exit(produce)


# --------------------------------------------------------------------------- parent side


@dataclasses.dataclass
class Config:
    programs: list
    rounds: int = DEFAULT_ROUNDS
    seconds: float = DEFAULT_SECONDS
    data_dir: str = DEFAULT_DATA_DIR
    timeout_s: float = DEFAULT_TIMEOUT_S
    quick: bool = False


def run_request(request: dict, timeout_s: float) -> dict:
    """Run `request` in a subprocess of this script (see `child_main`); its result."""
    return run_child([os.path.abspath(__file__), "--child", json.dumps(request)], timeout_s)


def prepare_data(config: Config, program: Program) -> tuple:
    """(data directory, error or None), written by a subprocess unless cached."""
    path = os.path.join(config.data_dir, "-".join([program.module] + [
        f"{k}={'x'.join(map(str, v)) if isinstance(v, tuple) else v}"
        for k, v in program.data.items()]))
    # The data go one level down: FaceNet lists every entry of its directory, the marker
    # file included.
    error = cached_data(path, lambda directory: run_request(
        {"action": "prepare", "program": program.name,
         "data_dir": os.path.join(directory, "data")}, config.timeout_s))
    return (None, error) if error else (os.path.join(path, "data"), None)


# The phases of the time to first batch, each a median over the rounds.
STARTUP = ("build_s", "first_run_s", "first_fetch_s", "first_batch_s")


def summarize(measurements: list, programs: list, rounds: int) -> dict:
    """{program: {variant: medians and run counts, "shim/legacy": {median, rounds}}}."""
    by_key = {(m["program"], m["variant"], m["round"]): m for m in measurements}
    summary = {}
    for name in programs:
        entry = {}
        for variant in VARIANTS:
            runs = [m for m in (by_key.get((name, variant, r)) for r in range(rounds)) if m]
            ok = [m for m in runs if m.get("ok")]
            entry[variant] = {"records_per_s": median(m["records_per_s"] for m in ok),
                              **{key: median(m.get(key) for m in ok) for key in STARTUP},
                              "ok_runs": len(ok), "failed_runs": len(runs) - len(ok)}
        pairs = [(by_key.get((name, "shim", r)), by_key.get((name, "legacy", r)))
                 for r in range(rounds)]
        ratios = [shim["records_per_s"] / legacy["records_per_s"] for shim, legacy in pairs
                  if shim and legacy and shim.get("records_per_s") and legacy.get("records_per_s")]
        entry["shim/legacy"] = {"median": median(ratios), "rounds": ratios}
        summary[name] = entry
    return summary


def run_benchmark(config: Config, progress=lambda event, info: None) -> dict:
    """Prepare data, measure legacy and shim of every program each round; the whole result.
    `progress(event, info)` gets ("prepared", ...) and ("measured", measurement)."""
    machine, start = machine_info(), time.perf_counter()
    data_dirs, data_errors = {}, {}
    for name in config.programs:
        began = time.perf_counter()
        data_dirs[name], error = prepare_data(config, PROGRAMS[name])
        if error:
            data_errors[name] = error
        progress("prepared", {"program": name, "data_dir": data_dirs[name], "error": error,
                              "seconds": time.perf_counter() - began})
    measurements = []
    for round_index in range(config.rounds):
        for name in config.programs:
            for variant in VARIANTS:
                result = ({"ok": False, "error": data_errors[name]} if name in data_errors
                          else run_request({"action": "measure", "program": name,
                                          "variant": variant, "data_dir": data_dirs[name],
                                          "seconds": config.seconds}, config.timeout_s))
                result.update(program=name, variant=variant, round=round_index)
                measurements.append(result)
                progress("measured", result)
    return {"config": dataclasses.asdict(config), "machine": machine,
            "programs": {name: dataclasses.asdict(PROGRAMS[name]) for name in config.programs},
            "total_seconds": time.perf_counter() - start, "measurements": measurements,
            "summary": summarize(measurements, config.programs, config.rounds),
            "compat_changed_during_run":
                compat_fingerprint() != machine["compat_source_at_start"]}


def format_table(result: dict) -> str:
    header = ["program", "unit", "legacy rec/s", "shim rec/s", "shim/legacy",
              "1st batch legacy s", "1st batch shim s"]
    rows = [[name, PROGRAMS[name].unit]
            + [cell(s[v], records_text(s[v]["records_per_s"])) for v in VARIANTS]
            + [ratio_text(s["shim/legacy"]["median"])]
            + [cell(s[v], seconds_text(s[v]["first_batch_s"])) for v in VARIANTS]
            for name, s in result["summary"].items()]
    return markdown(header, rows)


def format_startup_table(result: dict) -> str:
    """build / first run (initializers) / first fetch / first batch, median ms per variant."""
    def phases(entry):
        if not entry["ok_runs"]:
            return "failed"
        return " / ".join("-" if entry[key] is None else f"{entry[key] * 1e3:.0f}"
                          for key in STARTUP)

    header = ["program"] + [f"{variant}: build / 1st run / 1st fetch / 1st batch ms"
                            for variant in VARIANTS]
    rows = [[name] + [phases(s[variant]) for variant in VARIANTS]
            for name, s in result["summary"].items()]
    return markdown(header, rows)


def warnings_for(result: dict) -> list:
    """One line per problem: short runs, legacy/shim shape disagreements, stop trouble,
    inputs that ended, failures, the shim's source changing mid-run."""
    lines, ms = [], result["measurements"]
    where = lambda m: f"{m['program']} {m['variant']} round {m['round'] + 1}"  # noqa: E731
    short = [where(m) for m in ms if m.get("ok") and (
        (m["steady_s"] or 0) < SHORT_STEADY_S or m["batches"] < MIN_BATCHES)]
    if short and not result["config"]["quick"]:
        lines.append(f"{len(short)} measurement(s) lasted under {SHORT_STEADY_S:g} s or "
                     f"{MIN_BATCHES} batches after the first; their records/s mean little "
                     f"(raise --seconds): {', '.join(short)}")
    for name in result["config"]["programs"]:
        signatures = {m["variant"]: m["signature"] for m in ms
                      if m["program"] == name and m.get("ok")}
        if len({json.dumps(s) for s in signatures.values()}) > 1:
            lines.append(f"{name}: legacy and shim batches differ in shape or dtype: "
                         + "; ".join(f"{v} {s}" for v, s in signatures.items()))
    lines += [f"{where(m)}: the input ended after {m['batches']} batches"
              for m in ms if m.get("input_ended")]
    lines += [f"{where(m)}: stopping took {m['stop_s']:.1f} s: {m['stop_problem']}"
              for m in ms if m.get("stop_problem")]
    lines += [f"{where(m)} FAILED: {(m.get('error') or '?').splitlines()[0][:300]}"
              for m in ms if not m.get("ok")]
    if result["compat_changed_during_run"]:
        lines.append("the shim's source (compat/) changed during the run: the shim's "
                     "measurements may come from different versions of it")
    return lines


QUICK_WARNING = ("WARNING: --quick is a smoke run (1 round, {seconds:g} s per variant): it "
                 "only checks that every program runs under both variants. Its numbers MEAN "
                 "NOTHING; do not quote or compare them.")


def build_parser() -> argparse.ArgumentParser:
    programs = "\n".join(
        f"  {name:16}records are {p.unit}"
        + (f"; batch size fed each run, cycling {p.fed_sizes}" if p.fed_sizes else "")
        + f"\n{'':18}{_call(p.module + '.build', p.build)}\n"
        f"{'':18}data: {_call('write_data', p.data)}" for name, p in PROGRAMS.items())
    parser = argparse.ArgumentParser(
        prog="real_programs.py", description=__doc__.split("\n\n")[0],
        epilog=f"{__doc__.split(chr(10) * 2, 1)[1]}\nprograms (other build arguments: the "
               f"program's defaults, num_epochs=None included):\n{programs}",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add = parser.add_argument
    add("--programs", default=",".join(PROGRAMS), metavar="A,B,...",
        help="comma-separated programs to run, in this order (default: all, listed below)")
    add("--rounds", type=int, metavar="N",
        help="rounds; each runs every program's legacy then shim variant, each in a fresh "
             f"subprocess (default {DEFAULT_ROUNDS}; 1 with --quick)")
    add("--seconds", type=float, metavar="S",
        help="how long each variant fetches batches after its first "
             f"(default {DEFAULT_SECONDS:g}; {QUICK_SECONDS:g} with --quick)")
    add("--quick", action="store_true",
        help=f"smoke run: 1 round of {QUICK_SECONDS:g} s per variant unless --rounds/--seconds "
             "say otherwise; checks that everything runs, its numbers mean nothing")
    add("--json", metavar="PATH",
        help="write everything to PATH: config, program definitions, machine info (CPUs, TF "
             "version, load average, git commit), every raw measurement, medians, ratios")
    add("--data-dir", default=DEFAULT_DATA_DIR, metavar="DIR",
        help="where generated data is cached, one directory per data set and size "
             f"(default {DEFAULT_DATA_DIR})")
    add("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
        help="give up on a subprocess after this long and record a timeout error "
             f"(default {DEFAULT_TIMEOUT_S:.0f})")
    add("--child", metavar="JSON",
        help="internal: run one request (prepare or measure) in this process and print its "
             "result (the parent runs every subprocess this way)")
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.child:
        child_main(json.loads(args.child))  # does not return
    names = [name.strip() for name in args.programs.split(",") if name.strip()]
    unknown = [name for name in names if name not in PROGRAMS]
    if unknown or not names:
        parser.error(f"unknown program(s) {', '.join(unknown) or '(none given)'}; known: "
                     f"{', '.join(PROGRAMS)}")
    rounds = args.rounds if args.rounds is not None else (1 if args.quick else DEFAULT_ROUNDS)
    seconds = args.seconds if args.seconds is not None else (
        QUICK_SECONDS if args.quick else DEFAULT_SECONDS)
    if rounds < 1 or seconds <= 0:
        parser.error("--rounds must be at least 1 and --seconds above 0")
    config = Config(names, rounds, seconds, args.data_dir, args.timeout, args.quick)
    warning = QUICK_WARNING.format(seconds=seconds) if args.quick else None
    if warning:
        print(warning, file=sys.stderr)
    progress = progress_printer(rounds * len(names) * len(VARIANTS), "program", "round")

    result = run_benchmark(config, progress)
    machine = result["machine"]
    print(f"\nrecords/s after the first batch: medians of {rounds} round(s) of {seconds:g} s, "
          f"each variant in its own process; shim/legacy: median of within-round ratios. "
          f"TF {machine['tensorflow_version']}, {cpus_text(result)}, load average "
          f"{machine['load_average_at_start'][0]:.1f}, {machine['date']}; compat "
          f"{machine['git']['commit'][:8]}"
          f"{' + uncommitted changes' if machine['git']['compat_dirty'] else ''}.")
    print(format_table(result))
    print(f"\nStartup, medians of {rounds} process(es) per variant:")
    print(format_startup_table(result))
    for line in warnings_for(result):
        print(f"\nWARNING: {line}")
    print(f"\nTotal {result['total_seconds']:.0f} s.")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(result, handle, indent=2)
        print(f"Wrote {args.json}")
    if warning:
        print(warning)
    return 0


if __name__ == "__main__":
    sys.exit(main())
