"""Input programs written the way well-known TF1 models wrote them, run under real TF1 and
under the shim, compared at the strongest level TF1 itself guarantees for each.

The programs live in `real_programs/` (one module per program: `build(tf, data_dir, ...)` and
`write_data(data_dir)`); nothing here hard-codes an expected value, TF1 is always asked.

Levels, and why:
- Single-threaded pipelines without a shuffle queue (PTB, pix2pix) are deterministic in TF1
  once the graph seed is set: `exact`, batch for batch, bit for bit.
- The FaceNet-style input is fed from a Python thread and its batch size is a placeholder
  fed on every step; the harness cannot feed, so the test drives both sides itself with the
  same feeds. One feeder, one dequeue, one batching thread: TF1 is deterministic, so the
  streams must be equal bit for bit.
- A shuffle queue, several enqueue threads or *_join make TF1's order timing-dependent:
  the harness's `auto` mode picks `epochs` (same batch sizes, same multiset of elements) plus
  `window`/`stats` where the input order can be re-run.
- Random distortions drawn by several threads (CIFAR-10 with 16 threads, Inception and
  im2txt training) reach each element in a timing-dependent order, so TF1 does not even
  guarantee the multiset of distorted images (two TF1 runs differ). Those tests run the whole
  program on both sides but compare only the components TF1 determines (labels, record
  keys, file names, captions), at the levels the legacy graph calls for; the images are
  checked for invariants any draw satisfies. The same programs' deterministic variants (one
  reader thread, or the evaluation path) are compared on every component.
"""
from __future__ import annotations

import dataclasses
import functools
import os
import sys
import threading

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from compat import harness  # noqa: E402
from conftest import run_stream  # noqa: E402
from streams import assert_streams_equal  # noqa: E402

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "real_programs")
if PROGRAMS not in sys.path:
    sys.path.insert(0, PROGRAMS)

import cifar10_input  # noqa: E402
import facenet_input  # noqa: E402
import im2txt_input  # noqa: E402
import inception_input  # noqa: E402
import pix2pix_input  # noqa: E402
import ptb_reader  # noqa: E402

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(300)]

GRAPH_SEED = 7
RANDOM_ORDER_LEVELS = ("epochs", "window", "stats")
# With *_join the input order is unknown (the readers interleave as threads run), so the
# harness cannot check the window bound.
JOIN_SKIPS = ("window",)


# --------------------------------------------------------------------------- data


@pytest.fixture(scope="session")
def data_dirs(tmp_path_factory):
    """Small synthetic data for every program, written once per session."""
    root = tmp_path_factory.mktemp("real_programs")
    dirs = {}
    for name, module, kwargs in (
            # Every data set is a whole number of batches (assert_nothing_dropped relies on
            # it). CIFAR-10: 5 files x 32 records, 10 batches of 16 per epoch; the original
            # reshapes labels to [batch_size], which a short final batch would also break in
            # the harness's single-threaded re-run of the input order.
            ("cifar10", cifar10_input, dict(records_per_file=32)),
            ("inception", inception_input, {}),
            ("im2txt", im2txt_input, {}),
            ("facenet", facenet_input, {}),
            ("ptb", ptb_reader, {}),
            ("pix2pix", pix2pix_input, {})):
        path = str(root / name)
        module.write_data(path, **kwargs)
        dirs[name] = path
    return dirs


# --------------------------------------------------------------------------- helpers


def assert_equivalent(report, levels, may_skip=()):
    """TF1 itself ran the program, the shim matched it, at the expected levels, none of them
    skipped but those in `may_skip` (a skipped level asserts nothing)."""
    assert not report.legacy.error, f"the program fails under TF1 itself: {report.legacy.error}"
    assert report.legacy.batches > 0, "TF1 produced no batches: nothing was compared"
    assert report.equivalent, report.explain()
    skipped = [level for level, _ in report.skipped]
    assert set(skipped) <= set(may_skip), f"levels {skipped} were not checked:\n{report.explain()}"
    checked = tuple(level for level in levels if level not in skipped)
    assert report.levels == checked, f"levels {report.levels}: {report.reason}"


