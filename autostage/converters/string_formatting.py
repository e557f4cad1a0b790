"""``"..." % values`` becomes ``ag__.percent_format("...", values)``.

CPython's ``%d``/``%i``/``%x``/``%o``/``%c`` conversions call ``__int__``/``__index__`` and replace
any TypeError they raise with their own (``%d format: a real number is required, not Tensor``):
the clear error a staged value gives there would be lost, leaving an error that names neither
the line nor the cause. The operator checks the values first; on Python values it is ``%``
itself. Only a string literal on the left is rewritten (``fmt % v`` with a variable ``fmt`` may
be arithmetic). Needs no analysis.
"""

from __future__ import annotations

import gast

from autostage.pyct import templates, transformer


class PercentFormatTransformer(transformer.Base):
    """Rewrites ``"literal" % values`` into an operator call."""

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
