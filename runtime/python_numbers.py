"""Python operators on Python numbers in staged code: Python's exceptions, not NumPy's values.

A value that is a Python int or float in the user's program (``x.shape[0]``, a staged ``len``, a
``range`` index, ``int(t)``, their arithmetic: *weak* values, ``value_info``) is a 0-d int64 or
float64 tensor when staged. NumPy arithmetic on those differs from Python's exactly where Python
raises: ``n // 0`` and ``n % 0`` are 0, ``m / 0`` is inf, ``0.0 ** -1`` is inf, and int64 wraps
where Python's int is exact. So an operator whose operands are all Python numbers (Python
constants or weak tensors; any array or NumPy scalar keeps NumPy's semantics) is staged with
run-time checks (``runtime/ops/checks.py``): ZeroDivisionError with Python's message, ValueError
for negative shift counts, and an OverflowError where Python's exact int would leave int64.
Checks that are decided at trace time (a constant divisor) emit nothing. Bools are ints in Python
arithmetic (``True + True == 2``), so bool operands become int64 first. ``n ** e`` with a negative
constant ``e`` is a float, as in Python; a staged ``e`` whose sign is unknown keeps the int type
and raises a clear ValueError at run time if it is negative.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable, Iterator

import autostage.runtime.tensor  # noqa: F401 - first: Tensor's methods need array_api complete
import numpy as np
from autostage.runtime import array_api, dtype_rules, numpy_power, tracing, value_info
from autostage.runtime.ops.checks import INT64_MAX, INT64_MIN, overflows
from autostage.runtime.tensor import StagingTypeError, Tensor, constant

_KINDS = (bool, int, float, complex)
# ops where Python computes with bools as ints (not bitwise and/or/xor of two bools); ``~b`` of a
# Python bool is the int ``-1 - b`` (``~True == -2``), not NumPy's logical not (the runtime never
# negates its own predicates with ``~``: it emits ``logical_not``)
_INT_ARITHMETIC = {"add", "subtract", "multiply", "true_divide", "floor_divide", "remainder",
                   "power", "left_shift", "right_shift", "negative", "positive", "absolute",
                   "invert"}
_SYMBOLS = {"add": "+", "subtract": "-", "multiply": "*", "floor_divide": "//",
            "left_shift": "<<", "power": "**", "negative": "-", "absolute": "abs()"}


def _python_error(expression) -> tuple:
    """The arguments of the ZeroDivisionError this Python version raises for ``expression``."""
    try:
        expression()
    except ZeroDivisionError as e:
        return e.args
    raise AssertionError("expected a ZeroDivisionError")


_ZERO_DIVISION = {
    ("true_divide", int): _python_error(lambda: 1 / 0),
    ("true_divide", float): _python_error(lambda: 1.0 / 0.0),
    ("true_divide", complex): _python_error(lambda: 1j / 0),
    ("floor_divide", int): _python_error(lambda: 1 // 0),
    ("floor_divide", float): _python_error(lambda: 1.0 // 0.0),
    ("remainder", int): _python_error(lambda: 1 % 0),
    ("remainder", float): _python_error(lambda: 1.0 % 0.0),
    ("divmod", int): _python_error(lambda: divmod(1, 0)),
    ("divmod", float): _python_error(lambda: divmod(1.0, 0.0)),
    ("power", float): _python_error(lambda: 0.0 ** -1),
    ("power", complex): _python_error(lambda: 0j ** -1),
}


def _python_overflow(expression) -> tuple:
    """The arguments of the OverflowError this Python version raises for ``expression``."""
    try:
        expression()
    except OverflowError as e:
        return e.args
    raise AssertionError("expected an OverflowError")


_COMPLEX_POWER_OVERFLOW = _python_overflow(lambda: complex(1e200, 1.0) ** 2)
_COMPLEX_ABS_OVERFLOW = _python_overflow(lambda: abs(complex(1.5e308, 1.5e308)))


def _python_arith(op: str, a: object, b: object) -> Tensor:
    """``a / b`` of two Python ints, ``a / b`` or ``a ** b`` of Python complex numbers: Python's
    own result (the ``python_arith`` op), not NumPy's, which may differ in the last bits."""
    dtype = np.int64 if op == "int_true_divide" else np.complex128
    operands = [(x if x.dtype == dtype else array_api.astype(x, dtype)).value
                if isinstance(x, Tensor) else constant(np.asarray(x, dtype=dtype)[()]).value
                for x in (a, b)]
    (value,) = tracing.emit("python_arith", operands, {"op": op})
    value_info.mark_weak(value)
    return Tensor(value)