def assert_nothing_dropped(report):
    """Where the data make a whole number of batches, TF1 drops no remainder, so the run's
    multisets must be equal outright. (For a `dequeue_many` after a mixing queue the harness
    accepts up to batch_size - 1 elements swapped for others, in case a remainder was dropped,
    and cannot check them against the input when the input order cannot be re-run.)"""
    legacy_stream = report.streams["legacy"]
    candidate = report.streams["candidate"].with_options(batched=legacy_stream.batched,
                                                         unpad=legacy_stream.unpad)
    result = harness.epochs(legacy_stream, candidate)
    assert result.passed, result.explain()


def _projected(run, keep):
    """`run` with each fetched dict reduced to the components in `keep`."""
    stream = run.stream
    # Keep the normalised (sorted) key order: elements are matched component by component.
    batches = tuple({key: value for key, value in batch.items() if key in keep}
                    for batch in stream.batches)
    projected = harness.Stream(batches, batched=stream.batched, ended=stream.ended,
                               error=stream.error, origin=stream.origin,
                               timeline=stream.timeline, unpad=stream.unpad)
    return dataclasses.replace(run, stream=projected)


def compare_determined_components(build, keep, legacy, shim, max_batches=None):
    """Run the whole program on both sides; compare the components in `keep` (those TF1
    determines) with `harness.compare(mode="auto")`, whose levels follow the legacy graph.

    Returns (report, legacy stream, shim stream); the streams hold every component.
    """
    legacy_run = harness.run_side(build, legacy, max_batches=max_batches,
                                  graph_seed=GRAPH_SEED, origin="tensorflow.compat.v1")
    shim_run = harness.run_side(build, shim, max_batches=max_batches, graph_seed=GRAPH_SEED,
                                origin="compat.v1")

    def determined(tf):  # what the harness re-runs for the input order
        return {key: value for key, value in build(tf).items() if key in keep}

    report = harness.compare(determined, legacy=_projected(legacy_run, keep),
                             candidate=_projected(shim_run, keep), mode="auto",
                             graph_seed=GRAPH_SEED, max_batches=max_batches)
    return report, legacy_run.stream, shim_run.stream


def images_of(stream, key="images"):
    return [np.asarray(batch[key]) for batch in stream.batches]


def assert_images_valid(stream, shape, low=None, high=None, standardized=False):
    """Invariants every random draw satisfies: shape, dtype, finite, value range, and for
    per_image_standardization a zero mean per image."""
    images = images_of(stream)
    assert images, "no batches"
    for index, batch in enumerate(images):
        assert batch.dtype == np.float32, f"batch {index}: dtype {batch.dtype}"
        assert batch.shape[1:] == shape, f"batch {index}: shape {batch.shape}"
        assert np.all(np.isfinite(batch)), f"batch {index}: non-finite values"
        if low is not None:
            assert batch.min() >= low and batch.max() <= high, \
                f"batch {index}: values in [{batch.min()}, {batch.max()}]"
        if standardized:
            means = batch.reshape(len(batch), -1).mean(axis=1)
            assert np.all(np.abs(means) < 1e-4), f"batch {index}: image means {means}"


# --------------------------------------------------------------------------- 1. CIFAR-10


def test_cifar10_distorted_inputs_one_enqueue_thread_matches_tf1(data_dirs):
    """One enqueue thread: the distortions reach the records in read order, so TF1 fixes the
    multiset of distorted images (bit for bit); shuffle_batch fixes only the order's window."""
    build = functools.partial(cifar10_input.build, data_dir=data_dirs["cifar10"],
                              num_threads=1, num_epochs=2)
    report = harness.compare(build, mode="auto", max_batches=None, graph_seed=GRAPH_SEED)
    assert_equivalent(report, RANDOM_ORDER_LEVELS)
    assert_nothing_dropped(report)


