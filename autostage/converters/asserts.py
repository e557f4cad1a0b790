"""``assert`` statements become ``ag__.assert_stmt`` calls, so staged assertions run at run time.

``assert test, msg`` becomes ``ag__.assert_stmt(test, lambda: msg)`` (the message is computed only
if the assertion fails, as with the statement) and ``assert test`` becomes
``ag__.assert_stmt(test)``. When Python runs with ``-O`` (``__debug__`` is false at conversion
time), asserts are removed, as Python's compiler removes them; a block left empty gets ``pass``.
Needs no analysis.
"""

from __future__ import annotations

import gast

from autostage.pyct import anno, templates, transformer


def _optimized() -> bool:
    """Whether Python runs with -O, where assert statements do nothing."""
    return not __debug__


class AssertTransformer(transformer.Base):
    """Rewrites (or, under -O, removes) assert statements."""

    def __init__(self, ctx: transformer.Context, remove: bool):
        super().__init__(ctx)
        self.remove = remove

    def visit_Assert(self, node: gast.Assert) -> gast.stmt | None:
        if self.remove:
            return None
        if node.msg is None:
            return templates.replace("ag__.assert_stmt(test)", test=node.test)[0]
        return templates.replace(
            "ag__.assert_stmt(test, lambda: msg)", test=node.test, msg=node.msg)[0]

    def generic_visit(self, node: gast.AST) -> gast.AST:
        nonempty = {f for f, v in gast.iter_fields(node) if isinstance(v, list) and v}
        node = super().generic_visit(node)
        for field in nonempty:
            if not getattr(node, field):  # a block that held only asserts
                empty = gast.Pass()
                anno.copyanno(node, empty, anno.Basic.ORIGIN)
                setattr(node, field, [empty])
        return node


def transform(node: gast.AST, ctx: transformer.Context) -> gast.AST:
    """Rewrites the asserts of ``node`` into operator calls, or removes them under -O."""
    return AssertTransformer(ctx, remove=_optimized()).visit(node)
