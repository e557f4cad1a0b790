"""Variables: reads of possibly unbound locals, and ``del`` inside control flow.

Converted control flow passes an unbound variable around as ``ag__.Undefined('x')``, so Python no
longer raises when it is read. Every read of a local that is not defined on all paths into its
statement becomes ``ag__.ld(x)``, which raises the ``UnboundLocalError`` Python would (reads of
definitely defined names, the vast majority, stay as written). ``del x`` inside an ``if``,
``while`` or ``for`` becomes ``x = ag__.Undefined('x')`` (after ``ag__.ld(x)`` when ``x`` may be
unbound, since ``del`` of an unbound name raises too), because the generated branch and loop
functions must return every state variable. ``x: T = v`` in a function becomes ``x = v`` (the
generated functions may make ``x`` nonlocal, which an annotated name cannot be; Python never
evaluates a local's annotation).

Runs before control flow, on the analyses of the code as the user wrote it (after jump lowering).
Reads inside lambdas and comprehensions are left alone: they run later or in their own scope, and
an ``Undefined`` raises the same error on any use.
"""

from __future__ import annotations

import gast

from autostage.pyct import anno, templates, transformer
from autostage.pyct.static_analysis import analyze

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef, gast.ListComp,
           gast.SetComp, gast.DictComp, gast.GeneratorExp)
_CONTROL_FLOW = (gast.If, gast.While, gast.For)


class _Function:
    def __init__(self) -> None:
        self.locals: frozenset[str] = frozenset()
        self.in_control_flow = 0


def _names(symbols) -> set[str]:
    return {str(qn) for qn in symbols if qn.is_simple}


def _header_fields(node: gast.stmt) -> list[tuple[gast.AST, str]]:
    """Where a compound statement keeps the expressions it evaluates itself (its header)."""
    if isinstance(node, (gast.If, gast.While)):
        return [(node, "test")]
    if isinstance(node, (gast.For, gast.AsyncFor)):
        return [(node, "iter")]
    if isinstance(node, (gast.With, gast.AsyncWith)):
        return [(item, "context_expr") for item in node.items]
    if isinstance(node, gast.Match):
        return [(node, "subject")]
    return []


class _Reads(gast.NodeTransformer):
    """Wraps loads of the given names in ``ag__.ld``; stays out of nested scopes."""

    def __init__(self, names: set[str]):
        self.names = names

    def visit_Name(self, node: gast.Name) -> gast.expr:
        if isinstance(node.ctx, gast.Load) and node.id in self.names:
            return templates.replace_as_expression("ag__.ld(name)", name=node)
        return node

    def generic_visit(self, node: gast.AST) -> gast.AST:
        if isinstance(node, _SCOPES):
            return node
        return super().generic_visit(node)


class VariablesTransformer(transformer.Base):
    """Adds ``ag__.ld`` to reads of locals that may be unbound; rewrites ``del`` in branches."""

    def visit_FunctionDef(self, node: gast.FunctionDef) -> gast.FunctionDef:
        function = self.state[_Function].enter()
        function.locals = frozenset(_names(anno.getanno(node, anno.Static.BODY_SCOPE).local_names))
        node.body = self.visit_block(node.body)
        self.state[_Function].exit()
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: gast.ClassDef) -> gast.ClassDef:
        node.body = [self.visit(n) if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef))
                     else n for n in node.body]
        return node

    def visit_Lambda(self, node: gast.Lambda) -> gast.Lambda:
        return node

    def visit_Delete(self, node: gast.Delete) -> gast.stmt | list[gast.stmt]:
        function = self.state[_Function]
        if not function.in_control_flow:
            return node
        simple = [t for t in node.targets if isinstance(t, gast.Name) and t.id in function.locals]
        if len(simple) != len(node.targets):
            return self._checked_reads(node)  # `del a[i]` and friends are ordinary statements
        must = _names(anno.getanno(node, anno.Static.MUST_DEFINED_VARS_IN))
        statements = []
        for target in simple:
            if target.id not in must:
                statements += templates.replace("ag__.ld(name)", name=target.id)
            statements += templates.replace(
                "name = ag__.Undefined(key)", name=target.id, key=gast.Constant(target.id, None))
        return statements

    def visit_stmt(self, node: gast.stmt) -> gast.stmt:
        node = self._checked_reads(node)
        if isinstance(node, gast.AnnAssign) and node.value is not None and isinstance(
                node.target, gast.Name):
            node = _plain_assignment(node)
        is_control_flow = isinstance(node, _CONTROL_FLOW)
        self.state[_Function].in_control_flow += is_control_flow
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)
            if block and isinstance(block[0], gast.stmt):
                setattr(node, field, self.visit_block(block))
            elif block:  # handlers, cases: visit their bodies
                for part in block:
                    part.body = self.visit_block(part.body)
        self.state[_Function].in_control_flow -= is_control_flow
        return node

    def visit(self, node: gast.AST):
        if isinstance(node, gast.stmt) and not isinstance(
                node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Delete)):
            return self.visit_stmt(node)
        return super().visit(node)

    def _checked_reads(self, node: gast.stmt) -> gast.stmt:
        """Wraps the statement's own reads of locals that may be unbound."""
        function = self.state[_Function]
        must = anno.getanno(node, anno.Static.MUST_DEFINED_VARS_IN, None)
        if must is None or not function.locals:
            return node
        maybe_unbound = set(function.locals - _names(must))
        if not maybe_unbound:
            return node
        reads = _Reads(maybe_unbound)
        if _is_compound(node):
            for owner, field in _header_fields(node):
                setattr(owner, field, reads.visit(getattr(owner, field)))
        else:
            for field, value in gast.iter_fields(node):
                if isinstance(value, list):
                    setattr(node, field, [reads.visit(v) if isinstance(v, gast.AST) else v
                                          for v in value])
                elif isinstance(value, gast.AST):
                    setattr(node, field, reads.visit(value))
        return node


def _plain_assignment(node: gast.AnnAssign) -> gast.Assign:
    """``x: T = v`` as ``x = v``: Python never evaluates a local's annotation, and the generated
    branch and loop functions may make ``x`` nonlocal, which an annotated name cannot be."""
    assign = gast.Assign(targets=[node.target], value=node.value, type_comment=None)
    for key in anno.keys(node):
        anno.copyanno(node, assign, key)
    return gast.copy_location(assign, node)


def _is_compound(node: gast.stmt) -> bool:
    return any(getattr(node, f, None) for f in ("body", "handlers", "cases"))


def transform(node: gast.AST, ctx: transformer.Context) -> gast.AST:
    if isinstance(node, gast.Lambda):
        return node
    analyze(node, ctx)
    return VariablesTransformer(ctx).visit(node)
