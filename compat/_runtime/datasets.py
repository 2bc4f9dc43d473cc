"""Dataset transformations the shim uses in place of tf.data's, where those cost more."""
from __future__ import annotations

import tensorflow as tf
# tf.data loads the modules of its transformations at their first use; the shim's pipelines
# use these, and load them with the shim (see `lazy_modules._load_runtime`).
from tensorflow.python.data.ops import (concatenate_op, flat_map_op, from_tensors_op,  # noqa: F401
                                       interleave_op, take_op)
from tensorflow.python.data.ops import readers as _readers
from tensorflow.python.data.ops import unbatch_op as _unbatch_op


def unbatched(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """`dataset.unbatch()` without its re-encoding map where every component is dense.

    tf.data's unbatch first maps every element through a function that re-encodes sparse and
    ragged components; for dense ones it is an identity that still costs a traced function,
    its instantiation, and a call per element (and, inside a flat_map, per file)."""
    if all(isinstance(spec, tf.TensorSpec) for spec in tf.nest.flatten(dataset.element_spec)):
        return _unbatch_op._UnbatchDataset(dataset)  # pylint: disable=protected-access
    return dataset.unbatch()


def as_ready(inputs) -> tf.data.Dataset:
    """The elements of `inputs`, each computing in a thread of its own, taken as they are
    ready (each input's in its order; an input that ends drops out).

    What TF1 gives when several threads enqueue into one queue (a `*_join`'s entries, a
    QueueRunner's enqueue ops): the queue takes whichever element is enqueued first. Taken in
    a fixed turn instead, every input waits for the slowest one's: 4 Inception-style
    preprocessing threads read ~20% fewer images/s than TF1's on 2 cores."""
    if len(inputs) == 1:
        return inputs[0]
    nested = tf.data.Dataset.from_tensors(inputs[0])
    for dataset in inputs[1:]:
        nested = nested.concatenate(tf.data.Dataset.from_tensors(dataset))
    return nested.interleave(lambda dataset: dataset, cycle_length=len(inputs), block_length=1,
                             num_parallel_calls=len(inputs), deterministic=False)


# The reader datasets without tf.data's wrapping of their file names into a dataset and a
# flat_map with one reader per file (a traced function, and a dataset per file when run): the
# reader ops read a vector of file names in order themselves, with the same errors.
def tfrecords(filenames, compression_type) -> tf.data.Dataset:
    """`tf.data.TFRecordDataset(filenames, compression_type)`; filenames: a string tensor."""
    return _readers._TFRecordDataset(filenames, compression_type)  # pylint: disable=protected-access


def fixed_length_records(filenames, record_bytes, header_bytes, footer_bytes,
                         compression_type) -> tf.data.Dataset:
    """`tf.data.FixedLengthRecordDataset(...)` of the same arguments."""
    return _readers._FixedLengthRecordDataset(  # pylint: disable=protected-access
        filenames, record_bytes, header_bytes=header_bytes, footer_bytes=footer_bytes,
        compression_type=compression_type)
