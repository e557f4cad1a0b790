"""Turns item assignments to local names into assignments of the container itself.

``x[i] = v`` becomes ``x = ag__.setitem(x, i, v)`` and ``x[i] += v`` becomes
``x = ag__.setitem(x, i, ag__.iadd(x[i], v))``, so that control flow sees ``x`` as an output of
branches and loops. Python's evaluation order is kept: for ``x[i] = v`` the value is evaluated
before the index, so a value is moved to a temporary first when both could have side effects; for
``x[i] op= v`` (container, index, old item, value) an index that is not a name or a constant is
computed once into a temporary. Slices become ``slice(...)`` arguments. Nested targets
(``x[i][j] = v``, ``a.b[i] = v``), tuple targets, and containers that are not local names are
left as written. Requires nothing; runs activity analysis itself.
"""

from __future__ import annotations

import builtins

import gast

from autostage.converters.local_names import LocalNamesScope, has_walrus
from autostage.pyct import templates, transformer
from autostage.pyct.static_analysis import activity

# In-place operators, named as in the `operator` module; `ag__` exports one per operator.
_INPLACE = {
    gast.Add: "iadd", gast.Sub: "isub", gast.Mult: "imul", gast.MatMult: "imatmul",
    gast.Div: "itruediv", gast.FloorDiv: "ifloordiv", gast.Mod: "imod", gast.Pow: "ipow",
    gast.LShift: "ilshift", gast.RShift: "irshift", gast.BitOr: "ior", gast.BitXor: "ixor",
    gast.BitAnd: "iand",
}


def _is_pure(node: gast.AST) -> bool:
    """Whether evaluating ``node`` runs no user code, so it may move or be repeated."""
    if isinstance(node, (gast.Constant, gast.Name)):
        return True
    if isinstance(node, gast.UnaryOp):
        return isinstance(node.operand, gast.Constant)
    if isinstance(node, gast.Tuple):
        return all(_is_pure(e) for e in node.elts)
    if isinstance(node, gast.Slice):
        return all(_is_pure(p) for p in (node.lower, node.upper, node.step) if p is not None)
    return False


def index_expr(node: gast.expr) -> gast.expr:
    """The index of a subscript as an ordinary expression: ``a:b`` -> ``slice(a, b)``."""
    if isinstance(node, gast.Slice):
        parts = [node.lower, node.upper, node.step]
        if parts[2] is None:
            parts = [parts[0]] if parts[:2] == [None, None] else parts[:2]
        parts = [gast.Constant(None, None) if p is None else p for p in parts]
        return templates.replace_as_expression("slice(parts)", parts=parts)
    if isinstance(node, gast.Tuple) and any(isinstance(e, gast.Slice) for e in node.elts):
        return gast.Tuple([index_expr(e) for e in node.elts], gast.Load())
    return node


def has_slice(node: gast.AST) -> bool:
    return any(isinstance(n, gast.Slice) for n in gast.walk(node))


