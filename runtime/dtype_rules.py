"""Result dtypes and shapes of ops, following NumPy 2 exactly (NEP 50 promotion, broadcasting).

The dtype rules ask NumPy itself: an op's result dtype is what the NumPy function returns on tiny
arrays of the operand dtypes, cached. Python scalars are *weak* (``f32_tensor * 2.0`` is
float32, ``i8_tensor + 300`` raises NumPy's ``OverflowError``); ``resolve`` says which dtype each
weak operand becomes, so the IR holds only typed constants. A staged value with Python scalar
semantics (a dimension from ``x.shape``, a staged ``len``) is weak too: ``Weak(kind)``.
Shapes may have unknown (``None``) dimensions; broadcasting keeps them unknown only when it must.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

PYTHON_SCALARS = (bool, int, float, complex)
_REPRESENTATIVE = {bool: False, int: 0, float: 0.0, complex: 0j}
COMPARISONS = frozenset({"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"})


@dataclass(frozen=True, slots=True)
class Weak:
    """A staged operand with Python scalar semantics (``kind`` is bool, int, float or complex)."""

    kind: type


def is_python_scalar(value: object) -> bool:
    """True for Python bool/int/float/complex (weakly typed); NumPy scalars are strong."""
    return isinstance(value, PYTHON_SCALARS) and not isinstance(value, np.generic)


def weak_kind(dtype: np.dtype) -> type:
    """The Python scalar type of values of ``dtype`` (the kind of a weak staged value)."""
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[np.dtype(dtype).kind]


def python_dtype(kind: type) -> np.dtype:
    """The dtype NumPy gives a Python scalar of ``kind`` on its own."""
    return np.asarray(_REPRESENTATIVE[kind]).dtype


# ---------------------------------------------------------------------------------------------
# Element-wise functions: result dtypes with weak operands

Spec = "np.dtype | Weak | bool | int | float | complex"


def sample(spec: object) -> object:
    """An operand of these rules (a dtype, a Python scalar or ``Weak``) as NumPy takes it: an
    empty array of a dtype, a Python scalar (promoted weakly)."""
    if isinstance(spec, np.dtype):
        return np.zeros(0, spec)
    if isinstance(spec, Weak):
        return _REPRESENTATIVE[spec.kind]
    return spec


@functools.cache
def strong_result_dtype(function: Callable, dtypes: tuple[np.dtype, ...]) -> np.dtype:
    """The dtype ``function`` (a NumPy ufunc, ``np.where``, ``np.clip``) returns for arrays of
    ``dtypes``; raises NumPy's own TypeError when it has no loop for them."""
    with np.errstate(all="ignore"):
        return np.asarray(function(*(np.zeros(0, d) for d in dtypes))).dtype


def resolve(function: Callable, specs: Sequence[object], name: str = ""
            ) -> tuple[tuple[np.dtype, ...], np.dtype]:
    """The operand dtypes (weak ones converted as NumPy converts them) and the result dtype.

    Raises:
      OverflowError: a Python int does not fit the dtype NumPy converts it to (as NumPy raises).
      TypeError: NumPy has no loop for these dtypes.
    """
    specs = tuple(specs)
    if all(isinstance(s, np.dtype) for s in specs):
        return specs, strong_result_dtype(function, specs)
    with np.errstate(all="ignore"):  # raises exactly what NumPy raises (OverflowError...)
        result = np.asarray(function(*(sample(s) for s in specs))).dtype
    weak_dtypes = _weak_dtypes(function, specs)
    dtypes = []
    for spec, weak_dtype in zip(specs, weak_dtypes, strict=True):
        if isinstance(spec, np.dtype):
            dtypes.append(spec)
        elif name in COMPARISONS and isinstance(spec, int) and not isinstance(spec, bool):
            dtypes.append(_comparison_int_dtype(spec, weak_dtype))
        elif name in COMPARISONS and spec == Weak(int) and weak_dtype.kind in "iu" and (
                weak_dtype.itemsize < 8):
            dtypes.append(np.dtype(np.int64))  # its value known at run time: compared exactly
        else:
            dtypes.append(weak_dtype)
    dtypes = tuple(dtypes)
    if strong_result_dtype(function, dtypes) != result:
        raise TypeError(f"autostage cannot stage {name or function} with operands {specs}: "
                        f"NumPy gives {result}, typed constants would give "
                        f"{strong_result_dtype(function, dtypes)}")
    return dtypes, result


def _weak_dtypes(function: Callable, specs: tuple) -> tuple[np.dtype, ...]:
    """The dtype each operand is converted to: a ufunc's loop dtypes (what NumPy converts a weak
    scalar to), else the common dtype ``np.result_type`` gives (np.where, np.clip)."""
    def as_signature(spec: object) -> object:
        if isinstance(spec, np.dtype):
            return spec
        kind = spec.kind if isinstance(spec, Weak) else type(spec)
        return np.dtype(np.bool_) if kind is bool else kind

    if isinstance(function, np.ufunc):
        if not any(isinstance(s, np.dtype) for s in specs):  # Python op Python: default dtypes
            specs = tuple(np.asarray(sample(s)).dtype for s in specs)
        signature = tuple(as_signature(s) for s in specs) + (None,) * function.nout
        return function.resolve_dtypes(signature)[:len(specs)]
    promoted = specs[1:] if function is np.where else specs  # where's condition: truth only
    common = np.result_type(*(sample(s) for s in promoted))
    return (common,) * len(specs)


