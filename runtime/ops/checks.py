"""Run-time checks of Python-number arithmetic: ``raise_if`` and ``int_overflows``.

Python numbers in staged code (``x.shape[0]``, ``len(lst)``, a ``range`` index, ``int(t)``: weak
values) are computed as 0-d int64/float64 tensors, whose NumPy arithmetic differs from Python's
where Python raises: ``n // 0`` is 0 and ``m / 0.0`` is inf in NumPy, a ZeroDivisionError in
Python; ``n * n`` wraps in int64 where Python's int is exact. The front end
(``runtime/python_numbers.py``) stages such arithmetic with checks made of ordinary ops and these
two: ``int_overflows`` says whether exact integer arithmetic leaves the int64 range, and
``raise_if`` raises a fresh copy of its exception when its test is true. Both targets run them,
so staged code raises what Python raises (or a clear OverflowError) instead of a NumPy value.
A third op, ``python_arith``, computes what Python computes where NumPy's value differs in the
last bits: ``int / int`` (correctly rounded from the exact ints; NumPy converts each to float
first) and complex ``/`` and ``**`` (CPython's algorithms).

``raise_if``: operand 0 a ``bool[]`` test; attrs ``exception`` (the instance to copy) and, as the
``raise`` op's, ``formats`` (optional: arguments rendered from the other operands, e.g. the value
in "Python integer 3000000000 out of bounds for int32"); no results; a side effect (never
removed, folded or reordered). Printed: ``raise_if %3 ZeroDivisionError(...)``.
``int_overflows``: operands two int64 values (one for ``negative``/``absolute``), attrs ``op``
(``add``, ``subtract``, ``multiply``, ``left_shift``, ``power``, ``negative``, ``absolute``); a
bool result of the broadcast shape: whether Python's exact result is outside int64. A negative
``power`` exponent or ``left_shift`` count is not an overflow (checked separately: Python gives a
float, or raises ValueError).
``python_arith``: attrs ``op`` (``int_true_divide``: two int64 operands, a float64 result;
``complex_true_divide``, ``complex_power``: two complex128 operands and result); 0-d values
only; Python's own result (the interpreter calls Python's operators; the CPU target CPython's
algorithms compiled by Numba, ``backends/cpu/python_arith.py``). Never raises: where Python would,
the front end has staged a ``raise_if`` (a zero divisor before; an infinite power after).
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import dtype_rules, op_registry
from autostage.runtime.ops import exceptions
from autostage.runtime.types import TensorType

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
OVERFLOW_OPS = ("add", "subtract", "multiply", "left_shift", "power", "negative", "absolute")


def _exact(op: str, a: int, b: int = 0) -> int:
    """Python's exact result (0 where another check decides: negative exponents and counts)."""
    if op == "add":
        return a + b
    if op == "subtract":
        return a - b
    if op == "multiply":
        return a * b
    if op == "negative":
        return -a
    if op == "absolute":
        return abs(a)
    if b < 0:
        return 0
    if op == "left_shift":
        return 0 if a == 0 else (a << b if b < 128 else INT64_MAX + 1)
    # power: |a| >= 2 with a large exponent overflows; avoid computing huge powers
    if abs(a) <= 1 or b < 64:
        return a**b
    return INT64_MAX + 1


def overflows(op: str, *operands: int) -> bool:
    """Whether Python's exact ``op`` of the Python ints ``operands`` leaves the int64 range."""
    return not INT64_MIN <= _exact(op, *operands) <= INT64_MAX


def _infer_overflows(operand_types: tuple, attrs: dict) -> tuple:
    op = attrs["op"]
    if op not in OVERFLOW_OPS:
        raise TypeError(f"int_overflows: unknown op {op!r}")
    arity = 1 if op in ("negative", "absolute") else 2
    if len(operand_types) != arity or not all(
            isinstance(t, TensorType) and t.dtype == np.int64 for t in operand_types):
        raise TypeError(f"int_overflows {op} takes {arity} int64 operands, got {operand_types}")
    shape = dtype_rules.broadcast_shapes(*(t.shape for t in operand_types))
    return (TensorType(np.dtype(np.bool_), shape),)


