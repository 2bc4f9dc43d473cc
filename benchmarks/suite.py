"""Input-pipeline benchmark suite: TF1 queues (legacy) vs the compat.v1 shim vs hand-written tf.data.

For each workload (benchmarks/workloads/*.py) three variants run, each in its OWN subprocess:

  legacy   the TF1 queue program on real `tensorflow.compat.v1`, after disable_v2_behavior()
  shim     the SAME program function with `compat.v1`, after disable_v2_behavior()
  tf_data  the best hand-written tf.data equivalent (sequential reads, shuffle, batch, then
           batched parsing where possible, prefetch(1)); eager by default (--tf-data-mode)
  migrated the legacy program function rewritten by compat-migrate (plain TF2 tf.data, run
           like tf_data); an error where the tool leaves the function on the shim

Variants are interleaved, in an order rotated from run to run (run 1: legacy, shim, tf_data;
run 2: shim, tf_data, legacy; ...), so machine noise, and whatever a process leaves to the
next, hits all alike. Per variant: records/s after the first batch, time to first batch
(from the start of graph/dataset construction), graph build time (until the batch tensors
exist, before the Session), the first Session run alone (the initializers; the shim traces
its pipelines there), and peak RSS (ru_maxrss of the subprocess, TensorFlow included).
Reported: medians over runs, and medians of the ratios shim/legacy, shim/tf_data and
migrated/shim taken
within each run. Each process also times a fixed pure-Python loop before it starts and after
it ends (`speeds_ms`); the report gives the loop's range over the run: a machine whose speed
changes while the suite runs (the development VM's does, by up to 2x, for a second or for
minutes) moves startup times as much, and only medians over many runs can tell ~10% apart.
A variant that fails is recorded as an error; the suite goes on.

    python benchmarks/suite.py                          # all workloads, 3 runs
    python benchmarks/suite.py --quick                  # smoke run (numbers mean nothing)
    python benchmarks/suite.py --workloads mnist,csv --runs 5 --json out.json --plot out.png

Synthetic data is generated once per workload into --data-dir and reused.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import textwrap
import time
from typing import Any, Callable, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import workloads  # noqa: E402  (benchmarks/workloads; TensorFlow is not imported here)
from report import (SHORT_STEADY_S, VARIANTS, cpus_text, format_details,  # noqa: E402
                    format_errors, format_table, median, plot, progress_printer)
from processes import (cached_data, compat_fingerprint, machine_info,  # noqa: E402
                       run_child, usable_cpus)

METRICS = ("records_per_s", "first_batch_s", "build_s", "first_run_s", "peak_rss_mb",
           "rss_growth_mb")
RATIOS = (("shim", "legacy"), ("shim", "tf_data"), ("migrated", "shim"))
QUICK_BATCHES = 10
DEFAULT_MIN_SECONDS = 1.0
DEFAULT_RUNS = 3
DEFAULT_TIMEOUT_S = 600.0
DEFAULT_DATA_DIR = os.path.join(tempfile.gettempdir(), "compat_benchmark_data")


@dataclasses.dataclass
class SuiteConfig:
    workloads: list[str] = dataclasses.field(default_factory=lambda: list(workloads.NAMES))
    runs: int = DEFAULT_RUNS
    batches: Optional[int] = None            # overrides every workload's `batches`
    params: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    data_dir: str = DEFAULT_DATA_DIR
    tf_data_mode: str = "eager"
    min_seconds: float = DEFAULT_MIN_SECONDS
    timeout_s: float = DEFAULT_TIMEOUT_S
    quick: bool = False
    cpus: Optional[int] = None               # pin every measuring process to this many CPUs

    def overrides(self, workload: str) -> dict[str, Any]:
        values = dict(self.params.get(workload, {}))
        if self.batches is not None:
            values.setdefault("batches", self.batches)
        return values


# --------------------------------------------------------------------------- measuring

def _run_variant(request: dict, timeout_s: float, cpus: Optional[int] = None) -> dict:
    return run_child([os.path.join(HERE, "run_variant.py"), json.dumps(request)], timeout_s,
                     cpus)


def prepare_data(config: SuiteConfig, workload: str) -> tuple[str, Optional[str]]:
    """(data directory, error or None): generate the workload's data unless cached."""
    module = workloads.load(workload)
    params = workloads.make_params(module, config.overrides(workload))
    path = os.path.join(config.data_dir, workloads.data_key(module, params))
    return path, cached_data(path, lambda directory: _run_variant(
        {"action": "prepare", "workload": workload, "params": config.overrides(workload),
         "data_dir": directory}, config.timeout_s))


