"""Name resolution: spellings that reach the legacy APIs, and look-alikes that do not.

A labelled corpus: every line that must be reported ends with `# expect: CODE [CODE ...]`;
every other line must not be reported. FOUND cases hold at least one label, NOOP cases none
(the look-alike of a FOUND case). `python tests/check/test_check_resolution.py` prints the
checker's recall and false positives on the corpus.
"""
import re
import textwrap

import pytest

from check_helpers import check
from compat._check import engine
from compat._check.model import SCAN_AST, SCAN_TOKENS

_EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>(?:TFQ\d+\s*)+)$")

FOUND = {
    # --- tf_slim, the standalone release of tf.contrib.slim ---------------------------------
    "tf_slim_queue_runners_as_slim": """
        import tf_slim as slim
        with slim.queues.QueueRunners(sess):  # expect: TFQ411
            sess.run(images)
        """,
    "tf_slim_queue_runners_by_package": """
        import tf_slim
        with tf_slim.queues.QueueRunners(sess):  # expect: TFQ411
            pass
        """,
    "tf_slim_queues_module_imported": """
        from tf_slim import queues
        with queues.QueueRunners(sess):  # expect: TFQ411
            pass
        """,
    "tf_slim_data_prefetch_queue": """
        import tf_slim
        batch_queue = tf_slim.data.prefetch_queue.prefetch_queue([images, labels], capacity=2)  # expect: TFQ412
        """,
    "tf_slim_prefetch_queue_function": """
        from tf_slim.data.prefetch_queue import prefetch_queue
        batch_queue = prefetch_queue([images, labels])  # expect: TFQ412
        """,
    "tf_slim_top_level_prefetch_queue": """
        import tf_slim as slim
        batch_queue = slim.prefetch_queue.prefetch_queue([images, labels])  # expect: TFQ412
        """,
    "tf_slim_parallel_read": """
        import tensorflow as tf
        from tf_slim.data import parallel_reader
        _, data = parallel_reader.parallel_read(files, reader_class=tf.TFRecordReader)  # expect: TFQ418 TFQ111
        """,
    "tf_slim_parallel_read_through_slim": """
        import tf_slim as slim
        _, data = slim.parallel_reader.parallel_read(sources, reader, num_readers=4)  # expect: TFQ418
        """,
    "tf_slim_parallel_reader_module_alias": """
        import tf_slim.data.parallel_reader as pr
        _, data = pr.parallel_read(sources, reader)  # expect: TFQ418
        """,
    "tf_slim_dataset_data_provider": """
        import tf_slim as slim
        provider = slim.dataset_data_provider.DatasetDataProvider(dataset)  # expect: TFQ417
        """,
    # --- Supervisor.start_queue_runners ----------------------------------------------------
    "supervisor_start_queue_runners": """
        import tensorflow as tf
        sv = tf.train.Supervisor(logdir=logdir)  # expect: TFQ402
        with sv.managed_session() as sess:
            threads = sv.start_queue_runners(sess)  # expect: TFQ313
        """,
    "supervisor_collection_runners_by_keyword": """
        import tensorflow as tf
        sv = tf.train.Supervisor(logdir=logdir)  # expect: TFQ402
        sess = sv.prepare_or_wait_for_session(server.target)
        queue_runners = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
        sv.start_queue_runners(sess=sess, queue_runners=queue_runners)  # expect: TFQ313
        """,
    "supervisor_compat_v1": """
        import tensorflow as tf
        sv = tf.compat.v1.train.Supervisor(logdir=logdir)  # expect: TFQ402
        sv.start_queue_runners(sess)  # expect: TFQ313
        """,
    "supervisor_compat_v1_module": """
        import tensorflow.compat.v1 as tf
        def train():
            sv = tf.train.Supervisor(is_chief=True)  # expect: TFQ402
            sess = sv.prepare_or_wait_for_session(target)
            sv.start_queue_runners(sess)  # expect: TFQ313
        """,
    "supervisor_built_on_the_chief_only": """
        import tensorflow as tf
        sv = None
        if is_chief:
            sv = tf.train.Supervisor(logdir=logdir)  # expect: TFQ402
        if sv is not None:
            sv.start_queue_runners(sess)  # expect: TFQ313
        """,
    # --- a project's own alias module for tf.compat.v1 --------------------------------------
    "alias_module_fifo_queue": """
        from mypkg.compat import tfv1
        q = tfv1.FIFOQueue(10, [tfv1.float32])  # expect: TFQ301
        """,
    "alias_module_producer_and_batch": """
        import mypkg.tf_compat as tfv1
        names = tfv1.train.string_input_producer(files, num_epochs=1)  # expect: TFQ101
        reader = tfv1.TFRecordReader()  # expect: TFQ111
        images = tfv1.train.shuffle_batch([x], 32, 100, 10)  # expect: TFQ202
        """,
    "alias_module_relative_import": """
        from ..compat import v1
        q = v1.RandomShuffleQueue(100, 10, [v1.string])  # expect: TFQ302
        """,
    "alias_module_runners": """
        from mypkg import tfv1
        qr = tfv1.train.QueueRunner(q, [enqueue])  # expect: TFQ311
        coord = tfv1.train.Coordinator()  # expect: TFQ321
        threads = tfv1.train.start_queue_runners(sess, coord)  # expect: TFQ313
        """,
    "alias_module_subclass": """
        from mypkg.compat import tfv1
        class Q(tfv1.PaddingFIFOQueue):  # expect: TFQ303
            pass
        """,
    "alias_module_end_of_input": """
        from mypkg.compat import tfv1
        try:
            sess.run(batch)
        except tfv1.errors.OutOfRangeError:  # expect: TFQ401
            pass
        """,
    # --- aliases that only may hold the legacy object ----------------------------------------
    "conditional_reader_class_called": """
        import tensorflow as tf
        def read(filename_queue, reader=None):
            if reader is None:
                reader = tf.TFRecordReader  # expect: TFQ111
            instance = reader(options=None)  # expect: TFQ111
            log(reader)
            return instance.read(filename_queue)
        """,
    "loop_carried_alias": """
        import tensorflow as tf
        make = None
        for dtype in dtypes:
            if make is not None:
                q = make(10, [dtype])  # expect: TFQ301
            make = tf.FIFOQueue  # expect: TFQ301
        """,
    "global_alias_set_in_a_function": """
        import tensorflow as tf
        READER = None
        def setup():
            global READER
            READER = tf.TFRecordReader  # expect: TFQ111
        def use():
            if READER is None:
                setup()
            log(READER)
            return READER()  # expect: TFQ111
        """,
    "definite_alias_everywhere": """
        import tensorflow as tf
        batcher = tf.train.batch  # expect: TFQ201
        def make(x):
            return batcher([x], 4)  # expect: TFQ201
        """,
    "try_import_fallback": """
        try:
            import tensorflow.compat.v1 as tf
        except ImportError:
            tf = None
        def inputs(x):
            return tf.train.batch([x], 2)  # expect: TFQ201
        """,
    "import_inside_another_function": """
        def main():
            import tensorflow as tf
            tf.train.start_queue_runners(sess)  # expect: TFQ313
        def helper(x):
            return tf.train.batch([x], 2)  # expect: TFQ201
        """,
    "instance_member_in_closure": """
        import tensorflow as tf
        def build():
            opt = tf.train.SyncReplicasOptimizer(base, 2)  # expect: TFQ421
            def hook():
                return opt.make_session_run_hook(True)  # expect: TFQ421
            return hook
        """,
    # --- except OutOfRangeError where the try body runs the pipeline -------------------------
    "end_of_input_session_loop": """
        import tensorflow as tf
        try:
            while True:
                sess.run(train_op)
        except tf.errors.OutOfRangeError:  # expect: TFQ401
            pass
        """,
    "end_of_input_monitored_session": """
        import tensorflow as tf
        with tf.train.MonitoredTrainingSession(hooks=hooks) as mon_sess:  # expect: TFQ403
            try:
                while not mon_sess.should_stop():
                    mon_sess.run(train_op)
            except tf.errors.OutOfRangeError:  # expect: TFQ401
                pass
        """,
    "end_of_input_batch_tensor": """
        import tensorflow as tf
        images, labels = tf.train.batch([image, label], 32)  # expect: TFQ201
        try:
            consume(images)
        except tf.errors.OutOfRangeError:  # expect: TFQ401
            pass
        """,
    "end_of_input_helper_runs_the_session": """
        import tensorflow as tf
        def step():
            return sess.run(train_op)
        try:
            for _ in range(steps):
                step()
        except tf.errors.OutOfRangeError:  # expect: TFQ401
            pass
        """,
    "end_of_input_get_next": """
        import tensorflow as tf
        try:
            element = iterator.get_next()
        except (tf.errors.OutOfRangeError, StopIteration):  # expect: TFQ401
            element = None
        """,
    "end_of_input_next_element": """
        import tensorflow as tf
        def get_batch(iterator):
            try:
                return next(iterator)
            except (StopIteration, tf.errors.OutOfRangeError):  # expect: TFQ401
                return None
        """,
    "end_of_input_context_manager": """
        import contextlib
        import tensorflow as tf
        @contextlib.contextmanager
        def catch_end_of_input():
            try:
                yield
            except tf.errors.OutOfRangeError:  # expect: TFQ401
                pass
        """,
    "end_of_input_aliased_error": """
        import tensorflow as tf
        EndOfInput = tf.errors.OutOfRangeError
        try:
            sess.run(batch)
        except EndOfInput:  # expect: TFQ401
            pass
        """,
    "end_of_input_tensor_eval": """
        from tensorflow.python.framework.errors_impl import OutOfRangeError
        try:
            value = batch.eval()
        except OutOfRangeError:  # expect: TFQ401
            value = None
        """,
}

