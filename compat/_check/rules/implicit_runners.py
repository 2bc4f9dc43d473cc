"""TFQ402-405: Supervisor and the MonitoredSession family, which start every queue runner
of the graph without the code ever saying so."""
from compat._check.rules._common import codes_with_prefix, table_findings

CODES = codes_with_prefix("TFQ402", "TFQ403", "TFQ404", "TFQ405")


def check(context):
    yield from table_findings(context, CODES)
