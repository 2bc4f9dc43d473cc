"""Formatting benchmark results (see suite.py, real_programs.py): markdown tables, error lines,
progress lines, the plot."""
from __future__ import annotations

import statistics
import sys

VARIANTS = ("legacy", "shim", "tf_data", "migrated")
VARIANT_LABELS = {"legacy": "legacy", "shim": "shim", "tf_data": "tf.data",
                  "migrated": "migrated"}


# A steady state shorter than this is mostly timer and scheduler noise: ratios taken from it
# swing by 20% or more between runs on a quiet 2-core machine.
SHORT_STEADY_S = 0.5


def median(values):
    values = [value for value in values if value is not None]
    return statistics.median(values) if values else None


def records_text(value):
    return "n/a" if value is None else f"{value:,.0f}"


def ratio_text(value):
    return "n/a" if value is None else f"{value:.2f}x"


def seconds_text(value):
    return "n/a" if value is None else f"{value:.3f}"


def cell(entry, text):
    if entry["ok_runs"] == 0:
        return "ERROR" if entry["failed_runs"] else "n/a"
    return text + (f" ({entry['failed_runs']} failed)" if entry["failed_runs"] else "")


def markdown(header, rows):
    widths = [max(len(str(row[i])) for row in [header] + rows) for i in range(len(header))]
    line = lambda row: "| " + " | ".join(  # noqa: E731
        str(cell).ljust(width) if i == 0 else str(cell).rjust(width)
        for i, (cell, width) in enumerate(zip(row, widths))) + " |"
    rule = "|" + "|".join("-" * (width + 2) for width in widths) + "|"
    return "\n".join([line(header), rule] + [line(row) for row in rows])


def format_table(result: dict) -> str:
    """The main table (records/s medians, median within-run ratios)."""
    header = ["workload", "legacy", "shim", "tf.data", "migrated", "shim/legacy", "shim/tf.data",
              "migrated/shim", "first batch shim/legacy", "build shim/legacy", "RSS shim/legacy"]
    rows = []
    for workload, variants in result["medians"].items():
        ratios = result["ratios"][workload]
        vs_legacy, vs_data = ratios["shim/legacy"], ratios["shim/tf_data"]
        rows.append([workload] + [
            cell(variants[variant], records_text(variants[variant]["records_per_s"]))
            for variant in VARIANTS] + [
            ratio_text(vs_legacy["records_per_s"]["median"]),
            ratio_text(vs_data["records_per_s"]["median"]),
            ratio_text(ratios["migrated/shim"]["records_per_s"]["median"]),
            ratio_text(vs_legacy["first_batch_s"]["median"]),
            ratio_text(vs_legacy["build_s"]["median"]),
            ratio_text(vs_legacy["peak_rss_mb"]["median"])])
    return markdown(header, rows)


def format_details(result: dict) -> str:
    """Absolute medians per variant, and the shim/tf.data ratios of the other metrics."""
    header = ["workload", "variant", "records/s", "first batch s", "build s", "first run s",
              "peak RSS MB", "RSS growth MB", "batch", "batches", "input ended", "mode"]
    rows = []
    by_key = {}
    for m in result["measurements"]:
        by_key.setdefault((m["workload"], m["variant"]), []).append(m)
    for workload, variants in result["medians"].items():
        for variant in VARIANTS:
            entry = variants[variant]
            ok = [m for m in by_key.get((workload, variant), []) if m.get("ok")]
            rss = entry["peak_rss_mb"]
            rows.append([workload, VARIANT_LABELS[variant],
                         cell(entry, records_text(entry["records_per_s"])),
                         seconds_text(entry["first_batch_s"]), seconds_text(entry["build_s"]),
                         seconds_text(entry["first_run_s"]),
                         "n/a" if rss is None else f"{rss:,.0f}",
                         "n/a" if entry.get("rss_growth_mb") is None
                         else f"{entry['rss_growth_mb']:,.0f}",
                         ok[0]["batch_size"] if ok else "",
                         round(median([m["batches"] for m in ok])) if ok else "",
                         "/".join(sorted({"yes" if m["input_ended"] else "no" for m in ok})),
                         ok[0]["mode"] if ok else ""])
        data = result["ratios"][workload]["shim/tf_data"]
        rows.append([workload, "shim/tf.data", ratio_text(data["records_per_s"]["median"]),
                     ratio_text(data["first_batch_s"]["median"]),
                     ratio_text(data["build_s"]["median"]), "",
                     ratio_text(data["peak_rss_mb"]["median"]), "", "", "", "", ""])
    return markdown(header, rows)


