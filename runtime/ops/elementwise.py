"""Element-wise ops: one op per NumPy ufunc (generated from the tables below), ``where``,
``clip`` and ``cast``.

Every op broadcasts its operands (unknown dimensions allowed) and has exactly the result dtype
NumPy gives for its operand dtypes; operands are always typed (weak Python scalars were turned
into typed constants by the front end, ``runtime/array_api.py``). The NumPy reference applies the
ufunc itself, so values match NumPy bit for bit. Printed: ``%3:f32[?] = add %1 %2``. All are
element-wise for fusion (``OpDef.elementwise``) except ``heaviside``, which Numba cannot compute
per element.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np
from autostage.runtime import dtype_rules, effects, op_registry
from autostage.runtime.types import TensorType

# op name -> NumPy ufunc. Op names are NumPy's ufunc names, except that ``np.divide`` stages as
# ``true_divide`` (its Python operator's name) and ``np.bitwise_not`` is ``invert`` (its real name).
UNARY: dict[str, np.ufunc] = {name: getattr(np, name) for name in (
    "negative", "positive", "absolute", "sign", "conjugate",
    "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt", "square",
    "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg",
    "floor", "ceil", "rint", "trunc", "isnan", "isinf", "isfinite", "signbit",
    "logical_not", "invert",
)}
BINARY: dict[str, np.ufunc] = {name: getattr(np, name) for name in (
    "add", "subtract", "multiply", "floor_divide", "remainder", "fmod", "power", "float_power",
    "arctan2", "hypot", "logaddexp", "logaddexp2", "copysign", "heaviside",
    "maximum", "minimum", "fmax", "fmin",
    "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "gcd", "lcm",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
)}
BINARY["true_divide"] = np.divide
UFUNCS: dict[str, np.ufunc] = {**UNARY, **BINARY}
# NumPy ufunc name -> op name, for ``__array_ufunc__``.
OP_OF_UFUNC: dict[str, str] = {u.__name__: name for name, u in UFUNCS.items()}
# Arithmetic on 0-d values runs in the interpreter as Python operators on NumPy scalars, as the
# plain program's ``p *= v`` does (faster than the ufunc on 0-d arrays; floating-point errors
# are ignored there). Values are those of the ufunc; used only for operands of one dtype (the
# result dtype is theirs then).
SCALAR_OPERATORS = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "true_divide": operator.truediv, "floor_divide": operator.floordiv,
    "remainder": operator.mod, "power": operator.pow, "bitwise_and": operator.and_,
    "bitwise_or": operator.or_, "bitwise_xor": operator.xor, "left_shift": operator.lshift,
    "right_shift": operator.rshift, "negative": operator.neg, "positive": operator.pos,
    "absolute": operator.abs, "invert": operator.invert,
}


def _tensor_types(operand_types: tuple, what: str) -> tuple[TensorType, ...]:
    for t in operand_types:
        if not isinstance(t, TensorType):
            raise TypeError(f"{what} expects tensors, got {t}")
    return operand_types


def _ufunc_rule(name: str, ufunc: np.ufunc):
    def infer(operand_types: tuple, attrs: dict) -> tuple:
        types = _tensor_types(operand_types, name)
        if len(types) != ufunc.nin:
            raise TypeError(f"{name} takes {ufunc.nin} operands, got {len(types)}")
        shape = dtype_rules.broadcast_shapes(*(t.shape for t in types))
        dtype = dtype_rules.strong_result_dtype(ufunc, tuple(t.dtype for t in types))
        return (TensorType(dtype, shape),)

    def evaluate(op, values: tuple, run) -> tuple:
        return (np.asarray(ufunc(*values)),)

    return infer, evaluate


def _power_raises(op) -> tuple:
    """NumPy's ValueError for an integer to a negative integer power (an integer result), as
    well as the broadcast errors of every element-wise op."""
    if op.results[0].type.dtype.kind in "iu":
        return (ValueError,)
    return effects.broadcast_errors(op)


for _name, _ufunc in UFUNCS.items():
    _infer, _evaluate = _ufunc_rule(_name, _ufunc)
    op_registry.register(_name, _infer, _evaluate,
                         doc=f"element-wise np.{_ufunc.__name__}, broadcasting; no attrs",
                         elementwise=True, fresh_results=_name != "positive",
                         scalar_operator=SCALAR_OPERATORS.get(_name),
                         raises=_power_raises if _name == "power" else None)


def _infer_where(operand_types: tuple, attrs: dict) -> tuple:
    types = _tensor_types(operand_types, "where")
    shape = dtype_rules.broadcast_shapes(*(t.shape for t in types))
    dtype = dtype_rules.strong_result_dtype(np.where, tuple(t.dtype for t in types))
    return (TensorType(dtype, shape),)


def _infer_clip(operand_types: tuple, attrs: dict) -> tuple:
    types = _tensor_types(operand_types, "clip")
    shape = dtype_rules.broadcast_shapes(*(t.shape for t in types))
    dtype = dtype_rules.strong_result_dtype(np.clip, tuple(t.dtype for t in types))
    return (TensorType(dtype, shape),)


def _infer_cast(operand_types: tuple, attrs: dict) -> tuple:
    (x,) = _tensor_types(operand_types, "cast")
    return (TensorType(attrs["dtype"], x.shape),)


op_registry.register(
    "where", _infer_where, lambda op, v, run: (np.asarray(np.where(*v)),),
    doc="operands cond, x, y: np.where(cond, x, y), broadcasting; no attrs", elementwise=True,
    fresh_results=True)
op_registry.register(
    "clip", _infer_clip, lambda op, v, run: (np.asarray(np.clip(*v)),),
    doc="operands x, lo, hi: np.clip(x, lo, hi); no attrs (a missing bound stages as "
        "maximum/minimum)", elementwise=True, fresh_results=True)
def _evaluate_cast(op, values: tuple, run) -> tuple:
    with warnings.catch_warnings():  # the ComplexWarning was given once, at trace time
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        return (np.asarray(values[0]).astype(op.attrs["dtype"]),)


op_registry.register(
    "cast", _infer_cast, _evaluate_cast,
    doc="attrs: dtype (np.dtype); x.astype(dtype) (unsafe casting, as astype)", elementwise=True,
    fresh_results=True)