NOOP = {
    "tf_slim_layers_and_training": """
        import tf_slim as slim
        net = slim.conv2d(images, 64, [3, 3])
        slim.learning.train(train_op, logdir)
        """,
    "tf_slim_decoder": """
        from tf_slim.data import tfexample_decoder
        decoder = tfexample_decoder.TFExampleDecoder(keys, items)
        """,
    "other_slim_package_queues": """
        import tensorflow as tf
        import my_slim as slim
        with slim.queues.QueueRunners(sess):
            pass
        """,
    "own_supervisor_start_queue_runners": """
        import tensorflow as tf
        sv = MySupervisor()
        sv.start_queue_runners(sess)
        """,
    "supervisor_rebound_before_the_call": """
        import tensorflow as tf
        sv = tf.compat.v1.train.Supervisor  # expect: TFQ402
        sv = Pool()
        sv.start_queue_runners(sess)
        """,
    "supervisor_starting_the_chief_queue_runner": """
        import tensorflow as tf
        sv = tf.train.Supervisor(is_chief=True)  # expect: TFQ402
        opt = tf.train.SyncReplicasOptimizer(base, 2)  # expect: TFQ421
        chief = opt.get_chief_queue_runner()  # expect: TFQ421
        sv.start_queue_runners(sess, [chief])
        """,
    "supervisor_given_the_chief_runner_as_a_parameter": """
        import tensorflow as tf
        sv = tf.train.Supervisor(is_chief=True)  # expect: TFQ402
        def start_chief(sess, chief_queue_runner):
            sv.start_queue_runners(sess, [chief_queue_runner])
        """,
    "dali_tfrecord_reader": """
        import tensorflow as tf
        from nvidia.dali import ops
        reader = ops.TFRecordReader(path=paths, index_path=indexes, features=features)
        """,
    "own_queues_module": """
        import tensorflow as tf
        from mylib import queues
        q = queues.FIFOQueue(maxsize=10)
        """,
    "alias_module_generic_names": """
        from mypkg.compat import tfv1
        from mypkg import data
        ds = tfv1.data.Dataset.range(3).batch(2)
        chunks = data.train.batch(32)
        size = tfv1.shuffle_batch_size
        """,
    "conditional_reader_tested_and_passed": """
        import tensorflow as tf
        def read(filename_queue, reader=None):
            if reader is None:
                reader = tf.TFRecordReader  # expect: TFQ111
            if reader is not None and reader != tf.TFRecordReader:  # expect: TFQ111
                log(reader)
            return make_dataset(reader, filename_queue)
        """,
    "module_level_conditional_reader": """
        import tensorflow as tf
        reader = None
        if use_tf:
            reader = tf.TFRecordReader  # expect: TFQ111
        if reader is not None:
            print(reader)
        registry[name] = reader
        """,
    "same_name_elsewhere": """
        import tensorflow as tf
        def build():
            reader = tf.TFRecordReader  # expect: TFQ111
            return reader
        def other(reader):
            reader()
            return reader.read(q)
        """,
    "alias_rebound": """
        import tensorflow as tf
        batcher = tf.train.batch  # expect: TFQ201
        batcher = my_batch
        batcher([x], 4)
        """,
    "parameter_shadows_module_alias": """
        import tensorflow as tf
        batcher = tf.train.batch  # expect: TFQ201
        def make(batcher, x):
            return batcher([x], 4)
        """,
    "may_hold_call_of_another_shape": """
        import tensorflow as tf
        def read(reader=None):
            if reader is None:
                reader = tf.TFRecordReader  # expect: TFQ111
            return reader(path, index_path=index)
        """,
    "end_of_input_around_checkpoint_lookup": """
        import tensorflow as tf
        try:
            ckpt = tf.train.latest_checkpoint(model_dir)
            saver.restore(sess, ckpt)
        except tf.errors.OutOfRangeError:
            pass
        """,
    "end_of_input_around_subprocess": """
        import subprocess
        import tensorflow as tf
        try:
            subprocess.run(command)
        except tf.errors.OutOfRangeError:
            pass
        """,
    "end_of_input_around_parsing": """
        import tensorflow as tf
        try:
            value = int(text)
        except (ValueError, tf.errors.OutOfRangeError):
            value = 0
        """,
}

