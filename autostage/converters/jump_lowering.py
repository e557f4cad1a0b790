"""Guard mechanics shared by break, continue and return lowering.

Which statements may jump out of a block (``own_jumps``), fresh flag names, the ``not flag and
test`` conditions, and ``GuardedBlocks``: guarding the statements that follow a possible jump with
``if not flag:``, including inside ``try`` statements (a ``finally`` that can jump is split so the
jump guards the re-raise).
"""

from __future__ import annotations

from collections.abc import Iterator

import gast

from autostage.pyct import anno, errors, templates, transformer

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
_LOOPS = (gast.For, gast.AsyncFor, gast.While)
_BLOCK_PARTS = (gast.stmt, gast.excepthandler, gast.match_case)


def own_jumps(node: gast.AST, kind: type, into_loops: bool) -> Iterator[gast.stmt]:
    """The ``kind`` statements under ``node`` that leave it.

    None inside nested functions or classes and, unless ``into_loops``, none inside nested loop
    bodies (the else clause of a nested loop belongs to the enclosing one).
    """
    stack = [node]
    while stack:
        child = stack.pop()
        if isinstance(child, kind):
            yield child
        elif isinstance(child, _SCOPES):
            continue
        elif isinstance(child, _LOOPS) and not into_loops:
            stack.extend(child.orelse)
        else:
            stack.extend(c for c in gast.iter_child_nodes(child) if isinstance(c, _BLOCK_PARTS))


def and_not(flag: str, test: gast.expr | None) -> gast.expr:
    """``not flag and test``, kept short: ``not flag`` where ``test`` is missing or ``True``, and
    ``not (flag or x)`` where ``test`` is ``not x`` (its first operand, for an ``and``)."""
    if test is None or (isinstance(test, gast.Constant) and test.value is True):
        return templates.replace_as_expression("not flag", flag=flag)
    if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
        negated = test.operand
        if not (isinstance(negated, gast.BoolOp) and isinstance(negated.op, gast.Or)):
            negated = gast.BoolOp(gast.Or(), [negated])
        flag_name = gast.Name(flag, gast.Load(), None, None)
        return gast.UnaryOp(gast.Not(), gast.BoolOp(gast.Or(), [flag_name, *negated.values]))
    if isinstance(test, gast.BoolOp) and isinstance(test.op, gast.And):
        first, *others = test.values
        if isinstance(first, gast.UnaryOp) and isinstance(first.op, gast.Not):
            return gast.BoolOp(gast.And(), [and_not(flag, first), *others])
    return templates.replace_as_expression("not flag and test", flag=flag, test=test)


def fresh_flag(ctx: transformer.Context, root: str) -> str:
    """A fresh flag name: ``break_``, then ``break_1``, ``break_2``... (never ``break__1``)."""
    if ctx.namer.is_used(root):
        root = root.rstrip("_") + "_1"
    return ctx.namer.new_symbol(root)


def adopt_origin(nodes: gast.AST | list[gast.AST], source: gast.AST) -> None:
    """Gives generated nodes the user line of ``source``, for source maps and errors."""
    origin = anno.getanno(source, anno.Basic.ORIGIN, None)
    if origin is None:
        return
    for node in nodes if isinstance(nodes, list) else [nodes]:
        for child in gast.walk(node):
            if not anno.hasanno(child, anno.Basic.ORIGIN):
                anno.setanno(child, anno.Basic.ORIGIN, origin)


def _as_list(result: gast.AST | list[gast.AST] | None) -> list[gast.AST]:
    if result is None:
        return []
    return result if isinstance(result, list) else [result]


def _split_finally(node: gast.Try) -> gast.Try:
    """``try: B finally: F`` as ``try: B except BaseException: F; raise else: F``.

    Once B's jumps are flags, this behaves as the ``finally``; and a jump in F, once lowered, guards
    the ``raise``: a break, continue or return in ``finally`` discards the exception in flight.
    """
    body = node.body
    if node.handlers or node.orelse:
        body = [gast.Try(node.body, node.handlers, node.orelse, [])]
        adopt_origin(body, node)
    new = templates.replace(
        "try:\n    body\nexcept BaseException:\n    final\n    raise\nelse:\n    final",
        body=body, final=node.finalbody)[0]
    adopt_origin(new, node)
    anno.setanno(new, anno.Basic.FINALLY_AS_ELSE, True)  # (not guarded by a later lowering)
    return new