def _comparison_int_dtype(value: int, dtype: np.dtype) -> np.dtype:
    """NumPy 2 compares integer arrays with out-of-range Python ints exactly: so must we."""
    if dtype.kind not in "iu" or np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
        return dtype
    for wide in (np.dtype(np.int64), np.dtype(np.uint64)):
        if np.iinfo(wide).min <= value <= np.iinfo(wide).max:
            return wide
    raise OverflowError(f"autostage cannot compare a staged integer tensor with the Python int "
                        f"{value}, which is outside the int64 and uint64 ranges")


def convert_scalar(value: object, dtype: np.dtype, unsafe: bool = False) -> np.ndarray:
    """A Python scalar as a 0-d array of ``dtype``, as NumPy converts a weak operand
    (``unsafe``: wrapping, as ``np.where`` does)."""
    if unsafe:
        with np.errstate(all="ignore"):
            return np.asarray(value).astype(dtype)
    return np.asarray(value, dtype=dtype)


# ---------------------------------------------------------------------------------------------
# Reductions and other functions of one dtype


@functools.cache
def reduction_dtype(name: str, dtype: np.dtype, result_dtype: np.dtype | None = None) -> np.dtype:
    """The dtype of ``np.<name>`` (sum, mean, std, argmax...) over an array of ``dtype``."""
    kwargs = {} if result_dtype is None else {"dtype": result_dtype}
    with np.errstate(all="ignore"):
        return np.asarray(getattr(np, name)(np.ones(2, dtype), **kwargs)).dtype


@functools.cache
def common_dtype(function: Callable, dtypes: tuple[np.dtype, ...]) -> np.dtype:
    """The dtype of a NumPy function of several arrays (concatenate, matmul, einsum...)."""
    with np.errstate(all="ignore"):
        return np.asarray(function(*(np.ones((1, 1), d) for d in dtypes))).dtype


# ---------------------------------------------------------------------------------------------
# Shapes


def format_shape(shape: Sequence[int | None]) -> str:
    """A shape as NumPy prints it, with ``?`` for unknown dimensions: ``(?,3)``."""
    dims = ",".join("?" if d is None else str(d) for d in shape)
    return f"({dims},)" if len(shape) == 1 else f"({dims})"


def broadcast_dim(a: int | None, b: int | None) -> int | None:
    """The broadcast of two dimensions (None = unknown); raises ValueError if incompatible."""
    if a == b:
        return a
    if a == 1:
        return b
    if b == 1:
        return a
    if a is None:
        return b  # b > 1: the unknown one must be 1 or b
    if b is None:
        return a
    raise ValueError(f"{a} vs {b}")


# The attribute of a broadcast's ValueError raised while tracing that holds the op's operands (IR
# values), for ``staging.raises`` to name their shapes as they are at run time (NumPy's message).
BROADCAST_OPERANDS = "autostage_broadcast_operands"
BROADCAST_ERROR = "operands could not be broadcast together with shapes "


def broadcast_shapes(*shapes: Sequence[int | None]) -> tuple:
    """The broadcast shape of ``shapes`` with NumPy's rules and unknown dimensions.

    Raises:
      ValueError: two known dimensions differ and neither is 1 (NumPy's message, with the shapes).
    """
    ndim = max((len(s) for s in shapes), default=0)
    result = [1] * ndim
    for shape in shapes:
        padded = (1,) * (ndim - len(shape)) + tuple(shape)
        try:
            result = [broadcast_dim(r, d) for r, d in zip(result, padded, strict=True)]
        except ValueError:
            listed = "".join(f"{format_shape(s)} " for s in shapes)  # NumPy's trailing space
            raise ValueError(BROADCAST_ERROR + listed) from None
    return tuple(result)


def normalize_axis(axis: int, ndim: int) -> int:
    """``axis`` in ``range(ndim)``; raises NumPy's AxisError (a ValueError and IndexError)."""
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        if not isinstance(axis, bool) and hasattr(type(axis), "__index__"):
            operator.index(axis)  # a staged axis raises its own error, naming the user's line
        raise TypeError(f"axis must be a Python int, not {type(axis).__name__}")
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(int(axis), ndim)
    return int(axis) % ndim


def normalize_axes(axis: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """A reduction's ``axis`` argument as a sorted tuple of distinct axes (None: all)."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    result = tuple(normalize_axis(a, ndim) for a in axes)
    if len(set(result)) != len(result):
        raise ValueError("duplicate value in 'axis'")
    return tuple(sorted(result))


@functools.cache
def result_type_of(dtypes: tuple[np.dtype, ...]) -> np.dtype:
    """``np.result_type`` of strong dtypes (concatenate, stack)."""
    return np.result_type(*dtypes)
