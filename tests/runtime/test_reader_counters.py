"""num_records_produced / num_work_units_completed / reset against TF1's readers.

Mid-run values depend on how far each reader has read ahead (in TF1 too), so the tests
compare the values at the end of the input, and check the shim's never decrease or overtake
it. TF1 is only asked at the end: its counter ops wait for the reader's lock, which a read
blocked on the filename queue holds, and on 2 cores the two blocked ops can take every
inter-op thread the filename queue's runner needs to close it (a deadlock in TF1 itself)."""
import pytest
from hypothesis import given, strategies as st

import tensorflow as tf_real

# The counters do not depend on the TF behaviour: the quick run takes one.
pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(300), pytest.mark.behaviour_independent]


_RECORD_BYTES = 8
_READER_ARGS = {"FixedLengthRecordReader": {"record_bytes": _RECORD_BYTES}}


def _write_records(path, kind, records):
    if kind == "FixedLengthRecordReader":
        path.write_bytes(b"".join(record.encode().ljust(_RECORD_BYTES) for record in records))
    elif kind == "TFRecordReader":
        with tf_real.io.TFRecordWriter(str(path)) as writer:
            for record in records:
                writer.write(record.encode())
    else:
        path.write_text("".join(f"{record}\n" for record in records))


def _counters_run(tf, kind, paths, upto, num_epochs, batch_size, fetch, watch_midway):
    with tf_real.Graph().as_default():
        reader = getattr(tf, kind)(**_READER_ARGS.get(kind, {}))
        queue = tf.train.string_input_producer(paths, num_epochs=num_epochs, shuffle=False)
        key, value = reader.read_up_to(queue, 3) if upto else reader.read(queue)
        # Batching only the values lets the shim read them without keys: still counted.
        batch = tf.train.batch([key if fetch == "key" else value], batch_size=batch_size,
                               enqueue_many=upto,
                               allow_smaller_final_batch=True)
        counters = [reader.num_records_produced(), reader.num_work_units_completed()]
        seen, fetched = [], 0
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            try:
                while True:
                    fetched += len(sess.run(batch))
                    if watch_midway:
                        seen.append(sess.run(counters))
            except tf_real.errors.OutOfRangeError:
                pass
            final = sess.run(counters)
            sess.run(reader.reset())
            after_reset = sess.run(counters)
            coord.request_stop()
            coord.join(threads)
    return fetched, [list(map(int, s)) for s in seen], list(map(int, final)), list(map(int, after_reset))


@pytest.mark.parametrize("kind", ["TextLineReader", "TFRecordReader", "FixedLengthRecordReader",
                                  "WholeFileReader", "IdentityReader"])
@given(lines=st.lists(st.integers(0, 40), min_size=1, max_size=4), upto=st.booleans(),
       num_epochs=st.integers(1, 2), batch_size=st.integers(1, 6),
       fetch=st.sampled_from(["key", "value"]))
def test_counters_end_where_tf1s_do(kind, lines, upto, num_epochs, batch_size, fetch, legacy,
                                    shim, tmp_path_factory):
    directory = tmp_path_factory.mktemp("counted")
    paths = []
    for index, count in enumerate(lines):
        path = directory / f"f{index}"
        _write_records(path, kind, [f"{index}-{line}" for line in range(count)])
        paths.append(str(path))
    run = (kind, paths, upto, num_epochs, batch_size, fetch)
    expected = _counters_run(legacy, *run, watch_midway=False)
    fetched, seen, final, after_reset = _counters_run(shim, *run, watch_midway=True)
    assert fetched == expected[0]
    assert final == expected[2], "records produced and work units completed at the end"
    assert after_reset == expected[3] == [0, 0]
    for before, after in zip(seen, seen[1:]):
        assert before[0] <= after[0] <= final[0] and before[1] <= after[1] <= final[1]
