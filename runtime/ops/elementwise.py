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

import math
import operator
import warnings

import numpy as np
from autostage.runtime import dtype_rules, effects, op_registry
from autostage.runtime.ops.vjp_support import active, builders, const
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
# Ops whose Python operator on NumPy scalars (NumPy's scalar math) can differ from the ufunc's
# loop, for the ``scalar_math`` attr (``array_api.scalar_math``): complex ordering compares the
# parts lexicographically (``0j < complex(1, nan)`` is True; the loop gives False where a part is
# NaN), complex ``abs`` is libm's hypot (the loop's SIMD form can differ by an ulp), a complex
# product or square rounds each product (the loop fuses them: ``complex_products``; NumPy's
# np.square of a complex NumPy scalar is its scalar math, np.multiply of two is the loop).
SCALAR_MATH = {"less": operator.lt, "less_equal": operator.le, "greater": operator.gt,
               "greater_equal": operator.ge, "absolute": operator.abs, "multiply": operator.mul,
               "square": lambda z: z * z}


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
        if op.attrs.get("scalar_math"):
            return (np.asarray(SCALAR_MATH[name](*[np.asarray(v)[()] for v in values])),)
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
                         doc=f"element-wise np.{_ufunc.__name__}, broadcasting; attrs: "
                             "scalar_math (optional, 0-d operands: Python's operator on NumPy "
                             "scalars, SCALAR_MATH)",
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


# -- reverse-mode derivatives (runtime/autodiff): cotangent of each operand given the result's ---
# Written with ops that have VJPs themselves, so gradients of gradients work; ``b`` is
# runtime/autodiff/build. JAX's conventions where a derivative is a choice: ties of max/min
# split the cotangent, d(a**b)/db is 0 where a == 0.
# op -> d(b, x, y): the derivative of y = op(x), in y's dtype, multiplying the cotangent.
_LN2, _LN10 = math.log(2), math.log(10)
DERIVATIVES = {
    "exp": lambda b, x, y: y,
    "expm1": lambda b, x, y: b.add(y, const(y, 1)),
    "exp2": lambda b, x, y: b.scale(y, _LN2),
    "log": lambda b, x, y: b.div(const(y, 1), x),
    "log1p": lambda b, x, y: b.div(const(y, 1), b.add(x, const(y, 1))),
    "log2": lambda b, x, y: b.div(const(y, 1 / _LN2), x),
    "log10": lambda b, x, y: b.div(const(y, 1 / _LN10), x),
    "sqrt": lambda b, x, y: b.div(const(y, 0.5), y),
    "cbrt": lambda b, x, y: b.div(const(y, 1 / 3), b.op1("square", y)),
    "square": lambda b, x, y: b.scale(x, 2),
    "reciprocal": lambda b, x, y: b.neg(b.op1("square", y)),
    "sin": lambda b, x, y: b.op1("cos", x),
    "cos": lambda b, x, y: b.neg(b.op1("sin", x)),
    "tan": lambda b, x, y: b.add(const(y, 1), b.op1("square", y)),
    "arcsin": lambda b, x, y: b.div(const(y, 1), b.op1("sqrt", _one_minus_square(b, x))),
    "arccos": lambda b, x, y: b.div(const(y, -1), b.op1("sqrt", _one_minus_square(b, x))),
    "arctan": lambda b, x, y: b.div(const(y, 1), b.add(const(y, 1), b.op1("square", x))),
    "sinh": lambda b, x, y: b.op1("cosh", x),
    "cosh": lambda b, x, y: b.op1("sinh", x),
    "tanh": lambda b, x, y: b.sub(const(y, 1), b.op1("square", y)),
    "arcsinh": lambda b, x, y: b.div(
        const(y, 1), b.op1("sqrt", b.add(b.op1("square", x), const(y, 1)))),
    "arccosh": lambda b, x, y: b.div(const(y, 1), b.op1("sqrt", b.mul(
        b.sub(x, const(y, 1)), b.add(x, const(y, 1))))),
    "arctanh": lambda b, x, y: b.div(const(y, 1), _one_minus_square(b, x)),
    "absolute": lambda b, x, y: b.op1("sign", x),
    "deg2rad": lambda b, x, y: const(y, math.pi / 180),
    "rad2deg": lambda b, x, y: const(y, 180 / math.pi),
}


def _one_minus_square(b, x):
    return b.sub(const(x, 1), b.op1("square", x))


def _unary_vjp(derivative):
    """A VJP ``ct * derivative(x, y)`` for a unary op with operand x and result y."""
    def vjp(op, cts: tuple) -> tuple:
        b = builders()
        return (b.mul(cts[0], derivative(b, op.operands[0], op.results[0])),)
    return vjp


def _binary_vjp(rule):
    """A VJP from ``rule(b, ct, x, p, y, wanted)`` (operands x and p, result y), which builds
    the cotangent of each operand whose entry in ``wanted`` is true (the others may be None)."""
    def vjp(op, cts: tuple) -> tuple:
        build = builders()
        wanted = tuple(active(v) for v in op.operands)
        return rule(build, cts[0], *op.operands, op.results[0], wanted)
    return vjp


def _power(name: str):
    """d/da a**b = b * a**(b-1) (0 where b == 0); d/db = y * log(a), 0 where a == 0 (JAX's)."""
    def rule(b, ct, x, p, y, wanted):
        da = db = None
        if wanted[0]:
            slope = b.mul(p, b.op1(name, x, b.sub(p, const(p, 1))))
            da = b.mul(ct, b.op1("where", b.op1("equal", p, const(p, 0)),
                                 const(ct, 0), slope))
        if wanted[1]:
            zero = b.op1("equal", x, const(x, 0))
            log = b.op1("log", b.op1("where", zero, const(x, 1), x))
            db = b.mul(ct, b.op1("where", zero, const(ct, 0), b.mul(y, log)))
        return da, db
    return rule