# the same spellings in files Python 3 cannot parse (Python 2 prints): the token scan
TOKEN_FOUND = {
    "py2_tf_slim_queues": """
        import tf_slim as slim
        print "evaluating"
        with slim.queues.QueueRunners(sess):  # expect: TFQ411
            pass
        """,
    "py2_tf_slim_prefetch_queue": """
        from tf_slim.data import prefetch_queue
        print "batching"
        q = prefetch_queue.prefetch_queue([images])  # expect: TFQ412
        """,
    "py2_alias_module": """
        from mypkg.compat import tfv1
        print "queue"
        q = tfv1.FIFOQueue(10, [tfv1.float32])  # expect: TFQ301
        """,
    "py2_end_of_input": """
        import tensorflow as tf
        try:
            while True:
                print sess.run(batch)
        except tf.errors.OutOfRangeError, e:  # expect: TFQ401
            pass
        """,
    "py2_conditional_reader_called": """
        import tensorflow as tf
        if reader is None:
            reader = tf.TFRecordReader  # expect: TFQ111
        print reader
        r = reader()  # expect: TFQ111
        """,
}

TOKEN_NOOP = {
    "py2_end_of_input_around_checkpoint": """
        import tensorflow as tf
        print "restoring"
        try:
            saver.restore(sess, tf.train.latest_checkpoint(model_dir))
        except tf.errors.OutOfRangeError, e:
            pass
        """,
    "py2_end_of_input_around_subprocess": """
        import subprocess
        import tensorflow as tf
        try:
            subprocess.run(command)
        except tf.errors.OutOfRangeError, e:
            pass
        """,
    "py2_own_queues_module": """
        import tensorflow as tf
        from mylib import queues
        print "queue"
        q = queues.FIFOQueue(maxsize=10)
        """,
    "py2_dali_reader": """
        import tensorflow as tf
        from nvidia.dali import ops
        print "dali"
        reader = ops.TFRecordReader(path=paths, index_path=indexes)
        """,
}


