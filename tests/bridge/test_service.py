"""The tf.data service with `compat.to_dataset` pipelines, in every processing mode.

One in-process dispatcher and two workers on localhost serve every test (see
docs/bridge.md). The oracle is the same pipeline iterated locally with the same
graph seed, so its batches are reproducible. Elements are batches; a batch is compared by its
labels, and the test data's labels are 0..119, each once per epoch:

- the multiset of labels says whether records were duplicated or lost;
- the multiset of batches (each a tuple of labels) says, where it is meaningful, whether the
  service delivered exactly the batches a local run delivers (in some order).

Every test iterates as the current TF behaviour allows: eagerly under TF2, through a one-shot
iterator in a Session under TF1 behaviour (a TF1 program feeding from the service).

The distributed_epoch (DYNAMIC) tests need the bridge to make a producer's `num_epochs`
epochs a finite source of one split per file (seeded or unshuffled producers list every
epoch's file names), and zipped sources one split: the runtime builds epochs as an endless
source ended by `take(num_epochs)`, which every worker would apply to its own share, so each
would read all the epochs. The FILE tests need the bridge's readers to read each file with a
function of its own over the producer's stream of file names, holding a reader dataset.
"""
import collections

import pytest

import bridge_pipelines as pipelines
from conftest import tf_real

import compat

pytestmark = [
    pytest.mark.needs_tf, pytest.mark.timeout(300),
    # TF1 behaviour: distribute() reads the (V1) dataset's options in graph mode.
    pytest.mark.filterwarnings("ignore:To make it possible to preserve tf.data options"),
]

service = tf_real.data.experimental.service
ShardingPolicy = service.ShardingPolicy

WORKERS = 2
SEED = 3
PIPELINES = {"ordered": pipelines.ordered_batches, "shuffled": pipelines.shuffled_batches}


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    """3 files of 40 records: labels 0..119, 15 batches of 8 per epoch."""
    return pipelines.write_records(tmp_path_factory.mktemp("records"))


@pytest.fixture(scope="module")
def dispatcher():
    """The service's address: a dispatcher and two workers in this process.

    Static sharding (FILE, DATA, HINT) needs the dispatcher to know its workers in advance;
    "localhost:%port%" matches a worker on localhost at whatever port it was given (port=0).
    Finished jobs are collected within a fraction of a second (by default after minutes):
    a worker still holding the tasks of a dozen finished jobs takes a minute to stop.
    """
    server = service.DispatchServer(service.DispatcherConfig(
        port=0, worker_addresses=["localhost:%port%"] * WORKERS,
        job_gc_check_interval_ms=200, job_gc_timeout_ms=200))
    address = server.target.split("://")[1]
    workers = [service.WorkerServer(service.WorkerConfig(
        dispatcher_address=address, port=0, heartbeat_interval_ms=200))
        for _ in range(WORKERS)]
    yield server.target
    for worker in workers:
        worker._stop()  # pylint: disable=protected-access
    server._stop()  # pylint: disable=protected-access


def _labels(element):
    labels = element["label"] if isinstance(element, dict) else element[1]
    return tuple(int(label) for label in labels)


def _pairs(element):
    return tuple(zip(element[0].tolist(), element[1].tolist()))


def _two_streams(tf, num_epochs=2):
    """Two producers read together (their stages zipped): batches of pairs (i, 100 + i)."""
    first = tf.train.range_input_producer(10, num_epochs=num_epochs, shuffle=False).dequeue()
    second = tf.train.input_producer(tf.range(100, 110), num_epochs=num_epochs,
                                     shuffle=False).dequeue()
    return tf.train.batch([first, second], batch_size=5)


def _batches(dataset_of, max_steps=1000, batch_of=_labels):
    """`batch_of` each element of `dataset_of()` (by default its labels, a tuple per batch),
    in arrival order. Eagerly, or (TF1 behaviour) through a one-shot iterator in a Session."""
    if tf_real.executing_eagerly():
        return [batch_of(element)
                for element in dataset_of().take(max_steps).as_numpy_iterator()]
    with tf_real.Graph().as_default():
        next_element = tf_real.compat.v1.data.make_one_shot_iterator(dataset_of()).get_next()
        batches = []
        with tf_real.compat.v1.Session() as sess:
            try:
                for _ in range(max_steps):
                    batches.append(batch_of(sess.run(next_element)))
            except tf_real.errors.OutOfRangeError:
                pass
    return batches


