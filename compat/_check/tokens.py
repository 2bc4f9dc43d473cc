"""Token-level fallback for files Python 3 cannot parse (Python 2, TabError, bad encoding,
syntax errors). A forgiving lexer that never raises, then the same name resolution as the
AST path, restricted to what tokens can show: imports, simple aliases, dotted chains.

Without scopes and blocks, an alias of a table API itself (`reader = tf.TFRecordReader`) is
only a site where it is called; `except OutOfRangeError` only when the `try:` block it
belongs to (found by indentation) runs something (`.run(`, `.eval(`, `.get_next(`, ...);
a distinctive legacy name on an imported module that is not TensorFlow is a site too, marked
unresolved, as on the AST path."""
from __future__ import annotations

import ast
import bisect
import re

from compat._check import apis, render
from compat._check.names import Resolution, call_fits, pulls_input
from compat._check.model import Site

_LEXER = re.compile(r"""
  (?P<string>(?:[rRbBuUfF]{1,2})?(?:'''[\s\S]*?(?:'''|\Z)|\"\"\"[\s\S]*?(?:\"\"\"|\Z)
             |'(?:\\.|[^'\\\n])*(?:'|$)|"(?:\\.|[^"\\\n])*(?:"|$)))
 |(?P<comment>\#[^\n]*)
 |(?P<name>[^\W\d]\w*)
 |(?P<newline>\n)
 |(?P<continuation>\\\r?\n)
 |(?P<space>[ \t\f\r]+)
 |(?P<op>.)
""", re.VERBOSE | re.MULTILINE)

_OPEN, _CLOSE = "([{", ")]}"


def _tokens(text: str):
    """(kind, text, offset) for names, ops and logical line ends; strings become one token."""
    depth = 0
    for match in _LEXER.finditer(text):
        kind = match.lastgroup
        value = match.group()
        if kind in ("space", "comment", "continuation"):
            continue
        if kind == "newline":
            if depth == 0:
                yield ("end", value, match.start())
            continue
        if kind == "op":
            if value in _OPEN:
                depth += 1
            elif value in _CLOSE:
                depth = max(0, depth - 1)
            elif value == ";" and depth == 0:
                yield ("end", value, match.start())
                continue
        yield (kind, value, match.start())
    yield ("end", "", len(text))


def _logical_lines(text: str):
    line: list = []
    for token in _tokens(text):
        if token[0] == "end":
            if line:
                yield line
            line = []
        else:
            line.append(token)


def _dotted_at(line, index):
    """(['a', 'b'], next index) for a dotted name starting at `index`."""
    parts = [line[index][1]]
    index += 1
    while (index + 1 < len(line) and line[index][1] == "." and line[index + 1][0] == "name"):
        parts.append(line[index + 1][1])
        index += 2
    return parts, index


def _read_import(line, bindings, star_modules, imported=None):
    words = [value for kind, value, _ in line if kind in ("name", "op")]
    imported = set() if imported is None else imported
    if words[0] == "import":
        for clause in " ".join(words[1:]).split(","):
            pieces = clause.replace(" . ", ".").replace(" .", ".").replace(". ", ".").split()
            if not pieces:
                continue
            module = pieces[0]
            if len(pieces) >= 3 and pieces[1] == "as":
                bindings[pieces[2]] = apis.canonical(module)
                imported.add(pieces[2])
            else:
                bindings[module.split(".")[0]] = apis.canonical(module.split(".")[0])
                imported.add(module.split(".")[0])
        return
    # from X import a as b, (c, d)
    try:
        split = words.index("import")
    except ValueError:
        return
    module = "".join(words[1:split])
    module = module if module.startswith(".") else apis.canonical(module)
    names = [w for w in words[split + 1:] if w not in "()"]
    clauses = " ".join(names).split(",")
    for clause in clauses:
        pieces = clause.split()
        if not pieces:
            continue
        if pieces[0] == "*":
            if apis.is_tensorflow(module):
                star_modules.append(module)
            continue
        local = pieces[2] if len(pieces) >= 3 and pieces[1] == "as" else pieces[0]
        if module.startswith("."):  # the project's own module: never TensorFlow
            bindings[local] = module + ("" if module.endswith(".") else ".") + pieces[0]
        else:
            bindings[local] = apis.canonical(f"{module}.{pieces[0]}")
        imported.add(local)


def _call_arguments(line, open_index):
    """The source between the parenthesis at `open_index` and its match, or None."""
    depth = 0
    for index in range(open_index, len(line)):
        value = line[index][1]
        if line[index][0] == "op" and value in _OPEN:
            depth += 1
        elif line[index][0] == "op" and value in _CLOSE:
            depth -= 1
            if depth == 0:
                return line[open_index][2] + 1, line[index][2]
    return None


