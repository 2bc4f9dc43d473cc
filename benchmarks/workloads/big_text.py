"""One large text file: the memory a reader holds while it streams the file.

    string_input_producer([file]) -> TextLineReader(skip_header_lines).read
    (or .read_up_to(up_to)) -> batch(batch_size)

The file has `lines` short lines (8 bytes each: ~80 MB at the default 10M), with "\\r\\n"
endings if `crlf`, and no newline after the last line if `unterminated`. What matters here is
`rss_growth_mb` (peak RSS above the RSS with the graph built): a reader that held the whole
file would grow by a multiple of its size; TF1's reader holds a buffer. records/s is
measured over `batches` batches, not the whole file (TF1's reader takes minutes for it).

tf.data: TextLineDataset(file).skip(header lines).batch(batch_size).prefetch(1) (it drops
every "\\r", where TF1 drops one per line: the same lines for these files).
"""
from __future__ import annotations

import dataclasses
import os

from . import data_field

NAME = "big_text"
DESCRIPTION = "one 10M-line text file, TextLineReader read, batch(1024): memory held"
UNIT = "lines"


@dataclasses.dataclass
class Params:
    lines: int = data_field(10_000_000)
    crlf: bool = data_field(False)
    unterminated: bool = data_field(False)
    skip_header_lines: int = 0
    up_to: int = 0          # 0: reader.read(); else reader.read_up_to(up_to)
    batch_size: int = 1024
    batches: int = 200


def _path(data_dir):
    return os.path.join(data_dir, "lines.txt")


def prepare(params, data_dir):
    ending = "\r\n" if params.crlf else "\n"
    with open(_path(data_dir), "w", newline="") as out:
        step = 100_000
        for start in range(0, params.lines, step):
            stop = min(start + step, params.lines)
            text = ending.join(f"{index:07d}" for index in range(start, stop))
            last = stop == params.lines
            out.write(text + ("" if last and params.unterminated else ending))


def load(params, data_dir):
    return _path(data_dir)


def build(tf, path, params):
    files = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
    reader = tf.TextLineReader(skip_header_lines=params.skip_header_lines)
    if params.up_to:
        _, lines = reader.read_up_to(files, params.up_to)
        return tf.train.batch([lines], params.batch_size, enqueue_many=True)
    _, line = reader.read(files)
    return tf.train.batch([line], params.batch_size)


def tf_data(tf, path, params):
    return (tf.data.TextLineDataset(path).skip(params.skip_header_lines)
            .batch(params.batch_size, drop_remainder=True).prefetch(1))