def format_errors(result: dict) -> list[str]:
    lines = []
    for m in result["measurements"]:
        if not m.get("ok"):
            lines.append(f"{m['workload']} / {m['variant']} / run {m['run'] + 1}: "
                         f"{(m.get('error') or '?').splitlines()[0][:300]}")
    return lines


def short_text(value):
    for limit, suffix in ((1e6, "M"), (1e3, "k")):
        if value >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}"


def progress_printer(total: int, subject: str, round_key: str):
    """The CLIs' `progress(event, info)` callback: prints each data preparation and each
    measurement ("[i/total] run N mnist shim ...") to stderr as it finishes. `subject` is
    the key naming what is measured ("workload", "program"), `round_key` the round's key."""
    done = [0]

    def progress(event, info):
        if event == "prepared":
            status = f"ERROR {info['error']}" if info["error"] else info["data_dir"]
            print(f"data {info[subject]}: {status} ({info['seconds']:.1f} s)",
                  file=sys.stderr, flush=True)
            return
        done[0] += 1
        text = (f"{info['records_per_s'] or 0:,.0f} records/s, first batch "
                f"{info['first_batch_s']:.2f} s" if info.get("ok")
                else f"ERROR {(info.get('error') or '?').splitlines()[0][:200]}")
        print(f"[{done[0]}/{total}] {round_key} {info[round_key] + 1} {info[subject]:16} "
              f"{info['variant']:8} {text} ({info.get('wall_s', 0):.1f} s wall)",
              file=sys.stderr, flush=True)

    return progress


def cpus_text(result: dict) -> str:
    """The CPUs the measurements ran on, as the report names them."""
    usable = result["machine"].get("usable_cpus") or result["machine"]["cpu_count"]
    pinned = result["config"].get("cpus")
    return f"{usable} CPUs" if pinned is None else f"pinned to {pinned} of {usable} CPUs"


def plot(result: dict, path: str) -> None:
    """Grouped bars of median records/s per workload and variant, log scale (PNG).

    Raises ImportError when matplotlib is not installed.
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(result["medians"])
    width = 0.8 / len(VARIANTS)
    figure, axes = plt.subplots(figsize=(max(6.0, 1.6 * len(names) + 2), 4.8))
    for index, variant in enumerate(VARIANTS):
        xs, heights, failed = [], [], []
        for position, workload in enumerate(names):
            value = result["medians"][workload][variant]["records_per_s"]
            x = position + (index - (len(VARIANTS) - 1) / 2) * width
            if value:
                xs.append(x)
                heights.append(value)
            else:
                failed.append(x)
        axes.bar(xs, heights, width, label=VARIANT_LABELS[variant])
        for x, height in zip(xs, heights):
            axes.annotate(short_text(height), (x, height), xytext=(0, 2), textcoords="offset points",
                          ha="center", va="bottom", fontsize=7)
        for x in failed:
            axes.annotate(f"{VARIANT_LABELS[variant]}: error", (x, 0.02),
                          xycoords=("data", "axes fraction"), ha="center", va="bottom",
                          rotation=90, fontsize=8, color="red")
    axes.set_xlim(-0.6, len(names) - 0.4)
    axes.set_yscale("log")
    axes.set_xticks(range(len(names)))
    axes.set_xticklabels(names, rotation=20)
    axes.set_ylabel("records/s (median, log scale)")
    machine = result["machine"]
    axes.set_title(f"Input pipelines: legacy TF1 queues vs compat.v1 shim vs tf.data\n"
                   f"TF {machine['tensorflow_version']}, {cpus_text(result)}, "
                   f"{result['config']['runs']} run(s), {machine['date'][:10]}", fontsize=10)
    axes.legend()
    axes.grid(axis="y", which="both", alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