def _parse_arguments(row, source: str):
    try:
        call = ast.parse(f"f({source})", mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
    positional = []
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            break
        positional.append(ast.unparse(arg))
    keywords = [(kw.arg, ast.unparse(kw.value)) for kw in call.keywords]
    return render.name_arguments(row, positional, keywords)


def _fits(row, text, line, open_index) -> bool:
    """Whether the call whose parenthesis is at line[open_index] fits the row's signature."""
    span = _call_arguments(line, open_index)
    if span is None:
        return True
    source = text[span[0]:span[1]]
    try:
        call = ast.parse(f"f({source})", mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return True
    return call_fits(row, call)


def _indent(text, line_starts, offset):
    line = bisect.bisect_right(line_starts, offset)
    return offset - line_starts[line - 1]


def _try_runs(lines, index, indents, foreign=frozenset()) -> bool:
    """Whether the `try:` block an `except` line (lines[index]) closes runs the input
    (`.run(`, `.eval(`, `next(`, ... as on the AST path); the try is the nearest earlier
    line at the same indentation."""
    level = indents[index]
    for back in range(index - 1, -1, -1):
        line = lines[back]
        if indents[back] < level:
            return False
        if indents[back] == level and line[0][1] != "try":
            continue
        if line[0][1] == "yield":
            return True
        for position in range(0, len(line) - 1):
            if line[position][0] == "name" and line[position + 1][1] == "(" \
                    and pulls_input(line[position][1]):
                if position >= 2 and line[position - 1][1] == "." \
                        and line[position - 2][1] in foreign:
                    continue  # subprocess.run(...)
                return True
        if indents[back] == level:
            break  # the `try:` line itself (`try: sess.run(x)` on one line) is checked
    return False


def scan(text: str) -> tuple:
    """(sites, references) found by tokens."""
    resolution = resolve(text)
    return resolution.sites, resolution.references


def resolve(text: str):
    """The token scan as a names.Resolution (sites, references, unresolved aliases)."""
    line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def position(offset):
        line = bisect.bisect_right(line_starts, offset)
        return line, offset - line_starts[line - 1]

    lines = list(_logical_lines(text))
    bindings: dict = {}
    star_modules: list = []
    imported: set = set()
    row_aliases: set = set()   # names assigned a table API itself: sites only when called
    for line in lines:
        first = line[0][1]
        if line[0][0] != "name":
            continue
        if first in ("import", "from") and len(line) > 1:
            _read_import(line, bindings, star_modules, imported)
        elif first in ("def", "class") and len(line) > 1 and line[1][0] == "name":
            bindings[line[1][1]] = None
            imported.discard(line[1][1])
        elif len(line) > 2 and line[1][1] == "=" and line[2][0] == "name":
            parts, end = _dotted_at(line, 2)
            target = bindings.get(parts[0])
            if end == len(line) and isinstance(target, str) and apis.is_tensorflow(target):
                bindings[first] = apis.canonical(".".join([target, *parts[1:]]))
                if apis.row_for(bindings[first]) is not None:
                    row_aliases.add(first)
                imported.discard(first)
            elif first not in bindings or first == "tf":
                bindings[first] = None
                imported.discard(first)

    indents = None
    sites: list = []
    unresolved: list = []
    references: set = set()
    for number, line in enumerate(lines):
        if line[0][1] in ("import", "from"):
            continue
        index = 0
        while index < len(line):
            kind, value, offset = line[index]
            preceded_by_dot = index > 0 and line[index - 1][1] == "."
            if kind != "name" or preceded_by_dot:
                index += 1
                continue
            parts, end = _dotted_at(line, index)
            assumed = False
            if parts[0] in bindings:
                root = bindings[parts[0]]
            elif parts[0] == "tf":
                root, assumed = "tensorflow", True
            else:
                root = next((f"{m}.{parts[0]}" for m in star_modules
                             if apis.row_for(f"{m}.{parts[0]}")), None)
            called = end < len(line) and line[end][1] == "("
            foreign = None
            if isinstance(root, str) and not apis.is_tensorflow(root):
                # a distinctive legacy name on an imported module the scan cannot resolve
                row = None
                if parts[0] in imported and len(parts) > 1 \
                        and not apis.is_lookalike_package(root):
                    row = apis.distinctive_row(parts[1:])
                if row is not None and called and not _fits(row, text, line, end):
                    row = None  # ops.TFRecordReader(path=...): another library's class
                    index = end
                    continue
                foreign = root
                full = [root, *parts[1:]]
                length = len(full)
            elif not isinstance(root, str):
                index = end
                continue
            else:
                full = [root, *parts[1:]]
                references.add(apis.relative(apis.canonical(".".join(full))))
                # longest prefix that is a table row: `tf.train.Coordinator.request_stop`
                for length in range(len(full), 0, -1):
                    row = apis.row_for(apis.canonical(".".join(full[:length])))
                    if row is not None:
                        break
            if row is not None and len(parts) == 1 and parts[0] in row_aliases and not called \
                    and line[0][1] != "except":
                row = None  # `reader = tf.TFRecordReader`'s target, `reader is None`, ...
            if row is not None:
                used = length + len(parts) - len(full)
                last = index + 2 * (used - 1)
                written = ".".join(parts[:used])
                arguments, call_args = None, ""
                if last + 1 < len(line) and line[last + 1][1] == "(":
                    span = _call_arguments(line, last + 1)
                    if span is not None:
                        call_args = " ".join(text[span[0]:span[1]].split())
                        arguments = _parse_arguments(row, call_args) or ()
                start_line, start_col = position(offset)
                end_offset = line[last][2] + len(line[last][1])
                end_line, end_col = position(end_offset)
                in_except = False
                if line[0][1] == "except":
                    if indents is None:
                        indents = [_indent(text, line_starts, ln[0][2]) for ln in lines]
                    in_except = _try_runs(lines, number, indents, {
                        name for name in imported if isinstance(bindings.get(name), str)
                        and not apis.is_tensorflow(bindings[name])})
                sites.append(Site(row=row, line=start_line, col=start_col, end_line=end_line,
                                  end_col=end_col, written=written, arguments=arguments,
                                  call_args=call_args, assumed_tf=assumed, root=parts[0],
                                  in_except=in_except,
                                  via_shim=isinstance(root, str) and apis.is_shim(root)))
                if foreign is not None:
                    unresolved.append(((start_line, start_col), parts[0], foreign.lstrip("."),
                                       parts[-1]))
            index = end
    return Resolution(tuple(sites), frozenset(references), tuple(unresolved))
