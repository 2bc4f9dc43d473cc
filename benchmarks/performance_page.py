"""Write the docs site's performance page (and its plot) from one suite run's JSON.

    python benchmarks/performance_page.py benchmarks/results/2026-12-02.json \\
        --changed-during-run compat/_migrate > docs/performance.md

The table and the plot are report.py's (the same as `suite.py` prints and `--plot` draws);
the plot is written to docs/performance.png (`--plot PATH` to change it, `--plot ''` for
none). tests/test_docs.py keeps the committed page identical to this script's output for the
JSON its first line names, so a new run is committed as a new JSON plus the regenerated page:
the numbers' history is in git, not in the page.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import workloads  # noqa: E402  (benchmarks/workloads; no TensorFlow is imported)
from report import cpus_text, format_table, plot  # noqa: E402
from suite import speed_range  # noqa: E402

DEFAULT_PLOT = os.path.join(ROOT, "docs", "performance.png")

METHOD = """\
## Method

`python benchmarks/suite.py` runs each workload's input program in up to four variants:

- **legacy**: the TF1 queue program on TensorFlow's own `tensorflow.compat.v1` queues and
  runner threads, after `disable_v2_behavior()`;
- **shim**: the same program function with `compat.v1`, after `disable_v2_behavior()`;
- **tf.data**: the best hand-written tf.data equivalent (sequential reads, shuffle, batch,
  then batched parsing where possible, prefetch), run eagerly;
- **migrated**: the legacy function as `compat-migrate` rewrites it (plain TF2 tf.data, run
  like the tf.data variant).

Each variant runs in a process of its own, and the variants of one run are interleaved in
an order rotated from run to run, so that none always runs first and machine noise hits all
alike. Every variant is measured for at least `--min-seconds` (1 s) after its first batch.
Per variant the suite records records/s after the first batch, the time to the first batch
(from the start of graph building), the graph build time, the first Session run alone (the
initializers: the shim traces its pipelines there) and the peak RSS of the process
(TensorFlow included).

The records/s columns are medians over runs. The ratio columns are **paired**: each is the
median, over runs, of the ratio of two variants measured in the same run, which cancels
most of the drift of a shared machine; compare ratios, not absolute numbers from different
runs. Each process also times a fixed pure-Python loop before it starts and after it ends
(`speeds_ms` in the JSON): where its range is wide the machine's speed changed during the
run, and startup times moved with it. The full per-variant details (build, first Session
run, RSS growth, batches, whether the input ended) are in `suite.py --details` and in the
JSON's `measurements`.

