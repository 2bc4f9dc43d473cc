"""Input-pipeline throughput: legacy TF1 queues vs the compat.v1 shim vs hand-tuned tf.data.

All three read the same MNIST-shaped TFRecord file and produce the same batches
(shuffle_batch of 128, capacity 2000): the legacy and shim sides run the unchanged
`examples/mnist_queue_pipeline.build`; the hand-tuned side is the best tf.data version we
know for this machine (sequential reads, shuffle, batch, then vectorized `parse_example`,
prefetch). Each variant runs in its own subprocess (so peak RSS is its own), several times;
the report gives medians and ratios.

    python benchmarks/throughput.py [--runs 5] [--records 20000] [--epochs 5] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VARIANTS = ("legacy", "shim", "tf_data")


def _hand_tuned_dataset(tf, path, epochs, batch_size):
    def parse(serialized):
        features = tf.io.parse_example(serialized, {
            "image_raw": tf.io.FixedLenFeature([], tf.string),
            "label": tf.io.FixedLenFeature([], tf.int64)})
        images = tf.cast(tf.io.decode_raw(features["image_raw"], tf.uint8), tf.float32)
        return tf.reshape(images, [-1, 784]) / 255. - 0.5, tf.cast(features["label"], tf.int32)

    return (tf.data.TFRecordDataset(path).repeat(epochs).shuffle(2000)
            .batch(batch_size, drop_remainder=True).map(parse).prefetch(1))


def measure_one(variant, path, epochs, batch_size):
    """Run one variant in this process; return its measurements."""
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    sys.path.insert(0, ROOT)
    import resource

    import tensorflow as real_tf
    import mnist_queue_pipeline as example

    if variant == "legacy":
        import tensorflow.compat.v1 as tf
    else:
        import compat.v1 as tf
    tf.disable_v2_behavior()
    with real_tf.Graph().as_default():
        start = time.perf_counter()
        if variant == "tf_data":
            iterator = tf.data.make_one_shot_iterator(
                _hand_tuned_dataset(real_tf, path, epochs, batch_size))
            images, labels = iterator.get_next()
        else:
            images, labels = example.build(tf, path, num_epochs=epochs, batch_size=batch_size)
        records = 0
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            first_batch = None
            try:
                while True:
                    _, label_values = sess.run([images, labels])
                    records += len(label_values)
                    if first_batch is None:
                        first_batch = time.perf_counter() - start
                        steady_start, steady_records = time.perf_counter(), records
            except real_tf.errors.OutOfRangeError:
                pass
            finally:
                coord.request_stop()
            coord.join(threads)
        steady_seconds = time.perf_counter() - steady_start
    return {
        "variant": variant,
        "records": records,
        "records_per_s": (records - steady_records) / steady_seconds,
        "time_to_first_batch_s": first_batch,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _run_subprocess(variant, path, epochs, batch_size):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    out = subprocess.run(
        [sys.executable, __file__, "--measure", variant, "--data", path,
         "--epochs", str(epochs), "--batch-size", str(batch_size)],
        capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--measure", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.measure:
        print(json.dumps(measure_one(args.measure, args.data, args.epochs, args.batch_size)))
        return 0

    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import mnist_queue_pipeline as example
    path = example.default_data_file(args.records)

    runs = {variant: [] for variant in VARIANTS}
    for run in range(args.runs):
        for variant in VARIANTS:  # interleaved, so machine noise hits all variants alike
            runs[variant].append(_run_subprocess(variant, path, args.epochs, args.batch_size))
        print(f"run {run + 1}/{args.runs} done", file=sys.stderr)

    metrics = ("records_per_s", "time_to_first_batch_s", "peak_rss_mb")
    medians = {variant: {metric: statistics.median(r[metric] for r in results)
                         for metric in metrics}
               for variant, results in runs.items()}
    print(f"MNIST-shaped pipeline, {args.records} records x {args.epochs} epochs, batch "
          f"{args.batch_size}; medians of {args.runs} runs, each variant in its own process")
    print(f"{'variant':10} {'records/s':>12} {'first batch s':>14} {'peak RSS MB':>12}")
    for variant in VARIANTS:
        m = medians[variant]
        print(f"{variant:10} {m['records_per_s']:12,.0f} {m['time_to_first_batch_s']:14.3f} "
              f"{m['peak_rss_mb']:12.0f}")
    shim = medians["shim"]
    for reference in ("legacy", "tf_data"):
        ref = medians[reference]
        print(f"shim / {reference:8}: records/s x{shim['records_per_s'] / ref['records_per_s']:.2f}, "
              f"first batch x{shim['time_to_first_batch_s'] / ref['time_to_first_batch_s']:.2f}, "
              f"peak RSS x{shim['peak_rss_mb'] / ref['peak_rss_mb']:.2f}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"config": vars(args), "runs": runs, "medians": medians}, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
