"""What the package is called on PyPI, and the install lines every hint prints.

The import name is `compat`; the distribution is not, because `compat` is taken on PyPI.
Hints build their `pip install` line here so that they always name what pip can install.
"""
from __future__ import annotations

import importlib.util

DISTRIBUTION = "tf1-queue-compat"


def install_line(extra: str = "") -> str:
    """`pip install 'tf1-queue-compat[extra]'`, quoted for shells that glob brackets."""
    if extra:
        return f"pip install '{DISTRIBUTION}[{extra}]'"
    return f"pip install {DISTRIBUTION}"


def require_tensorflow(what: str) -> None:
    """Raise a ModuleNotFoundError naming `what` and how to install TensorFlow when it is
    missing, instead of the first import failure inside TensorFlow's absence (which names
    numpy, not TensorFlow)."""
    if importlib.util.find_spec("tensorflow") is None:
        raise ModuleNotFoundError(
            f"{what} needs TensorFlow, which is not installed in this Python "
            f"({_python()}). Install it with the package: {install_line('tf-cpu')} "
            f"(or {install_line('tf')} for GPU builds), or `pip install tensorflow-cpu` "
            f"(2.15 to 2.21 are tested). The checker (`python -m compat.check`) runs "
            f"without TensorFlow.", name="tensorflow")


def _python() -> str:
    import sys
    return sys.executable or "python"