def test_cifar10_distorted_inputs_tutorial_threads_matches_tf1(data_dirs, legacy, shim):
    """num_threads=16 (the tutorial's value): 16 threads draw the random crops, flips,
    brightness and contrast in a timing-dependent order, so two TF1 runs give different
    images. TF1 determines the labels and record keys (batch sizes, multiset, window)."""
    build = functools.partial(cifar10_input.build, data_dir=data_dirs["cifar10"],
                              num_threads=16, num_epochs=2, with_keys=True)
    report, legacy_stream, shim_stream = compare_determined_components(
        build, ["labels", "keys"], legacy, shim)
    assert_equivalent(report, RANDOM_ORDER_LEVELS)
    assert_nothing_dropped(report)
    for stream in (legacy_stream, shim_stream):
        assert_images_valid(stream, (24, 24, 3), standardized=True)


# --------------------------------------------------------------------------- 2. Inception


def test_inception_training_inputs_match_tf1(data_dirs, legacy, shim):
    """4 TFRecordReaders -> RandomShuffleQueue -> 4 preprocessing threads with switch/merge
    random selectors -> batch_join. The images depend on thread timing in TF1; the labels and
    file names are compared (batch sizes and multiset: *_join leaves no input order)."""
    build = functools.partial(inception_input.build, data_dir=data_dirs["inception"],
                              train=True, num_epochs=1, with_filenames=True)
    report, legacy_stream, shim_stream = compare_determined_components(
        build, ["labels", "filenames"], legacy, shim)
    assert_equivalent(report, ("epochs", "window"), may_skip=JOIN_SKIPS)
    assert_nothing_dropped(report)
    for stream in (legacy_stream, shim_stream):
        assert_images_valid(stream, (inception_input.IMAGE_SIZE,) * 2 + (3,), -1.0, 1.0)


def test_inception_evaluation_inputs_match_tf1(data_dirs):
    """The evaluation path (FIFO examples queue, central crop, no random ops) with the same 4
    readers and 4 preprocessing threads: TF1 fixes every element, not their order."""
    build = functools.partial(inception_input.build, data_dir=data_dirs["inception"],
                              train=False, num_epochs=1, with_filenames=True)
    report = harness.compare(build, mode="auto", max_batches=None, graph_seed=GRAPH_SEED)
    assert_equivalent(report, ("epochs", "window"), may_skip=JOIN_SKIPS)
    assert_nothing_dropped(report)


# --------------------------------------------------------------------------- 3. im2txt


def test_im2txt_training_inputs_match_tf1(data_dirs, legacy, shim):
    """A RandomShuffleQueue prefetch queue dequeued by 4 preprocessing threads (4 dequeue
    ops), captions split and padded by batch_join(dynamic_pad=True). The distorted images
    depend on thread timing in TF1; image ids and padded caption sequences are compared."""
    build = functools.partial(im2txt_input.build, data_dir=data_dirs["im2txt"],
                              is_training=True, num_epochs=2)
    report, legacy_stream, shim_stream = compare_determined_components(
        build, ["image_ids", "input_seqs", "target_seqs", "input_mask"], legacy, shim)
    assert_equivalent(report, ("epochs", "window"), may_skip=JOIN_SKIPS)
    assert_nothing_dropped(report)
    for stream in (legacy_stream, shim_stream):
        assert_images_valid(stream, (im2txt_input.IMAGE_SIZE,) * 2 + (3,), -1.0, 1.0)


