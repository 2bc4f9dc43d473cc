"""Input-pipeline throughput: legacy TF1 queues vs the compat.v1 shim vs hand-tuned tf.data (MNIST).

A thin wrapper kept for the command the docs' performance page lists: it runs the `mnist` workload of
benchmarks/suite.py (the unchanged `examples/mnist_queue_pipeline.build` under
`tensorflow.compat.v1` and under `compat.v1`, and the hand-tuned tf.data version: sequential
reads, shuffle, batch, then vectorized `parse_example`, prefetch) with this script's
historical defaults: 5 runs, 20,000 records x 5 epochs, each run reading the input to its
end. Each variant runs in its own subprocess, interleaved; the report gives medians and
ratios. Any other option is passed on to suite.py (e.g. --plot out.png, --no-details).

    python benchmarks/throughput.py [--runs 5] [--records 20000] [--epochs 5] [--json out.json]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import suite  # noqa: E402

READ_TO_THE_END = 10 ** 9  # a batch cap the input never reaches


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], epilog="Other options: see suite.py --help.")
    parser.add_argument("--runs", type=int, default=5, help="runs per variant (default 5)")
    parser.add_argument("--records", type=int, default=20_000,
                        help="records in the generated MNIST-shaped file (default 20000)")
    parser.add_argument("--epochs", type=int, default=5,
                        help="epochs read by every variant (default 5)")
    parser.add_argument("--batch-size", type=int, default=128, help="batch size (default 128)")
    parser.add_argument("--json", metavar="PATH", help="also write the results here")
    args, passthrough = parser.parse_known_args(argv)
    forwarded = ["--workloads", "mnist", "--runs", str(args.runs),
                 "--batches", str(READ_TO_THE_END),
                 "--param", f"mnist.records={args.records}",
                 "--param", f"mnist.epochs={args.epochs}",
                 "--param", f"mnist.batch_size={args.batch_size}"]
    if args.json:
        forwarded += ["--json", args.json]
    return suite.main(forwarded + passthrough)


if __name__ == "__main__":
    sys.exit(main())
