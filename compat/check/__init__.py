"""``compat-check``: find TF1 queue-based input pipeline code, say what ``compat.v1`` covers,
suggest the tf.data rewrite, and with ``--fix`` switch the imports to the shim.

Public surface only; the implementation lives in ``compat._check``. Never imports TensorFlow.
"""
import sys

__all__ = ["main", "console_main"]


def main(argv=None) -> int:
    """Run the checker on ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    from compat._check.cli import main as _main
    return _main(argv)


def console_main() -> None:
    sys.exit(main())
