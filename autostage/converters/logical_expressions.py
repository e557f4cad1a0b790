"""Turns ``and``, ``or``, ``not`` and comparison chains into operator calls, keeping laziness.

``a and b and c`` -> ``ag__.and_(a, lambda: ag__.and_(b, lambda: c))`` (``or`` likewise), so a later
operand is evaluated only when Python would, and the result is an operand, not a bool.
In the test of an ``if``, ``while`` or
ternary, where only the truth of the value matters, ``ag__.and_test``/``or_test`` instead give
that truth (a bool, as Python's test computes it: each operand's truth once, the same operands
evaluated). ``not a`` -> ``ag__.not_(a)``.
``a is b`` (and ``is not``) -> ``ag__.is_(a, b)``,
so that a staged ``a`` compared with ``True`` is the bool it stands for, and ``res is None`` of a
variable None on some paths of a staged loop only is a clear error (Python's ``is`` said False,
whatever the run: only ``None is None`` stays as written). A chain ``a < b < c``
-> ``ag__.compare_chain(a, '<', lambda: b, '<', lambda: c)``, which evaluates each operand at
most once. ``==``/``!=`` with a shape or a tuple or list display on a side, and ``in``/``not in``
of a shape or with such a display on the right, -> ``ag__.eq(a, b)`` (``ne``, ``in_``,
``not_in``): tuples holding sizes known only at run time (``x.shape == (n, 3)``) compare into a
staged bool, where Python's tuple comparison would ask each item for a Python bool. Another
single comparison stays as it is.
Operands that would change meaning inside a lambda (see ``conditional_expressions.lambda_safe``)
leave their whole expression as written, as do expressions evaluated in a class body.
Requires nothing.
"""

from __future__ import annotations

import gast

from autostage.converters.conditional_expressions import lambda_safe, visit_class
from autostage.pyct import anno, templates, transformer

_BOOL_OPS = {gast.And: "and_", gast.Or: "or_"}
_COMPARISONS = {
    gast.Lt: "<", gast.LtE: "<=", gast.Gt: ">", gast.GtE: ">=", gast.Eq: "==", gast.NotEq: "!=",
    gast.In: "in", gast.NotIn: "not in", gast.Is: "is", gast.IsNot: "is not",
}


class LogicalTransformer(transformer.Base):
    """Replaces boolean operators and comparison chains by ``ag__`` operators."""

    visit_ClassDef = visit_class

    def visit_UnaryOp(self, node: gast.UnaryOp) -> gast.AST:
        node = self.generic_visit(node)
        if not isinstance(node.op, gast.Not):
            return node
        return templates.replace_as_expression("ag__.not_(operand)", operand=node.operand)

    def visit_BoolOp(self, node: gast.BoolOp) -> gast.AST:
        node = self.generic_visit(node)
        if not all(lambda_safe(v) for v in node.values[1:]):
            # (`i < n and (v := x[i]) > 0`: as written; a staged operand tested is an error)
            construct = "`and`" if isinstance(node.op, gast.And) else "`or`"
            node.values[:-1] = [_python_operand(v, construct) for v in node.values[:-1]]
            return node
        # a test's `and`/`or` (its value only tested for truth): its truth, a bool, so that
        # a staged `if a[i] and b[j] < 0:` does not need one type for both operands
        test = anno.getanno(node, anno.Basic.TRUTH_TEST, False)
        op = _BOOL_OPS[type(node.op)] + ("test" if test else "")
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = templates.replace_as_expression(
                "ag__.op(a, lambda: b)", op=op, a=value, b=result)
        return result

    def visit_Compare(self, node: gast.Compare) -> gast.AST:
        node = self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(node.ops[0], gast.Is | gast.IsNot) and not all(
                _is_none(side) for side in (node.left, node.comparators[0])):
            return templates.replace_as_expression(
                f"ag__.{'is_' if isinstance(node.ops[0], gast.Is) else 'is_not'}(a, b)",
                a=node.left, b=node.comparators[0])
        if len(node.ops) == 1 and _sequence_test(node.ops[0], node.left, node.comparators[0]):
            return templates.replace_as_expression(
                f"ag__.{_SEQUENCE_TESTS[type(node.ops[0])]}(a, b)", a=node.left,
                b=node.comparators[0])
        if len(node.ops) < 2 or not all(lambda_safe(c) for c in node.comparators):
            return node
        args = [node.left]
        for op, operand in zip(node.ops, node.comparators, strict=True):
            args.append(gast.Constant(_COMPARISONS[type(op)], None))
            args.append(templates.replace_as_expression("lambda: operand", operand=operand))
        return templates.replace_as_expression("ag__.compare_chain(args)", args=args)


_SEQUENCE_TESTS = {gast.Eq: "eq", gast.NotEq: "ne", gast.In: "in_", gast.NotIn: "not_in"}


def _sequence_test(op: gast.cmpop, left: gast.expr, right: gast.expr) -> bool:
    """Whether a comparison may be of sequences holding staged sizes: ``==``/``!=`` with a
    shape or a tuple or list display on a side, ``in``/``not in`` of a shape or of anything but
    a string, dict or set display (a range with a staged bound: its ``__contains__`` would be
    asked for a Python bool)."""
    if isinstance(op, gast.Eq | gast.NotEq):
        return any(_shape(side) or isinstance(side, gast.Tuple | gast.List)
                   for side in (left, right))
    if isinstance(op, gast.In | gast.NotIn):  # (a name may hold a range with a staged bound)
        return _shape(left) or not isinstance(right, gast.Constant | gast.Dict | gast.Set)
    return False


def _shape(node: gast.expr) -> bool:
    """``x.shape``, a subscript of it, or ``np.shape(x)``."""
    while isinstance(node, gast.Subscript):
        node = node.value
    if isinstance(node, gast.Call):
        node = node.func
    return isinstance(node, gast.Attribute) and node.attr == "shape"


def _is_none(node: gast.AST) -> bool:
    return isinstance(node, gast.Constant) and node.value is None


def transform(node: gast.AST, ctx: transformer.Context) -> gast.AST:
    """Rewrites the logical expressions and comparison chains in ``node``."""
    return LogicalTransformer(ctx).visit(node)


def _python_operand(value: gast.AST, construct: str) -> gast.AST:
    return templates.replace_as_expression(
        "ag__.python_operand(value, construct)", value=value,
        construct=gast.Constant(value=construct, kind=None))