def measure_variant(config: SuiteConfig, workload: str, variant: str, data_dir: str,
                    run: int) -> dict:
    """One measurement (a plain dict: the child's Measurement fields, run, wall_s)."""
    payload = _run_variant({"action": "measure", "workload": workload, "variant": variant,
                            "params": config.overrides(workload), "data_dir": data_dir,
                            "tf_data_mode": config.tf_data_mode,
                            "min_seconds": config.min_seconds}, config.timeout_s, config.cpus)
    payload.update(workload=workload, variant=variant, run=run)
    return payload


def short_measurements(measurements: list[dict]) -> list[str]:
    """'workload variant run N' of each measurement whose steady state was too short."""
    return [f"{m['workload']} {m['variant']} run {m['run'] + 1}" for m in measurements
            if m.get("ok") and (m.get("steady_s") or 0.0) < SHORT_STEADY_S]


def summarize(measurements: list[dict], workload_names, runs: int) -> tuple[dict, dict]:
    """(medians[workload][variant][metric], ratios[workload]["shim/legacy"][metric]).

    Ratios are taken within each run (both sides of a run must have succeeded), then the
    median over runs; each entry also lists the per-run values.
    """
    by_key = {(m["workload"], m["variant"], m["run"]): m for m in measurements}
    medians, ratios = {}, {}
    for workload in workload_names:
        medians[workload] = {}
        for variant in VARIANTS:
            ok = [m for m in (by_key.get((workload, variant, run)) for run in range(runs))
                  if m is not None and m.get("ok")]
            failed = [m for m in (by_key.get((workload, variant, run)) for run in range(runs))
                      if m is not None and not m.get("ok")]
            entry = {metric: median(m.get(metric) for m in ok) for metric in METRICS}
            entry.update(ok_runs=len(ok), failed_runs=len(failed),
                         errors=sorted({m.get("error", "?") for m in failed}))
            medians[workload][variant] = entry
        ratios[workload] = {}
        for top, bottom in RATIOS:
            name = f"{top}/{bottom}"
            ratios[workload][name] = {}
            for metric in METRICS:
                per_run = []
                for run in range(runs):
                    a, b = by_key.get((workload, top, run)), by_key.get((workload, bottom, run))
                    if (a and b and a.get("ok") and b.get("ok") and a.get(metric)
                            and b.get(metric)):
                        per_run.append(a[metric] / b[metric])
                ratios[workload][name][metric] = {"median": median(per_run), "runs": per_run}
    return medians, ratios


def speed_range(measurements: list[dict]) -> Optional[tuple[float, float]]:
    """(fastest, slowest) time of the speed loop (`speeds_ms`) over the measurements, or
    None without any."""
    speeds = [speed for m in measurements if m.get("ok") for speed in m.get("speeds_ms") or ()
              if speed]
    return (min(speeds), max(speeds)) if speeds else None


def signature_mismatches(measurements: list[dict]) -> dict[str, dict[str, list]]:
    """{workload: {variant: first-batch signature}} for workloads whose variants' first
    batches differ in shapes or dtypes (they should all produce the same batches)."""
    signatures: dict[str, dict[str, list]] = {}
    for m in measurements:
        if m.get("ok") and m.get("batch_signature") is not None:
            signatures.setdefault(m["workload"], {}).setdefault(m["variant"],
                                                                m["batch_signature"])
    return {workload: by_variant for workload, by_variant in signatures.items()
            if len({json.dumps(sig) for sig in by_variant.values()}) > 1}