def _kind(x: object) -> type | None:
    """bool/int/float/complex for a Python number, a weak tensor or a tensor that is a Python
    number on some paths (``value_info.python_path``); None for anything else."""
    if isinstance(x, Tensor):
        if value_info.is_weak(x.value):
            return dtype_rules.weak_kind(x.dtype)
        path = value_info.python_path(x.value)
        return None if path is None else path.kind
    if dtype_rules.is_python_scalar(x):
        return next(k for k in _KINDS if isinstance(x, k))
    return None


def kind(x: object) -> type | None:
    """bool/int/float/complex for a Python number or a weak tensor; None for anything else."""
    return _kind(x) if not isinstance(x, Tensor) or value_info.is_weak(x.value) else None


def all_python(*operands: object) -> bool:
    """Whether every operand is a Python number (a constant or a weak tensor; or one on some
    paths, ``value_info.python_path``: Python's semantics then hold on those paths)."""
    return all(_kind(x) is not None for x in operands)


_paths = threading.local()  # .flag: where the operands being staged are Python numbers


@contextlib.contextmanager
def _on_python_paths(*operands: object) -> Iterator[None]:
    """Stages Python's checks for ``operands`` only where they are all Python numbers: some may
    be one on some paths only, and are NumPy scalars elsewhere (``value_info.python_path``)."""
    _paths.flag = array_api.python_path_flag(operands)
    try:
        yield
    finally:
        _paths.flag = None


def _python_only(result: Tensor, numpy: Callable[[], Tensor]) -> Tensor:
    """``result`` (Python's, a weak value) where the operands are Python numbers, ``numpy()``
    elsewhere, when some of them are one on some paths only."""
    flag = getattr(_paths, "flag", None)
    if flag is None:
        return result
    chosen = array_api.where(flag, result, numpy())
    value_info.mark_python_path(chosen.value, flag.value, dtype_rules.weak_kind(chosen.dtype))
    return chosen


def binary(op: str, a: object, b: object) -> object:
    """``a <op> b`` (``op`` a ufunc name) with Python's semantics if both are Python numbers."""
    if not all_python(a, b):
        if op == "power":
            return numpy_power.operator_power(a, b)
        if op == "multiply" and _complex_scalar_math(a, b):  # (NumPy's scalar math: unfused)
            return array_api.scalar_math(op, a, b)
        return array_api.ufunc(op, a, b)
    if _bools_on_some_paths(op, a, b):
        return array_api.ufunc(op, a, b)  # (NumPy's: where the bool is Python's, it raised)
    with _on_python_paths(a, b):
        return _binary(op, a, b)


_MIRRORED = {"less": "greater", "less_equal": "greater_equal", "greater": "less",
             "greater_equal": "less_equal", "equal": "equal", "not_equal": "not_equal"}


def compare(op: str, a: object, b: object) -> object:
    """``a <op> b`` (a comparison ufunc name). Python compares a float with an int exactly,
    NumPy converts the int to a float first (rounding past 2**53): a Python float and a Python
    int (constant or staged) compare as Python does. An int constant outside int64 compared
    with a float array is made a float, as NumPy converts it."""
    if kind(a) is int and kind(b) is float:
        return compare(_MIRRORED[op], b, a)
    if kind(a) is float and kind(b) is int:
        return _float_int_comparison(op, a, b)
    big = [type(x) is int and not INT64_MIN <= x <= INT64_MAX for x in (a, b)]
    if any(big) and any(isinstance(x, Tensor) and x.dtype.kind in "fc" for x in (a, b)):
        a, b = (float(x) if is_big else x for x, is_big in zip((a, b), big, strict=True))
    if op in _ORDERINGS and _complex_scalar_math(a, b):
        return array_api.scalar_math(op, a, b)
    return array_api.ufunc(op, a, b)


