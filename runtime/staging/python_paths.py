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

import numpy as np
from autostage.runtime import dtype_rules, ir, value_info
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


def settle(value: ir.Value, flags: dict, what: str, where: str, kind: type | None = None,
           init: object = None) -> None:
    """Marks ``value`` (a merge's or a loop's result, or a loop's variable in its body) with its
    flags (``kind``: the Python type of its ``OTHER`` paths, ``kind_of``)."""
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
            f"or handle this case before the {where}"))
