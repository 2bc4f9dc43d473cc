"""Random operation sequences on shim queues against the real `tf.queue` queue (eager).

A hypothesis state machine drives the same enqueue / enqueue_many / dequeue / dequeue_many /
dequeue_up_to / size / is_closed / close / close(cancel_pending_enqueues) sequence on:

- the reference: a real `tf.queue` queue in eager mode;
- the shim queue in eager mode;
- the shim queue in graph mode, fed through placeholders and run in a Session (the
  "Python-fed" path).

Every result and every error type must agree: FIFO and Padding queues exactly, the
RandomShuffleQueue by the elements it holds (each dequeued element must have been enqueued
and not yet dequeued) and by when it may dequeue (min_after_dequeue while open).

No rule ever blocks: before a blocking op runs, the machine checks from the reference's
size and closed state that it would complete at once (real TF blocks forever on an open,
empty queue).
"""
from collections import Counter

import numpy as np
import pytest
from hypothesis import settings, strategies as st
from hypothesis.stateful import (RuleBasedStateMachine, invariant, precondition, rule,
                                 run_state_machine_as_test)

tf = pytest.importorskip("tensorflow")
import compat.v1 as shim_tf  # noqa: E402

pytestmark = [pytest.mark.needs_tf, pytest.mark.timeout(120)]

CAPACITY = 6
MIN_AFTER_DEQUEUE = 2
BATCH_SIZES = st.integers(1, 4)


def element(ident, padded):
    """Element `ident`: (ident, a float vector whose values encode ident)."""
    # Never empty rows: TF's PaddingFIFOQueue kernel crashes on enqueue_many of 0-length rows.
    length = 1 + ident % 4 if padded else 2
    return np.int32(ident), (np.arange(length, dtype=np.float32) + ident * 10)


def stacked(idents, padded):
    # enqueue_many needs one common row length: rows of a PaddingFIFOQueue batch share it.
    length = (1 + idents[0] % 4 if idents else 1) if padded else 2
    vectors = np.stack([np.arange(length, dtype=np.float32) + i * 10 for i in idents]) \
        if idents else np.zeros([0, length], np.float32)
    return np.asarray(idents, np.int32), vectors


class _Participant:
    def __init__(self, name):
        self.name = name
        self.contents = Counter()


