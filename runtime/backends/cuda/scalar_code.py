"""The per-element code of CUDA kernels: one expression per element-wise op, in NumPy's dtypes.

A kernel computes an element-wise op (or a fused chain of them) one element per thread, so each
op needs a scalar form that ``numba.cuda`` compiles and that equals NumPy's ufunc. Operands are
first cast to the dtypes of the loop NumPy itself picks (``ufunc.resolve_dtypes``) and each
result is wrapped in its dtype's constructor (``np.float32(a * b)``), as the cpu backend does.
Float functions call ``math`` (NVVM's libdevice; its float32 and float64 functions are within a
few ulp of NumPy's, see README "CUDA"). Only ops whose CUDA form has NumPy's exact semantics are
in the table: integer division and remainder (a zero divisor gives 0 in NumPy), shifts, float to
integer casts (NaN and overflow), complex numbers and float16 are not, and stay host ops
(``executor``). ``fuses`` is the question the fusion pass asks the cuda target.
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import ir
from autostage.runtime.ops.elementwise import UFUNCS
from autostage.runtime.types import TensorType

_ARITHMETIC = {
    "add": "{0} + {1}", "subtract": "{0} - {1}", "multiply": "{0} * {1}",
    "negative": "-{0}", "positive": "{0}", "absolute": "abs({0})", "square": "{0} * {0}",
    # NaN propagates from either side, as np.maximum / np.minimum do
    "maximum": "({0} if {0} >= {1} or {0} != {0} else {1})",
    "minimum": "({0} if {0} <= {1} or {0} != {0} else {1})",
}
_FLOAT_ONLY = {
    "true_divide": "{0} / {1}", "power": "{0} ** {1}", "reciprocal": "{one} / {0}",
    "fmax": "({0} if {0} >= {1} or {1} != {1} else {1})",
    "fmin": "({0} if {0} <= {1} or {1} != {1} else {1})",
    **{name: f"math.{name}({{0}})" for name in (
        "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "sinh",
        "cosh", "tanh")},
    "arctan2": "math.atan2({0}, {1})", "hypot": "math.hypot({0}, {1})",
    "arcsin": "math.asin({0})", "arccos": "math.acos({0})", "arctan": "math.atan({0})",
    "arcsinh": "math.asinh({0})", "arccosh": "math.acosh({0})", "arctanh": "math.atanh({0})",
    "isnan": "{0} != {0}", "isinf": "math.isinf({0})", "isfinite": "math.isfinite({0})",
}
_COMPARISONS = {
    "equal": "{0} == {1}", "not_equal": "{0} != {1}", "less": "{0} < {1}",
    "less_equal": "{0} <= {1}", "greater": "{0} > {1}", "greater_equal": "{0} >= {1}",
}
_LOGICAL = {
    "logical_and": "({0} != 0) and ({1} != 0)", "logical_or": "({0} != 0) or ({1} != 0)",
    "logical_not": "{0} == 0", "logical_xor": "({0} != 0) != ({1} != 0)",
}
_BOOL_RESULT = {**_COMPARISONS, **_LOGICAL, "isnan": "", "isinf": "", "isfinite": ""}
OTHER = frozenset({"where", "cast"})


def dtype_name(dtype: np.dtype) -> str:
    """The ``np.<type>`` expression of a dtype, valid in a kernel."""
    dtype = np.dtype(dtype)
    return "np.bool_" if dtype == np.bool_ else f"np.{dtype.name}"


def cast(expr: str, source: np.dtype, dtype: np.dtype) -> str:
    """``expr`` of dtype ``source`` converted to ``dtype`` (the cases ``supports`` admits)."""
    source, dtype = np.dtype(source), np.dtype(dtype)
    if source == dtype:
        return expr
    if dtype == np.bool_:
        return f"({expr} != 0)"
    return f"{dtype_name(dtype)}({expr})"


def _castable(source: np.dtype, dtype: np.dtype) -> bool:
    """Casts whose CUDA conversion is NumPy's: not from floats to integers (NaN, overflow)."""
    return not (source.kind == "f" and dtype.kind in "iub" and dtype != np.bool_)


def _plain(dtype: np.dtype) -> bool:
    return dtype.kind in "biuf" and dtype != np.float16


def _loop_dtypes(name: str, dtypes: tuple[np.dtype, ...]) -> tuple[np.dtype, ...] | None:
    ufunc = UFUNCS[name]
    try:
        return tuple(ufunc.resolve_dtypes(dtypes + (None,) * ufunc.nout)[:ufunc.nin])
    except Exception:  # noqa: BLE001 - no loop: not a kernel op
        return None


def supports(op: ir.Op) -> bool:
    """Whether a kernel computes ``op`` per element with NumPy's values."""
    types = [v.type for v in (*op.operands, *op.results)]
    if not all(isinstance(t, TensorType) and _plain(t.dtype) for t in types):
        return False
    dtypes = tuple(v.type.dtype for v in op.operands)
    if op.name == "cast":
        return _castable(dtypes[0], op.results[0].type.dtype)
    if op.name == "where":
        return True
    template = _template(op.name)
    if template is None:
        return False
    loop = _loop_dtypes(op.name, dtypes)
    if loop is None or not all(_castable(s, d) for s, d in zip(dtypes, loop, strict=True)):
        return False
    if op.name in _FLOAT_ONLY and loop[0].kind != "f":
        return False
    if op.name in _ARITHMETIC and loop[0] == np.bool_:
        return False  # bool + bool is logical or in NumPy
    if op.name in _COMPARISONS and {d.kind for d in loop} == {"i", "u"}:
        return False  # mixed signed/unsigned: NumPy compares exactly, a cast would not
    return True


def _template(name: str) -> str | None:
    for table in (_ARITHMETIC, _FLOAT_ONLY, _COMPARISONS, _LOGICAL):
        if name in table:
            return table[name]
    return None


def fuses(op: ir.Op) -> bool:
    """The fusion pass's question: a fused kernel computes ``op`` (or its final reduction)."""
    if op.name in ("sum", "max", "min"):
        return all(isinstance(v.type, TensorType) and _plain(v.type.dtype)
                   for v in (*op.operands, *op.results))
    return supports(op)


def expression(op: ir.Op, operands: list[str]) -> str:
    """The kernel expression of ``op`` (``supports(op)``) on element expressions ``operands``;
    its value has the dtype of the op's result."""
    out = op.results[0].type.dtype
    dtypes = [v.type.dtype for v in op.operands]
    if op.name == "cast":
        return cast(operands[0], dtypes[0], out)
    if op.name == "where":
        condition = cast(operands[0], dtypes[0], np.dtype(np.bool_))
        a, b = (cast(x, d, out) for x, d in zip(operands[1:], dtypes[1:], strict=True))
        return f"({a} if {condition} else {b})"
    loop = _loop_dtypes(op.name, tuple(dtypes))
    args = [cast(x, d, t) for x, d, t in zip(operands, dtypes, loop, strict=True)]
    text = _template(op.name).format(*args, one=f"{dtype_name(loop[0])}(1)")
    return f"({text})" if op.name in _BOOL_RESULT else f"{dtype_name(out)}({text})"
