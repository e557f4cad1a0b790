"""Merging what the two branches of a staged ``if`` give a variable into one ``cond`` result.

Each branch was traced into its own region; for every state variable the two Python objects it
ended with are combined: equal Python values stay Python (nothing is carried); tensors must agree
in dtype and rank (unknown dimensions may differ: ``types.join``); a Python number meeting a
tensor becomes a constant of the tensor's dtype under NumPy 2's weak-scalar rule; two different
Python numbers of one type become tensors of their default dtype; a variable unassigned on one
side gets an ``undef`` placeholder there and comes out as ``MaybeUnbound`` unless the facts prove
it assigned (``logic``); lists become tensor lists. Anything else is a ``StagingTypeError``
naming the variable and both types. Constants and placeholders are added at the end of the
branch's region.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np
from autostage.runtime import array_api, ir, tensor, tracing, value_info
from autostage.runtime.staging import (
    errors,
    list_elements,
    logic,
    python_paths,
    tensor_lists,
    text,
    values,
)
from autostage.runtime.staging.tensor_lists import TensorList
from autostage.runtime.tensor import Tensor
from autostage.runtime.types import ListType, join


@dataclass
class Merged:
    """One variable's yields in each region and how to rebuild it from the cond's results."""

    yields: tuple[list[ir.Value], list[ir.Value]]
    build: Callable[[Iterator[ir.Value]], object]


def _kind(x: object) -> str:
    if isinstance(x, values.MaybeUnbound) and isinstance(x.type, ListType):
        return "list"
    if isinstance(x, (Tensor, values.MaybeUnbound, np.ndarray)):
        return "tensor"
    if isinstance(x, (TensorList, list)):
        return "list"
    if values.is_unset(x):
        return "unset"
    if values.is_number(x):
        return "number"
    return "python"


def type_name(x: object) -> str:
    if isinstance(x, (Tensor, values.MaybeUnbound, TensorList)):
        return values.type_text(x.type or "an empty list")
    if values.is_unset(x):
        return "unassigned" if x is not None else "None"
    if isinstance(x, text.Text):
        return text.DESCRIPTION
    return f"Python {type(x).__name__} {x!r}"


def mismatch(what: str, a: object, b: object, where: str, hint: str = "") -> errors.StagingError:
    if what == errors.describe("retval_") and (a is None or b is None):
        # (None: no return on that path yet; the function goes on, its type is not known here)
        returned = type_name(b if a is None else a)
        return errors.StagingTypeError(
            f"the function returns {returned} in one branch of the staged {where}{errors.at()} "
            "and goes on past it in the other, where what it returns later is not known yet: "
            "staged code needs the type of a return value where the branches meet. Return once, "
            f"at the end (put the rest of the function in the other branch of the {where}, or "
            "assign the results to variables and return them after it)")
    return errors.StagingTypeError(
        f"{what} is {type_name(a)} in one branch and {type_name(b)} in the other of the staged "
        f"{where}{errors.at()}; both branches must give it the same dtype and rank"
        + (f" ({hint})" if hint else ""))


def merge(name: str, a: object, b: object, regions: tuple[ir.Region, ir.Region],
          pred: logic.Formula, where: str = "if") -> Merged:
    """Combines a variable's values at the end of the then/else regions (see module doc)."""
    what = errors.describe(name)
    ka, kb = _kind(a), _kind(b)
    if isinstance(a, tuple) and a is b and ka == "python":
        return Merged(([], []), lambda results: a)  # e.g. a named tuple neither branch changed
    if isinstance(a, tuple) and values.is_unset(b):
        b = (b,) * len(a)  # ``return x, y`` on one path only: each item is assigned there
    elif isinstance(b, tuple) and values.is_unset(a):
        a = (a,) * len(b)
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return _merge_tuple(name, a, b, regions, pred, where)
    if a is not b and not (values.is_unset(a) or values.is_unset(b)
                           or name.startswith("retval_")):  # (the function's locals end there)
        _refuse_alias_on_some_paths(name, a, b, where)
    if ka in ("python", "number", "unset") and kb == ka and values.same_python_value(a, b):
        return Merged(([], []), lambda results: a)
    if ka == kb == "unset":
        return Merged(([], []), lambda results: b if a is None else a)
    if "list" in (ka, kb):
        return _merge_lists(name, a, b, regions, pred, where)
    if ka == kb == "python" and type(a) is type(b) and not isinstance(a, (str, bytes)):
        kind = type(a).__name__
        raise errors.StagingTypeError(
            f"{what} is a different Python {kind} at the end of each branch of the staged "
            f"{where}{errors.at()}; a staged {where} merges arrays, numbers, lists and tuples "
            f"of them, not {kind}s: keep the arrays in variables or a tuple across the {where}")
    if "python" in (ka, kb) or (ka == kb == "number" and not _same_number_type(a, b)):
        raise mismatch(what, a, b, where, "Python values that differ between the branches "
                       "of a staged if must be numbers of the same type")
    return _merge_tensors(name, a, b, regions, pred, where)