def _expected(source):
    found = []
    for number, line in enumerate(textwrap.dedent(source).splitlines(), start=1):
        match = _EXPECT.search(line)
        if match:
            found.extend((number, code) for code in match.group("codes").split())
    return sorted(found)


def _actual(source):
    report = check(source)
    return report, sorted((f.line, f.code) for f in report.findings)


def _cases(*groups):
    return [pytest.param(source, id=name) for group in groups for name, source in group.items()]


@pytest.mark.parametrize("source", _cases(FOUND, NOOP))
def test_ast_corpus(source):
    report, actual = _actual(source)
    assert report.scan == SCAN_AST, report.problem
    assert actual == _expected(source)


@pytest.mark.parametrize("source", _cases(TOKEN_FOUND, TOKEN_NOOP))
def test_token_corpus(source):
    report, actual = _actual(source)
    assert report.scan == SCAN_TOKENS
    assert actual == _expected(source)


def test_found_cases_are_labelled_and_noop_cases_only_label_the_real_site():
    assert all(_expected(source) for source in (*FOUND.values(), *TOKEN_FOUND.values()))
    # a NOOP case may hold real sites elsewhere, never on the look-alike line it is about
    assert not any(_expected(source) for source in TOKEN_NOOP.values())


@pytest.mark.parametrize("source", [FOUND["alias_module_fifo_queue"],
                                    TOKEN_FOUND["py2_alias_module"]])
