"""`--tests`: a pytest file proving each migrated function against TF1 with the harness."""
from __future__ import annotations


def tests_for(result, legacy_module: str, migrated_module: str) -> str:
    lines = [
        f'"""Migrated functions of {legacy_module} proven against TF1 (written by compat-migrate)."""',
        "import pytest",
        "",
        "from compat import harness",
        "",
        f"import {legacy_module} as legacy",
        f"import {migrated_module} as migrated",
        "",
        "# FILL IN: the arguments each function is called with (small inputs: a few files of",
        "# a few records). A function left at None fails its test with this message.",
        "ARGUMENTS = {",
    ]
    for function in result.migrated:
        lines.append(f"    {function.name!r}: None,  # ({', '.join(function.parameters)})")
    lines += ["}", "", "",
              "def _arguments(name):",
              "    arguments = ARGUMENTS[name]",
              "    if arguments is None:",
              "        pytest.fail(f'fill in ARGUMENTS[{name!r}] in {__file__}: the arguments '",
              "                    f'to call {name} with')",
              "    return arguments if isinstance(arguments, dict) else {}, \\",
              "        () if isinstance(arguments, dict) else tuple(arguments)",
              ""]
    for function in result.migrated:
        # TF1 gives one order only unshuffled and single-threaded; else compare what TF1
        # keeps whatever its threads do (epochs, window bounds, shuffle statistics).
        mode = "exact" if function.deterministic else "auto"
        lines += [
            "",
            f"def test_{function.name}_gives_tf1s_batches():",
            f"    kwargs, args = _arguments({function.name!r})",
            "",
            "    def original():",
            f"        return legacy.{function.name}(*args, **kwargs)",
            "",
            f"    report = harness.compare(original, candidate=lambda: "
            f"migrated.{function.name}(*args, **kwargs),",
            f"                             mode={mode!r}, max_batches=200)",
            "    assert report.equivalent, report.explain()",
            ""]
    return "\n".join(lines)
