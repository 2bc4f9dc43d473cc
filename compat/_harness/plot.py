"""Optional PNG of a report: displacement histograms and batch timelines of both sides."""
from __future__ import annotations

import numpy as np


def plot_report(report, path) -> str:
    import matplotlib
    matplotlib.use("Agg", force=False)  # no display needed
    import matplotlib.pyplot as plt

    figure, (histogram, timeline) = plt.subplots(1, 2, figsize=(11, 4))
    displaced = {}
    for result in report.results:
        if "legacy_displacements" in result.artifacts:
            displaced = result.artifacts
    if displaced:
        both = np.concatenate([displaced["legacy_displacements"],
                               displaced["candidate_displacements"]])
        bins = np.linspace(both.min(), both.max() + 1, 40) if both.size else 10
        histogram.hist(displaced["legacy_displacements"], bins=bins, alpha=0.6, label="legacy")
        histogram.hist(displaced["candidate_displacements"], bins=bins, alpha=0.6,
                       label="candidate")
        histogram.set_xlabel("output position - input position")
        histogram.legend()
    else:
        histogram.text(0.5, 0.5, "no input order: no displacements", ha="center", va="center")
    histogram.set_title("displacement")
    for name in ("legacy", "candidate"):
        stream = report.streams.get(name)
        if stream is not None and stream.timeline:
            timeline.plot(stream.timeline, np.arange(1, len(stream.timeline) + 1), label=name)
    timeline.set_xlabel("seconds since first batch")
    timeline.set_ylabel("batches")
    timeline.set_title("batch timeline")
    timeline.legend()
    figure.suptitle(("EQUIVALENT" if report.equivalent else "NOT EQUIVALENT")
                    + f" ({', '.join(report.levels)})")
    figure.tight_layout()
    figure.savefig(path, format="png")
    plt.close(figure)
    return str(path)
