"""Helpers inlined where they are called: a function of the same file that reads a queue or
builds a batch is replaced, at its call, by its statements (parameters bound to the call's
arguments first, its return assigned to the call's targets); `batch_join` over copies of a
reading helper becomes one copy and the number of copies."""
from __future__ import annotations

import ast

from compat._migrate.source_file import (HELPER_DEPTH, JOINS, SourceFile, Unfollowable,
                                         value_call)
from compat._migrate.statements import (SourceLines, Statement, bound_names, flatten,
                                        is_docstring, read_names)

JOINED_ELEMENT = "joined_element"


def written_statement(code: str, line: int, lines: SourceLines) -> Statement:
    """A statement the migration writes itself (a helper's parameter bound to its argument)."""
    node = ast.parse(code).body[0]
    # Its positions refer to `code`, not to the file (see `_Splitter._take`).
    return Statement(node, code, read_names(node), bound_names(node), code, line)


def inline(file: SourceFile, statements: list, depth: int = 0) -> list:
    """`statements` with each call of a same-file helper that builds part of the pipeline
    replaced by the helper's statements (parameters bound first, its return assigned)."""
    out = []
    for statement in statements:
        joined = _reader_copies(file, statement, out)
        if joined is not None:
            copies_of, element, listed = joined
            if listed is not None:
                out.remove(listed)
            out.extend(inline(file, [element], depth + 1))
            out.append(statement)
            file.joins[statement.line] = copies_of
            continue
        call = value_call(statement.node)
        helper = (file.functions.get(call.func.id)
                  if call is not None and isinstance(call.func, ast.Name) else None)
        if helper is None or not file.is_pipeline_helper(helper.name):
            out.append(statement)
            continue
        if depth > HELPER_DEPTH:
            raise Unfollowable(f"{helper.name}(...)", statement.line,
                               "helpers nested this deep are not followed: inline one level")
        out.extend(inline(file, _helper_statements(file, helper, call, statement), depth + 1))
    return out


def _reader_copies(file: SourceFile, statement: Statement, earlier: list):
    """For `batch_join([helper(queue) for _ in range(n)], ...)` (or a list of n such calls,
    or a name an earlier statement bound to one): (n as source text, a statement binding
    `joined_element` to one helper call, the earlier statement or None); else None."""
    call = value_call(statement.node)
    if statement.at_line or file.api_of(call) not in JOINS:
        return None
    tensors = call.args[0] if call.args else next(
        (k.value for k in call.keywords if k.arg == "tensors_list"), None)
    listed = None
    if isinstance(tensors, ast.Name):
        for before in reversed(earlier):
            if tensors.id in before.binds:
                node = before.node
                if (isinstance(node, ast.Assign) and len(node.targets) == 1
                        and isinstance(node.targets[0], ast.Name)):
                    listed, tensors = before, node.value
                    statement = before
                break
        if listed is None:
            return None
    if isinstance(tensors, ast.ListComp) and len(tensors.generators) == 1:
        loop = tensors.generators[0]
        if not (isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name)
                and loop.iter.func.id == "range" and len(loop.iter.args) == 1 and not loop.ifs):
            return None
        one, copies = tensors.elt, statement.segment(loop.iter.args[0])
    elif isinstance(tensors, ast.List) and tensors.elts and len(
            {ast.dump(e) for e in tensors.elts}) == 1:
        one, copies = tensors.elts[0], str(len(tensors.elts))
    else:
        return None
    if not (isinstance(one, ast.Call) and isinstance(one.func, ast.Name)
            and file.is_pipeline_helper(one.func.id)):
        return None
    return copies, written_statement(f"{JOINED_ELEMENT} = {statement.segment(one)}", statement.line,
                              file.lines), listed


def _helper_statements(file: SourceFile, helper: ast.FunctionDef, call: ast.Call,
                       statement: Statement) -> list:
    arguments = helper.args
    if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.posonlyargs:
        raise Unfollowable(f"{helper.name}(...)", statement.line,
                           "a helper with *args, **kwargs or keyword-only parameters is not "
                           "inlined: give it plain parameters")
    params = [a.arg for a in arguments.args]
    defaults = dict(zip(params[len(params) - len(arguments.defaults):], arguments.defaults))
    given = {}
    for param, arg in zip(params, call.args):
        given[param] = statement.segment(arg)
    for keyword in call.keywords:
        if keyword.arg is None:
            raise Unfollowable(f"{helper.name}(**...)", statement.line, "pass the arguments by name")
        given[keyword.arg] = statement.segment(keyword.value)
    for param in params:
        if param not in given:
            if param not in defaults:
                raise Unfollowable(f"{helper.name}(...)", statement.line,
                                   f"argument {param!r} is missing")
            given[param] = ast.get_source_segment(file.text, defaults[param])
    body = helper.body[1:] if is_docstring(helper.body[0]) else helper.body
    inner = flatten(body, file.lines, file.tf_names)
    returns = [s for s in inner if isinstance(s.node, ast.Return)]
    if any(isinstance(sub, ast.Return) for s in inner if not isinstance(s.node, ast.Return)
           for sub in ast.walk(s.node)) or len(returns) > 1 or (
               returns and returns[0] is not inner[-1]):
        raise Unfollowable(f"{helper.name}(...)", helper.lineno,
                           "a helper is inlined only when it returns once, at its end")
    _check_no_clash(file, helper, inner, statement)
    line = statement.line
    bound = [written_statement(f"{param} = {given[param]}", line, file.lines)
             for param in params if given[param] != param]
    tail = []
    if returns:
        value = ast.get_source_segment(file.text, returns[0].node.value) \
            if returns[0].node.value is not None else "None"
        inner = inner[:-1]
        node = statement.node
        if isinstance(node, ast.Return):
            tail = [written_statement(f"return {value}", line, file.lines)]
        elif isinstance(node, ast.Assign):
            targets = statement.targets()
            if targets != value:
                tail = [written_statement(f"{targets} = {value}", line, file.lines)]
    return bound + inner + tail


def _check_no_clash(file, helper, inner, statement) -> None:
    """A helper's local names must not be names the caller uses for something else."""
    caller = next(f for f in file.functions.values()
                  if f.lineno <= statement.line <= f.end_lineno) if file.functions else None
    if caller is None:
        return
    helper_names = set().union(*(s.binds for s in inner)) if inner else set()
    helper_names |= {a.arg for a in helper.args.args}
    caller_names = set()
    for sub in ast.walk(caller):
        if isinstance(sub, ast.Name):
            caller_names.add(sub.id)
        elif isinstance(sub, ast.arg):
            caller_names.add(sub.arg)
    targets = bound_names(statement.node)
    clash = sorted((helper_names & caller_names) - targets - {"_"}
                   - {a.arg for a in helper.args.args if _passes_same_name(statement.node, a.arg)})
    if clash:
        raise Unfollowable(f"{helper.name}(...)", statement.line,
                           f"the helper's names {', '.join(clash)} are also used by "
                           f"{caller.name}: rename them in one of the two before migrating")


def _passes_same_name(node, param) -> bool:
    call = value_call(node)
    return call is not None and any(
        isinstance(a, ast.Name) and a.id == param for a in call.args) or (
        call is not None and any(k.arg == param and isinstance(k.value, ast.Name)
                                 and k.value.id == param for k in call.keywords))


