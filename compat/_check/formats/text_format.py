"""`path:line:col: CODE message`, then the tf.data rewrite (and the notes, if asked)."""
from __future__ import annotations

import textwrap

from compat._check.summary import printable, statistics_lines, summary_lines


def render(reports, summary, show_notes=False, statistics=False) -> str:
    lines = []
    for report in reports:
        for finding in report.findings:
            lines.append(f"{finding.location}: {finding.code} {finding.message}")
            if finding.tf_data:
                lines.append(f"    tf.data: {finding.tf_data}")
            if show_notes and finding.notes:
                lines.extend(textwrap.wrap(finding.notes, width=96, initial_indent="    note: ",
                                           subsequent_indent="          "))
        for function, line in report.migratable:
            lines.append(f"{report.path}:{line}: compat-migrate can rewrite {function}() as "
                         f"plain tf.data: compat-migrate {report.path} --function {function}")
    if statistics:
        stats = statistics_lines(reports)
        if stats:
            lines.append("")
            lines.extend(stats)
    if lines:
        lines.append("")
    lines.extend(summary_lines(summary))
    return printable("\n".join(lines) + "\n")  # file names need not be UTF-8
