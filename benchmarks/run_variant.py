"""Internal: the subprocess side of benchmarks/suite.py (one measurement per process).

    python benchmarks/run_variant.py '{"action": "measure", "workload": "mnist",
        "variant": "shim", "params": {}, "data_dir": "/tmp/...", "tf_data_mode": "eager"}'
    python benchmarks/run_variant.py '{"action": "prepare", "workload": "mnist",
        "params": {}, "data_dir": "/tmp/..."}'

Writes one line `RESULT_MARKER <json>` to stdout: the Measurement (measure) or
{"ok": true} (prepare); on an exception, {"ok": false, "error": ...} with the traceback's
last lines, and exit status 0 (the suite records the error and goes on).
"""
from __future__ import annotations

import json
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULT_MARKER = "@@BENCHMARK_RESULT@@"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 2
    request = json.loads(argv[0])
    for path in (HERE, ROOT):
        if path not in sys.path:
            sys.path.insert(0, path)
    from workloads import measure

    try:
        if request["action"] == "prepare":
            measure.prepare(request["workload"], request["params"], request["data_dir"])
            payload = {"ok": True}
        else:
            payload = measure.measure(request["workload"], request["variant"],
                                      request["params"], request["data_dir"],
                                      request.get("tf_data_mode", "eager"),
                                      request.get("min_seconds", 0.0)).to_dict()
    except BaseException as error:  # noqa: BLE001 - reported to the suite, not swallowed
        lines = traceback.format_exception(type(error), error, error.__traceback__)
        payload = {"ok": False, "error": f"{type(error).__name__}: {error}".strip(),
                   "traceback": "".join(lines)[-4000:]}
    sys.stdout.flush()
    print(RESULT_MARKER, json.dumps(payload), flush=True)
    # Skip interpreter teardown: with TF1 queue threads or tf.data iterators alive it can
    # hang or crash after the measurement is already reported.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
