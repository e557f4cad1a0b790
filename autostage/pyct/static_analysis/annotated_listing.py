"""A readable listing of a function with its analysis results, one statement per line.

Each statement (compound ones by their header) is followed by a comment with the symbols defined on
entry to it and the symbols live before and after it. Requires activity, reaching definitions and
liveness to have run (see ``static_analysis.analyze``).
"""

from __future__ import annotations

from collections.abc import Iterable

import gast

from autostage.pyct import anno, unparser

_COMMENT_COLUMN = 44


def _names(symbols: Iterable) -> str:
    return ", ".join(sorted(str(s) for s in symbols)) or "-"


def _header(node: gast.stmt) -> str:
    """The first line of a statement as the user wrote it (compound statements: their header)."""
    if isinstance(node, gast.If):
        return f"if {unparser.unparse(node.test)}:"
    if isinstance(node, gast.While):
        return f"while {unparser.unparse(node.test)}:"
    if isinstance(node, (gast.For, gast.AsyncFor)):
        prefix = "async for" if isinstance(node, gast.AsyncFor) else "for"
        return f"{prefix} {unparser.unparse(node.target)} in {unparser.unparse(node.iter)}:"
    if isinstance(node, (gast.With, gast.AsyncWith)):
        items = ", ".join(unparser.unparse(item) for item in node.items)
        return f"with {items}:"
    if isinstance(node, (gast.Try, getattr(gast, "TryStar", gast.Try))):
        return "try:"
    if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
        return f"def {node.name}({unparser.unparse(node.args)}):"
    if isinstance(node, gast.ClassDef):
        return f"class {node.name}:"
    if isinstance(node, gast.Match):
        return f"match {unparser.unparse(node.subject)}:"
    return unparser.unparse(node).splitlines()[0]


def _comment(node: gast.stmt) -> str:
    defined = anno.getanno(node, anno.Static.DEFINED_VARS_IN, None)
    live_in = anno.getanno(node, anno.Static.LIVE_VARS_IN, None)
    live_out = anno.getanno(node, anno.Static.LIVE_VARS_OUT, None)
    parts = []
    if defined is not None:
        parts.append(f"defined: {_names(defined)}")
    if live_in is not None or live_out is not None:
        parts.append(f"live: {_names(live_in or ())} -> {_names(live_out or ())}")
    return " | ".join(parts)


class _Lister:
    def __init__(self):
        self.lines: list[str] = []

    def emit(self, depth: int, text: str, node: gast.stmt | None = None) -> None:
        line = "    " * depth + text
        comment = _comment(node) if node is not None else ""
        if comment:
            line = f"{line.ljust(_COMMENT_COLUMN - 1)} # {comment}"
        self.lines.append(line)

    def block(self, depth: int, body: list[gast.stmt]) -> None:
        for stmt in body:
            self.statement(depth, stmt)

    def statement(self, depth: int, node: gast.stmt) -> None:
        self.emit(depth, _header(node), node)
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            self.block(depth + 1, node.body)
        elif isinstance(node, gast.If):
            self.block(depth + 1, node.body)
            self.orelse(depth, node.orelse)
        elif isinstance(node, (gast.While, gast.For, gast.AsyncFor)):
            self.block(depth + 1, node.body)
            self.orelse(depth, node.orelse)
        elif isinstance(node, (gast.With, gast.AsyncWith)):
            self.block(depth + 1, node.body)
        elif isinstance(node, gast.Match):
            for case in node.cases:
                self.emit(depth + 1, f"case {unparser.unparse(case.pattern)}:")
                self.block(depth + 2, case.body)
        elif hasattr(node, "handlers"):  # Try and TryStar
            self.block(depth + 1, node.body)
            for handler in node.handlers:
                self.emit(depth, unparser.unparse(handler).splitlines()[0])
                self.block(depth + 1, handler.body)
            self.orelse(depth, node.orelse)
            if node.finalbody:
                self.emit(depth, "finally:")
                self.block(depth + 1, node.finalbody)

    def orelse(self, depth: int, orelse: list[gast.stmt]) -> None:
        if orelse:
            self.emit(depth, "else:")
            self.block(depth + 1, orelse)


def listing(node: gast.AST) -> str:
    """Returns the annotated listing of a function (or a module's statements)."""
    lister = _Lister()
    if isinstance(node, gast.Module):
        lister.block(0, node.body)
    else:
        lister.statement(0, node)
    return "\n".join(lister.lines)
