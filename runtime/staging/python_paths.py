"""Variables that are a Python number on some paths and a NumPy value on others.

Python's type of ``total`` after ``total = 0.0`` and a staged loop adding ``x[i]`` depends on
whether the loop ran: the Python float if not, a NumPy float64 if it did. A staged value has one
type, so such a variable carries run-time bools saying which it is: a merge yields each path's
(True where the path gives a Python number), a loop carries them as extra slots.

Where the Python number's own dtype is the variable's (a Python float and float64, an int and
int64: the *matching* kind) its value is exact on both paths, and it is marked
(``value_info.python_path``) so that Python's semantics follow the flag: ``python_numbers`` raises
ZeroDivisionError for ``total / n`` where the flag holds, ``function_outputs`` returns the Python
float there. A Python number of another kind (a Python float where the variable is float32, an
int where it is float64) is marked too (``value_info.other_path``): an op that gives the same
result either way uses it (``f32_array + total``: NumPy converts the Python float to float32
first), any other use (``total * 0.5``, returning it, printing it) raises a clear error at run
time where that flag holds, naming the variable, instead of computing a different value.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from autostage.runtime import array_api, dtype_rules, ir, value_info
from autostage.runtime.staging import errors, values
from autostage.runtime.tensor import Tensor, constant
from autostage.runtime.types import TensorType

MATCH, OTHER = "match", "other"


def matching_kind(type_: object) -> type | None:
    """The Python type whose numbers a value of ``type_`` holds exactly (float for a 0-d
    float64), or None."""
    if not isinstance(type_, TensorType) or type_.ndim != 0:
        return None
    kind = dtype_rules.weak_kind(type_.dtype)
    return kind if dtype_rules.python_dtype(kind) == type_.dtype else None


def flag(x: object, role: str, type_: TensorType) -> bool | Tensor:
    """Where ``x`` is a Python number of the kind a variable of ``type_`` holds (``MATCH``; not
    needed if ``type_`` is weak: a Python number on every path) or of another kind (``OTHER``):
    a bool, or a bool tensor known at run time."""
    if role == MATCH and type_.weak:
        return False
    if isinstance(x, (Tensor, values.MaybeUnbound)) and not values.is_weak(x):
        path = (value_info.python_path if role == MATCH else value_info.other_path)(x.value)
        return False if path is None else Tensor(path.flag)
    kind = values.python_kind(x)
    if kind is None or (kind is matching_kind(type_)) != (role == MATCH):
        return False
    return True


def kind_of(xs: list, type_: TensorType) -> type | None:
    """The Python type of the ``OTHER`` paths of a variable of ``type_`` taking ``xs``."""
    for x in xs:
        if isinstance(x, (Tensor, values.MaybeUnbound)) and not values.is_weak(x):
            path = value_info.other_path(x.value)
            if path is not None:
                return path.kind
        elif values.python_kind(x) not in (None, matching_kind(type_)):
            return values.python_kind(x)
    return None


def roles(xs: list, type_: object) -> tuple[str, ...]:
    """The flags a variable of ``type_`` taking the values ``xs`` on its paths must carry."""
    if not isinstance(type_, TensorType) or type_.ndim != 0:
        return ()
    return tuple(r for r in (MATCH, OTHER)
                 if any(flag(x, r, type_) is not False for x in xs))


def flag_value(f: bool | Tensor) -> ir.Value:
    """A flag as a value of the current region."""
    return f.value if isinstance(f, Tensor) else constant(np.bool_(f)).value


def known_number(x: object) -> bool | int | float | complex | None:
    """The Python number ``x`` is where it is one of another kind than its dtype's, if known
    while tracing (a Python number itself, or a value ``value_info.other_path`` knows it of)."""
    if isinstance(x, (bool, int, float, complex)):
        return x
    if isinstance(x, (Tensor, values.MaybeUnbound)):
        path = value_info.other_path(x.value)
        return path.python if path is not None else value_info.known_number(x.value)
    return None


def one_known_number(xs: list, type_: TensorType) -> bool | int | float | complex | None:
    """The Python number of another kind than ``type_``'s that the ``OTHER`` paths of a
    variable taking ``xs`` on its paths hold, if it is one number known while tracing."""
    return _one_number([x for x in xs if flag(x, OTHER, type_) is not False])


def _one_number(xs: list) -> bool | int | float | complex | None:
    numbers = {(type(n), n) for n in map(known_number, xs)}
    if len(numbers) != 1 or None in next(iter(numbers)):
        return None
    return next(iter(numbers))[1]


def mark_merged_number(value: ir.Value, xs: list) -> None:
    """Records the Python number a weak merge of ``xs`` (some unassigned) is, if one is known."""
    if value_info.is_weak(value):
        number = _one_number([x for x in xs if not values.is_unset(x)])
        if number is not None:
            value_info.mark_number(value, number)


def settle(value: ir.Value, flags: dict, what: str, where: str, kind: type | None = None,
           init: object = None, python: object = None) -> None:
    """Marks ``value`` (a merge's or a loop's result, or a loop's variable in its body) with its
    flags (``kind``: the Python type of its ``OTHER`` paths, ``kind_of``; ``python``: the Python
    number it is there, if known while tracing)."""
    if MATCH in flags:
        value_info.mark_python_path(value, flags[MATCH], matching_kind(value.type))
    if OTHER in flags:
        start = f" (it starts as {init!r})" if values.is_number(init) else ""
        number = f"Python {kind.__name__ if kind is not None else 'number'}"
        value_info.mark_other_path(value, flags[OTHER], kind, errors.StagingTypeError(
            f"{what} is a {number} on this call's path through the staged {where}"
            f"{errors.at()}{start}, but {value.type} on other paths: staged code gives it one "
            f"type, and cannot compute what Python computes with the {number} here. Give it "
            f"that type on every path (e.g. start it as np.{value.type.dtype}(0)), "
            f"or handle this case before the {where}"), python)


def choose(better: Callable, a: object, b: object, name: str) -> Tensor | None:
    """``max(a, b)``/``min(a, b)`` (``better(b, a)``: whether ``b`` wins) of a Python number and
    a 0-d NumPy value, Python's choice with its own type: the winner held in the NumPy value's
    dtype and flagged where it is the Python number (``value_info.python_path`` where that dtype
    is the number's own, ``other_path`` where it is another: a float32, a float64 for an int).
    None if the dtype cannot hold the number (a Python float and an int64), or an argument is
    two kinds of Python number on different paths: refused."""
    if any(isinstance(x, Tensor) and value_info.python_path(x.value) is not None
           and value_info.other_path(x.value) is not None for x in (a, b)):
        return None
    sides = [_side(x) for x in (a, b)]
    dtypes = {d for d, _, _, _ in sides if d is not None}
    if len(dtypes) != 1:
        return None
    (dtype,) = dtypes
    held = []
    for x, (_, kind, _, number) in zip((a, b), sides, strict=True):
        if kind is not None and not _holds(dtype, kind, number):
            return None
        held.append(constant(dtype_rules.convert_scalar(x, dtype)) if not isinstance(x, Tensor)
                    else x if x.dtype == dtype and not values.is_weak(x) else x.astype(dtype))
    wins = better(b, a)
    result = array_api.where(wins, held[1], held[0])
    for role in (MATCH, OTHER):
        of = [_role_flag(side, role, dtype) for side in sides]
        if all(f is False for f in of):
            continue
        flag = array_api.where(wins, *(f if isinstance(f, Tensor) else constant(np.bool_(f))
                                       for f in reversed(of)))
        kinds = {side[1] for side, f in zip(sides, of, strict=True) if f is not False}
        kind = kinds.pop() if len(kinds) == 1 else None
        if kind is None:
            return None
        if role == MATCH:
            value_info.mark_python_path(result.value, flag.value, kind)
            continue
        numbers = {(type(side[3]), side[3]) for side, f in zip(sides, of, strict=True)
                   if f is not False}
        number = next(iter(numbers))[1] if len(numbers) == 1 else None
        value_info.mark_other_path(result.value, flag.value, kind, errors.StagingTypeError(
            f"the result of {name}(){errors.at()} is a Python {kind.__name__} on this call's "
            f"path (the argument that won), but {dtype} on other paths: staged code gives it "
            f"one type, and cannot compute what Python computes with the Python "
            f"{kind.__name__} here. Give the arguments one type (e.g. np.{dtype}(0))"), number)
    return result


def _side(x: object) -> tuple:
    """(NumPy dtype or None, Python kind or None, its flag, its number if known) of an argument
    of ``choose``."""
    if isinstance(x, (bool, int, float, complex)):
        return None, type(x), True, x
    if not isinstance(x, Tensor):
        return np.asarray(x).dtype, None, False, None
    if values.is_weak(x):
        return None, dtype_rules.weak_kind(x.dtype), True, None
    path = value_info.python_path(x.value)
    other = value_info.other_path(x.value)
    if path is not None:
        return x.dtype, path.kind, Tensor(path.flag), None
    if other is not None:
        return x.dtype, other.kind, Tensor(other.flag), other.python
    return x.dtype, None, False, None


def _holds(dtype: np.dtype, kind: type, number: object) -> bool:
    """Whether a value of ``dtype`` may stand for a Python number of ``kind`` (``number`` if
    known): its own dtype, or a float/complex one for a float or int (NumPy's conversion)."""
    if dtype_rules.python_dtype(kind) == dtype:
        return True
    if kind in (int, float) and dtype.kind == "f" or kind is int and dtype.kind in "iu" and (
            number is not None):
        try:
            dtype_rules.convert_scalar(number if number is not None else 0, dtype)
        except (OverflowError, ValueError):
            return False
        return True
    return False


def _role_flag(side: tuple, role: str, dtype: np.dtype) -> bool | Tensor:
    """Where an argument of ``choose`` is a Python number of ``role`` for a value of
    ``dtype``."""
    _, kind, flag_, _ = side
    if kind is None:
        return False
    own = dtype_rules.python_dtype(kind) == dtype
    return flag_ if own == (role == MATCH) else False