def _evaluate_overflows(op, values: tuple, run) -> tuple:
    check = np.frompyfunc(lambda *xs: overflows(op.attrs["op"], *(int(x) for x in xs)),
                          len(values), 1)
    return (np.asarray(check(*values), dtype=np.bool_),)


def _infer_raise_if(operand_types: tuple, attrs: dict) -> tuple:
    test = operand_types[0] if operand_types else None
    if not (isinstance(test, TensorType) and test.dtype == np.bool_ and test.is_scalar):
        raise TypeError(f"raise_if needs a bool[] test, got {test}")
    if not isinstance(attrs.get("exception"), BaseException):
        raise TypeError("raise_if needs an exception instance (attr 'exception')")
    return ()


def _evaluate_raise_if(op, values: tuple, run) -> tuple:
    if bool(values[0]):
        raise exceptions.fresh(op.attrs["exception"], exceptions.arguments(op, values))
    return ()


PYTHON_ARITH = {"int_true_divide": (np.int64, np.float64),
                "complex_true_divide": (np.complex128, np.complex128),
                "complex_power": (np.complex128, np.complex128)}


def _infer_python_arith(operand_types: tuple, attrs: dict) -> tuple:
    op = attrs.get("op")
    if op not in PYTHON_ARITH:
        raise TypeError(f"python_arith: unknown op {op!r}")
    operand, result = (np.dtype(t) for t in PYTHON_ARITH[op])
    if len(operand_types) != 2 or not all(
            isinstance(t, TensorType) and t.dtype == operand and t.is_scalar
            for t in operand_types):
        raise TypeError(f"python_arith {op} takes two {operand}[] operands, got {operand_types}")
    return (TensorType(result, ()),)


def _python_result(op: str, a: object, b: object) -> object:
    """Python's value; where Python raises (checked by the caller's raise_if ops), what C gives:
    nan for a zero divisor, an infinite value for an overflowing power."""
    try:
        if op == "int_true_divide":
            return int(a) / int(b)
        if op == "complex_true_divide":
            return complex(a) / complex(b)
        return complex(a) ** complex(b)
    except ZeroDivisionError:
        return complex(np.nan, np.nan) if op != "int_true_divide" else np.nan
    except OverflowError:
        return complex(np.inf, np.nan)


def _evaluate_python_arith(op, values: tuple, run) -> tuple:
    dtype = PYTHON_ARITH[op.attrs["op"]][1]
    return (np.asarray(_python_result(op.attrs["op"], *values), dtype=dtype),)


op_registry.register(
    "python_arith", _infer_python_arith, _evaluate_python_arith, raises=(),
    doc="attrs: op (int_true_divide, complex_true_divide, complex_power); Python's result of the "
        "two 0-d operands (correctly rounded int/int, CPython's complex algorithms)")
op_registry.register(
    "int_overflows", _infer_overflows, _evaluate_overflows, raises=(),
    doc="attrs: op (add, subtract, multiply, left_shift, power, negative, absolute); whether "
        "Python's exact integer result of the int64 operands is outside int64")
op_registry.register(
    "raise_if", _infer_raise_if, _evaluate_raise_if, effects=op_registry.Effects(raises=True),
    raises=lambda op: (type(op.attrs["exception"]),), vjp=op_registry.NO_GRADIENT,
    doc="operands: bool[] test, then the values of formatted arguments; attrs: exception, "
        "formats (optional); raises a new exception like it when the test is true")

# No gradients: int_overflows has a bool result; python_arith divides integers, or computes with
# complex values, which the reverse sweep refuses before it asks for a rule.
op_registry.lookup("int_overflows").vjp = op_registry.NO_GRADIENT
op_registry.lookup("python_arith").vjp = op_registry.NO_GRADIENT