def run_order(run: int) -> tuple:
    """The variants in the order run `run` measures them: each first, second and last equally
    often over runs."""
    shift = run % len(VARIANTS)
    return tuple(VARIANTS[shift:]) + tuple(VARIANTS[:shift])


def run_suite(config: SuiteConfig, progress: Optional[Callable[[str, dict], None]] = None
              ) -> dict:
    """Prepare data, measure every variant `config.runs` times (interleaved), summarize.

    `progress(event, info)` is called with ("prepared", ...), ("measured", measurement);
    the return value is the whole result (config, machine, measurements, medians, ratios).
    """
    progress = progress or (lambda event, info: None)
    machine = machine_info()
    start = time.perf_counter()
    data_dirs, data_errors = {}, {}
    for workload in config.workloads:
        began = time.perf_counter()
        data_dirs[workload], error = prepare_data(config, workload)
        if error:
            data_errors[workload] = error
        progress("prepared", {"workload": workload, "data_dir": data_dirs[workload],
                              "error": error, "seconds": time.perf_counter() - began})
    measurements = []
    for run in range(config.runs):
        for workload in config.workloads:
            for variant in run_order(run):
                if workload in data_errors:
                    result = {"workload": workload, "variant": variant, "run": run,
                              "ok": False, "error": data_errors[workload]}
                else:
                    result = measure_variant(config, workload, variant, data_dirs[workload],
                                             run)
                measurements.append(result)
                progress("measured", result)
    medians, ratios = summarize(measurements, config.workloads, config.runs)
    machine["load_average_at_end"] = list(os.getloadavg())
    machine["compat_source_at_end"] = compat_fingerprint()
    return {
        "config": dataclasses.asdict(config),
        "workload_params": {
            workload: dataclasses.asdict(workloads.make_params(
                workloads.load(workload), config.overrides(workload)))
            for workload in config.workloads},
        "machine": machine,
        "total_seconds": time.perf_counter() - start,
        "measurements": measurements,
        "medians": medians,
        "ratios": ratios,
        "signature_mismatches": signature_mismatches(measurements),
        "compat_changed_during_run": (machine["compat_source_at_start"]
                                      != machine["compat_source_at_end"]),
    }


# --------------------------------------------------------------------------- CLI

QUICK_WARNING = ("WARNING: --quick is a smoke run ({batches} batches, 1 run): it only checks "
                 "that every pipeline runs end to end. Its numbers MEAN NOTHING; do not quote "
                 "or compare them.")


def _parse_param(text: str):
    try:
        target, value = text.split("=", 1)
        workload, key = target.split(".", 1)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected WORKLOAD.NAME=VALUE (e.g. mnist.records=20000), got {text!r}") from None
    return workload.strip(), key.strip(), value.strip()


