"""Parsing Python entities and source strings into gast ASTs.

``parse_entity`` accepts functions, nested functions, bound and unbound methods, static and class
methods, decorated functions and lambdas. The AST it returns keeps the positions of the original
file: ``lineno`` and ``col_offset`` of every node are those of the user's source, which is what the
source maps of generated code are built from.
"""

from __future__ import annotations

import inspect
import linecache
import re
import textwrap
import types
from collections.abc import Callable

import gast

from autostage.pyct import errors, source_check

_WRAPPER = "if True:\n"


def code_of(entity: Callable) -> types.CodeType:
    """The code object of a function-like entity, unwrapping methods (not decorators).

    Raises:
      SourceUnavailableError: the entity is not a Python function (a builtin, a C extension).
    """
    if isinstance(entity, (staticmethod, classmethod)):
        entity = entity.__func__
    if inspect.ismethod(entity):
        entity = entity.__func__
    code = getattr(entity, "__code__", None)
    if not isinstance(code, types.CodeType):
        raise errors.SourceUnavailableError(
            f"cannot parse {entity!r}: it is not a Python function (builtins and C extensions"
            " have no Python source)")
    return code


def _describe(code: types.CodeType) -> str:
    return f"{code.co_qualname if hasattr(code, 'co_qualname') else code.co_name}" \
           f" ({code.co_filename}:{code.co_firstlineno})"


# A line that may start a function's block: what inspect.findsource looks back for.
_BLOCK_START = re.compile(r"^(\s*def\s)|(\s*async\s+def\s)|(.*(?<!\w)lambda(:|\s))|^(\s*@)")


def _file_lines(code: types.CodeType, module_globals: dict | None
                ) -> tuple[list[str], int]:
    """The lines of ``code``'s file and the index of the line its block starts on.

    ``inspect.findsource`` without its ``getmodule``, which resolves the path of every loaded
    module on its first use (about 50 ms of a first conversion): the caller has the module's
    globals, which is what ``linecache`` needs for sources kept by a loader (zip imports)."""
    try:
        filename = inspect.getsourcefile(code) or code.co_filename
    except TypeError as e:
        raise _unavailable(code, e) from e
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, module_globals)
    start = code.co_firstlineno - 1
    if not lines or not 0 <= start < len(lines):
        raise _unavailable(code, "no source lines")
    while start > 0 and not _BLOCK_START.match(lines[start]):
        start -= 1
    return lines, start


def _unavailable(code: types.CodeType, why: object) -> errors.SourceUnavailableError:
    return errors.SourceUnavailableError(
        f"cannot parse {_describe(code)}: its source code is not available ({why}). Functions"
        " built in the REPL or with exec/eval have no source file; define the function in a"
        " .py file, or mark it autostage.do_not_convert")


def _shift_lines(node: gast.AST, delta: int) -> None:
    if not delta:
        return
    for child in gast.walk(node):
        if getattr(child, "lineno", None) is not None:
            child.lineno += delta
        if getattr(child, "end_lineno", None) is not None:
            child.end_lineno += delta


def _parse_block(source: str) -> tuple[gast.Module, int]:
    """Parses a block of code whose first line may be indented.

    Indented code is parsed inside ``if True:`` rather than dedented, which keeps column offsets,
    multi-line strings and line continuations exactly as written. Returns the statements and the
    number of lines the wrapper added.
    """
    with source_check.compile_warnings_ignored():  # Python warned at import
        if source[:1] in (" ", "\t"):
            module = gast.parse(_WRAPPER + source)
            module.body = module.body[0].body
            return module, 1
        return gast.parse(source), 0


