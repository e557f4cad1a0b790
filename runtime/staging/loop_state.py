"""How each state variable of a staged loop travels through the ``while`` op: the loop slots.

A slot is a Python constant (the body leaves it unchanged: not carried), a carried tensor or a
carried tensor list. Slots start from the initial values (Python numbers and unassigned
variables first as constants) and are refined from what one traced body gives back: a Python
number the body changes becomes a tensor (of the dtype NumPy 2 gives it mixed with the body's
tensors), an unknown dimension that differs widens (``types.join``), a pending list gets the
element type of its first append. A dtype or rank change is a ``StagingTypeError`` naming the
variable and both types. ``refine`` returns whether anything changed, so that the loop is traced
again (a small fixpoint).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from autostage.runtime.staging import errors, list_elements, tensor_lists, text, values
from autostage.runtime.staging.tensor_lists import TensorList
from autostage.runtime.tensor import Tensor
from autostage.runtime.types import DTYPES, ListType, TensorType, join, scalar


@dataclass(eq=False)
class Slot:
    """One loop variable: ``type`` None for a Python constant; ``maybe``: unassigned at entry
    (or maybe so), carried with an ``undef`` placeholder."""

    name: str
    init: object
    type: TensorType | ListType | None = None
    pending_list: bool = False
    maybe: bool = False
    weak: bool = False  # stands for a Python scalar on every path (``values.is_weak``)
    alias: object = None  # the ir.Value it may be a view of (an argument...): ``value_info``
    # a list's: whether its elements are Python numbers or NumPy values, on every path
    elements: list_elements.Elements = list_elements.EMPTY
    # a 0-d variable's kind on entry to the body: a 0-d ndarray, a NumPy scalar, or mixed (it
    # starts as one and the body makes it the other: ``values.kind_0d``)
    kind: str | None = None

    @property
    def carried(self) -> bool:
        return self.type is not None


def initial_slot(name: str, x: object) -> Slot:
    slot = _initial_slot(name, x)
    slot.kind = values.kind_0d(x)
    return slot


def _initial_slot(name: str, x: object) -> Slot:
    if isinstance(x, values.MaybeUnbound):
        return Slot(name, x, x.type, maybe=True, weak=values.is_weak(x),
                    alias=values.alias_base(x.value), elements=tensor_lists.elements_of(x))
    if isinstance(x, Tensor):
        return Slot(name, x, x.type, weak=values.is_weak(x),
                    alias=values.alias_base(x.value))
    if isinstance(x, TensorList):
        return Slot(name, x, x.type, pending_list=x.type is None, elements=x.elements)
    return Slot(name, x, elements=tensor_lists.elements_of(x))


def changes(slot: Slot, old: object, new: object, where: str) -> errors.StagingError:
    what = "the return value" if slot.name.startswith("retval_") else (
        f"loop variable {slot.name!r}")
    fix = ("a return inside a staged loop must give a staged value; to return values known "
           "at trace time (constants), set a flag and break, and return them after the loop "
           "(`if found: return ...`)" if slot.name.startswith("retval_") else
           "cast it before the loop so that it keeps one dtype and rank")
    return errors.StagingTypeError(
        f"{what} changes from {values.type_text(old)} to {values.type_text(new)} in the "
        f"{where}{errors.at()}; {fix}")


def _type_of(out: object) -> object:
    if isinstance(out, (Tensor, values.MaybeUnbound)):
        return out.type
    if isinstance(out, TensorList):
        return out.type
    return None


def _refine_constant(slot: Slot, out: object, where: str) -> bool:
    init = slot.init
    if values.same_python_value(init, out) or (values.is_unset(init) and values.is_unset(out)):
        return False
    if isinstance(out, (TensorList, list)) or tensor_lists.list_type(out) is not None:
        if not values.is_unset(init):
            raise changes(slot, type(init).__name__, "a tensor list", where)
        list_type = tensor_lists.list_type(out)
        slot.type, slot.pending_list, slot.maybe = list_type, list_type is None, True
        return True
    out_type = _type_of(out)
    if isinstance(init, np.ndarray) and init.dtype not in DTYPES:
        raise errors.StagingTypeError(
            f"{errors.describe(slot.name)} is a NumPy array of dtype {init.dtype} before the "
            f"{where}{errors.at()} and the body assigns it: a staged loop carries arrays of "
            "numbers and bools only (filterpy's KalmanFilter keeps its measurement `z` so); "
            "give it a value of such a dtype before the loop")
    if isinstance(init, np.ndarray):
        joined = join(values.array_type(init), out_type) if isinstance(out_type, TensorType) \
            else None
        if joined is None:
            raise changes(slot, values.array_type(init), _describe(out), where)
        slot.type = joined
        return True
    slot.weak = values.is_weak(out) and (values.is_unset(init) or values.is_weak(init))
    if values.is_unset(init):
        slot.maybe = True
        slot.type = out_type if out_type is not None else _number_type(slot, out, where)
        return True
    if not values.is_number(init):
        raise changes(slot, f"the Python value {init!r}", _describe(out), where)
    if out_type is None:
        slot.type = _number_type(slot, out, where)
        if type(out) is int and not -2**63 <= out < 2**63:  # (Python's exact int)
            raise errors.StagingTypeError(
                f"{errors.describe(slot.name)} becomes the Python int {out} in the {where}"
                f"{errors.at()}, which does not fit in int64: Python's ints are exact, staged "
                "Python ints are int64; keep the values within int64 or compute with floats")
        if values.default_dtype(out) != values.default_dtype(init):
            raise changes(slot, f"Python {type(init).__name__}", f"Python {type(out).__name__}",
                          where)
        return True
    if not isinstance(out_type, TensorType) or out_type.ndim != 0:
        raise changes(slot, f"Python {type(init).__name__}", out_type, where)
    values.weak_constant(init, out_type.dtype, f"loop variable {slot.name!r}")
    slot.type = out_type
    return True


def _number_type(slot: Slot, out: object, where: str) -> TensorType:
    if not values.is_number(out):
        raise changes(slot, _describe(slot.init), _describe(out), where)
    return scalar(values.default_dtype(out))


def _describe(x: object) -> str:
    if isinstance(x, text.Text):
        return text.DESCRIPTION
    t = _type_of(x)
    return str(t) if t is not None else f"the Python value {x!r}"


def refine_alias(slot: Slot, out: object) -> bool:
    """A carried variable the body sets to an argument or a view may be one after any
    iteration (and in the next one): the loop's values of it are views too (so a write into
    it is a clear error, not a lost change). True if the loop must be traced again."""
    if slot.alias is not None or not isinstance(out, (Tensor, values.MaybeUnbound)):
        return False
    slot.alias = values.alias_base(out.value)
    return slot.alias is not None


def refine_kind(slot: Slot, out: object) -> bool:
    """A 0-d variable that starts as a 0-d ndarray and that the body makes a NumPy scalar
    (``y = y + v``: ``y += v`` keeps it one), or the other way, is mixed after the loop and in
    the next iteration (``values.kind_0d``). True if the loop must be traced again (not for a
    NumPy scalar where the kind was not known: the body's variables were not marked)."""
    kind = values.join_kinds(slot.kind, values.kind_0d(out))
    changed = kind != slot.kind and kind != values.SCALAR
    slot.kind = kind
    return changed


def refine(slot: Slot, out: object, where: str) -> bool:
    """Updates ``slot`` for the body's result ``out``; True if the loop must be traced again."""
    if slot.weak and not values.is_unset(out) and not values.is_weak(out):
        slot.weak = False
        return True
    if slot.pending_list or isinstance(slot.type, ListType):
        return _refine_elements(slot, out) | _refine_list(slot, out, where)
    if not slot.carried:
        return _refine_elements(slot, out) | _refine_constant(slot, out, where)
    if values.is_unset(out):
        changed = not slot.maybe
        slot.maybe = True
        return changed
    out_type = _type_of(out)
    if out_type is None:
        if not values.is_number(out):
            raise changes(slot, slot.type, _describe(out), where)
        return False  # a Python number: checked against the dtype when the body yields it
    joined = join(slot.type, out_type) if isinstance(out_type, TensorType) else None
    if joined is None:
        raise changes(slot, slot.type, out_type, where)
    changed = joined != slot.type or (isinstance(out, values.MaybeUnbound) and not slot.maybe)
    slot.type = joined
    slot.maybe = slot.maybe or isinstance(out, values.MaybeUnbound)
    return changed


def _refine_elements(slot: Slot, out: object) -> bool:
    """A list slot holds Python numbers only if every list the body gives back does."""
    if not isinstance(out, (TensorList, list, values.MaybeUnbound)):
        return False
    elements = slot.elements.add(tensor_lists.elements_of(out))
    changed = elements is not slot.elements
    slot.elements = elements
    return changed


def _refine_list(slot: Slot, out: object, where: str) -> bool:
    """A list slot: the body gives a tensor list, a Python list (it assigns one: staged as a
    tensor list), a maybe-assigned list, or nothing (the variable was unassigned)."""
    maybe = (isinstance(out, values.MaybeUnbound) or values.is_unset(out)) and not slot.maybe
    slot.maybe = slot.maybe or maybe
    if values.is_unset(out):
        return maybe
    if not isinstance(out, (TensorList, list)) and tensor_lists.list_type(out) is None:
        raise changes(slot, slot.type or "a tensor list", _describe(out), where)
    out_type = tensor_lists.list_type(out)
    if out_type is None:
        return maybe
    if slot.pending_list:
        slot.type, slot.pending_list = out_type, False
        return True
    element = join(slot.type.element, out_type.element)
    if element is None:
        raise changes(slot, slot.type, out_type, where)
    changed = element != slot.type.element
    slot.type = ListType(element)
    return changed or maybe