class SliceTransformer(LocalNamesScope):
    """Rewrites ``x[i] = v`` and ``x[i] op= v`` on local names ``x``."""

    def __init__(self, ctx: transformer.Context, slice_is_builtin: bool):
        super().__init__(ctx)
        self.slice_is_builtin = slice_is_builtin

    def _container(self, target: gast.AST, stmt: gast.stmt) -> str | None:
        """The local name ``x`` if ``target`` is ``x[...]`` and the statement may be rewritten."""
        if not (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name)):
            return None
        if has_walrus(stmt) or (has_slice(target.slice) and not self.slice_is_builtin):
            return None
        name = target.value.id
        return name if self.rebindable(name) else None

    def visit_Assign(self, node: gast.Assign) -> gast.AST | list[gast.stmt]:
        if len(node.targets) != 1:
            return self._chained(node)
        target = node.targets[0]
        if isinstance(target, (gast.Tuple, gast.List)):
            return self._unpacking(node, target)
        name = self._container(target, node)
        if name is None:
            return self._through_expression(node, target)
        before, value = [], node.value
        if not (_is_pure(target.slice) or _is_pure(value)):
            # Python evaluates the value before the index.
            temp = self.ctx.namer.new_symbol("value")
            before = templates.replace("temp = value", temp=temp, value=value)
            value = temp
        return before + templates.replace(
            "x = ag__.setitem(x, index, value)", x=name, index=index_expr(target.slice),
            value=value)

    def _through_expression(self, node: gast.Assign, target: gast.AST
                            ) -> gast.AST | list[gast.stmt]:
        """``z[1][2] = v``, ``self.w[i] = v``: the value first, then ``ag__.setitem_of`` (Python's
        assignment, or the runtime's clear refusal of a write it cannot stage)."""
        if not isinstance(target, gast.Subscript) or has_walrus(node) or (
                has_slice(target.slice) and not self.slice_is_builtin):
            return node
        before, value = [], node.value
        if not _is_pure(value):  # (Python evaluates the value before the target)
            temp = self.ctx.namer.new_symbol("value")
            before = templates.replace("temp = value", temp=temp, value=value)
            value = temp
        return before + templates.replace("ag__.setitem_of(target, index, value)",
                                          target=target.value, index=index_expr(target.slice),
                                          value=value)

    def _chained(self, node: gast.Assign) -> gast.AST | list[gast.stmt]:
        """``a[0] = b[0] = v``: the value once into a fresh name, then one assignment per
        target, left to right (each target's container and index evaluated when it is
        assigned, as Python does), each rewritten as a single one."""
        if not any(self._container(t, node) for target in node.targets
                   for t in (target.elts if isinstance(target, (gast.Tuple, gast.List))
                             else (target,))):
            return node
        temp = self.ctx.namer.new_symbol("value")
        statements = templates.replace("temp = value", temp=temp, value=node.value)
        for target in node.targets:
            single = gast.Assign([target], gast.Name(temp, gast.Load(), None, None), None)
            rewritten = self.visit_Assign(single)
            statements += rewritten if isinstance(rewritten, list) else [rewritten]
        return statements

    def _unpacking(self, node: gast.Assign, target: gast.Tuple | gast.List
                   ) -> gast.AST | list[gast.stmt]:
        """``a[i], a[j] = a[j], a[i]``: unpack into fresh names, then one update per target.

        Python evaluates the value, unpacks it, then assigns the targets left to right (each
        target's container and index evaluated when it is assigned): the same order here.
        """
        names = [self._container(t, node) for t in target.elts]
        if not any(names) or any(isinstance(t, (gast.Starred, gast.Tuple, gast.List))
                                 for t in target.elts):
            return node
        items = [self.ctx.namer.new_symbol("item") if name else None for name in names]
        unpacked = [gast.Name(item, gast.Store(), None, None) if item else t
                    for item, t in zip(items, target.elts, strict=True)]
        statements = [gast.Assign([type(target)(unpacked, gast.Store())], node.value, None)]
        for name, item, t in zip(names, items, target.elts, strict=True):
            if name:
                statements += templates.replace(
                    "x = ag__.setitem(x, index, value)", x=name, index=index_expr(t.slice),
                    value=item)
        return statements

    def visit_AugAssign(self, node: gast.AugAssign) -> gast.AST | list[gast.stmt]:
        name = self._container(node.target, node)
        if name is None:
            return node
        before, index = [], index_expr(node.target.slice)
        if not _is_pure(node.target.slice):  # evaluated once, before the old item and the value
            temp = self.ctx.namer.new_symbol("index")
            before = templates.replace("temp = index", temp=temp, index=index)
            index = temp
        return before + templates.replace(
            "x = ag__.setitem(x, index, ag__.op(x[index], value))", x=name, index=index,
            op=_INPLACE[type(node.op)], value=node.value)


def binds_slice(node: gast.AST) -> bool:
    """Whether the converted code itself could rebind the name ``slice``."""
    for child in gast.walk(node):
        if isinstance(child, gast.Name) and child.id == "slice" and not isinstance(
                child.ctx, gast.Load):
            return True
        if isinstance(child, gast.alias) and (child.asname or child.name) == "slice":
            return True
        if getattr(child, "name", None) == "slice":
            return True
    return False


def transform(node: gast.AST, ctx: transformer.Context) -> gast.AST:
    """Rewrites item assignments in ``node`` (a function) into assignments of containers."""
    activity.resolve(node)
    slice_is_builtin = (ctx.info.namespace.get("slice") is builtins.slice
                        and "slice" not in ctx.info.free_names and not binds_slice(node))
    return SliceTransformer(ctx, slice_is_builtin).visit(node)