_ORDERINGS = frozenset({"less", "less_equal", "greater", "greater_equal"})


def _numpy_dtype(x: object) -> np.dtype | None:
    """The dtype of NumPy scalar ``x`` (staged or not); None for a Python number or an array."""
    if isinstance(x, Tensor):
        if x.ndim > 0 or value_info.is_weak(x.value) or numpy_power._is_ndarray(x):
            return None
        return x.dtype
    return x.dtype if isinstance(x, np.generic) else None


def _complex(x: object) -> bool:
    """Whether ``x`` is a complex value (a Python complex, a complex array or scalar), told by
    its type alone (asking whether a value is a 0-d ndarray may raise: ``value_info.mixed``)."""
    return type(x) is complex or getattr(getattr(x, "dtype", None), "kind", "") == "c"


def complex_numpy_scalar(x: object) -> bool:
    """Whether ``x`` is a complex NumPy scalar (staged or not): NumPy's np.square of one is its
    scalar math, not its loop."""
    return _complex(x) and _numpy_dtype(x) is not None


def _complex_scalar_math(a: object, b: object) -> bool:
    """Whether Python's ``a < b`` (any ordering) of these operands runs NumPy's complex scalar
    math, which compares the parts lexicographically (``0j < complex(1, nan)`` is True), not its
    ufunc loop (False where a part is NaN): a complex NumPy scalar beside a Python number or a
    NumPy scalar its type holds (a complex64 beside a float64 or an int64 needs promotion: the
    loop runs; an np.bool_ on the left compares by the loop too)."""
    if not (_complex(a) or _complex(b)):
        return False
    dtypes = [_numpy_dtype(x) for x in (a, b)]
    python = [type(x) in (bool, int, float, complex) or isinstance(x, Tensor) and (
        x.ndim == 0 and value_info.is_weak(x.value)) for x in (a, b)]
    if not any(d is not None and d.kind == "c" for d in dtypes):
        return False
    if any(d is None and not p for d, p in zip(dtypes, python, strict=True)):
        return False  # an array
    if any(python):
        return True
    complex_dtype = max((d for d in dtypes if d.kind == "c"), key=lambda d: d.itemsize)
    return all(d.kind == "c" or np.can_cast(d, complex_dtype) for d in dtypes) and not (
        dtypes[0] == np.bool_)


def _float_int_comparison(op: str, f: object, n: object) -> object:
    """A Python float ``f`` against a Python int ``n``, exactly: where ``f`` differs from
    ``g = float(n)`` (the nearest float) the answer is ``f``'s against ``g`` (no float lies
    between ``n`` and ``g``); where they are equal it is ``g``'s against ``n``, compared as
    integers."""
    if type(n) is int:  # a constant: g's side of n is known now
        try:
            g = float(n)
        except OverflowError:
            g = math.inf if n > 0 else -math.inf
        side = (1 if g > 0 else -1) if math.isinf(g) else (int(g) > n) - (int(g) < n)  # g - n
        if side == 0:
            return array_api.ufunc(op, f, g)
        on_equal = {"less": side < 0, "less_equal": side < 0, "greater": side > 0,
                    "greater_equal": side > 0, "equal": False, "not_equal": True}[op]
        return _weak_where(array_api.ufunc("equal", f, g), on_equal, array_api.ufunc(op, f, g))
    g = _as_float(n)
    big = array_api.ufunc("greater_equal", g, 2.0**63)  # float(INT64_MAX) rounds up to 2**63
    whole = array_api.astype(array_api.where(big, 0.0, g), np.int64)
    at_g = _weak_where(big, op in ("greater", "greater_equal", "not_equal"),
                       array_api.ufunc(op, whole, n))
    return _weak_where(array_api.ufunc("equal", f, g), at_g, array_api.ufunc(op, f, g))


