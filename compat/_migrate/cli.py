"""The command line: `compat-migrate SOURCE.py [-o OUT.py] [--function NAME ...] [--tests T.py]`.

Exit codes: 0 every input function migrated; 1 some were not (the output still runs: they
are wrapped over compat.to_dataset); 2 an error (usage, an unreadable or unparsable file,
TensorFlow missing, no input function found).
"""
from __future__ import annotations

import argparse
import os
import sys

EXIT_ALL, EXIT_SOME_LEFT, EXIT_ERROR = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="compat-migrate",
        description="Rewrite legacy TF1 queue-based input functions as plain tf.data "
                    "(TensorFlow 2, no compat needed), keeping their names and parameters.",
        epilog="exit status: 0 all migrated; 1 some functions left on the shim (listed); "
               "2 an error")
    parser.add_argument("source", metavar="SOURCE.py")
    parser.add_argument("-o", "--output", metavar="OUT.py",
                        help="where to write the new module (default: print it)")
    parser.add_argument("--function", action="append", default=[], metavar="NAME",
                        help="only this function (repeatable; default: every input function)")
    parser.add_argument("--tests", metavar="TEST_OUT.py",
                        help="also write pytest tests proving each migrated function against "
                             "TF1 with compat.harness")
    return parser


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    from compat._migrate import module, spelling, test_file
    try:
        with open(args.source, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as error:
        print(f"compat-migrate: cannot read {args.source}: {error.strerror}", file=sys.stderr)
        return EXIT_ERROR
    try:
        result = module.migrate_source(text, args.source, functions=args.function)
    except SyntaxError as error:
        print(f"compat-migrate: {args.source}:{error.lineno}: not Python 3: {error.msg}",
              file=sys.stderr)
        return EXIT_ERROR
    except (LookupError, spelling.TensorFlowMissing) as error:
        print(f"compat-migrate: {error}", file=sys.stderr)
        return EXIT_ERROR
    if not result.functions:
        print(f"compat-migrate: no legacy input function (one that builds a producer, a queue "
              f"or a batching call of TF1) in {args.source}", file=sys.stderr)
        return EXIT_ERROR
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(result.output)
    else:
        sys.stdout.write(result.output)
    if args.tests:
        target = os.path.splitext(os.path.basename(args.output))[0] if args.output else None
        if target is None:
            print("compat-migrate: --tests needs -o (the tests import the new module)",
                  file=sys.stderr)
            return EXIT_ERROR
        with open(args.tests, "w", encoding="utf-8") as handle:
            handle.write(test_file.tests_for(result, legacy_module=os.path.splitext(
                os.path.basename(args.source))[0], migrated_module=target))
    for function in result.functions:
        state = "migrated" if function.migrated else f"NOT migrated: {function.reason}"
        print(f"{args.source}:{function.line}: {function.name}: {state}", file=sys.stderr)
    return EXIT_ALL if all(f.migrated for f in result.functions) else EXIT_SOME_LEFT
