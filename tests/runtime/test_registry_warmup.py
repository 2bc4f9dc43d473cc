"""`registry_warmup`: TF's first failed op look-up (the registry export) is made on a thread
when the shim's runtime loads, before the pipeline adds its first function; where TF's C API
is not found nothing happens."""
import os
import subprocess
import sys
import textwrap

from compat._runtime import registry_warmup

# Run in a fresh process: the export happens once per process, and TF logs every failed
# look-up at VLOG(1) of op.cc, in the order they happen.
PROGRAM = textwrap.dedent("""
    import sys, threading
    import compat.v1 as tf
    if sys.argv[1] == "tf1":
        tf.disable_v2_behavior()
    else:
        tf.reset_default_graph()
    for thread in threading.enumerate():
        if thread.name == "compat-registry-warmup":
            thread.join()
    print("warmed", file=sys.stderr, flush=True)
    with tf.Graph().as_default():
        value = tf.train.range_input_producer(5, num_epochs=1, shuffle=False).dequeue()
        with tf.Session() as session:
            session.run(tf.local_variables_initializer())
            coordinator = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(session, coordinator)
            print("values", [int(session.run(value)) for _ in range(5)], flush=True)
            coordinator.request_stop()
            coordinator.join(threads)
""")


def _failed_look_ups(behavior: str) -> list:
    """The op names TF failed to find while `PROGRAM` ran, in order, from its op.cc VLOG
    lines; 'warmed' marks where the program had joined the warm-up thread."""
    environment = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "0", "TF_CPP_VMODULE": "op=1"}
    run = subprocess.run([sys.executable, "-c", PROGRAM, behavior], capture_output=True,
                         text=True, env=environment, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "values [0, 1, 2, 3, 4]" in run.stdout
    found = []
    for line in run.stderr.splitlines():
        if line.startswith("warmed"):
            found.append("warmed")
        elif "Op type not registered '" in line:
            found.append(line.split("Op type not registered '")[1].split("'")[0])
    return found


def test_the_first_failed_look_up_is_the_warm_up_s_before_any_function(tf_behavior):
    looked_up = _failed_look_ups(tf_behavior)
    # Only the first failed look-up of a process exports the registry: it is the warm-up's,
    # made at the program's first compat.v1 name, and the pipeline's functions came after.
    assert looked_up[:2] == [registry_warmup._MISSING_OP.decode(), "warmed"], looked_up
    assert len(looked_up) > 2, "the pipeline added no function: nothing was warmed for"


def test_a_tensorflow_without_the_c_api_library_is_left_alone(tmp_path):
    assert registry_warmup.look_up_missing_op(str(tmp_path)) is None


def test_a_library_tensorflow_did_not_load_is_not_loaded(tmp_path):
    """Only the copy TF loaded is used (a second would register every op again)."""
    (tmp_path / "libtensorflow_cc.so.2").write_bytes(b"not a library")
    assert registry_warmup.look_up_missing_op(str(tmp_path)) is None


def test_the_look_up_fails_as_meant_and_leaves_tensorflow_working():
    import tensorflow as tf
    assert registry_warmup.look_up_missing_op(tf.sysconfig.get_lib()) == registry_warmup.NOT_FOUND
    with tf.Graph().as_default() as graph:
        doubled = tf.function(lambda x: 2 * x).get_concrete_function(tf.constant(3))
        doubled.add_to_graph(graph)
        assert graph._is_function(doubled.name)  # pylint: disable=protected-access


def test_a_fork_waits_for_the_look_up():
    """A child forked while the export holds the registry's lock would wait on it at its
    first op look-up; the parent's fork waits for the thread instead."""
    program = textwrap.dedent("""
        import os, threading
        from compat._runtime import registry_warmup
        registry_warmup.start()
        pid = os.fork()
        if pid == 0:
            import tensorflow as tf
            with tf.Graph().as_default():
                tf.constant(1) + 1
            os._exit(0)
        alive = [t.is_alive() for t in threading.enumerate()
                 if t.name == "compat-registry-warmup"]
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status), "warm-up alive after fork", alive)
    """)
    # Without the wait the child hangs: the timeout is the failure.
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "child 0 warm-up alive after fork []" in run.stdout, run.stdout