def _weak_where(condition: object, x: object, y: object) -> Tensor:
    """``x if condition else y`` of Python bools: a Python bool."""
    result = array_api.where(condition, x, y)
    value_info.mark_weak(result.value)
    return result


def _bools_on_some_paths(op: str, *operands: object) -> bool:
    """Whether an operand of ``op`` is a Python bool on some paths and an np.bool_ on others:
    Python computes with ints where NumPy computes with bools, so staged code computes NumPy's
    and raises a clear error where the operand is the Python bool."""
    bools = [x for x in operands if _kind(x) is bool and kind(x) is None]
    if op not in _INT_ARITHMETIC or not bools:
        return False
    for x in bools:
        value_info.raise_where_python(x.value, StagingTypeError(
            f"arithmetic ({_SYMBOLS.get(op, op)}){_at()} on a value that is a Python bool on "
            "this call's path and an np.bool_ on others: Python computes with ints (True + 1 "
            "== 2), NumPy with bools; make it one type on every path (e.g. int(b))"))
    return True


def _binary(op: str, a: object, b: object) -> object:
    a, b = _big_constants(op, a, b)
    if op in _INT_ARITHMETIC or _kind(a) is not _kind(b):
        a, b = _int_if_bool(a), _int_if_bool(b)
    kind = max((_kind(a), _kind(b)), key=_KINDS.index)
    if op == "power":
        return _power(a, b, kind)
    if op in ("true_divide", "floor_divide", "remainder") and kind is not complex or (
            op == "true_divide"):
        _raise_if(_equal(b, 0), ZeroDivisionError(*_ZERO_DIVISION[op, kind]))
    if op == "true_divide" and kind in (int, complex):
        return _python_only(_python_arith(f"{kind.__name__}_true_divide", a, b),
                            lambda: array_api.ufunc(op, a, b))
    if kind is int:
        _check_int(op, a, b)
    return array_api.ufunc(op, a, b)


def _big_constants(op: str, *operands: object) -> tuple:
    """The operands, with Python int constants outside int64 (which cannot be staged) made
    floats where the other operand is a float or complex (as Python converts them); in int
    arithmetic such a constant is a clear OverflowError (staged Python ints are int64)."""
    big = [type(x) is int and not INT64_MIN <= x <= INT64_MAX for x in operands]
    if not any(big):
        return operands
    if any(_kind(x) in (float, complex) for x in operands):
        return tuple(float(x) if b else x for x, b in zip(operands, big, strict=True))
    x = operands[big.index(True)]
    raise OverflowError(
        f"the Python int {x} in staged arithmetic ({op}){_at()} does not fit in int64: Python's "
        "ints are exact, staged Python ints are int64; keep the values within int64 or compute "
        "with floats (e.g. float(n) / 2.0**70)")


def unary(op: str, a: object) -> object:
    """``-a``, ``+a``, ``abs(a)``, ``~a`` with Python's semantics for a Python number (``~`` of a
    Python bool is an int; of an np.bool_ or a bool array it stays NumPy's logical not)."""
    if op == "absolute" and _numpy_dtype(a) is not None and a.dtype.kind == "c":
        return array_api.scalar_math(op, a)  # NumPy's scalar abs: libm's hypot
    if _kind(a) is None or _bools_on_some_paths(op, a):
        return array_api.ufunc(op, a)
    with _on_python_paths(a):
        return _unary(op, a)


def _unary(op: str, a: object) -> object:
    if op in _INT_ARITHMETIC:
        a = _int_if_bool(a)
    if _kind(a) is int and op in ("negative", "absolute"):
        _raise_if(_overflows(op, a), _overflow_error(op))
    result = (array_api.scalar_math(op, a) if _kind(a) is complex and op == "absolute"
              else array_api.ufunc(op, a))  # Python's complex abs: libm's hypot
    if _kind(a) is complex and op == "absolute":  # Python: a finite complex whose abs overflows
        _raise_if(_and(array_api.ufunc("isfinite", a), array_api.ufunc("isinf", result)),
                  OverflowError(*_COMPLEX_ABS_OVERFLOW))
    return result


