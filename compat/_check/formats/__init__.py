"""Output formats. Each exposes `render(reports, summary, options) -> str`."""
from compat._check.formats import json_format, sarif_format, text_format

FORMATS = {"text": text_format, "json": json_format, "sarif": sarif_format}