def _refuse_alias_on_some_paths(name: str, a: object, b: object, where: str) -> None:
    """Refuses a variable that is, on one path only, a NumPy array made while tracing or a list
    another name also holds (``b = a if c else np.ones(2)``): Python's variable is then that
    object on that path, and a write through either name shows in both, where the staged
    result is a value of its own."""
    for x in (a, b):
        if type(x) is np.ndarray or isinstance(x, (list, TensorList)):
            others = _other_names(x, name)
            if others:
                what = "list" if isinstance(x, (list, TensorList)) else "array"
                copy = f"{others[0]}[:]" if what == "list" else f"{others[0]}.copy()"
                shown = errors.describe(name) if name.isidentifier() else name
                raise errors.StagingError(
                    f"{shown} is the {what} `{others[0]}` (or a view of it) on one path of the "
                    f"staged {where}{errors.at()} and another value on the other: Python's "
                    f"variable is then `{others[0]}` itself, a change through either name "
                    "showing in both, which a staged value of its own cannot be; copy it where "
                    f"a separate {what} is meant (`{copy}`)")


def _other_names(x: object, name: str) -> list[str]:
    """The variables of the user's frames other than ``name`` that hold ``x``."""
    return tracing.user_names(lambda obj: obj is x or (
        type(obj) is type(x) is np.ndarray and np.may_share_memory(obj, x)), name)


def _same_number_type(a: object, b: object) -> bool:
    if isinstance(a, np.generic) or isinstance(b, np.generic):
        return values.default_dtype(a) == values.default_dtype(b)
    return type(a) is type(b)


def _merge_tuple(name, a, b, regions, pred, where) -> Merged:
    parts = [merge(f"{name}[{i}]", x, y, regions, pred, where)
             for i, (x, y) in enumerate(zip(a, b, strict=True))]
    yields = ([v for p in parts for v in p.yields[0]], [v for p in parts for v in p.yields[1]])
    return Merged(yields, lambda results: tuple(p.build(results) for p in parts))


def _tensor_type(x: object) -> object:
    if isinstance(x, np.ndarray):
        return values.array_type(x)
    return x.type if isinstance(x, (Tensor, values.MaybeUnbound)) else None


def _target_type(what: str, a: object, b: object, where: str) -> object:
    ta, tb = _tensor_type(a), _tensor_type(b)
    if ta is not None and tb is not None:
        joined = join(ta, tb) or _holding(ta, tb) or _holding(tb, ta)
        if joined is None:
            raise mismatch(what, a, b, where, "cast one of them, e.g. with .astype()")
        return joined
    return ta if ta is not None else tb


def _value_in(region: ir.Region, x: object, type_: object, what: str) -> tuple[ir.Value, object]:
    """The value region yields for ``x``, and its definedness formula."""
    if isinstance(x, Tensor):
        return x.value, logic.TRUE
    if isinstance(x, values.MaybeUnbound):
        return x.value, x.defined
    with values.in_region(region):
        if isinstance(x, np.ndarray):
            return tensor.constant(x).value, logic.TRUE
        if values.is_unset(x):
            return values.placeholder(type_), logic.FALSE
        if type_ is None:
            return values.to_tensor(x).value, logic.TRUE
        return values.weak_constant(x, type_.dtype, what).value, logic.TRUE


def _bool_fact(x: object) -> logic.Formula:
    if isinstance(x, Tensor):
        return logic.of(x.value)
    if isinstance(x, (bool, np.bool_)):
        return logic.const(bool(x))
    return logic.FALSE  # a placeholder: never read, any fact will do


def _holding(weak: object, other: object) -> object:
    """The type that holds a Python number (a weak 0-d value: ``retval_`` of an early ``return
    0.0``) where the other path gives a 0-d NumPy value of another dtype of its kind (float32),
    or None: where it is the Python number, its uses raise unless they give the same result
    (``python_paths``)."""
    if weak.weak and not other.weak and weak.ndim == other.ndim == 0 and (
            np.can_cast(weak.dtype, other.dtype, "same_kind")):
        return other
    return None


def _held_as(regions: tuple, vs: tuple) -> tuple:
    """The values of a merge, a Python number cast to the dtype that holds it (``_holding``)."""
    types = [v.type for v in vs]
    for i in (0, 1):
        if types[i].dtype != types[1 - i].dtype and _holding(types[i], types[1 - i]) is not None:
            with values.in_region(regions[i]):
                vs = tuple(array_api.astype(Tensor(v), types[1 - i].dtype).value if k == i else v
                           for k, v in enumerate(vs))
    return vs


def _alias(x: object) -> ir.Value | None:
    if isinstance(x, (Tensor, values.MaybeUnbound)):
        return values.alias_base(x.value)
    return None


def _weak_kind(a: object, b: object) -> bool:
    """Whether the merge of ``a`` and ``b`` stands for a Python number: each assigned one is
    one (a Python number or a weak value) and all are of one kind (``1`` or ``n`` on both paths
    is an int; ``1`` on one and ``2.5`` on the other is not one type in Python, so the merged
    value is a NumPy float64, as when a path gives a NumPy value)."""
    kinds = {values.python_kind(x) for x in (a, b) if not values.is_unset(x)}
    return None not in kinds and len(kinds) <= 1


