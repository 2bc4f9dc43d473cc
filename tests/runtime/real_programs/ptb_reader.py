"""PTB language-model input (the TF1 RNN tutorial's reader, in outline).

    text files -> words (newline = "<eos>") -> ids from a vocabulary sorted by frequency
    -> one long int32 tensor -> [batch_size, batch_len] -> range_input_producer(epoch_size,
       shuffle=False) -> strided_slice windows of num_steps: x, and y shifted by one word.

`build(tf, data_dir, ...)` is the pipeline; `write_data(data_dir)` writes small
ptb.{train,valid,test}.txt files of synthetic sentences.
"""
from __future__ import annotations

import collections
import os

import numpy as np

_WORDS = ("the a of to in and is was for that on as with by he it at from his an were are "
          "which this be has or had one first new after who their its also they two been "
          "<unk> N market share price company year stock").split()


def write_data(data_dir, sentences=(120, 20, 20), seed=0):
    os.makedirs(data_dir, exist_ok=True)
    rng = np.random.default_rng(seed)
    # Zipf-like word frequencies, so the vocabulary order (by count) is meaningful.
    weights = 1.0 / np.arange(1, len(_WORDS) + 1)
    weights /= weights.sum()
    for split, count in zip(("train", "valid", "test"), sentences):
        lines = []
        for _ in range(count):
            length = int(rng.integers(3, 15))
            lines.append(" " + " ".join(rng.choice(_WORDS, size=length, p=weights)) + " ")
        with open(os.path.join(data_dir, f"ptb.{split}.txt"), "w") as out:
            out.write("\n".join(lines) + "\n")
    return data_dir


def _read_words(tf, filename):
    with tf.gfile.GFile(filename, "r") as source:
        return source.read().replace("\n", "<eos>").split()


def _build_vocab(tf, filename):
    counts = collections.Counter(_read_words(tf, filename))
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return {word: index for index, (word, _) in enumerate(ordered)}


def _file_to_word_ids(tf, filename, word_to_id):
    return [word_to_id[word] for word in _read_words(tf, filename) if word in word_to_id]


def ptb_raw_data(tf, data_path):
    """(train ids, valid ids, test ids, vocabulary size); the vocabulary comes from train."""
    paths = {split: os.path.join(data_path, f"ptb.{split}.txt")
             for split in ("train", "valid", "test")}
    word_to_id = _build_vocab(tf, paths["train"])
    return (_file_to_word_ids(tf, paths["train"], word_to_id),
            _file_to_word_ids(tf, paths["valid"], word_to_id),
            _file_to_word_ids(tf, paths["test"], word_to_id),
            len(word_to_id))


def ptb_producer(tf, raw_data, batch_size, num_steps, name=None, num_epochs=None):
    """(x, y): [batch_size, num_steps] int32 windows; y is x shifted one word to the right.

    Raises tf.errors.InvalidArgumentError at run time when batch_size * num_steps exceeds
    the data.
    """
    with tf.name_scope(name, "PTBProducer", [raw_data, batch_size, num_steps]):
        raw_data = tf.convert_to_tensor(raw_data, name="raw_data", dtype=tf.int32)
        data_len = tf.size(raw_data)
        batch_len = data_len // batch_size
        data = tf.reshape(raw_data[0: batch_size * batch_len], [batch_size, batch_len])

        epoch_size = (batch_len - 1) // num_steps
        assertion = tf.assert_positive(
            epoch_size, message="epoch_size == 0, decrease batch_size or num_steps")
        with tf.control_dependencies([assertion]):
            epoch_size = tf.identity(epoch_size, name="epoch_size")

        i = tf.train.range_input_producer(epoch_size, num_epochs=num_epochs,
                                          shuffle=False).dequeue()
        x = tf.strided_slice(data, [0, i * num_steps], [batch_size, (i + 1) * num_steps])
        x.set_shape([batch_size, num_steps])
        y = tf.strided_slice(data, [0, i * num_steps + 1], [batch_size, (i + 1) * num_steps + 1])
        y.set_shape([batch_size, num_steps])
        return x, y


def build(tf, data_dir, split="train", batch_size=4, num_steps=6, num_epochs=None):
    """The (inputs, targets) pair a training step fetches."""
    train, valid, test, _ = ptb_raw_data(tf, data_dir)
    data = {"train": train, "valid": valid, "test": test}[split]
    x, y = ptb_producer(tf, data, batch_size, num_steps, name=f"{split.capitalize()}Input",
                        num_epochs=num_epochs)
    return {"input_data": x, "targets": y}