def divmod_(a: object, b: object) -> tuple:
    """``divmod(a, b)``: one ZeroDivisionError with divmod's own message, as in Python."""
    if not all_python(a, b):
        return array_api.ufunc("floor_divide", a, b), array_api.ufunc("remainder", a, b)
    with _on_python_paths(a, b):
        return _divmod(a, b)


def _divmod(a: object, b: object) -> tuple:
    a, b = _big_constants("divmod", a, b)
    a, b = _int_if_bool(a), _int_if_bool(b)
    kind = max((_kind(a), _kind(b)), key=_KINDS.index)
    if kind is complex:
        raise TypeError("unsupported operand type(s) for divmod(): complex")
    _raise_if(_equal(b, 0), ZeroDivisionError(*_ZERO_DIVISION["divmod", kind]))
    if kind is int:
        _raise_if(_and(_equal(a, INT64_MIN), _equal(b, -1)), _overflow_error("floor_divide"))
    return array_api.ufunc("floor_divide", a, b), array_api.ufunc("remainder", a, b)


# --- the checks -------------------------------------------------------------------------------


def _check_int(op: str, a: object, b: object) -> None:
    if op in ("add", "subtract", "multiply"):
        _raise_if(_overflows(op, a, b), _overflow_error(op))
    elif op == "floor_divide":
        _raise_if(_and(_equal(a, INT64_MIN), _equal(b, -1)), _overflow_error(op))
    elif op in ("left_shift", "right_shift"):
        _raise_if(_less(b, 0), ValueError("negative shift count"))
        if op == "left_shift":
            _raise_if(_overflows(op, a, b), _overflow_error(op))


def _power(a: object, b: object, kind: type) -> object:
    if kind is int and isinstance(b, int) and b < 0:
        if getattr(_paths, "flag", None) is not None:
            raise StagingTypeError(
                f"** {b}{_at()} of a value that is a Python int on some paths and a NumPy int "
                "on others: Python gives a float, NumPy raises ValueError; write float(n) ** "
                f"{b}")
        a, kind = _as_float(a), float  # Python: int ** negative int is a float
    if kind is int:
        _raise_if(_less(b, 0), ValueError(
            f"a Python int raised to a negative staged int power{_at()} is a float in Python, "
            "but staged code typed the result as an int (the sign of the exponent is only known "
            "at run time); write float(base) ** exponent for a float, or make sure the "
            "exponent is >= 0"))
        _raise_if(_overflows("power", a, b), _overflow_error("power"))
        return array_api.ufunc("power", a, b)
    if kind is complex:
        _raise_if(_and(_equal(a, 0), _negative_or_complex(b)),
                  ZeroDivisionError(*_ZERO_DIVISION["power", complex]))
        result = _python_only(_python_arith("complex_power", a, b),
                              lambda: array_api.ufunc("power", a, b))
        # CPython: an infinite part of the result is an OverflowError (_Py_ADJUST_ERANGE2)
        _raise_if(array_api.ufunc("isinf", result), OverflowError(*_COMPLEX_POWER_OVERFLOW))
        return result
    _raise_if(_and(_equal(a, 0), _less(b, 0)), ZeroDivisionError(*_ZERO_DIVISION["power", float]))
    finite = _and(_isfinite(a), _isfinite(b))
    _raise_if(_and(_and(_less(a, 0), finite), _not_equal(b, _floor(b))), ValueError(
        f"a negative Python float raised to a fractional power{_at()} is a complex number in "
        "Python, but staged code computes floats (NumPy would give nan); use "
        "complex(base) ** exponent, or np.power for NumPy's nan"))
    result = array_api.ufunc("power", a, b)
    # Python's float ** raises where the exact result overflows (C's pow sets ERANGE)
    _raise_if(_and(finite, _isinf(result)), OverflowError(34, "Numerical result out of range"))
    return result


