"""TFQ401: `except OutOfRangeError` loops, the TF1 way to notice the end of the input.

Only the `except` clause is a site: raising or constructing the error elsewhere is not how
a pipeline's consumer ends, and flagging it would bury the loops that matter.
"""
from compat._check.rules._common import codes_with_prefix, finding, table_sites

CODES = codes_with_prefix("TFQ401")


def check(context):
    for site in table_sites(context, CODES):
        if site.in_except:
            yield finding(context, site)
