"""Turns subscript reads with a computed key into calls: ``x[i]`` -> ``ag__.getitem(x, i)``.

Python runs ``x[i]`` as ``type(x).__getitem__(x, i)``; when ``x`` is a NumPy array (a constant
such as ``np.eye(k)``, a module global, a captured array) and ``i`` is staged, NumPy's indexing
would get a staged value it cannot use, and no hook of the staged value can give NumPy a staged
result. ``ag__.getitem`` hands the read to the runtime when the container or the key is staged,
and otherwise runs ``x[i]`` itself: same result, same exception, same evaluation order (container,
then key). Keys that are constants (``x[0]``, ``x[:, 1]``, ``x[1:3]``, ``x[...]``) cannot be
staged and are left as written, as are annotations (they are types, evaluated once) and
subscripts that are assigned or deleted (the slices converter rewrites assignments). Slices
become ``slice(...)`` arguments; when the code could rebind the name ``slice``, subscripts with
slices are left as written. Requires nothing; runs after the slices converter, whose generated
``x[index]`` reads are rewritten too.
"""

from __future__ import annotations

import builtins

import gast

from autostage.converters import slices
from autostage.pyct import templates, transformer


def _is_constant(node: gast.AST | None) -> bool:
    """Whether ``node`` (a subscript key or part of one) is made of literal constants only."""
    if node is None or isinstance(node, gast.Constant):
        return True
    if isinstance(node, gast.UnaryOp):
        return isinstance(node.operand, gast.Constant)
    if isinstance(node, gast.Tuple):
        return all(_is_constant(e) for e in node.elts)
    if isinstance(node, gast.Slice):
        return all(_is_constant(p) for p in (node.lower, node.upper, node.step))
    return False


class SubscriptTransformer(transformer.Base):
    """Rewrites ``x[key]`` reads whose key is not a constant into ``ag__.getitem(x, key)``."""

    def __init__(self, ctx: transformer.Context, slice_is_builtin: bool):
        super().__init__(ctx)
        self.slice_is_builtin = slice_is_builtin

    def visit_Subscript(self, node: gast.Subscript) -> gast.AST:
        node = self.generic_visit(node)
        if not isinstance(node.ctx, gast.Load) or _is_constant(node.slice):
            return node
        if slices.has_slice(node.slice) and not self.slice_is_builtin:
            return node
        return templates.replace_as_expression(
            "ag__.getitem(target, key)", target=node.value, key=slices.index_expr(node.slice))

    # Annotations are types (``dict[str, int]``), evaluated once: not rewritten.
    def visit_arguments(self, node: gast.arguments) -> gast.arguments:
        node.defaults = [self.visit(d) for d in node.defaults]
        node.kw_defaults = [self.visit(d) if d is not None else None for d in node.kw_defaults]
        return node

    def visit_FunctionDef(self, node: gast.FunctionDef) -> gast.FunctionDef:
        node.args = self.visit(node.args)
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.body = self.visit_block(node.body)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_AnnAssign(self, node: gast.AnnAssign) -> gast.AnnAssign:
        node.target = self.visit(node.target)
        if node.value is not None:
            node.value = self.visit(node.value)
        return node


def transform(node: gast.AST, ctx: transformer.Context) -> gast.AST:
    """Rewrites the subscript reads with computed keys in ``node`` (a function)."""
    slice_is_builtin = (ctx.info.namespace.get("slice") is builtins.slice
                        and "slice" not in ctx.info.free_names and not slices.binds_slice(node))
    return SubscriptTransformer(ctx, slice_is_builtin).visit(node)
