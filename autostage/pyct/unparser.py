"""AST to source text: the one place that turns gast trees back into Python code."""

from __future__ import annotations

import ast
from collections.abc import Sequence

import gast


def unparse(node: gast.AST | Sequence[gast.AST]) -> str:
    """Returns Python source for a gast node, or for a list of statements.

    Uses the standard library's ``ast.unparse`` through gast's conversion (astunparse produces
    invalid code for extended slices on Python 3.9+; see TOOLCHAIN.md).
    """
    if isinstance(node, (list, tuple)):
        return "\n".join(unparse(n) for n in node)
    if isinstance(node, gast.AST):
        node = gast.gast_to_ast(node)
    if not isinstance(node, ast.AST):
        raise TypeError(f"cannot unparse {node!r}: not an AST node")
    node = ast.fix_missing_locations(node)
    return ast.unparse(node)
