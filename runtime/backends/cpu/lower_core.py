"""CPU lowerings of the core ops: constants, casts, element-wise ufuncs, where/clip, dim/size.

Exact NumPy 2 dtypes are the point of most of this code. Numba does not follow NumPy's
promotion for scalars (``int32 + int32`` is int64 in njit, a Python float promotes float32), so
every operand is first cast to the dtypes of the ufunc loop NumPy itself picks
(``ufunc.resolve_dtypes``), and every 0-d result is wrapped in its dtype's constructor
(``np.int32(a + b)``): identical inputs make Numba pick the same loop as NumPy, and the wrapper
is free after LLVM. 0-d tensors are native scalars: Python operators where their njit semantics
equal the ufunc's, else the ufunc called on scalars.
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cpu import run_errors
from autostage.runtime.backends.cpu.codegen import Emitter, is_scalar, lowering, np_dtype
from autostage.runtime.ops.elementwise import UFUNCS
from autostage.runtime.types import TensorType

# Ops whose Python operator in njit computes exactly the ufunc once operands share the loop dtype.
_OPERATORS = {
    "add": "{0} + {1}", "subtract": "{0} - {1}", "multiply": "{0} * {1}",
    "true_divide": "{0} / {1}", "negative": "-{0}", "positive": "{0}",
    "equal": "{0} == {1}", "not_equal": "{0} != {1}", "less": "{0} < {1}",
    "less_equal": "{0} <= {1}", "greater": "{0} > {1}", "greater_equal": "{0} >= {1}",
    "bitwise_and": "{0} & {1}", "bitwise_or": "{0} | {1}", "bitwise_xor": "{0} ^ {1}",
    "logical_and": "{0} and {1}", "logical_or": "{0} or {1}", "logical_not": "not {0}",
    "logical_xor": "{0} != {1}",
}
# NumPy's integer semantics: a zero divisor gives 0, and x // -1 wraps (MIN // -1 is MIN) where
# the machine division would trap (SIGFPE); constant divisors fold the checks away.
_INTEGER_OPERATORS = {
    "remainder": "(0 if {1} == 0 or {1} == -1 else {0} % {1})",
    "floor_divide": "(0 if {1} == 0 else -{0} if {1} == -1 else {0} // {1})",
}
# NumPy shifts by a count outside [0, bits) give 0 (right shift of a negative value: -1), where
# the machine shift (and Numba's) is undefined: 5 << 64 was 5, 5 << -1 was MIN.
_SHIFTS = {
    "left_shift": ("({0} << {1} if 0 <= {1} < {w} else {z})",
                   "np.where(({1} >= 0) & ({1} < {w}), np.left_shift({0}, {1}), {z})"),
    "right_shift": ("({0} >> {1} if 0 <= {1} < {w} else ({z} - {one} if {0} < 0 else {z}))",
                    "np.where(({1} >= 0) & ({1} < {w}), np.right_shift({0}, {1}), "
                    "np.where({0} < 0, {z} - {one}, {z}))"),
}
_BOOL_OPERANDS = {"logical_and", "logical_or", "logical_not", "logical_xor"}
# Ufuncs Numba lacks (or types differently), as expressions on operands of the loop dtype.
_SUBSTITUTES = {
    "positive": "{0}.copy()",
    "float_power": "np.power({0}, {1})",  # its loops are float64/complex128 only: casts done
    "heaviside": "np.where({0} < 0, {z}, np.where({0} > 0, {one}, np.where({0} == 0, {1}, {0})))",
    "conjugate": "np.conjugate({0})",
}


def cast_expr(expr: str, source: TensorType, dtype: np.dtype) -> str:
    """``expr`` (of type ``source``) converted to ``dtype`` with NumPy's ``astype`` semantics."""
    dtype = np.dtype(dtype)
    if source.dtype == dtype:
        return expr
    if not is_scalar(source):
        return f"{expr}.astype({np_dtype(dtype)})"
    if dtype == np.bool_:
        return f"({expr} != 0)"
    if source.dtype.kind == "c" and dtype.kind != "c":
        expr = f"{expr}.real"  # NumPy drops the imaginary part (with a ComplexWarning)
    return f"{np_dtype(dtype)}({expr})"


def wrap_scalar(expr: str, dtype: np.dtype) -> str:
    """A 0-d result of exactly ``dtype`` (Numba may have widened small ints or floats)."""
    return f"bool({expr})" if np.dtype(dtype) == np.bool_ else f"{np_dtype(dtype)}({expr})"


@lowering("constant")
def _constant(op: ir.Op, em: Emitter) -> None:
    em.line(f"{em.name(op.results[0])} = {em.literal(op.attrs['value'])}")


