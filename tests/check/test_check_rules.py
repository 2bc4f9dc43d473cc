"""Per rule: sources that must not be reported, and sources that must be, with their codes.

Each case is a dedented source string; the expected list holds only the codes of the rule
under test, in source order.
"""
import pytest

from check_helpers import check
from compat import _api_table as table
from compat._check.rules import (RULES, batching, contrib_helpers, coordination, end_of_input,
                                 implicit_runners, producers, queues, readers, runners,
                                 sync_replicas, tf2_blockers)

FINDING_CASES = {
    producers: [
        ("import tensorflow as tf\ntf.train.string_input_producer(files, num_epochs=10)", ["TFQ101"]),
        ("from tensorflow.python.training import input as tf_input\n"
         "tf_input.slice_input_producer([images, labels])", ["TFQ102"]),
        ("import tensorflow.compat.v1 as tf\ntf.train.range_input_producer(10)", ["TFQ103"]),
        ("import tensorflow as tf\ntf.compat.v1.train.input_producer(x)", ["TFQ104"]),
        ("from tensorflow.train import limit_epochs\nlimit_epochs(t, 2)", ["TFQ105"]),
        ("import tensorflow as tf\ntf.io.match_filenames_once('*.rec')\n"
         "tf.train.match_filenames_once('*.tfrecord')", ["TFQ106", "TFQ106"]),
        ("from tensorflow.python.training.input import *\nstring_input_producer(files)", ["TFQ101"]),
    ],
    readers: [
        ("import tensorflow as tf\nr = tf.TFRecordReader(options=opts)", ["TFQ111"]),
        ("import tensorflow as tf\nr = tf.TextLineReader(skip_header_lines=1)", ["TFQ112"]),
        ("from tensorflow.python.ops import io_ops\nio_ops.FixedLengthRecordReader(3073)", ["TFQ113"]),
        ("import tensorflow.compat.v1 as tf\ntf.WholeFileReader()", ["TFQ114"]),
        ("import tensorflow as tf\ntf.IdentityReader()", ["TFQ115"]),
        ("import tensorflow as tf\ntf.LMDBReader()", ["TFQ116"]),
        ("import tensorflow as tf\nclass MyReader(tf.ReaderBase):\n    pass", ["TFQ117"]),
    ],
    batching: [
        ("import tensorflow as tf\ntf.train.batch([x], 32)", ["TFQ201"]),
        ("import tensorflow as tf\ntf.train.shuffle_batch([x], 32, 100, 10)", ["TFQ202"]),
        ("import tensorflow as tf\ntf.train.batch_join([[x], [y]], 8)", ["TFQ203"]),
        ("from tensorflow.python.training import input as tf_input\n"
         "tf_input.shuffle_batch_join([[x]], 8, 64, 16)", ["TFQ204"]),
        ("import tensorflow as tf\ntf.train.maybe_batch([x], keep, 8)", ["TFQ205"]),
        ("import tensorflow as tf\ntf.train.maybe_shuffle_batch([x], 8, 64, 16, keep)", ["TFQ206"]),
        ("import tensorflow as tf\ntf.train.maybe_batch_join([[x]], keep, 8)", ["TFQ207"]),
        ("import tensorflow as tf\ntf.train.maybe_shuffle_batch_join([[x]], 8, 64, 16, k)", ["TFQ208"]),
        ("from tensorflow.python.training.input import batch as make_batch\nmake_batch([x], 4)",
         ["TFQ201"]),
        ("from tensorflow.python.training import training as train\ntrain.batch([x], 4)",
         ["TFQ201"]),
        ("import tensorflow as tf\nbatcher = tf.train.batch\nbatcher([x], 4)", ["TFQ201", "TFQ201"]),
        ("def f():\n    return tf.train.batch([x], 4)", ["TFQ201"]),  # bare tf
    ],
    queues: [
        ("import tensorflow as tf\ntf.FIFOQueue(10, [tf.float32])", ["TFQ301"]),
        ("import tensorflow as tf\ntf.queue.FIFOQueue(10, [tf.float32])", ["TFQ301"]),
        ("from tensorflow.python.ops import data_flow_ops\n"
         "data_flow_ops.RandomShuffleQueue(10, 2, [tf.int32])", ["TFQ302"]),
        ("import tensorflow as tf\ntf.io.PaddingFIFOQueue(10, [tf.int32], [[None]])", ["TFQ303"]),
        ("import tensorflow as tf\ntf.queue.PriorityQueue(10, [tf.string], [[]])", ["TFQ304"]),
        ("import tensorflow as tf\nclass Q(tf.QueueBase):\n    pass", ["TFQ305"]),
        ("import tensorflow as tf\ntf.QueueBase.from_list(i, [q1, q2])", ["TFQ306"]),
        ("from tensorflow.python.ops.data_flow_ops import FIFOQueue\nFIFOQueue(1, [tf.int32])",
         ["TFQ301"]),
    ],
    runners: [
        ("import tensorflow as tf\ntf.train.QueueRunner(q, [op])", ["TFQ311"]),
        ("import tensorflow as tf\ntf.train.queue_runner.QueueRunner(q, [op])", ["TFQ311"]),
        ("from tensorflow.python.training import queue_runner\nqueue_runner.QueueRunner(q, [op])",
         ["TFQ311"]),
        ("import tensorflow as tf\ntf.train.add_queue_runner(qr)", ["TFQ312"]),
        ("import tensorflow as tf\ntf.train.queue_runner.add_queue_runner(qr)", ["TFQ312"]),
        ("import tensorflow as tf\nthreads = tf.train.start_queue_runners(sess, coord)", ["TFQ313"]),
        ("from tensorflow.python.training.queue_runner_impl import start_queue_runners\n"
         "start_queue_runners(sess)", ["TFQ313"]),
        ("import tensorflow as tf\nclass MyRunner(tf.train.QueueRunner):\n    pass", ["TFQ311"]),
        ("import tensorflow as tf\nsv = tf.train.Supervisor()\nsv.start_queue_runners(sess, [qr])",
         ["TFQ313"]),
    ],
    coordination: [
        ("import tensorflow as tf\ncoord = tf.train.Coordinator()", ["TFQ321"]),
        ("from tensorflow.python.training.coordinator import Coordinator\nCoordinator()", ["TFQ321"]),
        ("import tensorflow as tf\ntf.train.LooperThread(coord, 10, target=f)", ["TFQ322"]),
        ("import tensorflow as tf\ncoord = tf.train.Coordinator()\ncoord.request_stop()", ["TFQ321"]),
    ],
    end_of_input: [
        ("import tensorflow as tf\ntry:\n    sess.run(batch)\n"
         "except tf.errors.OutOfRangeError:\n    pass", ["TFQ401"]),
        ("import tensorflow as tf\ntry:\n    sess.run(batch)\n"
         "except (tf.compat.v1.errors.OutOfRangeError, KeyError):\n    pass", ["TFQ401"]),
        ("from tensorflow.python.framework.errors_impl import OutOfRangeError\n"
         "try:\n    sess.run(batch)\nexcept OutOfRangeError:\n    pass", ["TFQ401"]),
        ("import tensorflow as tf\nwhile True:\n    try:\n        sess.run(op)\n"
         "    except tf.errors.OutOfRangeError as e:\n        break", ["TFQ401"]),
    ],
    implicit_runners: [
        ("import tensorflow as tf\nsv = tf.train.Supervisor(logdir=d)", ["TFQ402"]),
        ("import tensorflow as tf\nwith tf.train.MonitoredTrainingSession() as s:\n    pass",
         ["TFQ403"]),
        ("import tensorflow as tf\ntf.train.MonitoredSession(hooks=h)", ["TFQ404"]),
        ("import tensorflow as tf\ntf.train.SingularMonitoredSession()", ["TFQ405"]),
    ],
    contrib_helpers: [
        ("import tensorflow as tf\nslim = tf.contrib.slim\n"
         "with slim.queues.QueueRunners(sess):\n    pass", ["TFQ411"]),
        ("from tensorflow.contrib.slim.python.slim.data import prefetch_queue\n"
         "prefetch_queue.prefetch_queue([x], capacity=2)", ["TFQ412"]),
        ("import tensorflow as tf\n"
         "tf.contrib.training.bucket_by_sequence_length(n, [x], 8, [10, 20])", ["TFQ413"]),
        ("import tensorflow as tf\ntf.contrib.training.batch_sequences_with_states(k, s, c, n, i, 5, 8)",
         ["TFQ414"]),
        ("import tensorflow as tf\ntf.contrib.training.stratified_sample([x], y, p, 8)", ["TFQ415"]),
        ("import tensorflow as tf\ntf.contrib.training.rejection_sample([x], f, 8)", ["TFQ416"]),
        ("import tensorflow.contrib.slim as slim\n"
         "slim.dataset_data_provider.DatasetDataProvider(ds)", ["TFQ417"]),
        ("from tensorflow.contrib import slim\nslim.parallel_reader.parallel_read(files, r)",
         ["TFQ418"]),
    ],
    sync_replicas: [
        ("import tensorflow as tf\nopt = tf.train.SyncReplicasOptimizer(o, 2)\n"
         "qr = opt.get_chief_queue_runner()", ["TFQ421", "TFQ421"]),
    ],
    tf2_blockers: [
        ("import tensorflow as tf\nslim = tf.contrib.slim\nnet = slim.conv2d(images, 64, [3, 3])",
         ["TFQ901"]),  # the alias, not each use of it
        ("import tensorflow.compat.v1 as tf\n"
         "w = tf.get_variable('w', [3, 3], initializer=tf.contrib.layers.xavier_initializer())",
         ["TFQ901"]),
        ("from tensorflow.contrib import rnn\ncell = rnn.BasicLSTMCell(128)", ["TFQ901"]),
        ("import compat.v1 as tf\nnet = tf.layers.conv2d(images, 32, 3)\n"
         "net = tf.layers.dense(tf.layers.flatten(net), 10)", ["TFQ902", "TFQ902", "TFQ902"]),
        ("import tensorflow as tf\nlogits = tf.compat.v1.layers.dense(x, 10)", ["TFQ902"]),
    ],
}