def _local(build, *args, graph_seed=SEED, batch_of=_labels, **kwargs):
    return _batches(lambda: compat.to_dataset(build, *args, graph_seed=graph_seed, **kwargs),
                    batch_of=batch_of)


def _served(dispatcher, processing_mode, build, *args, graph_seed=SEED, hint=False,
            batch_of=_labels, **kwargs):
    def dataset_of():
        dataset = compat.to_dataset(build, *args, graph_seed=graph_seed, **kwargs)
        if hint:
            dataset = dataset.shard(tf_real.data.experimental.SHARD_HINT,
                                    tf_real.data.experimental.SHARD_HINT)
        return dataset.apply(service.distribute(processing_mode=processing_mode,
                                                service=dispatcher))
    return _batches(dataset_of, batch_of=batch_of)


def _label_counts(batches):
    return collections.Counter(label for batch in batches for label in batch)


def _assert_same_labels(got, expected):
    """The multiset of labels is the local run's: nothing duplicated, nothing lost."""
    got_counts, expected_counts = _label_counts(got), _label_counts(expected)
    extra, missing = got_counts - expected_counts, expected_counts - got_counts
    assert not extra and not missing, (
        f"{sum(extra.values())} label(s) more often than locally (e.g. "
        f"{sorted(extra)[:5]}), {sum(missing.values())} less often (e.g. "
        f"{sorted(missing)[:5]}); {len(got)} batches served, {len(expected)} locally")


def _mode_id(mode):
    return mode if isinstance(mode, str) else f"ShardingPolicy.{mode.name}"


def test_the_local_oracle_is_reproducible_and_complete(paths):
    """What the service is compared with: with a graph seed, two local runs of the shuffled
    pipeline give the same batches, and each label 0..119 arrives once in 15 batches."""
    first = _local(pipelines.shuffled_batches, paths)
    assert first == _local(pipelines.shuffled_batches, paths)
    assert len(first) == 15
    assert _label_counts(first) == collections.Counter(range(120))


@pytest.mark.parametrize("name, processing_mode", [
    ("ordered", "parallel_epochs"),
    ("shuffled", ShardingPolicy.OFF),
], ids=_mode_id)
def test_parallel_epochs_gives_the_whole_dataset_once_per_worker(
        dispatcher, paths, name, processing_mode):
    """OFF ("parallel_epochs") does not shard: every worker runs the whole pipeline, so each
    local batch arrives once per worker (the same batches, since the seed is the same)."""
    build = PIPELINES[name]
    expected = _local(build, paths)
    got = _served(dispatcher, processing_mode, build, paths)
    assert collections.Counter(got) == collections.Counter(expected * WORKERS)


@pytest.mark.parametrize("name, processing_mode", [
    ("ordered", "distributed_epoch"),
    ("shuffled", ShardingPolicy.DYNAMIC),
], ids=_mode_id)
def test_distributed_epoch_gives_each_record_once(dispatcher, paths, name, processing_mode):
    """DYNAMIC ("distributed_epoch") hands the splits of the pipeline's source to the workers,
    each split once. The source of a to_dataset pipeline is its producer's list of file names
    for all its epochs (seeded, or not shuffled): a split is one file, read whole by one
    worker, which batches what it reads. Each file holds 40 records, whole batches of 8: the
    ordered pipeline's batches are exactly the local ones; the shuffled pipeline's workers
    shuffle their own records, so only the records (and the count of batches) compare."""
    build = PIPELINES[name]
    expected = _local(build, paths)
    got = _served(dispatcher, processing_mode, build, paths)
    _assert_same_labels(got, expected)
    assert len(got) == len(expected)
    if name == "ordered":
        assert collections.Counter(got) == collections.Counter(expected)


def test_distributed_epoch_reads_each_epoch_once(dispatcher, paths):
    """Three epochs of three files are nine splits, each read once by whichever worker asks
    first: each label arrives three times, as locally. (Which worker reads which file varies,
    and each worker shuffles and batches its own records, so only the labels are compared.)"""
    expected = _local(pipelines.shuffled_batches, paths, num_epochs=3)
    got = _served(dispatcher, ShardingPolicy.DYNAMIC, pipelines.shuffled_batches, paths,
                  num_epochs=3)
    _assert_same_labels(got, expected)
    assert len(got) == len(expected) == 45


