"""The ``python_math`` op: a function of Python's ``math`` module on 0-d float64 values.

``math.exp(x)`` in staged code (``runtime/python_math.py``) is Python's own function of a Python
float: the interpreter target calls it (so its bits are CPython's, which NumPy's vectorised
ufuncs do not always give), the CPU target calls the same function of the ``math`` module inside
Numba (libm's, as CPython). The op never raises: where Python raises (``math.sqrt(-1.0)``,
``math.exp(1000.0)``) the interpreter gives what C gives (nan for a domain error, an infinity for
an overflow) and the front end stages ``raise_if`` checks with Python's exception.

Operands: one or two (``FUNCTIONS``) float64 0-d values; attrs ``function`` (the name in
``math``); result: one float64 0-d value.
"""

from __future__ import annotations

import math

import numpy as np
from autostage.runtime import op_registry
from autostage.runtime.ops.elementwise import BINARY_RULES, DERIVATIVES
from autostage.runtime.ops.vjp_support import active, builders, gradient_error
from autostage.runtime.types import TensorType

# name -> number of operands
FUNCTIONS = {name: 1 for name in (
    "exp", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sin", "cos", "tan", "asin", "acos",
    "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "gamma", "lgamma",
    "degrees", "radians", "fabs", "hypot")} | {
    name: 2 for name in ("atan2", "pow", "copysign", "fmod", "hypot2")}

_F64 = np.dtype(np.float64)


def _infer(operand_types: tuple, attrs: dict) -> tuple:
    name = attrs.get("function")
    if name not in FUNCTIONS:
        raise TypeError(f"python_math: unknown function {name!r}")
    if len(operand_types) != FUNCTIONS[name] or not all(
            isinstance(t, TensorType) and t.dtype == _F64 and t.is_scalar for t in operand_types):
        raise TypeError(f"python_math {name} takes {FUNCTIONS[name]} float64[] operands, got "
                        f"{operand_types}")
    return (TensorType(_F64, ()),)


def python_function(name: str):
    """The function of ``math`` that ``name`` stands for (``hypot2``: two-argument hypot)."""
    return getattr(math, "hypot" if name == "hypot2" else name)


def _evaluate(op, values: tuple, run) -> tuple:
    try:
        result = python_function(op.attrs["function"])(*(float(v) for v in values))
    except ValueError:  # checked by the front end's raise_if ops: C's value
        result = math.nan
    except OverflowError:
        result = math.inf
    return (np.asarray(result, dtype=np.float64),)


op_registry.register(
    "python_math", _infer, _evaluate,
    doc="attrs: function (a name in Python's math module); Python's math function of the "
        "float64[] operands (nan or inf where Python raises: the front end checks)", raises=())


# -- reverse-mode derivatives (runtime/autodiff) ------------------------------------------------
# Python's name -> the NumPy ufunc with the same derivative (elementwise.py holds the rules).
_UFUNC_OF = {
    "exp": "exp", "expm1": "expm1", "log": "log", "log2": "log2", "log10": "log10",
    "log1p": "log1p", "sqrt": "sqrt", "sin": "sin", "cos": "cos", "tan": "tan",
    "asin": "arcsin", "acos": "arccos", "atan": "arctan", "sinh": "sinh", "cosh": "cosh",
    "tanh": "tanh", "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh",
    "degrees": "rad2deg", "radians": "deg2rad", "fabs": "absolute", "hypot": "absolute",
    "atan2": "arctan2", "pow": "power", "copysign": "copysign", "fmod": "fmod",
    "hypot2": "hypot",
}
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _erf_slope(b, x):
    """d/dx erf(x) = 2 / sqrt(pi) * exp(-x**2)."""
    return b.scale(b.op1("exp", b.neg(b.op1("square", x))), _TWO_OVER_SQRT_PI)


def _vjp(op, cts: tuple) -> tuple:
    """The derivative of the NumPy ufunc that computes the same function (erf and erfc here);
    gamma and lgamma need the digamma function, which autostage does not have yet."""
    b, name, ct = builders(), op.attrs["function"], cts[0]
    x, y = op.operands[0], op.results[0]
    if name in ("erf", "erfc"):
        slope = _erf_slope(b, x)
        return (b.mul(ct, slope if name == "erf" else b.neg(slope)),)
    ufunc = _UFUNC_OF.get(name)
    if ufunc is None:
        raise gradient_error(op, f"math.{name} yet (its derivative needs the digamma function)")
    if len(op.operands) == 1:
        return (b.mul(ct, DERIVATIVES[ufunc](b, x, y)),)
    wanted = tuple(active(v) for v in op.operands)
    return BINARY_RULES[ufunc](b, ct, *op.operands, y, wanted)


op_registry.lookup("python_math").vjp = _vjp
