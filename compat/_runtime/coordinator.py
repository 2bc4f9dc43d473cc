"""Coordinator and LooperThread.

TF's own classes are plain Python over threading and already have the full TF1 API
(request_stop with an exception, OutOfRangeError as a clean stop, join with a grace period,
...); the shim re-exports them so that `isinstance` checks against either name agree.
"""
from tensorflow.python.training.coordinator import Coordinator, LooperThread

__all__ = ["Coordinator", "LooperThread"]