def test_distributed_epoch_drops_a_partial_final_batch_per_worker(dispatcher, paths):
    """tf.train.batch without allow_smaller_final_batch drops the final partial batch, and
    under DYNAMIC each worker batches its own epochs. Two epochs of 120 in batches of 16: one
    worker reading both drops nothing (15 batches, as locally); two workers reading one each
    drop 8 records each. Never a duplicate, and at most 16 records lost, whichever happens."""
    expected = _local(pipelines.ordered_batches, paths, num_epochs=2, batch_size=16)
    assert _label_counts(expected) == collections.Counter(list(range(120)) * 2)
    got = _served(dispatcher, "distributed_epoch", pipelines.ordered_batches, paths,
                  num_epochs=2, batch_size=16)
    extra = _label_counts(got) - _label_counts(expected)
    assert not extra, f"{sum(extra.values())} label(s) arrived more often than locally"
    assert sum((_label_counts(expected) - _label_counts(got)).values()) in (0, 16)
    assert all(len(batch) == 16 for batch in got)


def test_distributed_epoch_keeps_the_pairs_of_stages_read_together(dispatcher):
    """A batch call reading two stages zips their streams. Dynamic sharding hands each
    source's splits to whichever worker asks, so a worker may hold one stream's epoch without
    the other's: zipped sources must be one split (one worker reads the whole pipeline) for
    every pair (i, 100 + i) to arrive, each once per epoch, in the local batches."""
    expected = _local(_two_streams, batch_of=_pairs)
    assert len(expected) == 4
    got = _served(dispatcher, ShardingPolicy.DYNAMIC, _two_streams, batch_of=_pairs)
    assert all(second == first + 100 for batch in got for first, second in batch)
    assert collections.Counter(got) == collections.Counter(expected)


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_data_sharding_gives_each_local_batch_once(dispatcher, paths, name):
    """DATA: every worker runs the whole pipeline and keeps every WORKERS-th batch (its
    index's): with the same seed the workers' streams are the local one, so the batches are
    exactly the local batches, each once."""
    build = PIPELINES[name]
    expected = _local(build, paths)
    got = _served(dispatcher, ShardingPolicy.DATA, build, paths)
    _assert_same_labels(got, expected)
    assert collections.Counter(got) == collections.Counter(expected)


def test_data_sharding_of_an_unseeded_random_pipeline_duplicates_and_loses(dispatcher, paths):
    """Without a graph seed each worker shuffles its own way, and keeping every other batch of
    two different streams loses some records and duplicates others: DATA sharding needs
    `graph_seed` for a random pipeline. (That two independent shuffles of 120 records split
    into complementary halves is too unlikely to ever happen.)"""
    got = _served(dispatcher, ShardingPolicy.DATA, pipelines.shuffled_batches, paths,
                  graph_seed=None)
    counts = _label_counts(got)
    assert len(got) == 15
    assert max(counts.values()) > 1, "no record was duplicated"
    assert len(counts) < 120, "no record was lost"


FILE_MODES = [ShardingPolicy.FILE, ShardingPolicy.FILE_OR_DATA]


@pytest.mark.parametrize("processing_mode", FILE_MODES, ids=_mode_id)
@pytest.mark.parametrize("num_epochs", [1, 2])
def test_file_sharding_gives_each_ordered_batch_once(dispatcher, paths, processing_mode,
                                                     num_epochs):
    """FILE shards the producer's stream of file names (every epoch's): each worker reads
    its share of the files. A file holds 40 records, 5 whole batches of 8, so whichever
    worker reads a file makes exactly the local run's batches of it: each batch arrives once.
    (FILE_OR_DATA finds the reader, so it is FILE.)"""
    expected = _local(pipelines.ordered_batches, paths, num_epochs=num_epochs)
    got = _served(dispatcher, processing_mode, pipelines.ordered_batches, paths,
                  num_epochs=num_epochs)
    _assert_same_labels(got, expected)
    assert collections.Counter(got) == collections.Counter(expected)


@pytest.mark.parametrize("num_epochs", [1, 3])
def test_file_sharding_of_a_seeded_shuffled_pipeline_gives_each_record_once(dispatcher, paths,
                                                                             num_epochs):
    """With the graph seed, every worker's copy of the producer shuffles the file names as
    the local run does, so their shards are disjoint and cover every epoch's files. Each
    worker shuffle_batches its own records, so only the records are compared: each arrives
    once per epoch."""
    expected = _local(pipelines.shuffled_batches, paths, num_epochs=num_epochs)
    got = _served(dispatcher, ShardingPolicy.FILE, pipelines.shuffled_batches, paths,
                  num_epochs=num_epochs)
    _assert_same_labels(got, expected)
    assert len(got) == len(expected) == 15 * num_epochs