NOOP_CASES = {
    producers: [
        "def string_input_producer(x):\n    return x\nstring_input_producer(1)",
        "import tensorflow as tf\nds = tf.data.Dataset.from_tensor_slices(files).repeat(10)",
        "# tf.train.string_input_producer(files)\ns = 'tf.train.string_input_producer(files)'",
        "import tensorflow as tf\ntrain = Trainer()\ntrain.string_input_producer(files)",
    ],
    readers: [
        "import tensorflow as tf\nds = tf.data.TFRecordDataset(files)",
        "import tensorflow as tf\nwriter = tf.python_io.TFRecordWriter(path)",
        "class TFRecordReader:\n    pass\nTFRecordReader()",
    ],
    batching: [
        "import tensorflow as tf\ntf.data.Dataset.range(10).batch(3)",
        "import numpy as np\nnp.random.shuffle(x)",
        "def batch(items, n):\n    return items\nbatch([1], 1)",
        "tf = load_plugin()\ntf.train.batch(x, 3)",  # `tf` bound to something else
    ],
    queues: [
        "import queue\nq = queue.Queue()\nq2 = queue.PriorityQueue()",
        "from queue import PriorityQueue\nPriorityQueue()",
        "import multiprocessing\nmultiprocessing.Queue()",
        "from six.moves import queue\nqueue.Queue()",
    ],
    runners: [
        "import tensorflow as tf\nsv = tf.train.Supervisor()\n"
        "qr = tf.train.SyncReplicasOptimizer(o, 2).get_chief_queue_runner()\n"
        "sv.start_queue_runners(sess, [qr])",
        "def start_queue_runners(pool):\n    pass\nstart_queue_runners([])",
        "import tensorflow as tf\nrunners = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)",
    ],
    coordination: [
        "class Coordinator:\n    pass\ncoord = Coordinator()\ncoord.request_stop()",
        "from mylib.coordinator import Coordinator\nCoordinator()",
        "from .coordinator import Coordinator\nCoordinator()",
    ],
    end_of_input: [
        "try:\n    pass\nexcept StopIteration:\n    pass",
        "import tensorflow as tf\ntry:\n    pass\nexcept tf.errors.NotFoundError:\n    pass",
        "class OutOfRangeError(Exception):\n    pass\nraise OutOfRangeError()",
        "import tensorflow as tf\nraise tf.errors.OutOfRangeError(None, None, 'done')",
        "import tensorflow as tf\nwith self.assertRaises(tf.errors.OutOfRangeError):\n    pass",
    ],
    implicit_runners: [
        "import tensorflow as tf\nwith tf.Session() as sess:\n    pass",
        "import tensorflow as tf\ntf.estimator.Estimator(model_fn)",
    ],
    contrib_helpers: [
        "import tensorflow as tf\nds.bucket_by_sequence_length(f, [10], [8, 8])",
        "import tensorflow as tf\ntf.contrib.layers.fully_connected(x, 10)",
    ],
    sync_replicas: [
        "opt = MyOptimizer()\nopt.get_chief_queue_runner()",
        "import tensorflow as tf\nopt = tf.train.AdamOptimizer()\nopt.minimize(loss)",
    ],
    tf2_blockers: [
        "import tensorflow as tf\nnet = tf.keras.layers.Dense(10)(x)",
        "import keras\nfrom keras import layers\nnet = layers.Dense(10)(x)",
        "import torch.nn as tf\ny = tf.layers.Linear(3, 4)",  # tf bound to something else
        "import tensorflow as tf\n# tf.contrib.slim was here\nx = 'tf.contrib.rnn'",
        # the table's own contrib APIs belong to their rules
        "from tensorflow.contrib.slim.python.slim.data import prefetch_queue\n"
        "q = prefetch_queue.prefetch_queue([images, labels])",
    ],
}