def test_unresolved_alias_is_said_so(source):
    (finding,) = check(source).findings
    assert finding.message.startswith("tfv1.FIFOQueue(10, [tfv1.float32]) [tf.FIFOQueue]")
    assert ("`tfv1` is imported from mypkg.compat.tfv1, which could not be resolved: "
            "FIFOQueue is a TF1 legacy name") in finding.message
    assert finding.api == "tf.FIFOQueue"


def test_resolved_sites_say_nothing_about_aliases():
    (finding,) = check("import tensorflow as tf\nq = tf.FIFOQueue(10, [tf.int32])\n").findings
    assert "could not be resolved" not in finding.message


def test_supervisor_start_queue_runners_names_the_supervisor():
    findings = check(FOUND["supervisor_start_queue_runners"]).findings
    start = next(f for f in findings if f.code == "TFQ313")
    assert start.message.startswith("sv.start_queue_runners(sess) [tf.train.Supervisor."
                                    "start_queue_runners")
    assert start.api == "tf.train.start_queue_runners"
    assert (start.line, start.col) == (5, 15)


def test_tf_slim_finding_points_at_the_slim_spelling():
    (finding,) = check(FOUND["tf_slim_queue_runners_as_slim"]).findings
    assert (finding.line, finding.col, finding.end_col) == (3, 6, 17)
    assert finding.message.startswith("slim.queues [tf.contrib.slim.queues]")


def test_conditional_alias_call_keeps_its_arguments():
    findings = check(FOUND["conditional_reader_class_called"]).findings
    assert [f.message.split(" — ")[0].split(" [")[0] for f in findings] == ["tf.TFRecordReader",
                                                            "reader(options=None)"]


def test_deeply_nested_expressions_do_not_recurse():
    source = ("import tensorflow as tf\nreader = None\nif flag:\n    reader = tf.TFRecordReader\n"
              "x = " + " + ".join(["reader"] * 3000) + "\n")
    report = engine.check_source(source)
    assert report.error == ""
    assert [f.code for f in report.findings] == ["TFQ111"]


def corpus_statistics():
    """(labelled sites, found, false positives, files) over the whole corpus."""
    labelled = found = false_positives = 0
    groups = (FOUND, NOOP, TOKEN_FOUND, TOKEN_NOOP)
    for group in groups:
        for source in group.values():
            expected = _expected(source)
            _, actual = _actual(source)
            labelled += len(expected)
            remaining = list(actual)
            for item in expected:
                if item in remaining:
                    remaining.remove(item)
                    found += 1
            false_positives += len(remaining)
    return labelled, found, false_positives, sum(len(g) for g in groups)


if __name__ == "__main__":
    total, hits, extra, files = corpus_statistics()
    print(f"{files} fixtures: {hits}/{total} labelled sites found "
          f"(recall {hits / total:.1%}), {extra} false positives")
