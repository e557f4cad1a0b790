"""Watches ``try`` and ``with`` bodies, so that staged code inside them is checked.

Staged code has no exception handling: an exception raised when it runs (an index out of range,
an ``assert``...) never reaches a handler that ran at trace time. So ``try: B except E: H
finally: F`` becomes::

    try_ = ag__.try_region(lambda: (E,))
    try:
        with try_:
            B
    except ag__.AUTOSTAGE_ERRORS:
        raise
    except E:
        H
    finally:
        with try_.final():
            F

and ``with cm as v:`` becomes ``with ag__.with_region(cm) as v:``. With Python values these do
nothing more than the original statements; while a function is traced, the runtime refuses a
handler (or a context manager that may swallow exceptions, or a ``finally`` with staged side
effects) that would miss an exception staged code may raise at run time
(``runtime/staging/try_regions.py``). The first handler re-raises autostage's own errors
(staging and conversion errors raised while tracing: a ``StagingTypeError`` is a ``TypeError``),
which are about the program, not its data: a user's ``except TypeError`` (or ``Exception``, or a
bare ``except:``) must not run where Python would have run the body. Handler types are evaluated
only then, lazily. Needs no analysis; runs after break/continue/return lowering, which may add
``except BaseException`` clauses of its own (a ``finally`` that can jump).
"""

from __future__ import annotations

import gast

from autostage.converters.jump_lowering import adopt_origin
from autostage.pyct import templates, transformer


class TryTransformer(transformer.Base):
    """Wraps ``try`` bodies and ``finally`` clauses, and ``with`` context managers."""

    def visit_Try(self, node: gast.Try) -> list[gast.stmt]:
        node = self.generic_visit(node)
        region = self.ctx.namer.new_symbol("try_")
        if node.handlers:
            types = [h.type if h.type is not None else gast.Constant(None, None)
                     for h in node.handlers]
            handlers = templates.replace_as_expression(
                "lambda: types", types=gast.Tuple(types, gast.Load()))
            reraise = templates.replace("try:\n    pass\nexcept ag__.AUTOSTAGE_ERRORS:\n    raise")
            adopt_origin(reraise, node)
            node.handlers.insert(0, reraise[0].handlers[0])
        else:
            handlers = gast.Constant(None, None)
        init = templates.replace("region = ag__.try_region(handlers)", region=region,
                                 handlers=handlers)
        node.body = templates.replace("with region:\n    body", region=region, body=node.body)
        adopt_origin([*init, *node.body], node)  # errors name the try's line
        if node.finalbody:
            first = node.finalbody[0]
            node.finalbody = templates.replace("with region.final():\n    body", region=region,
                                               body=node.finalbody)
            adopt_origin(node.finalbody, first)  # errors name the finally clause's first line
        return [*init, node]

    visit_TryStar = visit_Try

    def visit_With(self, node: gast.With) -> gast.With:
        node = self.generic_visit(node)
        for item in node.items:
            item.context_expr = templates.replace_as_expression(
                "ag__.with_region(cm)", cm=item.context_expr)
        return node


def transform(node: gast.AST, ctx: transformer.Context) -> gast.AST:
    """Wraps the ``try`` and ``with`` statements of ``node`` (see module doc)."""
    return TryTransformer(ctx).visit(node)
