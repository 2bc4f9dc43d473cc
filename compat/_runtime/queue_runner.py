"""QueueRunner, add_queue_runner, start_queue_runners.

Stages the shim compiles to tf.data need no runner threads, so they register none, and
`start_queue_runners` returns only the threads of runners that still need one.
"""
from tensorflow.python.training.queue_runner_impl import (QueueRunner, add_queue_runner,
                                                          start_queue_runners)

__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]
