"""``"..." % values`` becomes ``ag__.percent_format("...", values)``; an f-string with fields
becomes ``ag__.fstring("...", ag__.field(value, conversion, spec), ...)``.

CPython's ``%d``/``%i``/``%x``/``%o``/``%c`` conversions call ``__int__``/``__index__`` and replace
any TypeError they raise with their own (``%d format: a real number is required, not Tensor``):
the clear error a staged value gives there would be lost, leaving an error that names neither
the line nor the cause. The operator checks the values first; on Python values it is ``%``
itself. Only a string literal on the left is rewritten (``fmt % v`` with a variable ``fmt`` may
be arithmetic).

An f-string of a staged value has its text only when the staged function runs; as calls, its
fields reach the runtime, which makes a string template that ``print``, ``raise`` and
``assert`` render then (``runtime/staging/text.py``). On Python values the calls are the
f-string itself: the fields are evaluated and formatted left to right, each with its
conversion (``"r"`` for ``!r``) and format spec. Needs no analysis.
"""

from __future__ import annotations

import gast

from autostage.pyct import templates, transformer

_CONVERSIONS = {-1: "", 115: "s", 114: "r", 97: "a"}


class PercentFormatTransformer(transformer.Base):
    """Rewrites ``"literal" % values`` and f-strings into operator calls."""

    def visit_JoinedStr(self, node: gast.JoinedStr) -> gast.expr:
        node = self.generic_visit(node)
        if not any(isinstance(v, gast.FormattedValue) for v in node.values):
            return node
        pieces = [v if not isinstance(v, gast.FormattedValue) else templates.replace_as_expression(
            "ag__.field(value, conversion, spec)", value=v.value,
            conversion=gast.Constant(_CONVERSIONS[v.conversion], None),
            spec=v.format_spec if v.format_spec is not None else gast.Constant("", None))
                  for v in node.values]
        return templates.replace_as_expression("ag__.fstring(pieces)", pieces=pieces)

    def visit_BinOp(self, node: gast.BinOp) -> gast.expr:
        node = self.generic_visit(node)
        if not (isinstance(node.op, gast.Mod) and isinstance(node.left, gast.Constant)
                and type(node.left.value) is str):
            return node
        return templates.replace_as_expression(
            "ag__.percent_format(fmt, values)", fmt=node.left, values=node.right)


def transform(node: gast.AST, ctx: transformer.Context) -> gast.AST:
    """Rewrites the ``%`` string formatting of ``node`` into operator calls."""
    return PercentFormatTransformer(ctx).visit(node)
