"""Lowers ``break`` to a flag, so that every loop has a single exit: its condition.

For a loop whose body (not counting nested loops) holds a ``break``: ``brk = False`` goes before the
loop, ``break`` becomes ``brk = True``, and statements that follow a possible break in the same
block run under ``if not brk:``. A ``while`` test becomes ``not brk and test``; a ``for`` loop gets
``not brk`` as ``anno.Basic.EXTRA_LOOP_TEST``, which control_flow checks before each next item. A
loop's ``else:`` always moves after the loop, under ``if not brk:`` when the loop can break (else
runs only if no break). A ``while`` whose test binds a name (``:=``) first becomes ``while True:``
with ``if not test: break`` as its body's first statement: the name is then assigned in the body,
a loop variable like any other, where a staged loop's test may only compute its condition.
Needs no analysis; runs before continue and return lowering.
The guard mechanics it shares with continue and return lowering live in ``jump_lowering``.
"""

from __future__ import annotations

import gast

from autostage.converters.jump_lowering import (
    GuardedBlocks,
    adopt_origin,
    and_not,
    fresh_flag,
    own_jumps,
)
from autostage.pyct import anno, templates, transformer


class _Loop:
    """The loop being visited; ``flag`` names its break flag, None when it has no break."""

    def __init__(self):
        self.flag = None


class BreakTransformer(GuardedBlocks, transformer.Base):
    """Replaces the breaks of each loop with its flag."""

    def _jumps(self, stmt: gast.stmt) -> bool:
        return any(own_jumps(stmt, gast.Break, into_loops=False))

    def _flag(self) -> str:
        return self.state[_Loop].flag

    def visit_Break(self, node: gast.Break) -> list[gast.stmt]:
        return templates.replace("flag = True", flag=self._flag())

    def _visit_loop(self, node: gast.stmt) -> gast.stmt | list[gast.stmt]:
        if isinstance(node, gast.While) and _binds_names(node.test):
            return self._visit_test_in_body(node)
        orelse, node.orelse = node.orelse, []
        loop = self.state[_Loop].enter()
        if any(self._jumps(s) for s in node.body):
            loop.flag = fresh_flag(self.ctx, "break_")
        node.body = self.visit_guarded(node.body)
        self.state[_Loop].exit()
        orelse = self.visit_guarded(orelse)  # its breaks belong to the enclosing loop
        if loop.flag is None:
            return [node, *orelse] if orelse else node
        if isinstance(node, gast.While):
            node.test = and_not(loop.flag, node.test)
            adopt_origin(node.test, node)
        else:
            test = and_not(loop.flag, anno.getanno(node, anno.Basic.EXTRA_LOOP_TEST, None))
            adopt_origin(test, node)
            anno.setanno(node, anno.Basic.EXTRA_LOOP_TEST, test)
        init = templates.replace("flag = False", flag=loop.flag)
        if orelse:  # else runs only if the loop ended without a break
            orelse = templates.replace("if not flag:\n    orelse", flag=loop.flag, orelse=orelse)
        return [*init, node, *orelse]

    def _visit_test_in_body(self, node: gast.While) -> list[gast.stmt]:
        """``while test: body else: orelse`` as ``while True: if not test: break`` + body. The
        test is evaluated as often and in the same order; ``orelse`` runs when the test ends the
        loop (flag ``ended_``), not after a break of ``body``."""
        orelse, ended = node.orelse, fresh_flag(self.ctx, "ended_") if node.orelse else None
        leave = [*(templates.replace("flag = True", flag=ended) if ended else []), gast.Break()]
        check = templates.replace("if not test:\n    leave", test=node.test, leave=leave)
        adopt_origin(check, node)
        node.test, node.body, node.orelse = gast.Constant(True, None), [*check, *node.body], []
        loop = self._visit_loop(node)  # (a list: the loop breaks)
        if ended is None:
            return loop
        orelse = self.visit_guarded(orelse)  # its breaks belong to the enclosing loop
        return [*templates.replace("flag = False", flag=ended), *loop,
                *templates.replace("if flag:\n    orelse", flag=ended, orelse=orelse)]

    visit_For = visit_AsyncFor = visit_While = _visit_loop


def _binds_names(test: gast.expr) -> bool:
    """Whether evaluating ``test`` assigns a name of the function (``:=``, not in a lambda)."""
    stack = [test]
    while stack:
        child = stack.pop()
        if isinstance(child, gast.NamedExpr):
            return True
        if not isinstance(child, gast.Lambda):
            stack.extend(gast.iter_child_nodes(child))
    return False


def transform(node: gast.AST, ctx: transformer.Context) -> gast.AST:
    """Lowers the breaks in ``node`` to flags and extra loop conditions."""
    return BreakTransformer(ctx).visit(node)
