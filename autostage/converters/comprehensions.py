"""Lets a list comprehension over a staged iterable become a staged loop.

``[elt for v in xs if c1 if c2]`` becomes::

    ag__.list_comp(xs, lambda it_: [elt for v in it_ if c1 if c2],
                   lambda v: elt, lambda v: c1 and c2, 1)

On Python values the operator calls the first function: the comprehension exactly as written
(``xs`` is evaluated first, where Python evaluates it). On a staged ``xs`` the runtime stages
``for v in xs: if c1 and c2: out.append(elt)`` with the element and condition functions, whose
parameters are the loop variables (a name, or a flat tuple of names: ``for i, x in
enumerate(xs)``). Left as written: comprehensions with several ``for`` clauses, nested tuple
targets, ``async``, ``await`` or ``:=`` (a lambda would change what they bind). Needs no
analysis; runs before call_trees, which converts the calls inside the new lambdas.
"""

from __future__ import annotations

import gast

from autostage.pyct import templates, transformer


def _target_names(target: gast.AST) -> list[str] | None:
    if isinstance(target, gast.Name):
        return [target.id]
    if isinstance(target, gast.Tuple) and len(target.elts) > 1 and all(
            isinstance(e, gast.Name) for e in target.elts):
        return [e.id for e in target.elts]
    return None


def _convertible(node: gast.ListComp) -> list[str] | None:
    if len(node.generators) != 1 or node.generators[0].is_async:
        return None
    if any(isinstance(n, (gast.NamedExpr, gast.Await, gast.Yield, gast.YieldFrom))
           for n in gast.walk(node)):
        return None
    return _target_names(node.generators[0].target)


def _params(names: list[str]) -> gast.arguments:
    return gast.arguments(
        args=[gast.Name(n, gast.Param(), None, None) for n in names], posonlyargs=[],
        vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])


class ComprehensionTransformer(transformer.Base):
    """Rewrites single-``for`` list comprehensions into ``ag__.list_comp`` calls."""

    def __init__(self, ctx: transformer.Context):
        super().__init__(ctx)
        self._items = None  # the parameter of the Python-path lambdas: one fresh name for all

    def visit_ListComp(self, node: gast.ListComp) -> gast.AST:
        node = self.generic_visit(node)
        names = _convertible(node)
        if names is None:
            return node
        generator = node.generators[0]
        iterable = generator.iter
        if self._items is None:
            self._items = self.ctx.namer.new_symbol("it_")
        it = self._items
        generator.iter = gast.Name(it, gast.Load(), None, None)
        python = templates.replace_as_expression("lambda it_: comp", it_=it, comp=node)
        element = gast.Lambda(_params(names), node.elt)
        condition = gast.Constant(None, None)
        if generator.ifs:
            test = generator.ifs[0] if len(generator.ifs) == 1 else gast.BoolOp(
                gast.And(), list(generator.ifs))
            condition = gast.Lambda(_params(names), test)
        return templates.replace_as_expression(
            "ag__.list_comp(iterable, python, element, condition, targets)", iterable=iterable,
            python=python, element=element, condition=condition,
            targets=gast.Constant(len(names), None))


def transform(node: gast.AST, ctx: transformer.Context) -> gast.AST:
    """Rewrites the list comprehensions of ``node`` (see module doc)."""
    return ComprehensionTransformer(ctx).visit(node)
