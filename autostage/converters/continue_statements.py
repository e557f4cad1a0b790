"""Lowers ``continue`` to a flag, so that a loop body always runs to its end.

Only loops whose body (not counting nested loops) holds a ``continue`` change: the body starts with
``cont = False``, ``continue`` becomes ``cont = True``, and statements that follow a possible
continue in the same block run under ``if not cont:``. Loop conditions and else clauses are left
as they are: a continue neither ends the loop nor skips its else. Needs no analysis; runs after
break lowering (see ``break_statements.GuardedBlocks``, which it shares).
"""

from __future__ import annotations

import gast

from autostage.converters.jump_lowering import GuardedBlocks, adopt_origin, fresh_flag, own_jumps
from autostage.pyct import templates, transformer


class _Loop:
    """The loop being visited; ``flag`` names its continue flag, None when it has no continue."""

    def __init__(self):
        self.flag = None


class ContinueTransformer(GuardedBlocks, transformer.Base):
    """Replaces the continues of each loop with its flag."""

    def _jumps(self, stmt: gast.stmt) -> bool:
        return any(own_jumps(stmt, gast.Continue, into_loops=False))

    def _flag(self) -> str:
        return self.state[_Loop].flag

    def visit_Continue(self, node: gast.Continue) -> list[gast.stmt]:
        return templates.replace("flag = True", flag=self._flag())

    def _visit_loop(self, node: gast.stmt) -> gast.stmt:
        loop = self.state[_Loop].enter()
        if any(self._jumps(s) for s in node.body):
            loop.flag = fresh_flag(self.ctx, "continue_")
        body = self.visit_guarded(node.body)
        self.state[_Loop].exit()
        if loop.flag is not None:  # each iteration starts without a pending continue
            reset = templates.replace("flag = False", flag=loop.flag)
            adopt_origin(reset, node)
            body = reset + body
        node.body = body
        node.orelse = self.visit_guarded(node.orelse)  # its continues belong to the outer loop
        return node

    visit_For = visit_AsyncFor = visit_While = _visit_loop


def transform(node: gast.AST, ctx: transformer.Context) -> gast.AST:
    """Lowers the continues in ``node`` to flags."""
    return ContinueTransformer(ctx).visit(node)