def test_im2txt_evaluation_inputs_match_tf1(data_dirs):
    """The evaluation path: FIFOQueue prefetch, 4 dequeue ops, no random ops; every
    component (images included) is fixed by TF1 up to order."""
    build = functools.partial(im2txt_input.build, data_dir=data_dirs["im2txt"],
                              is_training=False, num_epochs=2)
    report = harness.compare(build, mode="auto", max_batches=None, graph_seed=GRAPH_SEED)
    assert_equivalent(report, ("epochs", "window"), may_skip=JOIN_SKIPS)
    assert_nothing_dropped(report)


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("program", ["inception", "im2txt"])
def test_per_image_work_on_one_thread_is_tf1s_bit_for_bit(program, train, data_dirs, legacy,
                                                            shim):
    """Each program's own per-image work (decode, resize by a drawn method, crop, flip, colour
    jitter through switch/merge, scaling) on one thread, seeded: TF1 is deterministic here,
    images included, so the shim must give its values to the last bit. (The programs' own
    inputs run it on 4 threads, where the images depend on timing.)"""
    paths = sorted(os.path.join(data_dirs["inception"], name)
                   for name in os.listdir(data_dirs["inception"]))

    def build(tf):
        files = tf.train.string_input_producer(paths, shuffle=False, num_epochs=1)
        _, serialized = tf.TFRecordReader().read(files)
        encoded, label, _ = inception_input.parse_example_proto(tf, serialized)
        image = (inception_input.image_preprocessing(tf, encoded, train) if program == "inception"
                 else im2txt_input.process_image(tf, encoded, train))
        return tf.train.batch([image, label], batch_size=4)

    expected = run_stream(legacy, build, graph_seed=GRAPH_SEED)
    assert expected, "TF1 produced no batches"
    assert_streams_equal(expected, run_stream(shim, build, graph_seed=GRAPH_SEED))


# --------------------------------------------------------------------------- 4. FaceNet


FACENET_BATCH_SIZES = (5, 2, 7, 4, 3)  # fed in turn; the last batch comes out short


def run_facenet(tf, data_dir, batch_sizes=FACENET_BATCH_SIZES, graph_seed=GRAPH_SEED,
                fixed_batch_size=None):
    """The trainer's loop: a feeder thread enqueues the epoch and closes the queue while the
    main loop fetches batches, feeding a different batch size on each step (or none, with
    `fixed_batch_size`)."""
    paths, labels = facenet_input.dataset(data_dir)
    flags = facenet_input.control_flags(len(paths))
    options = tf_real.compat.v1.RunOptions(timeout_in_ms=60_000)
    values = []
    with tf_real.Graph().as_default():
        tf.set_random_seed(graph_seed)
        inputs = facenet_input.build(tf, data_dir, batch_size=fixed_batch_size)
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)

            def feeder():
                with coord.stop_on_exception():
                    facenet_input.feed(sess, inputs, paths, labels, flags, coord=coord)

            feeder_thread = threading.Thread(target=feeder, daemon=True, name="feeder")
            feeder_thread.start()
            try:
                while True:
                    feed = {} if fixed_batch_size else {
                        inputs.batch_size: batch_sizes[len(values) % len(batch_sizes)]}
                    values.append(sess.run(inputs.fetches(), options=options, feed_dict=feed))
            except tf_real.errors.OutOfRangeError:
                pass
            finally:
                coord.request_stop()
                coord.join(threads + [feeder_thread], stop_grace_period_secs=10)
    return values


def test_facenet_fed_queue_with_fed_batch_size_matches_tf1(data_dirs, legacy, shim):
    """One feeder, one dequeue, one batching thread: TF1 is deterministic, so the shim must
    give the same batches bit for bit, each of the batch size fed on its step."""
    expected = run_facenet(legacy, data_dirs["facenet"])
    assert expected, "TF1 produced no batches"
    # The premise of an exact comparison: TF1 gives this stream on every run.
    assert_streams_equal(expected, run_facenet(legacy, data_dirs["facenet"]))
    assert_streams_equal(expected, run_facenet(shim, data_dirs["facenet"]))