def refuse_discarded_jump(node: gast.Try) -> None:
    """A ``break``/``continue`` in ``finally`` discards the ``return`` (a ``continue``: also the
    ``break``) the rest of the ``try`` may be leaving with. Lowered to flags, both stay set and
    the pending jump wins (the loop ended, or the function returned, where Python went on): a
    ConversionError naming the jump in the ``finally``."""
    final = [j for s in node.finalbody
             for j in own_jumps(s, (gast.Break, gast.Continue), into_loops=False)]
    if not final:
        return
    rest = [*node.body, *node.handlers, *node.orelse]
    returns = any(True for s in rest for _ in own_jumps(s, gast.Return, into_loops=True))
    breaks = any(True for s in rest for _ in own_jumps(s, gast.Break, into_loops=False))
    continues = [j for j in final if isinstance(j, gast.Continue)]
    if returns or (breaks and continues):
        jump = (continues if breaks and continues else final)[0]
        kind = "continue" if isinstance(jump, gast.Continue) else "break"
        pending = "return" if returns else "break"
        raise errors.ConversionError(
            f"this '{kind}' in a finally clause discards the '{pending}' its try statement may "
            f"be leaving with, which autostage does not convert; set a flag in the finally "
            f"clause and {kind} after the try statement", jump)


class GuardedBlocks:
    """Mixin for a ``transformer.Base`` that lowers one kind of jump to a flag.

    A subclass says which statements may jump (``_jumps``) and names the flag (``_flag``); this
    runs every statement list through ``visit_guarded`` so that what follows a possible jump runs
    under ``if not flag:``, and keeps ``try`` semantics (the else clause is skipped after a jump in
    the body; a jump in ``finally`` discards the exception in flight).
    """

    def _jumps(self, stmt: gast.stmt) -> bool:
        raise NotImplementedError

    def _flag(self) -> str:
        raise NotImplementedError

    def visit_guarded(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        """Visits a block; after a statement that may jump, the rest runs under the guard."""
        result = []
        for i, stmt in enumerate(stmts):
            jumps = self._jumps(stmt)
            result += _as_list(self.visit(stmt))
            rest = stmts[i + 1:]
            if jumps and rest:
                result.append(self.guard(self.visit_guarded(rest), rest[0]))
                break
        return result

    def guard(self, body: list[gast.stmt], source: gast.AST) -> gast.If:
        """``if not flag: body``, placed at the user line of ``source``."""
        node = templates.replace("if not flag:\n    body", flag=self._flag(), body=body)[0]
        adopt_origin(node, source)
        return node

    def generic_visit(self, node: gast.AST) -> gast.AST:
        # Only statements can jump: expressions are not visited (lambdas hold no statements).
        for field, value in gast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], gast.stmt):
                setattr(node, field, self.visit_guarded(value))
            elif isinstance(value, list):
                setattr(node, field, [self.visit(v) if isinstance(v, _BLOCK_PARTS) else v
                                      for v in value])
        return node

    def visit_Try(self, node: gast.Try) -> gast.Try:
        refuse_discarded_jump(node)
        if any(self._jumps(s) for s in node.finalbody):
            # The new else clause is the finally clause: it runs after a jump too. The user's
            # own else clause, if any, is guarded where it now stands, in the inner try.
            return self.generic_visit(_split_finally(node))
        body_jumps = any(self._jumps(s) for s in node.body)
        node = self.generic_visit(node)
        # The else clause runs only if the body finished without a jump; one that is the
        # finally of a try an earlier lowering split (break in finally, continue in the body)
        # runs after the jump too.
        if body_jumps and node.orelse and not anno.getanno(node, anno.Basic.FINALLY_AS_ELSE,
                                                             False):
            node.orelse = [self.guard(node.orelse, node.orelse[0])]
        return node

    visit_TryStar = visit_Try
