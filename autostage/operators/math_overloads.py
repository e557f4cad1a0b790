"""Overloads of Python's ``math`` functions: staged when an argument is a staged value.

``math.exp(x)`` of a staged ``x`` would call ``float(x)``, which a staged tensor refuses (it has
no value at trace time). The call-trees converter routes calls of the functions listed here to
their overload (``ag__.math_exp(x)``), as it does for NumPy's creation functions; on Python
values each overload is the ``math`` function itself. While a function is traced, a call with a
staged argument goes to the runtime hook ``math_call`` (``runtime/python_math.py``), which
stages the supported functions and refuses the others clearly.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from autostage.operators.numpy_overloads import register
from autostage.runtime import any_staged, is_tracing, stage_operator

# The functions of ``math`` that take numbers (constants and constructors are not calls).
NAMES = ("acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "copysign", "cos",
         "cosh", "degrees", "erf", "erfc", "exp", "expm1", "fabs", "floor", "fmod", "gamma",
         "hypot", "isfinite", "isinf", "isnan", "lgamma", "log", "log10", "log1p", "log2", "pow",
         "radians", "sin", "sinh", "sqrt", "tan", "tanh", "trunc", "isclose", "frexp", "ldexp",
         "modf", "factorial", "gcd", "lcm", "isqrt", "comb", "perm", "remainder", "cbrt",
         "exp2", "dist", "prod", "fsum", "nextafter", "ulp")


def _overload(function: Callable[..., Any]) -> Callable[..., Any]:
    def overload(*args: Any, **kwargs: Any) -> Any:
        if is_tracing() and (any_staged(args) or (kwargs and any_staged(kwargs.values()))):
            return stage_operator("math_call", function, *args, **kwargs)
        return function(*args, **kwargs)

    return register(function, overload, f"math.{function.__name__}",
                    "staged when an argument is staged")


OVERLOADS: dict[str, Callable[..., Any]] = {}
for _name in NAMES:
    if hasattr(math, _name):
        _overload_function = _overload(getattr(math, _name))
        OVERLOADS[_overload_function.__name__] = _overload_function
globals().update(OVERLOADS)
__all__ = ["OVERLOADS", *OVERLOADS]