def _codes_of(rule, source):
    return [f.code for f in check(source).findings if f.code in rule.CODES]


@pytest.mark.parametrize("rule,source,expected", [
    pytest.param(rule, source, expected, id=f"{rule.__name__.rsplit('.', 1)[1]}-{index}")
    for rule, cases in FINDING_CASES.items() for index, (source, expected) in enumerate(cases)])
def test_finding(rule, source, expected):
    assert _codes_of(rule, source) == expected


@pytest.mark.parametrize("rule,source", [
    pytest.param(rule, source, id=f"{rule.__name__.rsplit('.', 1)[1]}-{index}")
    for rule, cases in NOOP_CASES.items() for index, source in enumerate(cases)])
def test_noop(rule, source):
    assert _codes_of(rule, source) == []


def test_every_rule_has_cases():
    assert set(FINDING_CASES) == set(RULES) == set(NOOP_CASES)


def test_every_table_code_is_exercised():
    seen = {code for cases in FINDING_CASES.values() for _, expected in cases for code in expected}
    assert seen == {row.code for row in table.ROWS} | tf2_blockers.CODES


def test_rules_partition_the_table():
    owners = {}
    for rule in RULES:
        for code in rule.CODES:
            assert code not in owners, f"{code} owned by two rules"
            owners[code] = rule
    assert set(owners) == {row.code for row in table.ROWS} | tf2_blockers.CODES


