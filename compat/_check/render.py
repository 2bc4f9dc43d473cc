"""Turning a site into words: the call as written, the coverage, the tf.data rewrite."""
from __future__ import annotations

from compat import _api_table as table

COVERAGE_PHRASES = {
    table.COVERED: "covered by compat.v1",
    table.PARTIAL: "partly covered by compat.v1: check the notes",
    table.NOT_COVERED: "not covered by compat.v1: needs manual work",
    table.NOT_PIPELINE: "not an input pipeline; keep as is",
}
_MAX_ARGS = 72


class _Placeholders(dict):
    """Template fields the row does not declare stay visible instead of raising."""

    def __missing__(self, key):
        return "{" + key + "}"


def _negate(source: str) -> str:
    if source == "True":
        return "False"
    if source == "False":
        return "True"
    return f"not ({source})" if " " in source else f"not {source}"


def template_values(row, arguments) -> dict:
    given = dict(arguments or ())
    values = _Placeholders()
    for spec in row.params:
        name, has_default, default = spec.partition("=")
        # a required argument the call does not show renders as its own name
        values[name] = given.get(name, default if has_default else name)
        values["not_" + name] = _negate(values[name])
    return values


def tf_data(row, arguments=None) -> str:
    values = template_values(row, arguments)
    template = row.tf_data
    for conditions, alternative in row.tf_data_when:
        if all(values.get(param) == source for param, source in conditions):
            template = alternative
            break
    return template.format_map(values)


def name_arguments(row, positional, keywords) -> tuple:
    """((param, source), ...) from positional and keyword argument sources."""
    names = [spec.partition("=")[0] for spec in row.params]
    pairs = list(zip(names, positional))
    pairs.extend((key, value) for key, value in keywords if key)
    return tuple(pairs)


def api_spelling(row) -> str:
    return "tf." + row.name


def message(site) -> str:
    row = site.row
    if site.member:
        text = f"{site.written}() on {api_spelling(row)}"
    else:
        text = site.written
        if site.arguments is not None:
            args = site.call_args
            if len(args) > _MAX_ARGS:
                args = args[:_MAX_ARGS - 3].rstrip() + "..."
            text += f"({args})"
        if site.written != api_spelling(row):
            text += f" [{api_spelling(row)}]"
    text += " — " + COVERAGE_PHRASES[row.coverage]
    if site.assumed_tf:
        text += " (`tf` is never imported here: assumed to be TensorFlow)"
    return text
