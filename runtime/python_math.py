"""Python's ``math`` functions of staged values: ``math.exp(x)``, ``math.floor(x)``, ...

``math.f(x)`` converts ``x`` to a Python float (``float(x)``: a 0-d value of any real dtype; an
array of rank >= 1 is Python's TypeError) and returns a Python float, so in staged code it is
a *weak* float64 value computed by the ``python_math`` op (Python's own function on the
interpreter target, the same libm function on cpu) with Python's errors staged as ``raise_if``
checks: ``math.sqrt(-1.0)`` and ``math.log(0.0)`` raise ``ValueError('math domain error')``,
``math.exp(1000.0)`` ``OverflowError('math range error')``, as CPython's rules (a nan result of
a non-nan argument is a domain error; an infinite result of a finite argument an overflow for
exp/expm1/sinh/cosh/pow, a domain error otherwise; poles of gamma/lgamma are domain errors).
``math.floor/ceil/trunc`` return Python ints (weak int64: nan is a ValueError, infinity an
OverflowError, a value outside int64 a clear OverflowError); ``math.isnan/isinf/isfinite``
Python bools. A NumPy complex value is refused (Python casts it with a ComplexWarning); a Python
complex is Python's TypeError. ``FUNCTIONS`` lists what is staged; any other ``math`` function of
a staged value is a clear ``StagingTypeError``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import autostage.runtime.tensor  # noqa: F401 - first: Tensor's methods need array_api complete
import numpy as np
from autostage.runtime import array_api, python_numbers, tracing, value_info
from autostage.runtime.operator_hooks import Staged, register_operator_hook
from autostage.runtime.tensor import StagingTypeError, Tensor, constant
from autostage.runtime.tracing import at as _at  # " at file:line" for messages


def _python_error(function: Callable, *args: float) -> BaseException:
    try:
        function(*args)
    except (ValueError, OverflowError, ZeroDivisionError) as error:
        return error
    raise AssertionError("expected an error")


# The errors this Python version raises (their messages), from its own functions.
_DOMAIN = {name: _python_error(getattr(math, name), x) for name, x in (
    ("sqrt", -1.0), ("log", 0.0), ("log2", 0.0), ("log10", 0.0), ("log1p", -1.0),
    ("sin", math.inf), ("cos", math.inf), ("tan", math.inf), ("asin", 2.0), ("acos", 2.0),
    ("acosh", 0.5), ("atanh", 1.0), ("gamma", 0.0), ("lgamma", 0.0))}
_DOMAIN2 = {"pow": _python_error(math.pow, -1.0, 0.5), "fmod": _python_error(math.fmod, 1.0, 0.0)}
_RANGE = {name: _python_error(getattr(math, name), 1000.0)
          for name in ("exp", "expm1", "sinh", "cosh", "gamma")}
_RANGE["pow"] = _python_error(math.pow, 10.0, 400.0)
_RANGE["lgamma"] = _python_error(math.lgamma, 1e306)
_LOG_BASE_ZERO = _python_error(math.log, 2.0, 1.0)

_ONE_ARGUMENT = ("exp", "expm1", "log2", "log10", "log1p", "sqrt", "sin", "cos", "tan", "asin",
                 "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf",
                 "erfc", "gamma", "lgamma", "degrees", "radians", "fabs")
_TWO_ARGUMENTS = ("atan2", "pow", "copysign", "fmod")
_INTEGRAL = {"floor": "floor", "ceil": "ceil", "trunc": "trunc"}
_PREDICATES = ("isnan", "isinf", "isfinite")
FUNCTIONS = frozenset(getattr(math, name) for name in (
    *_ONE_ARGUMENT, *_TWO_ARGUMENTS, *_INTEGRAL, *_PREDICATES, "log", "hypot"))


def call(function: Callable, *args: object, **kwargs: object) -> object:
    """``function(*args)`` (a function of Python's ``math`` module) with staged arguments."""
    name = getattr(function, "__name__", str(function))
    if function not in FUNCTIONS:
        raise StagingTypeError(
            f"math.{name} of a staged value{_at()} is not supported; the staged math functions "
            f"are {', '.join(sorted('math.' + f.__name__ for f in FUNCTIONS))} (NumPy's "
            "functions of staged arrays are staged too)")
    if kwargs:
        raise TypeError(f"math.{name}() takes no keyword arguments")
    _check_arity(function, len(args))
    if name in _INTEGRAL:
        return _integral(name, args[0])
    xs = [_as_float(x, name) for x in args]
    if name in _PREDICATES:
        result = array_api.ufunc(name, xs[0])
        value_info.mark_weak(result.value)
        return result
    if name == "log":
        return _log(*xs)
    if name == "hypot":
        if len(xs) > 2:
            raise StagingTypeError(f"math.hypot of more than two staged values{_at()} is not "
                                   "supported; use np.linalg.norm(np.array([...]))")
        return _apply("hypot2" if len(xs) == 2 else "hypot", *xs)
    result = _apply(name, *xs)
    if name in _ONE_ARGUMENT:
        _check_one(name, xs[0], result)
    else:
        _check_two(name, *xs, result)
    return result


def _check_arity(function: Callable, count: int) -> None:
    """Python's TypeError for a wrong number of arguments (the function's own message)."""
    try:
        function(*([0.5] * count))
    except TypeError:
        raise
    except (ValueError, OverflowError, ZeroDivisionError):
        pass


def _as_float(x: object, name: str) -> Tensor:
    """``float(x)`` as Python's math functions convert their arguments: a float64 tensor."""
    if isinstance(x, Tensor):
        if x.ndim > 0:
            raise TypeError("only 0-dimensional arrays can be converted to Python scalars")
        if x.dtype.kind == "c":
            _refuse_complex(x, name)
        return x if x.dtype == np.float64 else array_api.astype(x, np.float64)
    if isinstance(x, Staged):
        raise StagingTypeError(f"math.{name} of a staged {type(x).__name__}{_at()} is not "
                               "supported: it takes numbers")
    if isinstance(x, complex):
        raise TypeError("must be real number, not complex")
    return constant(np.float64(float(x)))  # Python's errors for other types and huge ints


def _refuse_complex(x: Tensor, name: str) -> None:
    if value_info.is_weak(x.value):
        raise TypeError("must be real number, not complex")
    raise StagingTypeError(
        f"math.{name} of a staged complex {x.dtype.name} value{_at()} is not supported: Python "
        "casts a NumPy complex to its real part with a ComplexWarning (staged code does not "
        f"stage `.real` yet); use np.{name if hasattr(np, name) else '...'} for complex "
        "results, or call it outside the staged function")


def _apply(name: str, *xs: Tensor) -> Tensor:
    (result,) = tracing.emit("python_math", tuple(x.value for x in xs), {"function": name})
    value_info.mark_weak(result)
    return Tensor(result)


def _ufunc(name: str, *xs: object) -> Tensor:
    return array_api.ufunc(name, *xs)


def _and(*tests: Tensor) -> Tensor:
    result = tests[0]
    for test in tests[1:]:
        result = _ufunc("logical_and", result, test)
    return result


def _raise_if(test: Tensor, error: BaseException) -> None:
    tracing.emit("raise_if", (test.value,), {"exception": type(error)(*error.args)})


def _check_one(name: str, x: Tensor, result: Tensor) -> None:
    """CPython's ``math_1``: a nan from a non-nan argument is a domain error; an infinity from a
    finite argument an overflow (exp, expm1, sinh, cosh) or a domain error; gamma and lgamma
    check their poles (non-positive integers) first."""
    if name in ("gamma", "lgamma"):
        pole = _and(_ufunc("isfinite", x), _ufunc("equal", x, _ufunc("floor", x)),
                    _ufunc("less_equal", x, 0.0))
        if name == "gamma":
            pole = _ufunc("logical_or", pole, _ufunc("equal", x, -math.inf))
        _raise_if(pole, _DOMAIN[name])
    elif name in _DOMAIN or name in ("exp", "expm1", "sinh", "cosh"):
        if name in _DOMAIN:
            _raise_if(_and(_ufunc("isnan", result), _ufunc("logical_not", _ufunc("isnan", x))),
                      _DOMAIN[name])
    else:
        return  # no errors: atan, tanh, asinh, erf, erfc, degrees, radians, fabs
    infinite = _and(_ufunc("isinf", result), _ufunc("isfinite", x))
    _raise_if(infinite, _RANGE[name] if name in _RANGE else _DOMAIN[name])


def _check_two(name: str, x: Tensor, y: Tensor, result: Tensor) -> None:
    if name == "pow":  # CPython's math_pow: libm decides finite ** finite
        finite = _and(_ufunc("isfinite", x), _ufunc("isfinite", y))
        _raise_if(_and(finite, _ufunc("isnan", result)), _DOMAIN2["pow"])
        infinite = _and(finite, _ufunc("isinf", result))
        _raise_if(_and(infinite, _ufunc("equal", x, 0.0)), _DOMAIN2["pow"])
        _raise_if(infinite, _RANGE["pow"])
    elif name == "fmod":
        _raise_if(_and(_ufunc("isnan", result), _ufunc("logical_not", _ufunc("isnan", x)),
                       _ufunc("logical_not", _ufunc("isnan", y))), _DOMAIN2["fmod"])


def _log(x: Tensor, base: Tensor | None = None) -> Tensor:
    """``math.log(x[, base])``: ``log(x) / log(base)``, each checked, as CPython."""
    num = _apply("log", x)
    _check_one("log", x, num)
    if base is None:
        return num
    den = _apply("log", base)
    _check_one("log", base, den)
    _raise_if(_ufunc("equal", den, 0.0), _LOG_BASE_ZERO)
    result = _ufunc("true_divide", num, den)
    value_info.mark_weak(result.value)
    return result


def _integral(name: str, x: object) -> Tensor:
    """``math.floor/ceil/trunc(x)``: a Python int. A Python number rounds exactly (an int is
    itself); a NumPy value goes through ``float(x)`` as Python does (it has no ``__floor__``),
    except for ``trunc``, which only Python numbers and np.float64 scalars define."""
    if not isinstance(x, Tensor):
        if isinstance(x, Staged):
            raise StagingTypeError(f"math.{name} of a staged {type(x).__name__}{_at()} is not "
                                   "supported: it takes numbers")
        return getattr(math, name)(x)
    if x.ndim > 0:
        raise TypeError(f"type numpy.ndarray doesn't define __{name}__ method" if name == "trunc"
                        else "only 0-dimensional arrays can be converted to Python scalars")
    weak = value_info.is_weak(x.value)
    if weak and x.dtype.kind == "c":
        raise TypeError("must be real number, not complex" if name != "trunc"
                        else "type complex doesn't define __trunc__ method")
    if weak and x.dtype.kind in "bi":
        return python_numbers.int_of(x)
    if name == "trunc" and not weak and (x.dtype != np.float64 or (
            value_info.aliased_argument(x.value) is not None
            and not value_info.is_scalar_argument(x.value))):
        kind = "ndarray" if value_info.aliased_argument(x.value) is not None and (
            not value_info.is_scalar_argument(x.value)) else x.dtype.name
        raise TypeError(f"type numpy.{kind} doesn't define __trunc__ method")
    if x.dtype.kind == "c":
        _refuse_complex(x, name)
    x = x if x.dtype == np.float64 else array_api.astype(x, np.float64)
    return python_numbers.int_of(_ufunc(name, x))


register_operator_hook("math_call", call)
