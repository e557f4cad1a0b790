"""Lazy ``and``/``or``, ``not``, chained comparisons and ``a if c else b`` as functions.

Converted code passes the operands that Python might not evaluate as zero-argument functions, so
laziness and evaluation order are exactly Python's: ``and_``/``or_`` call the right operand only
when Python would and return an operand (not a bool); ``compare_chain`` evaluates each operand at
most once and stops at the first false comparison, returning its value. A staged operand deciding
the outcome goes to the runtime's hook of the same name.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

from autostage.runtime import Staged, captures, holds_staged, stage_operator, tracing
from autostage.runtime.operator_hooks import Standin
from autostage.runtime.tensor import StagingTypeError

_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": lambda a, b: eq(a, b),
    "!=": lambda a, b: ne(a, b),
    "in": lambda a, b: in_(a, b),
    "not in": lambda a, b: not_in(a, b),
    "is": lambda a, b: is_(a, b),
    "is not": lambda a, b: is_not(a, b),
}


def python_operand(value: Any, construct: str) -> Any:
    """``value``, an operand Python tests for truth in ``construct`` (``and``, ``or``, a
    conditional expression) left as written: another operand assigns with ``:=``, which the
    lambdas of a staged ``and``/``or`` would bind in the lambda's scope. A staged value cannot
    be tested there: a clear error instead of Python's ``bool()`` of it."""
    if isinstance(value, Staged):
        raise StagingTypeError(
            f"a staged value is tested by {construct}{tracing.at()} whose other operand "
            "assigns with `:=`, "
            "which autostage does not stage: assign in a statement of its own first "
            "(`v = x[i]`, then `... and v > 0`)")
    return value


def is_(a: Any, b: Any) -> Any:
    """``a is b`` (converted but ``is None``): of a staged value and a bool singleton, whether
    it stands for that very bool (``bool(t > 0) is True``); of a stand-in of the user's object
    while tracing (``act is Act.RELU``), whether that object is the other (guarded); Python's
    identity otherwise."""
    if isinstance(a, Staged) or isinstance(b, Staged):
        return stage_operator("is_", a, b)
    if isinstance(a, Standin) or isinstance(b, Standin):
        return captures.identity(a, b)
    return a is b


def is_not(a: Any, b: Any) -> Any:
    """``a is not b``: ``not (a is b)``."""
    return not_(is_(a, b)) if isinstance(a, Staged | Standin) or isinstance(
        b, Staged | Standin) else a is not b


def _sequences(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are tuples or lists one of which holds a staged value (sizes
    known only at run time: ``x.shape == (n, 3)``), which Python's comparison would ask for a
    Python bool."""
    return isinstance(a, tuple | list) and isinstance(b, tuple | list) and (
        holds_staged(a) or holds_staged(b))


def eq(a: Any, b: Any) -> Any:
    """``a == b`` where a side is a shape or a tuple or list display (converters/
    logical_expressions.py): sequences holding staged sizes compare into a staged bool."""
    if _sequences(a, b):
        return stage_operator("sequence_eq", a, b)
    return a == b


def ne(a: Any, b: Any) -> Any:
    """``a != b`` (as ``eq``)."""
    if _sequences(a, b):
        return stage_operator("sequence_ne", a, b)
    return a != b


def _membership(a: Any, b: Any) -> bool:
    return isinstance(b, tuple | list) and (isinstance(a, Staged) or _sequences(a, b)) or (
        isinstance(b, Staged) and hasattr(b, "staged_contains"))


def in_(a: Any, b: Any) -> Any:
    """``a in b`` of a shape or a staged value in a tuple or list display (``x.shape in
    [(3,), (4,)]``, ``x.shape[0] in (1, 3)``): the ``or`` of ``a == item``."""
    if _membership(a, b):
        return stage_operator("sequence_in", a, b)
    return a in b


def not_in(a: Any, b: Any) -> Any:
    """``a not in b`` (as ``in_``)."""
    if _membership(a, b):
        return stage_operator("sequence_not_in", a, b)
    return a not in b


def and_(a: Any, b_fn: Callable[[], Any]) -> Any:
    """``a and b``, with ``b`` computed by ``b_fn()`` only if ``a`` is true."""
    if isinstance(a, Staged):
        return stage_operator("and_", a, b_fn)
    return b_fn() if a else a


def or_(a: Any, b_fn: Callable[[], Any]) -> Any:
    """``a or b``, with ``b`` computed by ``b_fn()`` only if ``a`` is false."""
    if isinstance(a, Staged):
        return stage_operator("or_", a, b_fn)
    return a if a else b_fn()


def and_test(a: Any, b_fn: Callable[[], Any]) -> Any:
    """The truth of ``a and b`` where only its truth is used (the test of an ``if``, ``while``
    or ternary): ``a``'s truth, then, if true, ``b``'s, each taken once as Python's test takes
    them. A bool (staged: a staged bool), so the operands need no common type."""
    if isinstance(a, Staged):
        return stage_operator("and_test", a, lambda: truth(b_fn()))
    return truth(b_fn()) if a else False


def or_test(a: Any, b_fn: Callable[[], Any]) -> Any:
    """The truth of ``a or b`` where only its truth is used (see ``and_test``)."""
    if isinstance(a, Staged):
        return stage_operator("or_test", a, lambda: truth(b_fn()))
    return True if a else truth(b_fn())


def truth(a: Any) -> Any:
    """``bool(a)``; of a staged value, its staged truth."""
    if isinstance(a, Staged):
        return stage_operator("truth", a)
    return bool(a)


def not_(a: Any) -> Any:
    """``not a``."""
    if isinstance(a, Staged):
        return stage_operator("not_", a)
    return not a


def if_exp(cond: Any, if_true: Callable[[], Any], if_false: Callable[[], Any]) -> Any:
    """``if_true() if cond else if_false()``: only the chosen branch is evaluated."""
    if isinstance(cond, Staged):
        return stage_operator("if_exp", cond, if_true, if_false)
    return if_true() if cond else if_false()


def if_exp_branch(cond: Any, if_true: Callable[[], Any],
                  if_false: Callable[[], Any]) -> Callable[[], Any]:
    """The branch of ``if_true() if cond else if_false()`` to call: ``if_exp_branch(c, t, f)()``
    is ``if_exp(c, t, f)``, but on a Python condition the caller runs the branch itself, which
    saves a Python frame per ternary (deep recursion stays near Python's depth)."""
    if cond is True:  # the usual cases first: a comparison's result
        return if_true
    if cond is False:
        return if_false
    if isinstance(cond, Staged):
        return lambda: if_exp(cond, if_true, if_false)
    return if_true if cond else if_false


def compare_chain(a: Any, *ops_and_fns: Any) -> Any:
    """``a op1 b op2 c ...`` called as ``compare_chain(a, op1, b_fn, op2, c_fn, ...)``.

    Ops are the strings '<', '<=', '>', '>=', '==', '!=', 'in', 'not in', 'is', 'is not'. As
    in Python, it is ``(a op1 b) and (b op2 c) ...`` with each operand evaluated at most once; a
    staged intermediate result continues as ``and_(result, <rest of the chain>)``.
    """
    last = len(ops_and_fns) - 2
    left = a
    for i in range(0, last + 1, 2):
        right = ops_and_fns[i + 1]()
        result = _COMPARE[ops_and_fns[i]](left, right)
        if i == last:
            return result
        if isinstance(result, Staged):
            return and_(result, functools.partial(compare_chain, right, *ops_and_fns[i + 2:]))
        if not result:
            return result
        left = right
    raise TypeError("compare_chain() needs at least one (op, operand function) pair")