@pytest.mark.parametrize("source,expected", [
    ("import tensorflow as tf\ntf.train.string_input_producer(files, num_epochs=10, seed=3)",
     "tf.data.Dataset.from_tensor_slices(files).shuffle(len(files), seed=3).repeat(10)"),
    ("import tensorflow as tf\ntf.train.string_input_producer(files, 2, False)",
     "tf.data.Dataset.from_tensor_slices(files).repeat(2)"),
    ("import tensorflow as tf\ntf.train.batch([x], 32)",
     "dataset.batch(32, drop_remainder=True)"),
    ("import tensorflow as tf\ntf.train.batch([x], 32, allow_smaller_final_batch=True)",
     "dataset.batch(32, drop_remainder=False)"),
    ("import tensorflow as tf\ntf.train.batch([x], n, allow_smaller_final_batch=last)",
     "dataset.batch(n, drop_remainder=not last)"),
    ("import tensorflow as tf\ntf.train.batch([x], 8, dynamic_pad=True)",
     "dataset.padded_batch(8, drop_remainder=True)"),
    ("import tensorflow as tf\ntf.train.shuffle_batch([x], batch_size=128, capacity=2000, "
     "min_after_dequeue=1000, seed=42)",
     "dataset.shuffle(2000, seed=42).batch(128, drop_remainder=True)"),
    ("import tensorflow as tf\ntf.TextLineReader(skip_header_lines=1)",
     "filenames.flat_map(lambda f: tf.data.TextLineDataset(f).skip(1))"),
    ("import tensorflow as tf\nf = tf.train.batch",  # not a call: TF1 defaults, names for the rest
     "dataset.batch(batch_size, drop_remainder=True)"),
])
def test_tf_data_rewrite_uses_the_call_arguments(source, expected):
    (finding,) = check(source).findings
    assert finding.tf_data == expected


