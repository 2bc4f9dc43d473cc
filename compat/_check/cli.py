"""The command line: argument parsing, the run, exit codes (0 clean, 1 findings, 2 error)."""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys

from compat import __version__
from compat import _api_table as table
from compat._check import engine
from compat._check.formats import FORMATS
from compat._check.rules import all_codes
from compat._check.summary import summarize

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
_PROGRESS_FROM = 500  # files; smaller runs finish before progress would help


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="compat-check",
        description="Find TF1 queue-based input pipeline APIs, say what compat.v1 covers, "
                    "suggest the tf.data rewrite, and (--fix) switch imports to the shim.")
    parser.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                        help="files or directories (default: .)")
    parser.add_argument("--format", choices=sorted(FORMATS), default="text")
    parser.add_argument("--select", action="append", default=[], metavar="CODES",
                        help="only these rule codes or prefixes, comma-separated (TFQ2,TFQ301)")
    parser.add_argument("--ignore", action="append", default=[], metavar="CODES",
                        help="skip these rule codes or prefixes, comma-separated")
    parser.add_argument("--statistics", action="store_true", help="count findings per rule")
    parser.add_argument("--notes", action="store_true",
                        help="print each finding's semantic-difference notes (text format)")
    parser.add_argument("--fix", action="store_true",
                        help="rewrite imports to compat.v1 and add disable_v2_behavior()")
    parser.add_argument("--diff", action="store_true",
                        help="print what --fix would change, change nothing")
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                        help="skip files or directories matching GLOB")
    parser.add_argument("--jobs", "-j", type=int, default=0,
                        help="worker processes for large trees (default: CPU count)")
    parser.add_argument("--output-file", "-o", metavar="FILE",
                        help="write the report to FILE instead of stdout")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    parser.add_argument("--list-rules", action="store_true", help="print the rule table")
    parser.add_argument("--version", action="version", version=f"compat-check {__version__}")
    return parser


def _codes(values, known) -> frozenset:
    selected = set()
    for value in values:
        for prefix in filter(None, (v.strip().upper() for v in value.split(","))):
            matched = {code for code in known if code.startswith(prefix)}
            if not matched:
                raise _UsageError(f"unknown rule code {prefix!r} (see --list-rules)")
            selected |= matched
    return frozenset(selected)


def _filter(reports, enabled):
    return [dataclasses.replace(r, findings=tuple(f for f in r.findings if f.code in enabled))
            for r in reports]


def _list_rules() -> str:
    return "".join(f"{row.code}  {row.coverage:<22} tf.{row.name}\n" for row in table.ROWS)


def main(argv=None) -> int:
    try:
        return _main(argv)
    except _UsageError as exc:
        print(f"compat-check: error: {exc}", file=sys.stderr)
        print("usage: compat-check [options] PATH... (see --help)", file=sys.stderr)
        return EXIT_ERROR
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else EXIT_CLEAN
    except KeyboardInterrupt:
        return EXIT_ERROR
    except Exception as exc:  # a bug must still give the documented exit code
        print(f"compat-check: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_ERROR


def _main(argv) -> int:
    options = _parser().parse_args(argv)
    if options.list_rules:
        sys.stdout.write(_list_rules())
        return EXIT_CLEAN
    if options.jobs < 0:
        raise _UsageError("--jobs must be 0 (one per CPU) or more")
    if options.fix and options.diff:
        raise _UsageError("--fix and --diff are exclusive: --diff previews what --fix writes")
    known = all_codes()
    enabled = _codes(options.select, known) if options.select else known
    enabled = enabled - _codes(options.ignore, known)
    missing = [p for p in options.paths if not _exists(p)]
    if missing:
        raise _UsageError(f"no such file or directory: {', '.join(missing)}")

    files = engine.discover(options.paths, options.exclude)
    progress = None
    if not options.quiet and len(files) >= _PROGRESS_FROM:
        progress = engine.stderr_progress()
    reports = _filter(list(engine.check_files(files, options.jobs, progress)), enabled)
    summary = summarize(reports)

    if options.fix or options.diff:
        from compat._check import fix  # libcst is slow to import: only when rewriting
        fix_text = fix.apply(reports, write=options.fix)
        if options.diff:
            _emit(fix_text.diff, options.output_file)
            print(fix_text.summary, file=sys.stderr)
            return _exit_code(summary)
        print(fix_text.summary, file=sys.stderr)

    formatter = FORMATS[options.format]
    _emit(formatter.render(reports, summary, show_notes=options.notes,
                           statistics=options.statistics), options.output_file)
    return _exit_code(summary)


def _exists(path: str) -> bool:
    return os.path.exists(path)


def _exit_code(summary) -> int:
    if summary.errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if summary.has_findings else EXIT_CLEAN


def _emit(text: str, output_file) -> None:
    if output_file:
        with open(output_file, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)
