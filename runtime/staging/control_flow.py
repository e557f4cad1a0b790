"""Staging hooks of ``if_stmt``, ``if_exp``, ``and_``, ``or_`` and ``not_`` on staged values.

A staged ``if`` traces both branches, each from the same inputs, into the two regions of a
``cond`` op and merges the state (``merge``). ``a if c else b`` is the same with one value;
``a and b`` / ``a or b`` are ``cond``s too (``b`` computed only on the path Python would compute
it, so its staged side effects keep Python's laziness; results are operands, not bools, as in
Python). Python side effects of the branches run at trace time, for both branches: a Python
list, dict or set captured by a branch function and changed by it is a
``PythonSideEffectError`` (other side effects, such as attributes of objects, are not detected).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from autostage.runtime import ir, tracing
from autostage.runtime.operator_hooks import Staged, register_operator_hook
from autostage.runtime.staging import (
    errors,
    logic,
    merge,
    raises,
    side_effects,
    tensor_lists,
    values,
)
from autostage.runtime.staging.tensor_lists import TensorList
from autostage.runtime.tensor import Tensor
from autostage.runtime.types import ListType, join


def predicate(x: object, what: str = "the condition") -> Tensor:
    """``bool(x)`` of a staged value as a ``bool[]`` tensor (Python's truth value)."""
    if isinstance(x, values.MaybeUnbound):
        raise x.error()
    if isinstance(x, TensorList):
        return predicate(tensor_lists.length(x) > 0, what)
    if isinstance(x, Staged) and not isinstance(x, Tensor):
        raise errors.StagingTypeError(
            f"{what}{errors.at()} is a staged {type(x).__name__}, which has no truth value")
    if not isinstance(x, Tensor):
        return values.to_tensor(bool(x))
    if x.ndim != 0:
        raise errors.StagingValueError(
            f"{what}{errors.at()} is a {x.type} tensor; the truth value of an array is "
            "ambiguous unless it has one element: use np.any(...), np.all(...) or a scalar")
    if x.dtype == np.bool_:
        return x
    result = x != 0
    return result


def _join_types(a: object, b: object) -> object:
    if isinstance(a, ListType):
        return ListType(join(a.element, b.element))
    return join(a, b)


def emit_cond(pred: Tensor, regions: tuple[ir.Region, ir.Region],
              merged: Sequence[merge.Merged]) -> tuple:
    """Emits the ``cond`` with the merged yields and rebuilds each variable from its results."""
    regions[0].results = tuple(v for m in merged for v in m.yields[0])
    regions[1].results = tuple(v for m in merged for v in m.yields[1])
    types = tuple(_join_types(a.type, b.type)
                  for a, b in zip(regions[0].results, regions[1].results, strict=True))
    results = iter(tracing.emit("cond", (pred.value,), {"result_types": types}, regions))
    return tuple(m.build(results) for m in merged)


def _state_names(body: Callable, orelse: Callable | None, n: int) -> tuple[str, ...]:
    names = errors.param_names(body) or errors.param_names(orelse)
    if len(names) != n:
        names = errors.output_names(body, n) or errors.output_names(orelse, n) or ()
    return names if len(names) == n else tuple(f"state[{i}]" for i in range(n))


def prepare_state(names: Sequence[str], state: Sequence[object]) -> tuple:
    """State as staged control flow carries it: Python lists become tensor lists."""
    return tuple(tensor_lists.from_python(x, name) if isinstance(x, list) else x
                 for name, x in zip(names, state, strict=True))


def stage_if(cond: object, body: Callable, orelse: Callable | None, state: tuple = ()
             ) -> tuple | None:
    """Hook of ``if_stmt``: a ``cond`` op whose results are the new state."""
    pred = predicate(cond)
    state = prepare_state(_state_names(body, orelse, len(state)), state)
    watch = side_effects.Watch((body, orelse), "if")
    with tracing.region() as then_region, watch.recording():
        out_then, raised_then = raises.trace_branch(lambda: body(*state))
    watch.check()
    with tracing.region() as else_region, watch.recording():
        out_else, raised_else = raises.trace_branch(
            lambda: state if orelse is None else orelse(*state))
    watch.check()
    if raised_then and raised_else:
        raise errors.StagingValueError(
            f"both branches of the staged if{errors.at()} raise an exception; autostage cannot "
            "stage an if that always raises: raise after the if instead")
    if raised_then:
        out_then = raises.placeholder(out_else, then_region)
    elif raised_else:
        out_else = raises.placeholder(out_then, else_region)
    if out_then is None and (orelse is None or out_else is None):
        emit_cond(pred, (then_region, else_region), ())
        return None
    out_then = state if out_then is None else out_then
    out_else = state if out_else is None else out_else
    regions = (then_region, else_region)
    if len(out_then) != len(out_else):
        raise errors.StagingValueError(f"the branches of the staged if{errors.at()} return "
                                       f"{len(out_then)} and {len(out_else)} values")
    names = _state_names(body, orelse, len(out_then))
    p = logic.of(pred.value)
    merged = [merge.merge(name, a, b, regions, p)
              for name, a, b in zip(names, out_then, out_else, strict=True)]
    return emit_cond(pred, regions, merged)


def _select(pred: Tensor, if_true: Callable[[], object], if_false: Callable[[], object],
            name: str, where: str) -> object:
    """One value computed by ``if_true`` or ``if_false`` depending on ``pred`` (a cond)."""
    with tracing.region() as then_region:
        a = if_true()
    with tracing.region() as else_region:
        b = if_false()
    regions = (then_region, else_region)
    merged = merge.merge(name, a, b, regions, logic.of(pred.value), where)
    (result,) = emit_cond(pred, regions, [merged])
    return result


def stage_if_exp(cond: object, if_true: Callable[[], object], if_false: Callable[[], object]
                 ) -> object:
    """Hook of ``if_exp``: ``a if c else b`` as a cond."""
    return _select(predicate(cond), if_true, if_false, "the value of 'a if c else b'",
                   "conditional expression")


def stage_and(a: object, b_fn: Callable[[], object]) -> object:
    """Hook of ``and_``: ``b if a else a``, computing ``b`` only where ``a`` is true."""
    result = _select(predicate(a, "the left operand of 'and'"), b_fn, lambda: a,
                     "the value of 'a and b'", "'and'")
    return result


def stage_or(a: object, b_fn: Callable[[], object]) -> object:
    """Hook of ``or_``: ``a if a else b``, computing ``b`` only where ``a`` is false."""
    return _select(predicate(a, "the left operand of 'or'"), lambda: a, b_fn,
                   "the value of 'a or b'", "'or'")


def stage_not(a: object) -> Tensor:
    """Hook of ``not_``: a ``bool[]`` (Python's ``not`` always gives a bool)."""
    pred = predicate(a, "the operand of 'not'")
    result = ~pred
    logic.record(result.value, logic.not_(logic.of(pred.value)))
    return result


register_operator_hook("if_stmt", stage_if)
register_operator_hook("if_exp", stage_if_exp)
register_operator_hook("and_", stage_and)
register_operator_hook("or_", stage_or)
register_operator_hook("not_", stage_not)
