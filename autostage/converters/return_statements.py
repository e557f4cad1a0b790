"""Lowers ``return`` to flags, so that a function has a single return at its end.

Only functions with a ``return`` that is not a top-level statement of their body change (the
others already return only at the top level). Such a function starts with ``do_return = False``
and ``retval_ = None``; ``return x`` becomes ``retval_ = x`` then ``do_return = True`` (the value
first: if computing it raises, nothing has returned); statements that follow a possible return run
under ``if not do_return:``; a loop that may return gets ``not do_return`` in its ``while`` test or
its ``anno.Basic.EXTRA_LOOP_TEST``; the function ends with ``return retval_``. A top-level return
that ends the body needs no flag: nothing runs after it. Nested functions are lowered on their own.
Needs no analysis; runs after break and continue lowering, so its guards wrap their flag code.
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


class _Function:
    """The function being visited: its flag names (None if it is left as is), its last return."""

    def __init__(self):
        self.do_return = None
        self.retval = None
        self.last = None


def _needs_lowering(node: gast.FunctionDef) -> bool:
    """Whether some return of the function is not a top-level statement of its body."""
    top = {id(s) for s in node.body}
    return any(id(r) not in top for s in node.body
               for r in own_jumps(s, gast.Return, into_loops=True))


def _docstring(body: list[gast.stmt]) -> list[gast.stmt]:
    first = body[0]
    is_doc = (isinstance(first, gast.Expr) and isinstance(first.value, gast.Constant)
              and isinstance(first.value.value, str))
    return [first] if is_doc else []


class ReturnTransformer(GuardedBlocks, transformer.Base):
    """Replaces the returns of each function that needs it with flags and one final return."""

    def _jumps(self, stmt: gast.stmt) -> bool:
        function = self.state[_Function]
        return (function.level > 0 and function.do_return is not None
                and any(own_jumps(stmt, gast.Return, into_loops=True)))

    def _flag(self) -> str:
        return self.state[_Function].do_return

    def visit_FunctionDef(self, node: gast.FunctionDef) -> gast.FunctionDef:
        function = self.state[_Function].enter()
        if _needs_lowering(node):
            function.do_return = fresh_flag(self.ctx, "do_return")
            function.retval = fresh_flag(self.ctx, "retval_")
            function.last = node.body[-1]
        docstring = _docstring(node.body)
        body = self.visit_guarded(node.body[len(docstring):])
        self.state[_Function].exit()
        if function.do_return is not None:
            init = templates.replace("do_return = False\nretval_ = None",
                                     do_return=function.do_return, retval_=function.retval)
            final = templates.replace("return retval_", retval_=function.retval)
            adopt_origin(init + final, node)
            body = init + body + final
        node.body = docstring + body
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Return(self, node: gast.Return) -> gast.Return | list[gast.stmt]:
        function = self.state[_Function]
        if function.do_return is None:
            return node
        value = node.value if node.value is not None else gast.Constant(None, None)
        if node is function.last:  # the end of the body: nothing after it reads the flag
            return templates.replace("retval_ = value", retval_=function.retval, value=value)
        return templates.replace("retval_ = value\ndo_return = True", retval_=function.retval,
                                 value=value, do_return=function.do_return)

    def _visit_loop(self, node: gast.stmt) -> gast.stmt:
        may_return = any(self._jumps(s) for s in node.body)
        node = self.generic_visit(node)
        if not may_return:
            return node
        flag = self._flag()
        if isinstance(node, gast.While):
            node.test = and_not(flag, node.test)
            adopt_origin(node.test, node)
        else:
            test = and_not(flag, anno.getanno(node, anno.Basic.EXTRA_LOOP_TEST, None))
            adopt_origin(test, node)
            anno.setanno(node, anno.Basic.EXTRA_LOOP_TEST, test)
        if node.orelse:  # a return skips the loop's else (break lowering has usually moved it)
            node.orelse = [self.guard(node.orelse, node.orelse[0])]
        return node

    visit_For = visit_AsyncFor = visit_While = _visit_loop


def transform(node: gast.AST, ctx: transformer.Context) -> gast.AST:
    """Lowers the returns of ``node`` and of the functions nested in it, where needed."""
    return ReturnTransformer(ctx).visit(node)