def _extremum(b, ct, x, p, y, wanted):
    """max/min-like ops: the cotangent goes to the operand that was chosen; ties split it."""
    def share(mine, other):
        tie = b.op1("where", b.op1("equal", other, y), const(ct, 0.5), const(ct, 1))
        return b.mul(ct, b.op1("where", b.op1("equal", mine, y), tie, const(ct, 0)))
    return (share(x, p) if wanted[0] else None, share(p, x) if wanted[1] else None)


def _arctan2(b, ct, x, p, y, wanted):
    scaled = b.div(ct, b.add(b.op1("square", x), b.op1("square", p)))
    return (b.mul(scaled, p) if wanted[0] else None,
            b.neg(b.mul(scaled, x)) if wanted[1] else None)


def _hypot(b, ct, x, p, y, wanted):
    scaled = b.div(ct, y)
    return (b.mul(scaled, x) if wanted[0] else None, b.mul(scaled, p) if wanted[1] else None)


def _logaddexp(exp: str):
    def rule(b, ct, x, p, y, wanted):
        return (b.mul(ct, b.op1(exp, b.sub(x, y))) if wanted[0] else None,
                b.mul(ct, b.op1(exp, b.sub(p, y))) if wanted[1] else None)
    return rule


def _copysign(b, ct, x, p, y, wanted):
    """|a| with b's sign: -ct where the signs (signbits: -0.0 counts) differ, else ct."""
    flipped = b.op1("logical_xor", b.op1("signbit", x), b.op1("signbit", p))
    return (b.op1("where", flipped, b.neg(ct), ct), None)


def _remainder(quotient):
    """a - b * q(a, b) with q piecewise constant: (ct, -ct * q)."""
    def rule(b, ct, x, p, y, wanted):
        return (ct, b.neg(b.mul(ct, quotient(b, x, p))) if wanted[1] else None)
    return rule


# op -> rule(b, ct, x, p, y, wanted): the cotangents of operands x and p (see _binary_vjp).
BINARY_RULES = {
    "add": lambda b, ct, x, p, y, w: (ct, ct),
    "subtract": lambda b, ct, x, p, y, w: (ct, b.neg(ct)),
    "multiply": lambda b, ct, x, p, y, w: (b.mul(ct, p) if w[0] else None,
                                           b.mul(ct, x) if w[1] else None),
    "true_divide": lambda b, ct, x, p, y, w: (
        b.div(ct, p) if w[0] else None, b.neg(b.div(b.mul(ct, y), p)) if w[1] else None),
    "power": _power("power"),
    "float_power": _power("float_power"),
    "maximum": _extremum, "minimum": _extremum, "fmax": _extremum, "fmin": _extremum,
    "arctan2": _arctan2,
    "hypot": _hypot,
    "logaddexp": _logaddexp("exp"),
    "logaddexp2": _logaddexp("exp2"),
    "copysign": _copysign,
    "remainder": _remainder(lambda b, x, p: b.op1("floor_divide", x, p)),
    "fmod": _remainder(lambda b, x, p: b.op1("trunc", b.div(x, p))),
}
# Ops whose results are piecewise constant in their operands, or integers/booleans.
_NO_GRADIENT = (
    "sign", "floor", "ceil", "rint", "trunc", "isnan", "isinf", "isfinite", "signbit",
    "logical_not", "invert", "floor_divide", "heaviside", "logical_and", "logical_or",
    "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
    "gcd", "lcm", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal")


def _vjp_where(op, cts: tuple) -> tuple:
    b = builders()
    cond, ct = op.operands[0], cts[0]
    zero = const(ct, 0)
    return (None, b.op1("where", cond, ct, zero) if active(op.operands[1]) else None,
            b.op1("where", cond, zero, ct) if active(op.operands[2]) else None)


def _vjp_clip(op, cts: tuple) -> tuple:
    """np.clip(x, lo, hi) is minimum(maximum(x, lo), hi): the cotangent goes to x where
    lo <= x <= hi, to hi where x > hi or lo > hi (NumPy then gives hi), else to lo."""
    b = builders()
    x, lo, hi = op.operands
    ct = cts[0]
    zero = const(ct, 0)
    to_hi = b.op1("logical_or", b.op1("greater", x, hi), b.op1("greater", lo, hi))
    to_lo = b.op1("logical_and", b.op1("less", x, lo), b.op1("less_equal", lo, hi))
    to_x = b.op1("logical_not", b.op1("logical_or", to_hi, to_lo))
    return tuple(b.op1("where", mask, ct, zero) if active(v) else None
                 for v, mask in zip(op.operands, (to_x, to_lo, to_hi), strict=True))


def _identity_vjp(op, cts: tuple) -> tuple:
    return (cts[0],)


def _vjp_rules() -> dict:
    rules = {name: _unary_vjp(d) for name, d in DERIVATIVES.items()}
    rules.update({name: _binary_vjp(rule) for name, rule in BINARY_RULES.items()})
    rules.update({
        "negative": lambda op, cts: (builders().neg(cts[0]),),
        "positive": _identity_vjp,
        "conjugate": _identity_vjp,  # real values only (the sweep refuses complex ones)
        "cast": _identity_vjp,  # the sweep casts the cotangent back (build.like)
        "where": _vjp_where,
        "clip": _vjp_clip,
    })
    rules.update(dict.fromkeys(_NO_GRADIENT, op_registry.NO_GRADIENT))
    return rules


for _name, _vjp in _vjp_rules().items():
    op_registry.lookup(_name).vjp = _vjp