@lowering("cast")
def _cast(op: ir.Op, em: Emitter) -> None:
    (x,), (out,) = op.operands, op.results
    expr = cast_expr(em.name(x), x.type, out.type.dtype)
    if expr == em.name(x) and not is_scalar(x.type):
        expr += ".copy()"  # astype copies even to the same dtype
    em.line(f"{em.name(out)} = {expr}")


def _loop_dtypes(op: ir.Op) -> tuple[np.dtype, ...]:
    """The input dtypes of the loop NumPy runs for this op (NEP 50: all operands typed)."""
    ufunc = UFUNCS[op.name]
    dtypes = tuple(v.type.dtype for v in op.operands)
    try:
        return tuple(ufunc.resolve_dtypes(dtypes + (None,) * ufunc.nout)[:ufunc.nin])
    except Exception:  # noqa: BLE001 - no loop: Numba will report it, translated  # pragma: no cover
        return dtypes


def _ufunc(op: ir.Op, em: Emitter) -> None:
    out = op.results[0]
    run_errors.check_broadcast(em, op, op.operands)
    loop = _loop_dtypes(op)
    args = [cast_expr(em.name(v), v.type, dt) for v, dt in zip(op.operands, loop, strict=True)]
    if op.name in _SHIFTS:
        dtype = np_dtype(out.type.dtype)
        template = _SHIFTS[op.name][0 if is_scalar(out.type) else 1]
        expr = template.format(*args, w=loop[0].itemsize * 8, z=f"{dtype}(0)", one=f"{dtype}(1)")
        expr = wrap_scalar(expr, out.type.dtype) if is_scalar(out.type) else (
            f"({expr}).astype({dtype})")
    elif is_scalar(out.type):
        if op.name in _INTEGER_OPERATORS and loop[0].kind in "iu":
            # Scalar ufunc calls go through Numba's ufunc machinery (3x slower in Collatz, and
            # np.floor_divide(MIN, -1) traps); `%` and `//` have NumPy's floor semantics.
            expr = _INTEGER_OPERATORS[op.name].format(*args)
        elif op.name in _OPERATORS and not (op.name in _BOOL_OPERANDS and loop[0] != np.bool_):
            expr = _OPERATORS[op.name].format(*args)
            if op.name == "positive":
                expr = f"({expr})"
        else:
            expr = _call_expr(op.name, args, out.type.dtype)
        if not (op.name in _OPERATORS and out.type.dtype == np.bool_):
            expr = wrap_scalar(expr, out.type.dtype)  # operators on bools give bools
    else:
        expr = _call_expr(op.name, args, out.type.dtype)
    em.line(f"{em.name(out)} = {expr}")


def _call_expr(name: str, args: list[str], dtype: np.dtype) -> str:
    template = _SUBSTITUTES.get(name)
    if template is None:
        return f"np.{UFUNCS[name].__name__}({', '.join(args)})"
    return template.format(*args, z=np_dtype(dtype) + "(0)", one=np_dtype(dtype) + "(1)")


for _name in UFUNCS:
    lowering(_name)(_ufunc)


@lowering("where")
def _where(op: ir.Op, em: Emitter) -> None:
    (c, x, y), (out,) = op.operands, op.results
    run_errors.check_broadcast(em, op, op.operands)
    dtype = out.type.dtype
    xs, ys = (cast_expr(em.name(v), v.type, dtype) for v in (x, y))
    if is_scalar(out.type):
        em.line(f"{em.name(out)} = {xs} if {em.name(c)} else {ys}")
    else:
        em.line(f"{em.name(out)} = np.where({em.name(c)}, {xs}, {ys})")


@lowering("clip")
def _clip(op: ir.Op, em: Emitter) -> None:
    # np.clip is minimum(maximum(x, lo), hi) in NumPy 2, NaNs propagating.
    out = op.results[0]
    run_errors.check_broadcast(em, op, op.operands)
    x, lo, hi = (cast_expr(em.name(v), v.type, out.type.dtype) for v in op.operands)
    expr = f"np.minimum(np.maximum({x}, {lo}), {hi})"
    if is_scalar(out.type):
        expr = wrap_scalar(expr, out.type.dtype)
    em.line(f"{em.name(out)} = {expr}")


@lowering("dim")
def _dim(op: ir.Op, em: Emitter) -> None:
    em.line(f"{em.name(op.results[0])} = np.int64({em.name(op.operands[0])}.shape"
            f"[{op.attrs['axis']}])")


@lowering("size")
def _size(op: ir.Op, em: Emitter) -> None:
    (x,) = op.operands
    size = "1" if is_scalar(x.type) else f"{em.name(x)}.size"
    em.line(f"{em.name(op.results[0])} = np.int64({size})")
