"""Throughput of the MNIST queue pipeline: graph-mode shim vs `to_dataset` vs the tf.data service.

The pipeline is `examples/mnist_queue_pipeline.build` (string_input_producer -> TFRecordReader
-> parse_single_example -> decode_raw -> shuffle_batch of 128), over one synthetic TFRecord
file read for several epochs, seeded with graph seed 1. Variants:

  shim            `compat.v1` after disable_v2_behavior(): a TF1 Session loop with queue
                  runners started, until OutOfRangeError
  to_dataset      `compat.to_dataset(build, ..., graph_seed=1)` iterated eagerly
  service-MODE-Nw the same dataset through the tf.data service (in-process dispatcher and
                  N in-process workers on localhost, compression=None), MODE one of
                  DYNAMIC ("distributed_epoch"), DATA, FILE; N in (1, 2)

Reported per variant: median records/s after the first batch (first to last batch
received), the median within-run ratio to `shim`, and the records delivered in all (each
mode here serves every record once: about records x epochs, not workers x that). Each
measurement runs in its own subprocess, the variants interleaved over the runs.

`--splits` measures instead how `distributed_epoch` (ShardingPolicy.DYNAMIC) shares an epoch
out: a dispatcher and `--workers` workers each in an OS process of its own on localhost, a
client iterating a to_dataset pipeline over `--files` TFRecord files (shuffled by a seeded
string_input_producer, tf.train.batch of 8), each record's label unique and each batch
carrying the PID of the worker that made it. Reported: the records each worker made, their
spread around the mean, and records lost or duplicated; with `--kill-after F`, the first
worker is killed (SIGKILL) once a fraction F of the records has arrived and a new one
started, and the records lost with it are reported. Every server process is killed by its
PID at the end, also on failure.

    python benchmarks/bridge_throughput.py                  # 3 runs, 10,000 records x 6 epochs
    python benchmarks/bridge_throughput.py --runs 5 --json out.json
    python benchmarks/bridge_throughput.py --quick          # smoke run, numbers mean little
    python benchmarks/bridge_throughput.py --splits --workers 4 --files 8
    python benchmarks/bridge_throughput.py --splits --workers 4 --files 8 --kill-after 0.3
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BATCH_SIZE = 128
GRAPH_SEED = 1
QUICK_RECORDS = 1_000
CHILD_TIMEOUT_S = 600
SERVICE_MODES = ("DYNAMIC", "DATA", "FILE")
VARIANTS = ("shim", "to_dataset") + tuple(
    f"service-{mode}-{workers}w" for mode in SERVICE_MODES for workers in (1, 2))


# ------------------------------------------------------------------ child side (TF imported)

def _example():
    for path in (ROOT, os.path.join(ROOT, "examples")):
        if path not in sys.path:
            sys.path.insert(0, path)
    import mnist_queue_pipeline
    return mnist_queue_pipeline


class BatchCounter:
    """Counts records; times from the first batch to the last one received."""
    records = first_batch_records = 0
    first_time = last_time = None

    def add(self, batch_records):
        now = time.perf_counter()
        if self.first_time is None:
            self.first_time, self.first_batch_records = now, batch_records
        self.last_time = now
        self.records += batch_records

    def result(self):
        after_first = self.records - self.first_batch_records
        seconds = (self.last_time - self.first_time) if self.first_time is not None else 0.0
        return {"records": self.records, "records_after_first": after_first,
                "seconds": seconds, "records_per_s": after_first / seconds if seconds else None}


def run_shim(path, epochs):
    import tensorflow
    tensorflow.compat.v1.disable_v2_behavior()
    import compat.v1 as tf

    tf.set_random_seed(GRAPH_SEED)
    images, labels = _example().build(tf, path, num_epochs=epochs, batch_size=BATCH_SIZE)
    counter = BatchCounter()
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        try:
            while not coord.should_stop():
                _, label_values = sess.run([images, labels])
                counter.add(len(label_values))
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
        coord.join(threads)
    return counter.result()


def bridged_dataset(path, epochs):
    import compat
    return compat.to_dataset(_example().build, path, num_epochs=epochs, batch_size=BATCH_SIZE,
                             graph_seed=GRAPH_SEED)


def served(dataset, mode, workers):
    """`dataset` through an in-process dispatcher and `workers` in-process workers."""
    import tensorflow as tf
    service = tf.data.experimental.service
    dispatcher = service.DispatchServer(service.DispatcherConfig(
        port=0, worker_addresses=["localhost:%port%"] * workers))  # for static sharding
    address = dispatcher.target.split("://")[1]
    servers = [service.WorkerServer(service.WorkerConfig(dispatcher_address=address, port=0))
               for _ in range(workers)]
    distributed = dataset.apply(service.distribute(
        processing_mode=getattr(service.ShardingPolicy, mode), service=dispatcher.target,
        compression=None))
    return distributed, (dispatcher, servers)  # the servers must outlive the iteration


def run_eager(dataset):
    counter = BatchCounter()
    for _, labels in dataset:
        counter.add(int(labels.shape[0]))
    return counter.result()


def run_variant(variant, path, epochs):
    if variant == "shim":
        return run_shim(path, epochs)
    dataset = bridged_dataset(path, epochs)
    if variant.startswith("service-"):
        _, mode, workers = variant.split("-")
        dataset, _servers = served(dataset, mode, int(workers.rstrip("w")))
    return run_eager(dataset)


def child_main(args):
    if args.serve:
        serve(args)
        return
    try:
        if args.split_client:
            payload = {"ok": True, **split_client(args)}
        elif args.write_files:
            payload = {"ok": True, "paths": write_labeled_files(args.write_files, args.files,
                                                                 args.per_file)}
        elif args.write_data:
            _example().write_mnist_like_tfrecord(args.write_data, args.records)
            payload = {"ok": True}
        else:
            payload = {"ok": True, **run_variant(args.variant, args.data, args.epochs)}
    except BaseException as error:  # noqa: BLE001 - reported to the parent
        payload = {"ok": False, "error": f"{type(error).__name__}: {error}"[:2000]}
    print(json.dumps(payload), flush=True)
    os._exit(0)  # TF threads (queue runners, service servers) can hang interpreter teardown


def write_labeled_files(directory, files, per_file):
    """`files` TFRecord files of `per_file` records, each an Example whose label is unique."""
    import tensorflow as tf
    paths = []
    for index in range(files):
        path = os.path.join(directory, f"part-{index:03d}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for row in range(per_file):
                label = index * per_file + row
                example = tf.train.Example(features=tf.train.Features(feature={
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label]))}))
                writer.write(example.SerializeToString())
        paths.append(path)
    return paths


def labeled_batches(tf, paths, batch_size=8):
    """The pipeline served: labels, and the PID of the process that parsed each record
    (read from /proc/self on the worker that runs it)."""
    files = tf.train.string_input_producer(paths, num_epochs=1, seed=7)
    _, value = tf.TFRecordReader().read(files)
    label = tf.parse_single_example(value, {"label": tf.FixedLenFeature([], tf.int64)})["label"]
    pid = tf.strings.to_number(tf.strings.split([tf.io.read_file("/proc/self/stat")], " ")
                               .values[0], tf.int64)
    return tf.train.batch([label, pid], batch_size=batch_size, allow_smaller_final_batch=True)


def serve(args):
    """Run a dispatcher or a worker of the tf.data service until killed."""
    import tensorflow as tf
    service = tf.data.experimental.service
    if args.serve == "dispatcher":
        server = service.DispatchServer(service.DispatcherConfig(port=args.port))
    else:
        server = service.WorkerServer(service.WorkerConfig(
            dispatcher_address=args.dispatcher, port=args.port, heartbeat_interval_ms=500))
    print(json.dumps({"ok": True, "serving": args.serve}), flush=True)
    server.join()


def split_client(args):
    """Iterate the served pipeline; report labels and the worker (PID) of each."""
    import tensorflow as tf
    import compat
    paths = json.loads(args.paths)
    dataset = compat.to_dataset(labeled_batches, paths, graph_seed=1).apply(
        tf.data.experimental.service.distribute(processing_mode="distributed_epoch",
                                                service=f"grpc://{args.dispatcher}"))
    total = len(paths) * args.per_file
    labels, per_worker, killed = [], collections.Counter(), None
    for batch_labels, pids in dataset:
        labels.extend(batch_labels.numpy().tolist())
        per_worker.update(pids.numpy().tolist())
        if args.kill_pid and killed is None and len(labels) >= args.kill_after * total:
            os.kill(args.kill_pid, signal.SIGKILL)
            killed = len(labels)
            with open(args.restart_file, "w") as out:  # the parent starts a new worker
                out.write("restart")
    return {"labels": labels, "per_worker": {str(pid): n for pid, n in per_worker.items()},
            "killed_after": killed}


# ------------------------------------------------------------------ parent side (no TF)

def run_child(arguments):
    """Run this script with `arguments`; its last stdout line is a JSON object."""
    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    command = [sys.executable, os.path.abspath(__file__)] + arguments
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env,
                              timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timed out after {CHILD_TIMEOUT_S} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if lines:
        return json.loads(lines[-1])
    return {"ok": False, "error": f"exit status {done.returncode}, no result; "
                                  f"stderr ends: {done.stderr[-800:]}"}


def measure_all(args, data_path):
    """{variant: [result per run]}, the variants interleaved within each run."""
    results = {variant: [] for variant in VARIANTS}
    for run in range(1, args.runs + 1):
        for variant in VARIANTS:
            result = run_child(["--variant", variant, "--data", data_path,
                                "--epochs", str(args.epochs)])
            results[variant].append(result)
            shown = (f"{result['records_per_s'] or 0:,.0f} records/s, {result['records']:,} records"
                     if result["ok"] else f"ERROR {result['error']}")
            print(f"  run {run}/{args.runs}  {variant:<18} {shown}", flush=True)
    return results


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


def _start_server(arguments, servers):
    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    process = subprocess.Popen([sys.executable, os.path.abspath(__file__)] + arguments,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    servers.append(process)
    return process


def measure_splits(args, data_dir):
    """One distributed_epoch run with every server in its own process (see the docstring)."""
    written = run_child(["--write-files", data_dir, "--files", str(args.files),
                         "--per-file", str(args.per_file)])
    if not written["ok"]:
        return written
    servers = []
    try:
        port = _free_port()
        dispatcher = f"localhost:{port}"
        _start_server(["--serve", "dispatcher", "--port", str(port)], servers)
        ports = [_free_port() for _ in range(args.workers)]
        for worker_port in ports:
            _start_server(["--serve", "worker", "--dispatcher", dispatcher,
                           "--port", str(worker_port)], servers)
        workers = servers[1:]
        time.sleep(2.0)  # the workers register with the dispatcher
        restart_file = os.path.join(data_dir, "restart")
        client = ["--split-client", "--dispatcher", dispatcher, "--paths",
                  json.dumps(written["paths"]), "--per-file", str(args.per_file)]
        if args.kill_after is not None:
            client += ["--kill-pid", str(workers[0].pid), "--kill-after", str(args.kill_after),
                       "--restart-file", restart_file]
        env = dict(os.environ)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        # To files: a pipe nobody reads while the client runs would fill and stop it.
        out_path, err_path = (os.path.join(data_dir, name) for name in ("out", "err"))
        with open(out_path, "w") as out, open(err_path, "w") as err:
            process = subprocess.Popen([sys.executable, os.path.abspath(__file__)] + client,
                                       stdout=out, stderr=err, env=env)
        servers.append(process)
        restarted = False
        deadline = time.monotonic() + CHILD_TIMEOUT_S
        while process.poll() is None and time.monotonic() < deadline:
            if not restarted and os.path.exists(restart_file):
                # Restarted at its address, as a supervisor restarts a worker: the client
                # goes on reading from it.
                restarted = True
                _start_server(["--serve", "worker", "--dispatcher", dispatcher,
                               "--port", str(ports[0])], servers)
            time.sleep(0.05)
        with open(out_path) as out, open(err_path) as err:
            lines = [line for line in out.read().splitlines() if line.startswith("{")]
            if not lines:
                return {"ok": False, "error": f"client: no result; stderr ends: "
                                              f"{err.read()[-800:]}"}
        return json.loads(lines[-1])
    finally:
        for server in servers:
            if server.poll() is None:
                os.kill(server.pid, signal.SIGKILL)
            server.wait()


def format_splits(result, args) -> str:
    total = args.files * args.per_file
    counts = collections.Counter(result["labels"])
    lost = total - len(counts)
    duplicated = sum(n - 1 for n in counts.values() if n > 1)
    per_worker = sorted(result["per_worker"].values(), reverse=True)
    mean = sum(per_worker) / len(per_worker)
    spread = max(abs(n - mean) / mean for n in per_worker) if mean else 0.0
    lines = [f"distributed_epoch: {args.files} files x {args.per_file:,} records, "
             f"{args.workers} worker processes"
             + (f", worker 1 killed after {result['killed_after']:,} records and replaced"
                if result.get("killed_after") else ""),
             f"records per worker: {', '.join(f'{n:,}' for n in per_worker)} "
             f"(mean {mean:,.0f}; largest difference from it {spread:.0%})",
             f"records lost: {lost:,} of {total:,} ({lost / total:.1%}); duplicated: "
             f"{duplicated:,}"]
    return "\n".join(lines)


def summarize(results):
    """Per variant: median records/s, median within-run ratio to shim, records delivered."""
    summary = {}
    for variant, runs in results.items():
        rates = [r["records_per_s"] if r["ok"] else None for r in runs]
        ratios = [rate / base for rate, base in zip(
            rates, (r.get("records_per_s") for r in results["shim"])) if rate and base]
        summary[variant] = {
            "records_per_s": statistics.median([r for r in rates if r]) if any(rates) else None,
            "ratio_to_shim": statistics.median(ratios) if ratios else None,
            "records_delivered": sorted({r["records"] for r in runs if r["ok"]}),
            "errors": [r["error"] for r in runs if not r["ok"]],
        }
    return summary


def format_table(summary, args):
    expected = args.records * args.epochs
    lines = [f"records/s after the first batch, median of {args.runs} run(s); "
             f"{args.records:,} records x {args.epochs} epochs = {expected:,} "
             f"(shuffle_batch drops each reader's final partial batch of < {BATCH_SIZE})", "",
             "| variant | records/s | vs shim | records delivered | errors |",
             "|---|---:|---:|---:|---:|"]
    for variant, entry in summary.items():
        rate, ratio = entry["records_per_s"], entry["ratio_to_shim"]
        lines.append(
            f"| {variant} | {f'{rate:,.0f}' if rate else '-'} | "
            f"{f'{ratio:.2f}x' if ratio else '-'} | "
            f"{' / '.join(f'{n:,}' for n in entry['records_delivered']) or '-'} | "
            f"{len(entry['errors'])} |")
    for variant, entry in summary.items():
        for error in sorted(set(entry["errors"])):
            lines.append(f"{variant}: {error}")
    return "\n".join(lines)


def build_parser():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--runs", type=int, default=3,
                        help="rounds over all variants, each variant once per round in a fresh "
                             "subprocess; medians are over rounds (default 3; 1 with --quick)")
    parser.add_argument("--records", type=int, default=10_000,
                        help="records in the generated MNIST-shaped TFRecord file "
                             f"(default 10000; {QUICK_RECORDS} with --quick)")
    parser.add_argument("--epochs", type=int, default=6,
                        help="num_epochs of the pipeline's string_input_producer (default 6; "
                             "FILE sharding with 2 workers needs at least 2)")
    parser.add_argument("--json", metavar="PATH",
                        help="also write the configuration, every run's result and the "
                             "summary to this JSON file")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: small file, 1 run (the numbers mean little)")
    parser.add_argument("--splits", action="store_true",
                        help="measure how distributed_epoch shares an epoch among worker "
                             "processes instead (see above)")
    parser.add_argument("--workers", type=int, default=4, help="--splits: worker processes")
    parser.add_argument("--files", type=int, default=8, help="--splits: files of the epoch")
    parser.add_argument("--per-file", type=int, default=2_000,
                        help="--splits: records per file (default 2000)")
    parser.add_argument("--kill-after", type=float, metavar="F",
                        help="--splits: kill the first worker once a fraction F of the "
                             "records has arrived, and start a new one")
    internal = parser.add_argument_group("internal (the subprocess side)")
    internal.add_argument("--variant", choices=VARIANTS, help="measure this variant, print JSON")
    internal.add_argument("--data", metavar="PATH", help="the TFRecord file a --variant reads")
    internal.add_argument("--write-data", metavar="PATH", help="write --records records here")
    internal.add_argument("--write-files", metavar="DIR", help="write the --splits files here")
    internal.add_argument("--serve", choices=("dispatcher", "worker"))
    internal.add_argument("--port", type=int, default=0)
    internal.add_argument("--dispatcher", metavar="HOST:PORT")
    internal.add_argument("--split-client", action="store_true")
    internal.add_argument("--paths", help="the files the --split-client pipeline reads (JSON)")
    internal.add_argument("--kill-pid", type=int)
    internal.add_argument("--restart-file")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.variant or args.write_data or args.write_files or args.serve or args.split_client:
        child_main(args)
    if args.splits:
        with tempfile.TemporaryDirectory(prefix="bridge_splits_") as data_dir:
            result = measure_splits(args, data_dir)
        if not result.get("ok"):
            print(f"failed: {result.get('error')}", file=sys.stderr)
            return 1
        print(format_splits(result, args))
        if args.json:
            with open(args.json, "w") as out:
                json.dump({"config": vars(args), "result": result}, out)
        return 0
    if args.quick:
        args.runs, args.records = 1, QUICK_RECORDS
        print("WARNING: --quick: small input and one run, the numbers mean little.", flush=True)
    with tempfile.TemporaryDirectory(prefix="bridge_throughput_") as data_dir:
        data_path = os.path.join(data_dir, "mnist.tfrecord")
        written = run_child(["--write-data", data_path, "--records", str(args.records)])
        if not written["ok"]:
            print(f"writing the data failed: {written['error']}", file=sys.stderr)
            return 1
        print(f"{len(VARIANTS)} variants x {args.runs} run(s), "
              f"{args.records:,} records x {args.epochs} epochs, batch {BATCH_SIZE}", flush=True)
        results = measure_all(args, data_path)
    summary = summarize(results)
    print()
    print(format_table(summary, args))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"config": {"runs": args.runs, "records": args.records,
                                  "epochs": args.epochs, "batch_size": BATCH_SIZE,
                                  "graph_seed": GRAPH_SEED, "quick": args.quick},
                       "results": results, "summary": summary}, out, indent=2)
    return 0 if not any(entry["errors"] for entry in summary.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
