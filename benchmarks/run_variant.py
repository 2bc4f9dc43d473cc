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

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 2
    request = json.loads(argv[0])
    for path in (HERE, ROOT):
        if path not in sys.path:
            sys.path.insert(0, path)
    from processes import report_and_exit
    from workloads import measure

    def produce():
        if request["action"] == "prepare":
            measure.prepare(request["workload"], request["params"], request["data_dir"])
            return {"ok": True}
        return measure.measure(request["workload"], request["variant"], request["params"],
                               request["data_dir"], request.get("tf_data_mode", "eager"),
                               request.get("min_seconds", 0.0)).to_dict()

    report_and_exit(produce)


if __name__ == "__main__":
    sys.exit(main())
