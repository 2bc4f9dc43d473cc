"""How fast is compat-check? Generates a tree of TF1-style files and times the CLI on it.

    python benchmarks/check_speed.py [--files 3000] [--jobs 0]

Not a unit test: prints files/second for a cold run (subprocess, imports included).
Files are a mix of realistic sizes: input modules full of legacy sites, training scripts,
Python 2 scripts (token fallback) and plain modules with no TensorFlow at all.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

INPUT_MODULE = '''"""Input module {index}."""
import tensorflow as tf
from tensorflow.python.training import input as tf_input


def read(filename_queue):
    reader = tf.TFRecordReader()
    _, serialized = reader.read(filename_queue)
    features = tf.parse_single_example(serialized, {{
        "image": tf.FixedLenFeature([], tf.string),
        "label": tf.FixedLenFeature([], tf.int64)}})
    image = tf.decode_raw(features["image"], tf.uint8)
    return tf.cast(image, tf.float32), features["label"]


def inputs(files, batch_size={index}):
    queue = tf.train.string_input_producer(files, num_epochs=10)
    image, label = read(queue)
    return tf_input.shuffle_batch([image, label], batch_size, capacity=2000,
                                  min_after_dequeue=1000, num_threads=4)
''' + "\n".join(f"\n\ndef helper_{i}(x):\n    return tf.reduce_sum(x * {i})" for i in range(40))

TRAIN_SCRIPT = '''import tensorflow as tf


def main():
    images, labels = inputs()
    loss = model(images, labels)
    sess = tf.Session()
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while not coord.should_stop():
            sess.run(loss)
    except tf.errors.OutOfRangeError:
        print("done {index}")
    finally:
        coord.request_stop()
    coord.join(threads)
''' + "\n".join(f"\n\ndef step_{i}(sess, op):\n    return sess.run(op)" for i in range(40))

PY2_SCRIPT = '''import tensorflow as tf
q = tf.train.string_input_producer(["a", "b"])
print "queue", q
''' + "\n".join(f"def f{i}(x):\n    print 'x', x\n    return x" for i in range(40))

PLAIN = '''"""A module with no TensorFlow in it."""
import os


def walk(path):
    return [p for p in os.listdir(path) if p.endswith(".py")]
''' + "\n".join(f"\n\ndef util_{i}(a, b):\n    return a + b * {i}" for i in range(60))

KINDS = (INPUT_MODULE, TRAIN_SCRIPT, PY2_SCRIPT, PLAIN)


def generate(directory: str, count: int) -> int:
    size = 0
    for index in range(count):
        sub = os.path.join(directory, f"pkg{index // 200}")
        os.makedirs(sub, exist_ok=True)
        text = KINDS[index % len(KINDS)].format(index=index) if index % 4 < 2 else \
            KINDS[index % len(KINDS)]
        with open(os.path.join(sub, f"module_{index}.py"), "w") as handle:
            handle.write(text)
        size += len(text)
    return size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--jobs", type=int, default=0, help="0: one per CPU")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        size = generate(directory, options.files)
        env = dict(os.environ, PYTHONPATH=ROOT)
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "compat.check", "-q", "--jobs", str(options.jobs), directory],
            capture_output=True, text=True, env=env)
        elapsed = time.perf_counter() - start
    if result.returncode not in (0, 1):
        print(result.stderr, file=sys.stderr)
        return 1
    summary = result.stdout.strip().splitlines()[-3:]
    print("\n".join(summary))
    print(f"{options.files} files ({size / 1e6:.1f} MB) in {elapsed:.2f} s with --jobs "
          f"{options.jobs or os.cpu_count()}: {options.files / elapsed:.0f} files/s "
          f"({options.files / elapsed * 60:.0f} files/min) on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