# reader -> (write the files, build, whether each file holds whole batches)
OTHER_READERS = {
    "text_lines": (pipelines.write_csv, pipelines.csv_batches, True),
    "fixed_length": (pipelines.write_fixed_length, pipelines.fixed_length_batches, True),
    "whole_files": (pipelines.write_whole_files, pipelines.whole_file_batches, False),
}


@pytest.mark.parametrize("reader", sorted(OTHER_READERS))
def test_file_sharding_shards_the_files_of_every_reader(dispatcher, tmp_path, reader):
    """TextLineReader and WholeFileReader read a file's contents, with no reader dataset for
    TF's sharder to find; their files are sharded all the same: each record arrives once.
    Where each file holds whole batches (40 rows or records: 5 batches of 8), those are the
    local batches; whole files are one record each, so a worker's batch of 4 holds every
    other file's record."""
    write, build, whole_batches = OTHER_READERS[reader]
    paths = write(tmp_path)
    expected = _local(build, paths)
    got = _served(dispatcher, ShardingPolicy.FILE, build, paths)
    _assert_same_labels(got, expected)
    assert len(got) == len(expected)
    if whole_batches:
        assert collections.Counter(got) == collections.Counter(expected)


def test_file_sharding_of_an_unseeded_shuffled_producer_duplicates_and_loses(dispatcher,
                                                                            tmp_path):
    """Without a graph seed each worker's producer shuffles the file names its own way, and
    the workers' shards of two different orders overlap: FILE sharding, like DATA, needs
    `graph_seed` for a producer that shuffles. (12 files: that two independent shuffles split
    into complementary halves has probability 1/924.)"""
    paths = pipelines.write_records(tmp_path, files=12, per_file=10)
    got = _served(dispatcher, ShardingPolicy.FILE, pipelines.shuffled_batches, paths,
                  graph_seed=None)
    counts = _label_counts(got)
    assert max(counts.values()) > 1, "no record was duplicated"
    assert len(counts) < 120, "no record was lost"


def test_file_sharding_without_a_file_reader_says_so(dispatcher):
    """A pipeline reading no files (two range producers) has nothing FILE can shard: TF's
    error, nothing served; FILE_OR_DATA falls back to DATA and gives the local batches."""
    with pytest.raises(tf_real.errors.NotFoundError, match="shardable source"):
        _served(dispatcher, ShardingPolicy.FILE, _two_streams, batch_of=_pairs)
    expected = _local(_two_streams, batch_of=_pairs)
    got = _served(dispatcher, ShardingPolicy.FILE_OR_DATA, _two_streams, batch_of=_pairs)
    assert collections.Counter(got) == collections.Counter(expected)


def test_hint_sharding_without_a_hint_gives_the_whole_dataset_once_per_worker(dispatcher,
                                                                              paths):
    """HINT replaces `shard(SHARD_HINT, SHARD_HINT)` placeholders; a to_dataset pipeline has
    none, so, as with OFF, every worker serves every batch."""
    expected = _local(pipelines.shuffled_batches, paths)
    got = _served(dispatcher, ShardingPolicy.HINT, pipelines.shuffled_batches, paths)
    assert collections.Counter(got) == collections.Counter(expected * WORKERS)


def test_hint_sharding_with_a_hint_gives_each_local_batch_once(dispatcher, paths):
    """A shard hint after to_dataset becomes shard(WORKERS, worker index): each worker keeps
    its share of the (seeded, identical) batches, as with DATA."""
    expected = _local(pipelines.shuffled_batches, paths)
    got = _served(dispatcher, ShardingPolicy.HINT, pipelines.shuffled_batches, paths,
                  hint=True)
    _assert_same_labels(got, expected)
    assert collections.Counter(got) == collections.Counter(expected)


@pytest.mark.eager
def test_each_iteration_of_a_served_dataset_is_a_new_job(dispatcher, paths):
    """Iterating the same distributed dataset again starts a new (anonymous) job, which
    replays the pipeline from the start, as each local iteration does."""
    expected = _local(pipelines.shuffled_batches, paths)
    served = compat.to_dataset(pipelines.shuffled_batches, paths, graph_seed=SEED).apply(
        service.distribute(processing_mode=ShardingPolicy.DATA, service=dispatcher))
    for _ in range(2):
        got = [_labels(element) for element in served.as_numpy_iterator()]
        assert collections.Counter(got) == collections.Counter(expected)