def _overflow_error(op: str) -> OverflowError:
    return OverflowError(
        f"Python int arithmetic ({_SYMBOLS[op]}) does not fit in int64 in staged code{_at()}: "
        "Python's ints are exact, staged Python ints are int64 (NumPy integers such as "
        "np.int64 values wrap around instead, as in NumPy); keep the values within int64 or "
        "compute with floats")


def _at() -> str:
    loc = tracing.user_location()
    return f" at {loc}" if loc is not None else ""


def _raise_if(test: object, exception: BaseException) -> None:
    """Raises ``exception`` at run time where ``test`` holds (now, if ``test`` is a bool), on
    the paths where the operands being staged are Python numbers (``_on_python_paths``)."""
    flag = getattr(_paths, "flag", None)
    if flag is not None:
        test = _and(test, flag)
    if isinstance(test, Tensor):
        tracing.emit("raise_if", (test.value,), {"exception": exception})
    elif test:
        tracing.emit("raise_if", (constant(np.bool_(True)).value,), {"exception": exception})


def _overflows(op: str, *operands: object) -> object:
    if not any(isinstance(x, Tensor) for x in operands):
        return overflows(op, *(int(x) for x in operands))
    values = [x.value if isinstance(x, Tensor) else constant(np.int64(x)).value
              for x in operands]
    (result,) = tracing.emit("int_overflows", values, {"op": op})
    return Tensor(result)


# Predicates on a Python number or a tensor: a bool when decided at trace time.
def _ufunc_or_python(name: str, python):
    def apply(*xs: object) -> object:
        if any(isinstance(x, Tensor) for x in xs):
            return array_api.ufunc(name, *xs)
        return bool(python(*xs))
    return apply


_equal = _ufunc_or_python("equal", lambda x, v: x == v)
_not_equal = _ufunc_or_python("not_equal", lambda x, v: x != v)
_less = _ufunc_or_python("less", lambda x, v: x < v)
_isfinite = _ufunc_or_python("isfinite", lambda x: math.isfinite(x))
_isinf = _ufunc_or_python("isinf", lambda x: math.isinf(x))


def _floor(x: object) -> object:
    if isinstance(x, Tensor):
        return array_api.ufunc("floor", x) if x.dtype.kind == "f" else x
    return math.floor(x) if math.isfinite(x) else x


def _negative_or_complex(b: object) -> object:
    """Whether ``b`` has a negative real part or a non-zero imaginary part (complex ``0 ** b``
    raises then); NumPy orders complex numbers by real part first."""
    if isinstance(b, Tensor) and b.dtype.kind == "c":
        return _or(array_api.ufunc("not_equal", b, array_api.ufunc("conjugate", b)),
                   array_api.ufunc("less", b, 0))
    if isinstance(b, complex):
        return b.real < 0 or b.imag != 0
    return _less(b, 0)


def _and(p: object, q: object) -> object:
    if p is False or q is False:
        return False
    if p is True:
        return q
    if q is True:
        return p
    return array_api.ufunc("logical_and", p, q)


def _or(p: object, q: object) -> object:
    if p is True or q is True:
        return True
    if p is False:
        return q
    if q is False:
        return p
    return array_api.ufunc("logical_or", p, q)


def _int_if_bool(x: object) -> object:
    """A Python bool as the int it is in arithmetic (weak)."""
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, Tensor) and x.dtype == np.bool_ and value_info.is_weak(x.value):
        result = array_api.astype(x, np.int64)
        value_info.mark_weak(result.value)
        return result
    return x


def _as_float(x: object) -> object:
    if isinstance(x, Tensor):
        result = array_api.astype(x, np.float64)
        value_info.mark_weak(result.value)
        return result
    return float(x)