def _workload_help():
    lines = []
    for name in workloads.NAMES:
        module = workloads.load(name)
        params = ", ".join(f"{field.name}={getattr(module.Params(), field.name)}"
                           + ("*" if field.metadata.get("data") else "")
                           for field in dataclasses.fields(module.Params))
        lines.append(f"  {name:14} {module.DESCRIPTION}")
        lines.append(textwrap.fill(f"records are {module.UNIT}; params: {params}", width=92, initial_indent=" " * 17,
                                   subsequent_indent=" " * 25))
    lines.append(" " * 17 + "(* shapes the generated data; `batches`: batches measured "
                 "after the first)")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="suite.py", description=__doc__.split("\n\n")[0],
        epilog=f"{__doc__.split(chr(10) * 2, 1)[1]}\nworkloads:\n{_workload_help()}",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--workloads", default=",".join(workloads.NAMES), metavar="A,B,...",
        help="comma-separated workloads to run, in this order (default: all: "
             f"{','.join(workloads.NAMES)})")
    parser.add_argument(
        "--runs", type=int, default=None, metavar="N",
        help=f"runs per variant; each run measures legacy, shim, tf_data in turn, each in a "
             f"fresh subprocess; medians are over runs (default {DEFAULT_RUNS}; 1 with --quick)")
    parser.add_argument(
        "--quick", action="store_true",
        help=f"smoke run: {QUICK_BATCHES} batches per variant and 1 run (unless --batches/"
             f"--runs say otherwise). Checks that everything runs; the numbers mean nothing")
    parser.add_argument(
        "--batches", type=int, default=None, metavar="N",
        help="batches measured after the first, for every workload (default: each "
             "workload's own `batches` param, see below; fewer if the input ends first, "
             "more while --min-seconds have not passed)")
    parser.add_argument(
        "--min-seconds", type=float, default=None, metavar="S",
        help="keep measuring past `batches` until the steady state (after the first batch) "
             f"lasted S seconds or the input ends, so fast variants are not timed over a "
             f"few hundred ms of noise (default {DEFAULT_MIN_SECONDS:g}; 0 with --quick)")
    parser.add_argument(
        "--param", action="append", default=[], type=_parse_param,
        metavar="WORKLOAD.NAME=VALUE",
        help="set a workload parameter (repeatable), e.g. --param mnist.records=20000 "
             "--param mnist.epochs=5; data parameters change the generated data set")
    parser.add_argument(
        "--tf-data-mode", choices=("eager", "graph"), default="eager",
        help="how the tf_data variant runs: 'eager' (iterate the Dataset in Python, TF2 "
             "style; the default: as fast or faster on the development machine) or 'graph' "
             "(disable_v2_behavior(), one-shot iterator, Session.run per batch, as TF1 "
             "programs fetch)")
    parser.add_argument(
        "--json", metavar="PATH",
        help="write everything to PATH: config, workload params, machine info (CPU count, "
             "TF version, date, load average, git commit), every raw measurement, medians "
             "and ratios (with their per-run values)")
    parser.add_argument(
        "--plot", metavar="PATH",
        help="write a PNG of median records/s per workload and variant (grouped bars, log "
             "scale); needs matplotlib (pip install matplotlib, or the `plot` extra)")
    parser.add_argument(
        "--data-dir", default=DEFAULT_DATA_DIR, metavar="DIR",
        help="where generated data is cached, one directory per workload and data "
             f"parameters (default {DEFAULT_DATA_DIR})")
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
        help="give up on a subprocess after this long and record a timeout error "
             f"(default {DEFAULT_TIMEOUT_S:.0f})")
    parser.add_argument(
        "--cpus", type=int, default=None, metavar="N",
        help="pin every measuring subprocess to the first N CPUs this process may use "
             "(Linux), to see how the variants scale with cores: TensorFlow sizes its thread "
             "pools, and the shim its parallel calls, by the CPUs a process may use (default: "
             "all of them)")
    parser.add_argument(
        "--details", action=argparse.BooleanOptionalAction, default=True,
        help="also print a second table of absolute medians per variant (first batch, "
             "build, first Session run, RSS, batch size, median batches measured) and "
             "shim/tf.data ratios "
             "(default: on)")
    return parser