Two more workloads are not in this run: `python_fed` (a FIFOQueue fed from Python through
placeholders by a feeder thread) and `big_text` (one 10-million-line text file: the memory a
reader holds while it streams; every reader but `WholeFileReader` streams its files as TF1's
does, so RSS grows by about what TF1's does, not by a multiple of the file).
`--workloads` selects them.

## Where the shim's speed comes from

- **Batched computation where it is exact.** Stateless row-wise element code (parsing,
  `decode_raw`, casts, elementwise arithmetic) runs on whole batches, tested bit for bit
  against TF1 (`compat/_runtime/vectorize.py`); matmuls, convolutions, float sums and
  transcendental functions stay per element.
- **Only what is read.** A stage yields only what its consumer reads (a reader whose keys
  are unused reads values alone; TFRecord files are opened in groups), and a whole-file
  reader's read runs in the same map as the decode that consumes it.
- **Nothing per epoch.** A producer over constants, or over values computed from constants
  by ops whose results cannot depend on where they run (PTB's `range(epoch_size)`), is
  computed once; each epoch costs only its shuffle.
- **Pipelines built as tf.data's rewrites would build them**, without their pass over the
  pipeline: a map followed by a batch is one map-and-batch, a batch call's `num_threads`
  computes that many elements at once (`compat/_runtime/batch_fusion.py`), and the shim sets
  every buffer and parallel call itself, with tf.data's autotuning off.
- **Less Python per step.** A Session run repeated with the same fetches and feeds is
  prepared once and goes straight to the C run (`compat/_runtime/session_runs.py`), and a
  stage that cannot wait on another run is read without a thread hand-over.
- **Cheap startup.** Stages are traced once, when the graph first runs and its consumers
  are known; the shim writes the dataset and function definitions tf.data would trace
  rather than tracing them through Python.
"""

REPRODUCE = """\
## Run it yourself

```bash
python benchmarks/suite.py --runs 3 --json run.json --plot run.png   # all workloads, ~11 min on 2 cores
python benchmarks/suite.py --quick                                    # a smoke run: its numbers mean nothing
python benchmarks/performance_page.py run.json > docs/performance.md  # this page, from a run
```

`--help` explains every option. Other benchmarks:

| script | what it measures |
|---|---|
| `benchmarks/real_programs.py` | the input code of real TF1 programs (CIFAR-10, Inception, im2txt, FaceNet, PTB, pix2pix) under TF1 queues and the shim: records/s and the phases of startup |
| `benchmarks/bridge_throughput.py` | `compat.to_dataset` against the graph-mode shim, locally and on the tf.data service |
| `benchmarks/check_speed.py` | `compat-check` on a generated tree of TF1-style files (files/s) |
| `benchmarks/throughput.py` | the MNIST workload alone, over its whole input |
"""


def _workloads_table(result: dict) -> str:
    lines = ["| workload | pipeline | batch |", "|---|---|---|"]
    for name in result["medians"]:
        params = result.get("workload_params", {}).get(name, {})
        lines.append(f"| {name} | {workloads.load(name).DESCRIPTION} "
                     f"| {params.get('batch_size', '')} |")
    return "\n".join(lines)


def generate(result: dict, json_path: str, changed_during_run: str | None = None) -> str:
    """The page's markdown for one suite run (`result`, as `suite.py --json` wrote it)."""
    machine, config = result["machine"], result["config"]
    command = f"python benchmarks/performance_page.py {json_path}"
    if changed_during_run:
        command += f" --changed-during-run {changed_during_run}"
    load = machine["load_average_at_start"][0], machine["load_average_at_end"][0]
    lines = [
        f"<!-- Generated by `{command}`; do not edit. -->",
        "",
        "# Performance",
        "",
        "How fast TF1 input programs read under the shim, against TensorFlow's own queues "
        "(legacy), the best hand-written tf.data, and the rewrite `compat-migrate` writes. "
        "One full run is shown; how it is measured is under [Method](#method).",
        "",
        "## The run",
        "",
        f"{machine['date'][:10]}: TensorFlow {machine['tensorflow_version']}, Python "
        f"{machine['python']}, {cpus_text(result)} (load average {load[0]:.1f} at the start, "
        f"{load[1]:.1f} at the end), {config['runs']} runs of every variant, each measured "
        f"for at least {config['min_seconds']:g} s after its first batch; compat at commit "
        f"`{machine['git']['commit'][:7]}`. Records/s after the first batch (medians); "
        "ratios are medians of the ratios within each run.",
        "",
    ]
    if result.get("compat_changed_during_run"):
        where = f"`{changed_during_run}`" if changed_during_run else "the package"
        lines += [
            "!!! note \"The migrated column may mix versions\"",
            f"    compat's source changed while this run measured: {where} was being edited.",
            "    The legacy, shim and tf.data columns are valid; the migrated variant's "
            "processes",
            "    may have run different versions of the migration tool's output.",
            "",
        ]
    lines += [format_table(result), ""]
    speeds = speed_range(result["measurements"])
    if speeds:
        lines += [f"The machine's speed during the run: a fixed Python loop took "
                  f"{speeds[0]:.1f}-{speeds[1]:.1f} ms ({speeds[1] / speeds[0]:.2f}x) in "
                  "different processes, so startup times (first batch, build) are noisier "
                  "than records/s.", ""]
    lines += [
        "![records/s per workload and variant](performance.png)",
        "",
        "## Workloads",
        "",
        _workloads_table(result),
        "",
        METHOD,
        REPRODUCE,
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("json", help="a suite run's JSON (suite.py --json)")
    parser.add_argument("--changed-during-run", metavar="PART",
                        help="what of compat/ was edited while the run measured, when its "
                             "compat_changed_during_run flag is set")
    parser.add_argument("--plot", default=DEFAULT_PLOT,
                        help="where to write the plot (PNG; '' for none)")
    args = parser.parse_args(argv)
    with open(args.json, encoding="utf-8") as handle:
        result = json.load(handle)
    sys.stdout.write(generate(result, args.json, args.changed_during_run))
    if args.plot:
        plot(result, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
