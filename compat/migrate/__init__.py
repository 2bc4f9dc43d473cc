"""``compat-migrate``: rewrite legacy TF1 queue-based input functions as plain tf.data.

::

    compat-migrate inputs.py -o inputs_tf2.py --tests test_inputs_tf2.py
    python -m compat.migrate inputs.py

    from compat import migrate
    result = migrate.migrate_file("inputs.py")
    result.output                 # the new module's source
    for f in result.not_migrated: print(f.name, f.reason)

Each migrated function keeps its name and parameters and returns a ``tf.data.Dataset`` whose
elements are what the legacy function returned per ``sess.run``; the new module uses
TensorFlow 2's API only. A function it cannot follow is wrapped over ``compat.to_dataset``
of the original and reported with the construct, its line and what to do. Renaming TF1 ops
uses TensorFlow's own ``tf_upgrade_v2``, so TensorFlow must be installed.
"""
from __future__ import annotations

import sys

__all__ = ["migrate_source", "migrate_file", "on_shim", "main", "console_main",
           "MigrationResult", "FunctionResult", "NotMigrated"]


def migrate_source(text: str, path: str = "<source>", functions=None, module_name=None):
    """Migrate the input functions in ``text``; returns a frozen ``MigrationResult``."""
    from compat._migrate.module import migrate_source as _migrate
    return _migrate(text, path, functions=functions, module_name=module_name)


def migrate_file(path: str, functions=None):
    with open(path, encoding="utf-8") as handle:
        return migrate_source(handle.read(), path, functions=functions)


def main(argv=None) -> int:
    from compat._migrate.cli import main as _main
    return _main(argv)


def console_main() -> None:
    sys.exit(main())


def __getattr__(name):
    if name in ("MigrationResult", "FunctionResult", "NotMigrated"):
        from compat._migrate import records
        return getattr(records, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def on_shim(function):
    """``function`` (a legacy input function using a module-level ``tf``) running with that
    ``tf`` bound to ``compat.v1``, whatever its module imports: what the wrappers of the
    functions compat-migrate leaves on the shim hand to ``compat.to_dataset``."""
    import compat.v1 as shim
    from compat._harness._tf_binding import with_module_tf
    return with_module_tf(function, shim)
