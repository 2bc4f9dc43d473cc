"""What every rule needs: the checked file's context and the site-to-finding step."""
from __future__ import annotations

from dataclasses import dataclass

from compat import _api_table as table
from compat._check import render, stages
from compat._check.model import Finding
from compat._check.sources import Source


@dataclass(frozen=True)
class Context:
    path: str
    source: Source
    scan: str
    sites: tuple
    bridged: tuple = ()        # (first, last) lines of functions compat.to_dataset runs
    tree: object = None        # the module's ast (None when scanned by tokens)


def codes_with_prefix(*prefixes) -> frozenset:
    return frozenset(row.code for row in table.ROWS if row.code.startswith(prefixes))


def finding(context: Context, site, message: str = "") -> Finding:
    cell, line = context.source.locate(site.line)
    end_cell, end_line = context.source.locate(site.end_line)
    if end_cell != cell:
        end_line = line
    return Finding(
        path=context.path, line=line, col=site.col + 1, end_line=end_line,
        end_col=site.end_col + 1, code=site.row.code, api=render.api_spelling(site.row),
        coverage=site.row.coverage, message=message or render.message(site),
        tf_data=render.tf_data(site.row, site.arguments), notes=site.row.notes,
        scan=context.scan, cell=cell, stage=stages.stage(site, context.bridged))


def table_sites(context: Context, codes):
    """Direct uses of the table's APIs (not methods called on their instances)."""
    for site in context.sites:
        if not site.member and site.row.code in codes:
            yield site


def table_findings(context: Context, codes):
    for site in table_sites(context, codes):
        yield finding(context, site)