def int_of(x: Tensor, rounding: str | None = None, what: str = "int()") -> Tensor:
    """``int(x)`` (or ``round(x)`` with ``rounding="rint"``) of a 0-d tensor: a Python int
    (weak int64), raising what Python raises for nan and infinity, and an OverflowError (naming
    ``what``) where Python's exact int would not fit int64."""
    if x.dtype.kind == "c":
        if rounding is not None:  # round(): neither Python's nor NumPy's complex rounds
            name = "complex" if value_info.is_weak(x.value) else f"numpy.{x.dtype.name}"
            raise TypeError(f"type {name} doesn't define __round__ method")
        _refuse_complex(x, "int", "int() argument must be a string, a bytes-like object or a "
                        "real number, not 'complex'")
    if x.dtype.kind == "f":
        if rounding is not None:
            x = array_api.ufunc(rounding, x)
        _raise_if(array_api.ufunc("isnan", x),
                  ValueError("cannot convert float NaN to integer"))
        _raise_if(array_api.ufunc("isinf", x),
                  OverflowError("cannot convert float infinity to integer"))
        # float64(2**63) is the first value out of range; float32/16 values convert exactly
        too_big = array_api.ufunc("logical_or", array_api.ufunc("greater_equal", x, 2.0**63),
                                  array_api.ufunc("less", x, -(2.0**63)))
        _raise_if(too_big, _conversion_error(what))
    elif x.dtype == np.uint64:
        _raise_if(array_api.ufunc("greater", x, INT64_MAX), _conversion_error(what))
    result = x if x.dtype == np.int64 else array_api.astype(x, np.int64)
    if result is x and not value_info.is_weak(x.value):
        result = array_api.copy(x)
    value_info.mark_weak(result.value)
    return result


def _refuse_complex(x: Tensor, name: str, python_message: str) -> None:
    """``int(z)``/``float(z)`` of a complex value: Python's TypeError for a Python complex (weak);
    for a NumPy value a clear error, since NumPy's answer depends on what staged code does not
    know: a complex scalar gives its real part (with a ComplexWarning), a 0-d array raises."""
    if value_info.is_weak(x.value):
        raise TypeError(python_message)
    raise StagingTypeError(
        f"{name}() of a staged complex {x.dtype.name} value{_at()} is not supported: NumPy "
        f"gives the real part for a complex scalar (with a ComplexWarning) but raises TypeError "
        f"for a 0-d array, and staged code does not tell them apart (nor does it stage "
        f"`.real` yet): convert outside the staged function, or keep the value complex")


def _conversion_error(what: str) -> OverflowError:
    return OverflowError(
        f"{what} of a number out of the int64 range in staged code{_at()}: Python's ints are "
        "exact, staged Python ints are int64")


def float_of(x: Tensor) -> Tensor:
    """``float(x)`` of a 0-d tensor: a Python float (weak float64)."""
    if x.dtype.kind == "c":
        _refuse_complex(x, "float", "float() argument must be a string or a real number, not "
                        "'complex'")
    result = array_api.astype(x, np.float64)
    value_info.mark_weak(result.value)
    return result


def complex_of(x: Tensor) -> Tensor:
    """``complex(x)`` of a 0-d tensor: a Python complex (weak complex128)."""
    result = array_api.astype(x, np.complex128)
    if result is x and not value_info.is_weak(x.value):
        result = array_api.copy(x)
    value_info.mark_weak(result.value)
    return result


def item_of(x: Tensor) -> Tensor:
    """``x.item()`` with no arguments: the Python scalar of a size-1 value (bool, int, float or
    complex, as NumPy gives for its dtype); ValueError at run time if the size is not 1."""
    if x.ndim > 0:
        from autostage.runtime import array_shapes
        size = array_shapes.size_of(x)
        message = ValueError("can only convert an array of size 1 to a Python scalar")
        if isinstance(size, int):
            if size != 1:
                raise message
        else:
            _raise_if(array_api.ufunc("not_equal", size, 1), message)
        x = array_shapes.getitem(array_shapes.reshape(x, (-1,)), 0)
    if x.dtype.kind in "iu":
        return int_of(x)
    if x.dtype.kind == "f":
        return float_of(x)
    if x.dtype.kind == "c":
        return complex_of(x)
    result = array_api.copy(x)  # bool: a Python bool
    value_info.mark_weak(result.value)
    return result