def config_from_args(args, parser) -> SuiteConfig:
    names = [name.strip() for name in args.workloads.split(",") if name.strip()]
    unknown = [name for name in names if name not in workloads.MODULES]
    if unknown or not names:
        parser.error(f"unknown workload(s) {', '.join(unknown) or '(none given)'}; "
                     f"known: {', '.join(workloads.NAMES)}")
    params: dict[str, dict[str, Any]] = {}
    for workload, key, value in args.param:
        if workload not in workloads.MODULES:
            parser.error(f"--param {workload}.{key}: unknown workload {workload!r}")
        params.setdefault(workload, {})[key] = value
        try:
            workloads.make_params(workloads.load(workload), params[workload])
        except (KeyError, ValueError) as error:
            parser.error(f"--param {workload}.{key}={value}: {error}")
    runs = args.runs if args.runs is not None else (1 if args.quick else DEFAULT_RUNS)
    if runs < 1:
        parser.error("--runs must be at least 1")
    batches = args.batches if args.batches is not None else (
        QUICK_BATCHES if args.quick else None)
    min_seconds = args.min_seconds if args.min_seconds is not None else (
        0.0 if args.quick else DEFAULT_MIN_SECONDS)
    if min_seconds < 0:
        parser.error("--min-seconds must be at least 0")
    if args.cpus is not None:
        if not hasattr(os, "sched_setaffinity"):
            parser.error("--cpus needs os.sched_setaffinity (Linux); this platform has none")
        if not 1 <= args.cpus <= len(usable_cpus()):
            parser.error(f"--cpus {args.cpus}: this process may use {len(usable_cpus())} "
                         f"CPU(s); give 1 to {len(usable_cpus())}")
    return SuiteConfig(workloads=names, runs=runs, batches=batches, params=params,
                       min_seconds=min_seconds,
                       data_dir=args.data_dir, tf_data_mode=args.tf_data_mode,
                       timeout_s=args.timeout, quick=args.quick, cpus=args.cpus)


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    config = config_from_args(args, parser)
    warning = QUICK_WARNING.format(batches=config.batches) if config.quick else None
    if warning:
        print(warning, file=sys.stderr)
    total = config.runs * len(config.workloads) * len(VARIANTS)
    progress = progress_printer(total, "workload", "run")

    result = run_suite(config, progress)
    machine = result["machine"]
    print()
    load = machine["load_average_at_start"][0], machine["load_average_at_end"][0]
    print(f"records/s after the first batch: medians of {config.runs} run(s), each variant in "
          f"its own process; ratios: medians of within-run ratios. TF "
          f"{machine['tensorflow_version']}, {cpus_text(result)} (load average "
          f"{load[0]:.1f} -> {load[1]:.1f}), {machine['date']}; tf_data variant: "
          f"{config.tf_data_mode}; compat {machine['git']['commit'][:8]}"
          f"{' + uncommitted changes' if machine['git']['compat_dirty'] else ''}.")
    print(format_table(result))
    speeds = speed_range(result["measurements"])
    if speeds:
        print(f"The machine's speed: a fixed Python loop took {speeds[0]:.1f}-{speeds[1]:.1f} "
              f"ms ({speeds[1] / speeds[0]:.2f}x) before and after the measurements.")
    if args.details:
        print()
        print(format_details(result))
    for workload, by_variant in result["signature_mismatches"].items():
        print()
        print(f"WARNING: {workload}: the variants' first batches differ in shape or dtype: "
              + "; ".join(f"{variant} {sig}" for variant, sig in by_variant.items()))
    short = short_measurements(result["measurements"])
    if short and not config.quick:
        print()
        print(f"WARNING: {len(short)} measurement(s) had a steady state under "
              f"{SHORT_STEADY_S:g} s: their records/s are mostly noise. Where the input "
              f"ended first, give the workload more epochs (--param WORKLOAD.epochs=N); "
              f"else raise --min-seconds or --batches: " + ", ".join(short))
    if result["compat_changed_during_run"]:
        print()
        print("WARNING: the shim's source (compat/) changed during this run: shim measurements "
              "may come from different versions of it.")
    errors = format_errors(result)
    if errors:
        print()
        print(f"{len(errors)} measurement(s) failed:")
        for line in errors:
            print(f"  {line}")
    print()
    print(f"Total {result['total_seconds']:.0f} s.")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(result, handle, indent=2)
        print(f"Wrote {args.json}")
    if args.plot:
        try:
            plot(result, args.plot)
            print(f"Wrote {args.plot}")
        except ImportError:
            print(f"NOTE: --plot {args.plot} skipped: matplotlib is not installed "
                  f"(pip install matplotlib, or pip install -e '.[plot]').", file=sys.stderr)
    if warning:
        print(warning)
    return 0


if __name__ == "__main__":
    sys.exit(main())