def test_message_names_the_canonical_api_for_aliases():
    (finding,) = check("from tensorflow.python.training import input as tf_input\n"
                       "tf_input.batch([x], 4)\n").findings
    assert finding.message == ("tf_input.batch([x], 4) [tf.train.batch] — covered by compat.v1")
    assert finding.api == "tf.train.batch"


def test_bare_tf_is_said_so():
    (finding,) = check("x = tf.train.batch([x], 4)\n").findings
    assert "never imported" in finding.message


def test_sync_replicas_chief_queue_runner_is_not_a_migration_site():
    findings = check("""
        import tensorflow as tf
        opt = tf.train.SyncReplicasOptimizer(tf.train.AdamOptimizer(), 4)
        chief = opt.get_chief_queue_runner()
        tf.train.add_queue_runner(chief)
    """).findings
    assert [(f.code, f.coverage) for f in findings] == [
        ("TFQ421", table.NOT_PIPELINE), ("TFQ421", table.NOT_PIPELINE),
        ("TFQ312", table.COVERED)]
    assert "not an input pipeline; keep as is" in findings[1].message


def test_positions_are_one_based_character_columns():
    (finding,) = check("import tensorflow as tf\nnom = 'é'; q = tf.FIFOQueue(3, [tf.int32])\n").findings
    assert (finding.line, finding.col) == (2, 16)


@pytest.mark.parametrize("source,expected", [
    ("import tensorflow as tf\ntf.train.batch([x], 2)  # noqa\n", []),
    ("import tensorflow as tf\ntf.train.batch([x], 2)  # noqa: TFQ201\n", []),
    ("import tensorflow as tf\ntf.train.batch([x], 2)  # NOQA:TFQ202, TFQ301\n", ["TFQ201"]),
    ("import tensorflow as tf\ntf.train.batch(tf.FIFOQueue(1, [x]).dequeue(), 2)  # noqa: TFQ301\n",
     ["TFQ201"]),
])
def test_noqa_comments(source, expected):
    assert [f.code for f in check(source).findings] == expected
