"""NumPy's errors where a staged scalar becomes an integer as a Python number would.

NumPy 2 converts some scalars to an integer dtype through Python's ``int()`` and checks the
range of the result, where a cast of the staged value (an int64 or a float) would wrap silently:

* a Python int (a weak staged int: ``int(x[0])``, a staged loop's index) converted by an op
  (``w + n`` of an int32 ``w``), written into an integer array (``w[i] = n``) or passed to
  ``np.int32(n)``: OverflowError "Python integer 3000000000 out of bounds for int32";
* a float scalar written into an integer array (``w[i] = v``) — a Python float into any integer
  dtype, a NumPy float scalar into a signed one — and a Python float passed to
  ``np.int32(v)``: ValueError "cannot convert float NaN to integer", OverflowError "cannot
  convert float infinity to integer", then for its truncation "Python int too large to convert
  to C long" beyond what a C long holds (an unsigned one for uint64), else a Python int's range;
* a Python int made an array element (``np.full(3, n, np.int32)``, ``np.array([n], np.int32)``);
* a NumPy integer scalar written into a signed integer array at integer or slice indices: a
  Python int's range (a uint64 one is a C long first: "Python int too large to convert to C
  long"). NumPy casts NumPy scalars written at a mask or an index array.

Other conversions are NumPy's casts, which wrap (a 0-d array written into an array, a NumPy
scalar passed to ``np.int32``, a NumPy float scalar into an unsigned array), as staged code's.
Comparisons of an integer array with a Python int are exact (``dtype_rules.resolve``).
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import tracing, value_info
from autostage.runtime.tensor import Tensor, constant

_TOO_LARGE = "Python int too large to convert to C long"
_LONG_MAX = 2**63 - 1


def _raise_where(test: Tensor, error: type[BaseException], parts: tuple,
                 value: Tensor | None = None) -> None:
    """A run-time ``error`` whose message is ``parts`` (strings, and fields of ``value``: the
    ``raise_if`` op's operand 1) where the 0-d ``test`` holds."""
    operands = (test.value,) if value is None else (test.value, value.value)
    tracing.emit("raise_if", operands, {"exception": error(""), "formats": ((0, parts),)})


def _op(name: str, *operands: Tensor | float | int, **attrs: object) -> Tensor:
    """Op ``name`` of 0-d values (numbers: constants of the first operand's dtype)."""
    dtype = operands[0].dtype
    values = [v.value if isinstance(v, Tensor) else constant(np.asarray(v, dtype)).value
              for v in operands]
    (result,) = tracing.emit(name, values, attrs or None)
    return Tensor(result)


def _either(a: Tensor | None, b: Tensor | None) -> Tensor | None:
    return b if a is None else a if b is None else _op("logical_or", a, b)


def _bounds_parts(dtype: np.dtype, field: object) -> tuple:
    """NumPy's "Python integer N out of bounds for int32", N the template ``field``."""
    return ("Python integer ", field, f" out of bounds for {dtype}")


def check_int(value: Tensor, dtype: np.dtype) -> None:
    """A Python int's range check, converted to integer ``dtype`` (nothing to check for its own
    dtype, or one holding all its values); a uint64 value is a C long first."""
    info, have = np.iinfo(dtype), np.iinfo(value.dtype)
    if have.max > _LONG_MAX:
        _raise_where(_op("greater", value, _LONG_MAX), OverflowError, (_TOO_LARGE,))
    outside = _either(_op("less", value, int(info.min)) if info.min > have.min else None,
                      _op("greater", value, int(info.max)) if info.max < min(have.max, _LONG_MAX)
                      else None)
    if outside is not None:
        _raise_where(outside, OverflowError, _bounds_parts(dtype, 1), value)


def check_float(value: Tensor, dtype: np.dtype) -> None:
    """``int()``'s errors for a float converted to integer ``dtype``, then the range check of
    the int it gives."""
    _raise_where(_op("isnan", value), ValueError, ("cannot convert float NaN to integer",))
    _raise_where(_op("isinf", value), OverflowError,
                 ("cannot convert float infinity to integer",))
    wide = value if value.dtype == np.float64 else _op("cast", value, dtype=np.dtype(np.float64))
    whole = _op("trunc", wide)  # (each bound below is a float64 exactly)
    top = 2.0**64 if dtype == np.uint64 else 2.0**63  # (what a C long, or unsigned, holds)
    _raise_where(_op("logical_or", _op("less", whole, -2.0**63), _op("greater_equal", whole, top)),
                 OverflowError, (_TOO_LARGE,))
    info = np.iinfo(dtype)
    outside = _either(_op("less", whole, float(info.min)) if info.min > -2**63 else None,
                      _op("greater", whole, float(info.max)) if info.max < 2**63 - 1 else None)
    if outside is not None:
        _raise_where(outside, OverflowError,
                     _bounds_parts(dtype, ("format", 1, "", ".0f", "python")), whole)


def check_write(value: Tensor, dtype: np.dtype, basic: bool) -> None:
    """The checks of a 0-d ``value`` written into an array of ``dtype``: a Python number at any
    index, a NumPy scalar at integer and slice indices only (``basic``: NumPy casts it into a
    mask's or an index array's elements)."""
    weak = value_info.is_weak(value.value)
    if dtype.kind not in "iu" or value.ndim or not weak and (
            not basic or value_info.stands_for_ndarray(value.value)):
        return
    if value.dtype.kind == "f" and (weak or dtype.kind == "i"):
        check_float(value, dtype)
    elif value.dtype.kind in "iu" and (weak or dtype.kind == "i"):
        check_int(value, dtype)


def check_python_int(value: Tensor, dtype: np.dtype) -> None:
    """The check of a Python int converted to ``dtype`` as a value (``np.full(n, v,
    dtype)``)."""
    if dtype.kind in "iu" and value_info.is_weak(value.value) and value.dtype.kind in "iu":
        check_int(value, dtype)


def check_python_ints(items: list | tuple, dtype: np.dtype) -> None:
    """``check_python_int`` of each Python int of a (nested) list made an array of ``dtype``."""
    for item in items:
        if isinstance(item, (list, tuple)):
            check_python_ints(item, dtype)
        elif isinstance(item, Tensor) and not item.ndim:
            check_python_int(item, dtype)


def check_scalar_type(value: Tensor, dtype: np.dtype) -> None:
    """The checks of ``np.int32(value)`` (an integer scalar type of ``dtype``): a Python
    number's, as written into an array; a NumPy value is cast."""
    if value_info.is_weak(value.value):
        check_write(value, dtype, basic=True)
