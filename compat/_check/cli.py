"""The command line: argument parsing, the run, exit codes.

Exit codes, the same for every format and for --fix/--diff: 0 nothing that --fail-on fails
on (or --exit-zero), 1 sites at a stage --fail-on fails on (default: legacy, so code already
on the shim passes), 2 an error: a usage error, a file or directory that could not be read (also
listed in the report), or a --fix/--diff rewrite that was refused.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys

from compat import __version__
from compat import _api_table as table
from compat._check import engine, sources
from compat._check.formats import FORMATS
from compat._check.model import SCAN_AST, SCAN_SKIPPED, STAGE_LEGACY, FileReport
from compat._check.rules import all_codes
from compat._check.stages import FAIL_ON_CHOICES
from compat._check.summary import printable, summarize

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
_PROGRESS_FROM = 500  # files; smaller runs finish before progress would help
_EXIT_HELP = ("exit status: 0 nothing --fail-on fails on (always 0 with --exit-zero, unless "
              "an error); 1 sites at a stage --fail-on fails on (default: legacy TF1 queues, "
              "not sites already on the shim; in every --format, and with --fix/--diff); "
              "2 an error: "
              "bad usage, a file or directory that could not be read, or a rewrite that "
              "--fix/--diff refused")
_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]?)i?b?\s*$", re.I)


class _UsageError(Exception):
    pass


class _Failure(Exception):
    """Not a usage error, but the run cannot go on (the report cannot be written, ...)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="compat-check",
        description="Find TF1 queue-based input pipeline APIs, say what compat.v1 covers, "
                    "suggest the tf.data rewrite, and (--fix) switch imports to the shim.",
        epilog=_EXIT_HELP)
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
                        help="rewrite imports to compat.v1 and add disable_v2_behavior(); "
                             "prints what it changed and what it refused to write, and why")
    parser.add_argument("--diff", action="store_true",
                        help="print what --fix would change, change nothing")
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                        help="skip files or directories matching GLOB")
    parser.add_argument("--jobs", "-j", type=int, default=0,
                        help="worker processes for large trees (default: CPU count)")
    parser.add_argument("--output-file", "-o", metavar="FILE",
                        help="write the report to FILE instead of stdout")
    parser.add_argument("--max-file-size", type=_size, metavar="BYTES",
                        default=sources.DEFAULT_MAX_FILE_SIZE,
                        help="larger files are not read and reported as errors; "
                             "K/M/G suffixes, 0 for no limit (default: 5M)")
    parser.add_argument("--fail-on", choices=FAIL_ON_CHOICES, default="legacy",
                        help="which sites exit 1: legacy (TF1 queues not yet on the shim; "
                             "the default), shim (also sites on compat.v1: require "
                             "compat.to_dataset or tf.data), any (every queue site)")
    parser.add_argument("--exit-zero", action="store_true",
                        help="exit 0 even when legacy APIs are found (errors still exit 2)")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    parser.add_argument("--list-rules", action="store_true", help="print the rule table")
    parser.add_argument("--version", action="version", version=f"compat-check {__version__}")
    return parser


