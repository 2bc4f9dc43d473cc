"""Command line: ``python -m compat.harness TARGET [options]`` (also ``compat-harness``).

TARGET is ``package.module:function`` or ``path/to/file.py:function``: the legacy pipeline
function (``build(tf)`` or using a module-level ``tf``). By default it is compared under real
``tensorflow.compat.v1`` queues against ``compat.v1``; ``--candidate`` names another function
(e.g. a hand-written tf.data version), ``legacy`` for a legacy-vs-legacy run, or
``to_dataset`` for the target handed to TF2 through ``compat.to_dataset``.

Exit status: 0 equivalent (or golden recorded), 1 not equivalent, 2 usage error, unloadable
target or refused golden file.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="compat-harness",
        description="Compare a TF1 queue input pipeline under real tf.compat.v1 with compat.v1 "
                    "(or a given candidate) and report whether the data streams are equivalent.")
    parser.add_argument("target", help="module:function or path/to/file.py:function")
    parser.add_argument("--candidate", default=None,
                        help="candidate module:function, 'legacy' (real tf.compat.v1 again), "
                             "'shim' (compat.v1, the default) or 'to_dataset' (the target "
                             "through compat.to_dataset, as TF2 code would read it)")
    parser.add_argument("--mode", default="auto",
                        help="auto, exact, epochs, window, stats, or levels joined by '+'")
    parser.add_argument("--max-batches", type=int, default=1000,
                        help="batches per side (0: until OutOfRangeError); default 1000")
    parser.add_argument("--graph-seed", type=int, default=None, help="tf.set_random_seed value")
    parser.add_argument("--source", default=None, metavar="MODULE:FUNCTION",
                        help="build(tf) whose stream is the input order (for window/stats)")
    parser.add_argument("--source-index", default=None,
                        help="component carrying each element's input position, e.g. \"[0]\"")
    parser.add_argument("--rtol", type=float, default=0.0)
    parser.add_argument("--atol", type=float, default=0.0)
    parser.add_argument("--alpha", type=float, default=0.001, help="significance of stats")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per side")
    parser.add_argument("--json", action="store_true", help="print the JSON report instead")
    parser.add_argument("--json-out", default=None, help="also write the JSON report here")
    parser.add_argument("--plot", default=None, help="write a PNG plot here (needs matplotlib)")
    parser.add_argument("--record", default=None, metavar="GOLDEN.npz",
                        help="record the legacy stream to this golden file and exit")
    parser.add_argument("--replay", default=None, metavar="GOLDEN.npz",
                        help="use this golden file as the legacy side")
    return parser


def load_target(spec: str):
    """``module:function`` or ``file.py:function`` -> the function."""
    location, sep, name = spec.rpartition(":")
    if not sep or not location or not name:
        raise ValueError(f"target {spec!r}: expected module:function or file.py:function")
    if location.endswith(".py") or os.sep in location or "/" in location:
        path = Path(location).resolve()
        if not path.exists():
            raise FileNotFoundError(f"target file {path} does not exist")
        module_name = f"_compat_harness_target_{path.stem}"
        module_spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.path.insert(0, str(path.parent))  # so the file can import its neighbours
        sys.modules[module_name] = module
        module_spec.loader.exec_module(module)
    else:
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        module = importlib.import_module(location)
    function = module
    for part in name.split("."):
        function = getattr(function, part)
    return function


def _quiet_tensorflow() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import tensorflow as tf
    except ImportError:
        return
    tf.get_logger().setLevel("ERROR")


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    _quiet_tensorflow()
    from compat import harness
    from compat._harness.runner import legacy_module, shim_module
    max_batches = args.max_batches or None
    try:
        build = load_target(args.target)
        if args.candidate in (None, "shim"):
            candidate = shim_module()
        elif args.candidate == "legacy":
            candidate = legacy_module()
        elif args.candidate == "to_dataset":
            candidate = "to_dataset"
        else:
            candidate = load_target(args.candidate)
        if args.record:
            golden = harness.record(build, args.record, max_batches=max_batches,
                                    graph_seed=args.graph_seed, timeout=args.timeout)
            print(f"recorded {len(golden.stream.batches)} batch(es) to {args.record}")
            return 0
        source = load_target(args.source) if args.source else None
        legacy = None
        if args.replay:
            legacy = harness.replay(args.replay, build=build, graph_seed=args.graph_seed,
                                    max_batches=max_batches)
    except harness.GoldenMismatchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (ImportError, AttributeError, ValueError, FileNotFoundError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        report = harness.compare(build, candidate, mode=args.mode, max_batches=max_batches,
                                 legacy=legacy, graph_seed=args.graph_seed,
                                 source=source, source_index=args.source_index,
                                 rtol=args.rtol,
                                 atol=args.atol, alpha=args.alpha, timeout=args.timeout)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(report.to_json_text())
    else:
        print(report.explain())
    if args.json_out:
        Path(args.json_out).write_text(report.to_json_text())
    if args.plot:
        try:
            print(f"plot written to {report.plot(args.plot)}", file=sys.stderr)
        except ImportError:
            print("error: --plot needs matplotlib (pip install compat[plot])", file=sys.stderr)
            return 2
    return 0 if report.equivalent else 1


def console_main() -> None:
    sys.exit(main())


if __name__ == "__main__":
    console_main()
