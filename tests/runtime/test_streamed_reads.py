"""Readers stream: a file much larger than what a reader may hold reads fully, and the
process grows by a bounded amount, not by a multiple of the file (the benchmark suite's
`big_text` workload measures it against TF1 on 10M lines).

Each case runs in a fresh process (peak RSS is per process), under the test's TF behaviour.
"""
import gzip
import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(600)]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Files of 8-byte records: text lines held whole cost ~25x their file (24 MB: ~600 MB);
# fixed-length records ~1x (96 MB).
_TEXT_RECORDS = 3_000_000
_FIXED_RECORDS = 12_000_000
_GROWTH_LIMIT_MB = 64

_PROGRAM = textwrap.dedent("""
    import json, resource, sys
    mode, case, path = sys.argv[1], sys.argv[2], sys.argv[3]
    import compat.v1 as tf
    if mode == "tf1":
        tf.disable_v2_behavior()

    def read():
        files = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
        if case.startswith("text"):
            return tf.TextLineReader(skip_header_lines=1).read_up_to(files, 4096)[1]
        if case == "fixed_hop":
            return tf.FixedLengthRecordReader(7, hop_bytes=8).read_up_to(files, 4096)[1]
        return tf.FixedLengthRecordReader(8, encoding="GZIP").read_up_to(files, 4096)[1]

    def rss():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    with tf.Graph().as_default():  # TF2 behaviour: graph mode, as the tests build
        values = read()
        count = tf.size(values)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            built, total, last = rss(), 0, None
            try:
                while True:
                    size, batch = sess.run([count, values])
                    total += size
                    last = batch[-1] if size else last
            except tf.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads)
    print(json.dumps({"records": int(total), "last": last.decode(), "growth_mb": rss() - built}))
""")


def _write(path, records, ending=b"\n", compressed=False):
    """`records` rows "%07d" + ending, numbered in blocks of 100,000 (the last row's number is
    that of the last row of a block)."""
    block_rows = min(records, 100_000)
    block = b"".join(b"%07d" % index + ending for index in range(block_rows))
    with (gzip.open(path, "wb", compresslevel=1) if compressed else open(path, "wb")) as out:
        for _ in range(records // block_rows):
            out.write(block)
    return "%07d" % (block_rows - 1)


@pytest.mark.parametrize("case, records, skipped", [
    ("text", _TEXT_RECORDS, 1),
    ("text_crlf", _TEXT_RECORDS, 1),
    ("fixed_hop", _FIXED_RECORDS, 0),
    ("fixed_gzip", _FIXED_RECORDS, 0),
])
@pytest.mark.extended
def test_a_large_file_reads_fully_with_bounded_growth(tmp_path, tf_behavior, case, records,
                                                       skipped):
    path = tmp_path / "data"
    last = _write(path, records, ending=b"\r\n" if case == "text_crlf" else b"\n",
                  compressed=case == "fixed_gzip")
    result = subprocess.run(
        [sys.executable, "-c", _PROGRAM, tf_behavior, case, str(path)],
        capture_output=True, text=True, cwd=ROOT, timeout=500,
        env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["records"] == records - skipped
    assert outcome["last"] == (last + "\n" if case == "fixed_gzip" else last)
    assert outcome["growth_mb"] < _GROWTH_LIMIT_MB, outcome