def _size(text: str) -> int:
    match = _SIZE.match(text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a size in bytes: {text!r} (e.g. 5000000, 5M)")
    return int(match.group(1)) * 1024 ** " KMG".index(match.group(2).upper() or " ")


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
    from compat._check.model import COVERAGE_BLOCKS
    from compat._check.rules.tf2_blockers import DESCRIPTIONS
    return "".join([f"{row.code}  {row.coverage:<22} tf.{row.name}\n" for row in table.ROWS]
                   + [f"{code}  {COVERAGE_BLOCKS:<22} tf.{name}: {text}\n"
                      for code, name, text in DESCRIPTIONS])


def main(argv=None) -> int:
    try:
        return _main(argv)
    except _UsageError as exc:
        print(printable(f"compat-check: error: {exc}"), file=sys.stderr)
        print("usage: compat-check [options] PATH... (see --help)", file=sys.stderr)
        return EXIT_ERROR
    except _Failure as exc:
        print(printable(f"compat-check: error: {exc}"), file=sys.stderr)
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

    files, unlisted = discover(options.paths, options.exclude)
    early, checked = _probe(files, options.max_file_size)
    to_check = [path for path in files if path not in early]
    progress = None
    if not options.quiet and len(to_check) >= _PROGRESS_FROM:
        progress = engine.stderr_progress()
    late = dict(zip(to_check, engine.check_files(to_check, options.jobs, progress)))
    early.update(unlisted)
    reports = _filter([early[p] if p in early else late[p] for p in sorted({*files, *unlisted})],
                      enabled)
    reports = [_with_migratable(report) for report in reports]
    summary = summarize(reports, options.fail_on)

    refused = ()
    if options.fix or options.diff:
        from compat._check import fix  # libcst is slow to import: only when rewriting
        fix_text = fix.apply(reports, write=options.fix, roots=options.paths,
                             max_file_size=options.max_file_size,
                             checked={engine.display_path(p): info for p, info in checked.items()})
        refused = fix_text.refused
        if fix_text.written and options.fix:  # report the tree as --fix left it
            reports, summary = _rechecked(reports, enabled, options.fail_on)
        if options.diff:
            _emit(fix_text.diff, options.output_file)
            print(fix_text.summary, file=sys.stderr)
            return _exit_code(summary, refused, options.exit_zero)
        print(fix_text.summary, file=sys.stderr)

    formatter = FORMATS[options.format]
    _emit(formatter.render(reports, summary, show_notes=options.notes,
                           statistics=options.statistics), options.output_file)
    return _exit_code(summary, refused, options.exit_zero)


def _rechecked(reports, enabled, fail_on) -> tuple:
    """(reports, summary) with the files --fix may have rewritten checked again (every file
    with legacy sites: a link to a rewritten file is rewritten with it): their sites are on
    the shim now, and the exit code must say so."""
    again = []
    for report in reports:
        if any(f.stage == STAGE_LEGACY for f in report.findings):
            report = _with_migratable(_filter([engine.check_file(report.path)], enabled)[0])
        again.append(report)
    return again, summarize(again, fail_on)


def _with_migratable(report: FileReport) -> FileReport:
    """The report with the input functions compat-migrate can rewrite (Python files with
    findings only: nothing else holds one)."""
    if not report.findings or report.scan != SCAN_AST or not report.path.endswith((".py", ".pyw")):
        return report
    from compat._migrate.module import rewritable  # its own tool: loaded when it has work
    try:
        with open(report.path, encoding="utf-8") as handle:
            found = rewritable(handle.read())
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
        return report
    return dataclasses.replace(report, migratable=found) if found else report


def _exists(path: str) -> bool:
    # lexists: a broken symlink or a symlink loop is reported as such, not as missing
    return os.path.lexists(path)


def discover(paths, excludes=()) -> tuple:
    """(files to check, {directory: FileReport with the error}) for directories that
    could not be listed; otherwise exactly engine.discover's choice of files."""
    unlisted: dict = {}

    def failed(exc: OSError):
        where = os.fsdecode(exc.filename) if exc.filename is not None else "(a directory)"
        unlisted[where] = FileReport(engine.display_path(where), scan=SCAN_SKIPPED,
                                     error=f"cannot read directory: {exc.strerror or exc}")

    return engine.discover(paths, excludes, on_error=failed), unlisted


def _probe(files, max_size) -> tuple:
    """({path: FileReport} for files not to open, {path: os.stat_result} for the others)."""
    early, checked = {}, {}
    for path in files:
        try:
            checked[path] = sources.probe(path, max_size)
        except sources.Unreadable as exc:
            early[path] = FileReport(engine.display_path(path), scan=SCAN_SKIPPED, error=str(exc))
        except sources.NotRegular as exc:
            early[path] = FileReport(engine.display_path(path), scan=SCAN_SKIPPED,
                                     problem=str(exc))
    return early, checked


def _exit_code(summary, refused=(), exit_zero=False) -> int:
    if summary.errors or refused:
        return EXIT_ERROR
    if exit_zero:
        return EXIT_CLEAN
    return EXIT_FINDINGS if summary.has_findings else EXIT_CLEAN


def _emit(text: str, output_file) -> None:
    if output_file:
        try:
            with open(output_file, "w", encoding="utf-8", errors="backslashreplace") as handle:
                handle.write(text)
        except OSError as exc:
            raise _Failure(f"cannot write the report to {output_file}: "
                           f"{exc.strerror or exc}") from None
        return
    try:
        sys.stdout.write(text)
    except UnicodeEncodeError:  # a terminal that is not UTF-8
        sys.stdout.flush()
        encoding = sys.stdout.encoding or "utf-8"
        sys.stdout.buffer.write(text.encode(encoding, "backslashreplace"))
        sys.stdout.flush()