def parse_entity(entity: Callable, future_features: tuple[str, ...] = ()
                 ) -> tuple[gast.AST, str]:
    """Returns the AST and the source text of a function, method or lambda.

    Args:
      entity: a function, method (bound or not), staticmethod/classmethod object or lambda.
      future_features: ``from __future__`` names in effect for it; reserved for the loader.

    Returns:
      ``(node, source)``: a gast ``FunctionDef``/``AsyncFunctionDef`` (decorators kept) or
      ``Lambda`` whose positions are those of the original file, and the entity's source text.

    Raises:
      SourceUnavailableError: the entity has no Python source.
      SourceChangedError: its file changed since it was imported (the source on disk is not
        that of the code Python runs).
      AmbiguousSourceError: a lambda shares its line with a lambda it cannot be told from.
    """
    del future_features
    code = code_of(entity)
    module_globals = getattr(getattr(entity, "__func__", entity), "__globals__", None)
    if code.co_name == "<lambda>":
        return _parse_lambda(code, module_globals)
    lines, start = _file_lines(code, module_globals)
    source_check.check(code, lines, module_globals)
    block = inspect.getblock(lines[start:])
    source = "".join(block)
    try:
        module, wrapped = _parse_block(source)
    except SyntaxError as e:
        raise errors.SourceUnavailableError(
            f"cannot parse {_describe(code)}: its source does not parse on its own ({e.msg})"
        ) from e
    node = module.body[0] if module.body else None
    if not isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)) or (
            node.name != code.co_name):
        raise errors.SourceUnavailableError(
            f"cannot parse {_describe(code)}: the source at its line is not its definition")
    _shift_lines(node, start - wrapped)
    return node, source


def _lambda_matches(node: gast.Lambda, code: types.CodeType) -> bool:
    args = node.args
    names = [a.id for a in args.posonlyargs + args.args]
    names += [a.id for a in args.kwonlyargs]
    if args.vararg is not None:
        names.append(args.vararg.id)
    if args.kwarg is not None:
        names.append(args.kwarg.id)
    return tuple(names) == code.co_varnames[:len(names)]


def _body_contains_code(node: gast.Lambda, code: types.CodeType) -> bool | None:
    """Whether the instruction positions of ``code`` lie within the lambda's body (3.11+)."""
    if not hasattr(code, "co_positions"):
        return None
    body = node.body
    start = (body.lineno, body.col_offset)
    end = (body.end_lineno, body.end_col_offset)
    found = False
    for line, end_line, col, end_col in code.co_positions():
        if line is None or col is None or (col == 0 and end_col == 0):
            continue
        if not (start <= (line, col) and (end_line, end_col) <= end):
            return False
        found = True
    return found


def _span(node: gast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
    return (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)


def _innermost(nodes: list[gast.Lambda]) -> list[gast.Lambda]:
    """Of lambdas nested in one another (``lambda x: lambda x: x``), the innermost one: the code
    of an inner lambda also lies within the bodies of those around it."""
    for node in nodes:
        start, end = _span(node)
        if all(_span(o)[0] <= start and end <= _span(o)[1] for o in nodes):
            return [node]
    return nodes


def _parse_lambda(code: types.CodeType, module_globals: dict | None
                  ) -> tuple[gast.Lambda, str]:
    lines, _ = _file_lines(code, module_globals)
    source_check.check(code, lines, module_globals)
    try:
        with source_check.compile_warnings_ignored():  # Python warned at import
            module = gast.parse("".join(lines))
    except SyntaxError as e:
        raise errors.SourceUnavailableError(
            f"cannot parse {_describe(code)}: its file does not parse ({e.msg})") from e
    candidates = [n for n in gast.walk(module)
                  if isinstance(n, gast.Lambda) and n.lineno == code.co_firstlineno
                  and _lambda_matches(n, code)]
    if len(candidates) > 1:
        placed = [n for n in candidates if _body_contains_code(n, code)]
        candidates = _innermost(placed) or candidates
    if not candidates:
        raise errors.SourceUnavailableError(
            f"cannot parse {_describe(code)}: no matching lambda found at its line")
    if len(candidates) > 1:
        raise errors.AmbiguousSourceError(
            f"cannot parse {_describe(code)}: {len(candidates)} lambdas on line"
            f" {code.co_firstlineno} look the same; put each lambda on its own line")
    node = candidates[0]
    segment = lines[node.lineno - 1:node.end_lineno]
    return node, "".join(segment)


def parse_str(code: str, single_node: bool = True) -> gast.AST:
    """Parses a code string (dedented first) into a module, or its single statement."""
    module = gast.parse(textwrap.dedent(code))
    if not single_node:
        return module
    if len(module.body) != 1:
        raise ValueError(f"expected exactly one statement, found {len(module.body)}")
    return module.body[0]


def parse_expression(src: str) -> gast.expr:
    """Parses a single Python expression."""
    src = textwrap.dedent(src).strip()
    module = gast.parse(src)
    if len(module.body) != 1 or not isinstance(module.body[0], gast.Expr):
        raise ValueError(f"expected a single expression, found {src!r}")
    return module.body[0].value