def test_facenet_fed_queue_with_constant_batch_size_matches_tf1(data_dirs, legacy, shim):
    """The same program with `batch_size=5` (an int): separates the Python-fed queue and the
    tf.cond image ops from the fed batch size."""
    expected = run_facenet(legacy, data_dirs["facenet"], fixed_batch_size=5)
    assert expected, "TF1 produced no batches"
    assert_streams_equal(expected, run_facenet(shim, data_dirs["facenet"], fixed_batch_size=5))


# --------------------------------------------------------------------------- 5. PTB


def test_ptb_producer_matches_tf1_bit_for_bit(data_dirs):
    """range_input_producer(epoch_size, shuffle=False) + strided_slice windows: deterministic,
    compared batch for batch across two and a half epochs (the producer repeats forever)."""
    train, _, _, _ = ptb_reader.ptb_raw_data(tf_real.compat.v1, data_dirs["ptb"])
    batch_size, num_steps = 4, 6
    epoch_size = (len(train) // batch_size - 1) // num_steps
    assert epoch_size > 2
    build = functools.partial(ptb_reader.build, data_dir=data_dirs["ptb"],
                              batch_size=batch_size, num_steps=num_steps)
    report = harness.compare(build, mode="auto", max_batches=2 * epoch_size + epoch_size // 2,
                             graph_seed=GRAPH_SEED)
    assert_equivalent(report, ("exact",))


# --------------------------------------------------------------------------- 6. pix2pix


def test_pix2pix_pairs_match_tf1_bit_for_bit(data_dirs):
    """WholeFileReader over a seeded shuffled producer, one crop and one flip for the
    concatenated (input, target) pair, batch: deterministic, compared bit for bit."""
    build = functools.partial(pix2pix_input.build, data_dir=data_dirs["pix2pix"],
                              num_epochs=3, batch_size=4)
    report = harness.compare(build, mode="auto", max_batches=None, graph_seed=GRAPH_SEED)
    assert_equivalent(report, ("exact",))


# --------------------------------------------------------------------------- TF1 alone


@pytest.mark.parametrize("program, kwargs", [
    ("cifar10", dict(num_threads=16, num_epochs=1)),
    ("inception", dict(train=True, num_epochs=1)),
    ("inception", dict(train=False, num_epochs=1)),
    ("im2txt", dict(is_training=True, num_epochs=1)),
    ("im2txt", dict(is_training=False, num_epochs=1)),
    ("ptb", dict()),
    ("pix2pix", dict(num_epochs=1)),
], ids=["cifar10", "inception-train", "inception-eval", "im2txt-train", "im2txt-eval", "ptb",
        "pix2pix"])
def test_program_runs_under_tf1(program, kwargs, data_dirs, legacy):
    """Each program is a working TF1 program: the legacy side alone runs without errors."""
    module = {"cifar10": cifar10_input, "inception": inception_input, "im2txt": im2txt_input,
              "ptb": ptb_reader, "pix2pix": pix2pix_input}[program]
    build = functools.partial(module.build, data_dir=data_dirs[program], **kwargs)
    run = harness.run_side(build, legacy, max_batches=50, graph_seed=GRAPH_SEED)
    assert not run.stream.error, run.stream.error
    assert run.stream.ended in ("out_of_range", "max_batches"), run.stream.ended
    assert run.stream.batches


def test_facenet_runs_under_tf1(data_dirs, legacy):
    values = run_facenet(legacy, data_dirs["facenet"])
    sizes = [len(batch["labels"]) for batch in values]
    total = len(facenet_input.dataset(data_dirs["facenet"])[0])
    assert sum(sizes) == total
    assert sizes[:-1] == [FACENET_BATCH_SIZES[i % len(FACENET_BATCH_SIZES)]
                          for i in range(len(sizes) - 1)]
    assert 0 < sizes[-1] <= FACENET_BATCH_SIZES[(len(sizes) - 1) % len(FACENET_BATCH_SIZES)]
