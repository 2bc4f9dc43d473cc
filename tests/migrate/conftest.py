"""Inputs for the migrated programs (small files of each kind the readers read), and the
programs migrated once per session into importable modules."""
import importlib.util
import os
import struct
import sys
import zlib

import pytest

PROGRAMS = os.path.join(os.path.dirname(__file__), "programs")


def _example(features: dict) -> bytes:
    import tensorflow as tf
    feature = {}
    for name, value in features.items():
        if isinstance(value, bytes):
            feature[name] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))
        else:
            values = value if isinstance(value, list) else [value]
            feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _write_records(path, records, compression=None):
    import tensorflow as tf
    options = tf.io.TFRecordOptions(compression_type=compression or "")
    with tf.io.TFRecordWriter(path, options) as writer:
        for record in records:
            writer.write(record)
    return path


def _png(pixels) -> bytes:
    height, width, _ = pixels.shape
    raw = b"".join(b"\x00" + pixels[row].tobytes() for row in range(height))

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw))
            + chunk(b"IEND", b""))


@pytest.fixture(scope="session")
def inputs(tmp_path_factory):
    """Paths of small input files, by kind."""
    import numpy as np
    root = tmp_path_factory.mktemp("migrate_inputs")
    rng = np.random.RandomState(7)
    made = {}
    made["digits"] = [
        _write_records(str(root / f"digits-{shard}.tfrecord"), [
            _example({"pixels": rng.randint(0, 256, 64, dtype=np.uint8).tobytes(),
                      "digit": shard * 10 + i}) for i in range(7)])
        for shard in range(3)]
    made["digits_gzip"] = [
        _write_records(str(root / f"digits-{shard}.tfrecord.gz"),
                       [_example({"digit": shard * 10 + i}) for i in range(5)], "GZIP")
        for shard in range(2)]
    made["sequences"] = [_write_records(str(root / "sequences.tfrecord"), [
        _example({"tokens": list(range(1, 1 + (i % 4) + 1)), "length": (i % 4) + 1})
        for i in range(9)])]
    binaries = []
    for shard in range(2):
        path = root / f"images-{shard}.bin"
        records = b"".join(bytes([(shard * 9 + i) % 10]) + rng.randint(
            0, 256, 3 * 8 * 8, dtype=np.uint8).tobytes() for i in range(9))
        path.write_bytes(b"\x01\x02" + records)
        binaries.append(str(path))
    made["binary_images"] = binaries
    csvs = []
    rows = [(39, "State-gov", 40.0, "<=50K"), (50, "Private", 13.5, ">50K"),
            (38, "Private", 40.0, "<=50K"), (53, "Self-emp", 45.0, ">50K"),
            (28, "Private", 40.0, "<=50K"), (37, "Local-gov", 80.0, ">50K"),
            (49, "Private", 16.0, "<=50K")]
    for shard in range(2):
        path = root / f"census-{shard}.csv"
        lines = ["age,workclass,hours,income"] + [
            f"{a + shard},{w},{h},{i}" for a, w, h, i in rows]
        # Windows line ends in one file: TF1 strips one '\r', as tf.data does.
        path.write_bytes((("\r\n" if shard else "\n").join(lines) + "\n").encode())
        csvs.append(str(path))
    made["csv"] = csvs
    photos = []
    for index in range(6):
        path = root / f"photo-{index}.png"
        path.write_bytes(_png(rng.randint(0, 256, (9, 11, 3), dtype=np.uint8)))
        photos.append(str(path))
    made["photos"] = photos
    return made


@pytest.fixture(scope="session")
def migrated(tmp_path_factory):
    """migrated(name) -> (legacy module, migrated module, MigrationResult)."""
    from compat import migrate
    root = tmp_path_factory.mktemp("migrated")
    cache = {}

    def load(name):
        if name not in cache:
            source = os.path.join(PROGRAMS, f"{name}.py")
            result = migrate.migrate_file(source)
            path = root / f"{name}_tf2.py"
            path.write_text(result.output)
            cache[name] = (_import(name, source), _import(f"{name}_tf2", str(path)),
                           result)
        return cache[name]
    return load


def _import(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as an import leaves it (AutoGraph reads functions' sources)
    spec.loader.exec_module(module)
    return module
