"""Origin information: where each node of converted code came from in the user's source.

``resolve`` annotates every positioned node of a parsed entity with ``anno.Basic.ORIGIN``; the
annotation then travels with the node through rewrites (``transformer.Base`` passes it to
replacement nodes, ``templates`` copies it with substituted nodes). After the converted AST is
turned into code, ``create_source_map`` maps each line of that code back to the user's file, line,
column and function, which is what errors and tracebacks report.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple

import gast

from autostage.pyct import anno, parser


class LineLocation(NamedTuple):
    filename: str
    lineno: int


class Location(NamedTuple):
    filename: str
    lineno: int
    col_offset: int

    @property
    def line_loc(self) -> LineLocation:
        return LineLocation(self.filename, self.lineno)


class OriginInfo(NamedTuple):
    """Where a node came from: its location, enclosing function, source line and line comment."""

    loc: Location
    function_name: str | None
    source_code_line: str
    comment: str | None

    def as_frame(self) -> tuple[str, int, str | None, str]:
        """A ``traceback.FrameSummary``-like tuple: (filename, lineno, name, line)."""
        return (self.loc.filename, self.loc.lineno, self.function_name,
                self.source_code_line.strip())

    def __str__(self) -> str:
        where = f"{self.loc.filename}:{self.loc.lineno}:{self.loc.col_offset}"
        return f"{where} in {self.function_name}" if self.function_name else where


def _comments(source: str) -> dict[int, str]:
    """Line comments by line of ``source`` (1-based); best effort on partial code."""
    comments = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                comments[tok.start[0]] = tok.string[1:].strip()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # an entity's source may end mid-statement (a lambda inside a call)
    return comments


class _Resolver:
    def __init__(self, lines: Sequence[str], filename: str, source_lineno: int,
                 line_offset: int, col_offset: int, comments: dict[int, str]):
        self.lines = lines
        self.filename = filename
        self.source_lineno = source_lineno
        self.line_offset = line_offset
        self.col_offset = col_offset
        self.comments = comments

    def visit(self, node: gast.AST, function_name: str | None) -> None:
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
            function_name = node.name
        elif isinstance(node, gast.Lambda):
            function_name = "<lambda>"
        if getattr(node, "lineno", None) is not None:
            anno.setanno(node, anno.Basic.ORIGIN, self._origin(node, function_name))
        for child in gast.iter_child_nodes(node):
            self.visit(child, function_name)

    def _origin(self, node: gast.AST, function_name: str | None) -> OriginInfo:
        lineno = node.lineno + self.line_offset
        index = lineno - self.source_lineno
        line = self.lines[index] if 0 <= index < len(self.lines) else ""
        loc = Location(self.filename, lineno, node.col_offset + self.col_offset)
        return OriginInfo(loc, function_name, line.rstrip("\r\n"), self.comments.get(index + 1))


def resolve(node: gast.AST, source: str, filename: str, *, source_lineno: int = 1,
            line_offset: int = 0, col_offset: int = 0, function_name: str | None = None
            ) -> None:
    """Annotates every node under ``node`` that has a position with its OriginInfo.

    Args:
      node: the AST; nodes from ``parser.parse_entity`` carry the file's own positions.
      source: text holding the node's lines; its first line is line ``source_lineno`` of the file.
      filename: the file reported in origins.
      source_lineno: the file line number of the first line of ``source``.
      line_offset, col_offset: added to node positions that are relative (``parser.parse_str`` of a
        snippet taken from the file) to make them file positions.
      function_name: the function enclosing ``node``, if ``node`` is not itself a function.
    """
    lines = source.splitlines(keepends=True)
    resolver = _Resolver(lines, filename, source_lineno, line_offset, col_offset,
                         _comments(source))
    resolver.visit(node, function_name)


def resolve_entity(node: gast.AST, source: str, entity: Callable) -> None:
    """``resolve`` for the ``(node, source)`` that ``parser.parse_entity(entity)`` returned."""
    filename = parser.code_of(entity).co_filename
    # The source starts at the first decorator, or at the def or lambda itself.
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
    resolve(node, source, filename, source_lineno=first)


def _parallel_walk(generated: gast.AST, reparsed: gast.AST, inherited: OriginInfo | None,
                   ) -> Iterator[tuple[gast.AST, gast.AST, OriginInfo | None, bool]]:
    """Pairs the nodes of two ASTs of the same shape, with each generated node's origin."""
    own = anno.getanno(generated, anno.Basic.ORIGIN, None)
    origin = own if own is not None else inherited
    yield generated, reparsed, origin, own is not None
    for field, value in gast.iter_fields(generated):
        other = getattr(reparsed, field, None)
        if isinstance(value, list) and isinstance(other, list) and len(value) == len(other):
            pairs = zip(value, other, strict=True)
        elif isinstance(value, gast.AST):
            pairs = ((value, other),)
        else:
            continue
        for a, b in pairs:
            if isinstance(a, gast.AST) and type(a) is type(b):
                yield from _parallel_walk(a, b, origin)


def create_source_map(nodes: gast.AST | Sequence[gast.AST], code: str, filepath: str
                      ) -> dict[LineLocation, OriginInfo]:
    """Maps lines of ``code`` (the text ``nodes`` were unparsed into) to user origins.

    A generated node without an origin takes that of its nearest annotated ancestor. When several
    nodes start on one generated line, an origin of the node's own beats an inherited one, then
    the earliest position in the user's file wins (the statement rather than its parts).
    """
    reparsed = gast.parse(code)
    if isinstance(nodes, gast.Module):
        generated = nodes
    else:
        generated = gast.Module(list(nodes) if isinstance(nodes, Sequence) else [nodes], [])
    best: dict[LineLocation, tuple] = {}
    for _, after, origin, own in _parallel_walk(generated, reparsed, None):
        lineno = getattr(after, "lineno", None)
        if origin is None or lineno is None:
            continue
        line_loc = LineLocation(filepath, lineno)
        rank = (not own, origin.loc.lineno, origin.loc.col_offset)
        if line_loc not in best or rank < best[line_loc][0]:
            best[line_loc] = (rank, origin)
    return {loc: origin for loc, (_, origin) in best.items()}
