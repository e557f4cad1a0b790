"""Turns ternaries into calls: ``a if c else b`` -> ``ag__.if_exp_branch(c, lambda: a, lambda:
b)()``.

The branches become lambdas so that only the chosen one is evaluated, as in Python;
``if_exp_branch`` returns the chosen one (on a Python condition) and the user's function calls it,
so a ternary costs one Python frame, not two. A lambda is a
new scope, so an expression is left as written when wrapping it would change what it means: a
branch that binds a name with ``:=``, yields or awaits, or calls a builtin that reads the caller's
frame (``super()``, ``locals()``...); and any expression evaluated directly in a class body (a
lambda there does not see the class's names). ``lambda_safe`` and ``visit_class`` are shared with
the logical expressions converter. Requires nothing.
"""

from __future__ import annotations

import gast

from autostage.pyct import anno, templates, transformer

_FRAME_NAMES = frozenset({"super", "locals", "globals", "vars", "dir", "eval", "exec"})


def lambda_safe(node: gast.AST) -> bool:
    """Whether ``node`` means the same inside ``lambda: node`` as where it stands."""
    for child in gast.walk(node):
        if isinstance(child, (gast.NamedExpr, gast.Yield, gast.YieldFrom, gast.Await)):
            return False
        if (isinstance(child, gast.Call) and isinstance(child.func, gast.Name)
                and child.func.id in _FRAME_NAMES):
            return False
    return True


def visit_class(visitor: transformer.Base, node: gast.ClassDef) -> gast.ClassDef:
    """Visits a class, except the expressions its body evaluates in the class namespace.

    Decorators, bases and keywords are evaluated in the enclosing scope and method bodies in
    their own, so both are visited; defaults of methods and class-level statements are not.
    """
    node.decorator_list = [visitor.visit(d) for d in node.decorator_list]
    node.bases = [visitor.visit(b) for b in node.bases]
    node.keywords = [visitor.visit(k) for k in node.keywords]
    _visit_method_bodies(visitor, node)
    return node


def _visit_method_bodies(visitor: transformer.Base, node: gast.AST) -> None:
    for child in gast.iter_child_nodes(node):
        if isinstance(child, (gast.FunctionDef, gast.AsyncFunctionDef)):
            child.body = visitor.visit_block(child.body)
        elif isinstance(child, (gast.stmt, gast.excepthandler, gast.match_case)):
            _visit_method_bodies(visitor, child)  # defs nested in class-level if/try/classes


class IfExpTransformer(transformer.Base):
    """Replaces ``a if c else b`` by ``ag__.if_exp_branch``, innermost first."""

    visit_ClassDef = visit_class

    def visit_IfExp(self, node: gast.IfExp) -> gast.AST:
        node = self.generic_visit(node)
        if not (lambda_safe(node.body) and lambda_safe(node.orelse)):
            node.test = templates.replace_as_expression(  # (as written: a staged test, an error)
                "ag__.python_operand(test, 'a conditional expression')", test=node.test)
            return node
        anno.mark_truth_test(node.test)
        return templates.replace_as_expression(
            "ag__.if_exp_branch(test, lambda: body, lambda: orelse)()", test=node.test,
            body=node.body, orelse=node.orelse)


def transform(node: gast.AST, ctx: transformer.Context) -> gast.AST:
    """Rewrites the conditional expressions in ``node``."""
    return IfExpTransformer(ctx).visit(node)
