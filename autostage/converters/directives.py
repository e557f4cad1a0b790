"""Loop directives: ``set_loop_options(...)`` statements become annotations on their loop.

A call that resolves, through the entity's namespace and under whatever name the user imported it,
to ``autostage.directives.set_loop_options`` and stands as a statement directly in a loop body is
removed; its keyword arguments are recorded on that loop as ``anno.Basic.DIRECTIVES``, a dict from
option name to the argument's expression, which control_flow hands to the loop operator. Misuse
(outside a loop body, positional or unknown arguments, an option given twice) is a
``ConversionError`` at the user's line. Runs first, on loops as the user wrote them; needs no
analysis.
"""

from __future__ import annotations

import inspect
from typing import Any

import gast

from autostage.pyct import anno, errors, transformer

_DIRECTIVES_MODULE = "autostage.directives"
_LOOP_OPTIONS = "set_loop_options"


class _Block:
    """The statement list being visited: ``loop`` is its loop when it is a loop's body."""

    def __init__(self):
        self.loop = None


class DirectivesTransformer(transformer.Base):
    """Moves loop directives from loop bodies onto the loops."""

    def generic_visit(self, node: gast.AST) -> gast.AST:
        self.state[_Block].enter()  # blocks of other statements are not loop bodies
        try:
            return super().generic_visit(node)
        finally:
            self.state[_Block].exit()

    def _visit_loop(self, node: gast.stmt) -> gast.stmt:
        block = self.state[_Block].enter()
        block.loop = node
        node.body = self.visit_block(node.body) or [gast.Pass()]
        self.state[_Block].exit()
        self.state[_Block].enter()
        node.orelse = self.visit_block(node.orelse)
        self.state[_Block].exit()
        return node

    visit_For = visit_AsyncFor = visit_While = _visit_loop

    def visit_Expr(self, node: gast.Expr) -> gast.Expr | None:
        call = node.value
        if not isinstance(call, gast.Call):
            return node
        directive = self._resolve(call.func)
        if not _is_loop_options(directive):
            return node
        loop = self.state[_Block].loop if self.state[_Block].level else None
        if loop is None:
            raise errors.ConversionError(
                f"{_LOOP_OPTIONS}() must stand as a statement directly in the body of a for or "
                "while loop", node)
        options = dict(anno.getanno(loop, anno.Basic.DIRECTIVES, {}))
        for name, value in _options(call, directive, node).items():
            if name in options:
                raise errors.ConversionError(
                    f"{_LOOP_OPTIONS}(): the loop option {name!r} is set twice", node)
            options[name] = value
        anno.setanno(loop, anno.Basic.DIRECTIVES, options)
        return None

    def _resolve(self, func: gast.expr) -> Any:
        """The object a callee names at conversion time (``a.b.c`` through attributes), or None."""
        if isinstance(func, gast.Name):
            return self.ctx.info.namespace.get(func.id)
        if isinstance(func, gast.Attribute):
            return getattr(self._resolve(func.value), func.attr, None)
        return None


def _is_loop_options(value: Any) -> bool:
    # Matched by name: converters may not import the top-level autostage modules.
    return (callable(value) and getattr(value, "__module__", None) == _DIRECTIVES_MODULE
            and getattr(value, "__name__", None) == _LOOP_OPTIONS)


def _options(call: gast.Call, directive: Any, stmt: gast.stmt) -> dict[str, gast.expr]:
    """The directive's keyword arguments, checked against its signature."""
    known = [p.name for p in inspect.signature(directive).parameters.values()
             if p.kind is inspect.Parameter.KEYWORD_ONLY]
    if call.args or any(k.arg is None for k in call.keywords):
        raise errors.ConversionError(
            f"{_LOOP_OPTIONS}() takes keyword arguments only, spelled out: "
            f"{', '.join(known)}", stmt)
    options = {}
    for keyword in call.keywords:
        if keyword.arg not in known:
            raise errors.ConversionError(
                f"{_LOOP_OPTIONS}() has no option {keyword.arg!r}; the options are "
                f"{', '.join(known)}", stmt)
        options[keyword.arg] = keyword.value
    return options


def transform(node: gast.AST, ctx: transformer.Context) -> gast.AST:
    """Attaches the loop directives in ``node`` to their loops and removes the calls."""
    return DirectivesTransformer(ctx).visit(node)