class QueueMachine(RuleBasedStateMachine):
    kind = "fifo"

    def __init__(self):
        super().__init__()
        self.padded = self.kind == "padding"
        self.shuffled = self.kind == "shuffle"
        self.closed = False
        self.next_ident = 0
        self.expected = {}  # ident -> the vector enqueued with it
        self.reference = self._make_queue(tf)  # real tf.queue, eager
        self.eager_shim = self._make_queue(shim_tf)
        self.graph = tf.Graph()
        with self.graph.as_default():
            self.graph_shim = self._make_queue(shim_tf)
            queue = self.graph_shim
            vector_shape = [None] if self.padded else [2]
            self.ident = shim_tf.placeholder(tf.int32, [])
            self.vector = shim_tf.placeholder(tf.float32, vector_shape)
            self.idents = shim_tf.placeholder(tf.int32, [None])
            self.vectors = shim_tf.placeholder(tf.float32, [None] + vector_shape)
            self.count = shim_tf.placeholder(tf.int32, [])
            self.ops = {
                "enqueue": queue.enqueue([self.ident, self.vector]),
                "enqueue_many": queue.enqueue_many([self.idents, self.vectors]),
                "dequeue": queue.dequeue(),
                "dequeue_many": queue.dequeue_many(self.count),
                "dequeue_up_to": queue.dequeue_up_to(self.count),
                "size": queue.size(),
                "is_closed": queue.is_closed(),
                "close": queue.close(),
                "cancel": queue.close(cancel_pending_enqueues=True),
            }
        self.sess = shim_tf.Session(graph=self.graph)
        self.participants = {name: _Participant(name) for name in ("reference", "eager", "graph")}

    def teardown(self):
        self.sess.close()

    def _make_queue(self, module):
        namespace = module.queue
        if self.kind == "fifo":
            return namespace.FIFOQueue(CAPACITY, [tf.int32, tf.float32], shapes=[[], [2]])
        if self.kind == "padding":
            return namespace.PaddingFIFOQueue(CAPACITY, [tf.int32, tf.float32],
                                              shapes=[[], [None]])
        return namespace.RandomShuffleQueue(CAPACITY, MIN_AFTER_DEQUEUE, [tf.int32, tf.float32],
                                            shapes=[[], [2]], seed=11)

    # --- running one operation on all three -----------------------------------------------
    def _on_all(self, eager_call, graph_fetch, feed=None):
        outcomes = {}
        for name, call in (("reference", lambda: eager_call(self.reference)),
                           ("eager", lambda: eager_call(self.eager_shim)),
                           ("graph", lambda: self.sess.run(graph_fetch, feed_dict=feed))):
            try:
                outcomes[name] = ("ok", _numpy(call()))
            except tf.errors.OpError as error:
                outcomes[name] = ("error", type(error))
        kinds = {name: (outcome[0], outcome[1] if outcome[0] == "error" else None)
                 for name, outcome in outcomes.items()}
        assert len(set(kinds.values())) == 1, f"outcomes differ: {kinds}"
        return outcomes

    def _size(self):
        return int(self.reference.size())

    def _can_take(self, n):
        if self.closed:
            return True  # never blocks: returns or raises OutOfRangeError at once
        keep = MIN_AFTER_DEQUEUE if self.shuffled else 0
        return self._size() - n >= keep

    # --- rules ------------------------------------------------------------------------------
    @precondition(lambda self: self.closed or self._size() < CAPACITY)
    @rule()
    def enqueue(self):
        ident = self.next_ident
        self.next_ident += 1
        value = element(ident, self.padded)
        self.expected[ident] = value[1]
        outcomes = self._on_all(lambda q: q.enqueue(list(value)), self.ops["enqueue"],
                                {self.ident: value[0], self.vector: value[1]})
        if outcomes["reference"][0] == "ok":
            for participant in self.participants.values():
                participant.contents[ident] += 1
        else:
            assert self.closed and outcomes["reference"][1] is tf.errors.CancelledError

    @rule(count=st.integers(0, 3))
    def enqueue_many(self, count):
        if not self.closed and self._size() + count > CAPACITY:
            return  # would block
        idents = list(range(self.next_ident, self.next_ident + count))
        self.next_ident += count
        values = stacked(idents, self.padded)
        self.expected.update(zip(idents, values[1]))
        outcomes = self._on_all(lambda q: q.enqueue_many(list(values)),
                                self.ops["enqueue_many"],
                                {self.idents: values[0], self.vectors: values[1]})
        if outcomes["reference"][0] == "ok":
            for participant in self.participants.values():
                participant.contents.update(idents)

    @rule()
    def dequeue(self):
        if not self._can_take(1):
            return
        outcomes = self._on_all(lambda q: q.dequeue(), self.ops["dequeue"])
        self._took(outcomes, batched=False)

    @rule(n=BATCH_SIZES)
    def dequeue_many(self, n):
        if not self._can_take(n):
            return
        outcomes = self._on_all(lambda q: q.dequeue_many(n), self.ops["dequeue_many"],
                                {self.count: n})
        if outcomes["reference"][0] == "error":
            # Fewer than n left after close: OutOfRangeError, and nothing is lost.
            assert outcomes["reference"][1] is tf.errors.OutOfRangeError
            assert self._size() < n and self.closed
        self._took(outcomes, batched=True)

    @rule(n=BATCH_SIZES)
    def dequeue_up_to(self, n):
        if not self._can_take(n):
            return
        outcomes = self._on_all(lambda q: q.dequeue_up_to(n), self.ops["dequeue_up_to"],
                                {self.count: n})
        self._took(outcomes, batched=True)

    @rule()
    def size(self):
        outcomes = self._on_all(lambda q: q.size(), self.ops["size"])
        assert len({int(outcome[1]) for outcome in outcomes.values()}) == 1

    @rule()
    def is_closed(self):
        outcomes = self._on_all(lambda q: q.is_closed(), self.ops["is_closed"])
        assert {bool(outcome[1]) for outcome in outcomes.values()} == {self.closed}

    @rule(cancel=st.booleans())
    def close(self, cancel):
        fetch = self.ops["cancel" if cancel else "close"]
        self._on_all(lambda q: q.close(cancel_pending_enqueues=cancel), fetch)
        self.closed = True

    # --- checks --------------------------------------------------------------------------------
    def _took(self, outcomes, batched):
        results = {}
        for name, (status, value) in outcomes.items():
            if status != "ok":
                continue
            idents, vectors = value
            idents = list(np.atleast_1d(idents)) if batched else [idents]
            vectors = list(vectors) if batched else [vectors]
            for ident, vector in zip(idents, vectors):
                want = self.expected[int(ident)]
                # PaddingFIFOQueue pads each batch's rows to the longest with zeros.
                np.testing.assert_array_equal(vector[:len(want)], want)
                assert not np.any(vector[len(want):])
            contents = self.participants[name].contents
            for ident in idents:
                assert contents[int(ident)] > 0, f"{name} dequeued {ident}, never enqueued"
                contents[int(ident)] -= 1
            results[name] = [int(i) for i in idents]
        if results and not self.shuffled:
            assert len({tuple(r) for r in results.values()}) == 1, f"FIFO order differs: {results}"
        if results and self.shuffled:
            assert len({len(r) for r in results.values()}) == 1

    @invariant()
    def same_contents(self):
        contents = [+p.contents for p in self.participants.values()]
        if not self.shuffled:
            assert contents[0] == contents[1] == contents[2]
        else:
            assert len({sum(c.values()) for c in contents}) == 1


def _numpy(value):
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [np.asarray(part) for part in value]
    return np.asarray(value)


SETTINGS = settings(stateful_step_count=25)


class FIFOMachine(QueueMachine):
    kind = "fifo"


class PaddingMachine(QueueMachine):
    kind = "padding"


class ShuffleMachine(QueueMachine):
    kind = "shuffle"


@pytest.mark.eager
@pytest.mark.parametrize("machine", [FIFOMachine, PaddingMachine, ShuffleMachine],
                         ids=["fifo", "padding_fifo", "random_shuffle"])
def test_queue_agrees_with_tf_queue(machine):
    run_state_machine_as_test(machine, settings=SETTINGS)