def _merge_tensors(name, a, b, regions, pred, where) -> Merged:
    what = errors.describe(name)
    type_ = _target_type(what, a, b, where)
    if type_ is None and values.is_unset(a):  # a number on the other path gives the type
        vb, db = _value_in(regions[1], b, None, what)
        va, da = _value_in(regions[0], a, vb.type, what)
    else:
        va, da = _value_in(regions[0], a, type_, what)
        vb, db = _value_in(regions[1], b, type_ or va.type, what)
    va, vb = _held_as(regions, (va, vb))
    joined = join(va.type, vb.type)
    if joined is None:  # e.g. an array on one path, a Python number on the other
        raise mismatch(what, a, b, where)
    weak = _weak_kind(a, b)
    merged_type = replace(joined, weak=weak and joined.is_scalar)
    roles = python_paths.roles([a, b], merged_type)
    if python_paths.OTHER in roles:
        tracing.mark_staged_only(f"a staged if gives {what} a Python number on one path and a "
                                 "value of another type on the other")
    kind = values.join_kinds(*(values.kind_0d(x) for x in (a, b) if not values.is_unset(x)))
    # a 0-d ndarray on one path and a NumPy scalar on the other: which, a flag says at run time
    arrays = [values.array_flag(x) for x in (a, b)]
    array = kind == values.MIXED and None not in arrays
    ya, yb = [va], [vb]
    for k, (region, x, yields) in enumerate(zip(regions, (a, b), (ya, yb), strict=True)):
        with values.in_region(region):
            yields += [python_paths.flag_value(python_paths.flag(x, r, merged_type))
                       for r in roles]
            yields += [python_paths.flag_value(arrays[k])] if array else []
    defined = logic.ite(pred, da, db)
    fact = logic.ite(pred, _bool_fact(a), _bool_fact(b))
    loc = errors.location()
    alias = _alias(a) or _alias(b)
    none = values.is_none(a) or values.is_none(b)

    def build(results: Iterator[ir.Value]) -> object:
        value = next(results)
        if weak:
            values.mark_weak(value)
            python_paths.mark_merged_number(value, [a, b])
        python_paths.settle(value, {r: next(results) for r in roles}, what, where,
                            python_paths.kind_of([a, b], merged_type),
                            python=python_paths.one_known_number([a, b], merged_type))
        if alias is not None:  # an argument or a view on one path: writes must stay errors
            value_info.mark_view(value, alias)
        values.mark_kind(value, kind, what, where, returned=array)  # (on every path, or not)
        if array:
            value_info.mark_array_where(value, next(results))
        if value.type.dtype == np.bool_ and value.type.is_scalar:
            logic.record(value, fact)
        if logic.equivalent(defined, logic.TRUE):
            return Tensor(value)
        return values.MaybeUnbound(value, defined, name, loc, none)

    return Merged((ya, yb), build)


def _as_list(x: object, what: str, region: ir.Region) -> tuple[TensorList | None, logic.Formula]:
    """``x`` as a tensor list in ``region``, and when it is assigned (an unassigned variable:
    an empty list that is never read)."""
    if isinstance(x, values.MaybeUnbound):
        return (TensorList(x.value) if isinstance(x.type, ListType) else None), x.defined
    if isinstance(x, TensorList):
        return x, logic.TRUE
    if values.is_unset(x):
        return TensorList(), logic.FALSE
    if isinstance(x, list):
        with values.in_region(region):
            return tensor_lists.from_python(x, what), logic.TRUE
    return None, logic.FALSE


def _merge_lists(name, a, b, regions, pred, where) -> Merged:
    """Lists: tensor lists of the joined element type; a variable that is a list on one path and
    unassigned on the other is a maybe-assigned tensor list (``MaybeUnbound``)."""
    what = errors.describe(name)
    (la, da), (lb, db) = _as_list(a, what, regions[0]), _as_list(b, what, regions[1])
    if la is None or lb is None:
        raise mismatch(what, a, b, where)
    defined = logic.ite(pred, da, db)
    if la.element is None and lb.element is None:
        if not logic.equivalent(defined, logic.TRUE):
            raise mismatch(what, a, b, where, "an empty list on one path: its element type is "
                           "not known; assign the variable before the if")
        return Merged(([], []), lambda results: TensorList())
    element = la.element if lb.element is None else lb.element
    if la.element is not None and lb.element is not None:
        element = join(la.element, lb.element)
        if element is None:
            raise mismatch(what, la, lb, where)
    with values.in_region(regions[0]):
        va = la.materialize(element)
    with values.in_region(regions[1]):
        vb = lb.materialize(element)
    loc = errors.location()
    elements = la.elements.add(lb.elements).named(name)

    def build(results: Iterator[ir.Value]) -> object:
        value = next(results)
        list_elements.record(value, elements)
        if logic.equivalent(defined, logic.TRUE):
            return TensorList(value)
        return values.MaybeUnbound(value, defined, name, loc)

    return Merged(([va], [vb]), build)
