"""Matrix helpers: ``diag``, ``triu``, ``tril`` (attr ``k``, the diagonal offset) and ``norm``
(``np.linalg.norm``; attrs ``ord``, ``axis``: None or a tuple of one or two normalized axes,
``keepdims``).

The NumPy reference calls the NumPy function itself with the same arguments, so values agree bit
for bit (``norm`` with ``axis=None`` takes NumPy's ravel-and-dot path, with an axis the
sum-of-squares path, exactly as in plain NumPy). Printed: ``%2:f64[] = norm %1 {ord=None,
axis=None, keepdims=False}``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from autostage.runtime import effects, op_registry
from autostage.runtime.autodiff import build
from autostage.runtime.ops.reductions import reduced_shape
from autostage.runtime.ops.vjp_support import builders, gradient_error, restore_axes
from autostage.runtime.types import TensorType


def _tensor(t: object, what: str) -> TensorType:
    if not isinstance(t, TensorType):
        raise TypeError(f"{what} expects a tensor, got {t}")
    return t


def diagonal_length(n: int | None, m: int | None, k: int) -> int | None:
    """The length of diagonal ``k`` of an ``n`` x ``m`` matrix (None if a size is unknown)."""
    if n is None or m is None:
        return None
    return max(0, min(n, m - k)) if k >= 0 else max(0, min(n + k, m))


def _infer_diag(operand_types: tuple, attrs: dict) -> tuple:
    v = _tensor(operand_types[0], "diag")
    k = attrs["k"]
    if v.ndim == 1:
        n = None if v.shape[0] is None else v.shape[0] + abs(k)
        return (TensorType(v.dtype, (n, n)),)
    if v.ndim == 2:
        return (TensorType(v.dtype, (diagonal_length(v.shape[0], v.shape[1], k),)),)
    raise ValueError("Input must be 1- or 2-d.")


def _infer_triangle(name: str):
    def infer(operand_types: tuple, attrs: dict) -> tuple:
        m = _tensor(operand_types[0], name)
        if m.ndim == 0:
            raise ValueError(f"{name}: the input must be at least 1-d")
        shape = (m.shape[0], m.shape[0]) if m.ndim == 1 else m.shape
        return (TensorType(m.dtype, shape),)
    return infer


@functools.cache
def norm_dtype(dtype: np.dtype, ndim: int, ord: object, axis: tuple | None,
               keepdims: bool) -> np.dtype:
    """The dtype of ``np.linalg.norm`` (asked of NumPy on a small sample, which also raises
    NumPy's errors for an ord or axis it does not accept at this rank)."""
    sample = np.ones((2,) * ndim, dtype)
    with np.errstate(all="ignore"):
        return np.asarray(np.linalg.norm(sample, ord=ord, axis=axis, keepdims=keepdims)).dtype


def _infer_norm(operand_types: tuple, attrs: dict) -> tuple:
    x = _tensor(operand_types[0], "norm")
    axis, keepdims = attrs["axis"], attrs["keepdims"]
    dtype = norm_dtype(x.dtype, x.ndim, attrs["ord"], axis, keepdims)
    return (TensorType(dtype, reduced_shape(x.shape, axis, keepdims)),)


def _evaluate_norm(op, values: tuple, run) -> tuple:
    attrs = op.attrs
    return (np.asarray(np.linalg.norm(values[0], ord=attrs["ord"], axis=attrs["axis"],
                                      keepdims=attrs["keepdims"])),)


def _norm_raises(op) -> tuple:
    """A matrix norm of ord 2, -2 or 'nuc' takes an SVD, which fails (LinAlgError) when it does
    not converge (NaNs); the other norms are sums and maxima."""
    x, axis = op.operands[0].type, op.attrs["axis"]
    matrix = len(axis) == 2 if axis is not None else x.ndim == 2
    return (np.linalg.LinAlgError,) if matrix and op.attrs["ord"] in (2, -2, "nuc") else ()


op_registry.register(
    "diag", _infer_diag, lambda op, v, run: (np.asarray(np.diag(v[0], op.attrs["k"])),),
    doc="np.diag(v, k): 1-d -> 2-d matrix, 2-d -> its diagonal; attrs: k",
    raises=effects.shape_errors)
op_registry.register(
    "triu", _infer_triangle("triu"), lambda op, v, run: (np.triu(v[0], op.attrs["k"]),),
    doc="np.triu(m, k) (a 1-d m gives a square matrix); attrs: k", fresh_results=True, raises=())
op_registry.register(
    "tril", _infer_triangle("tril"), lambda op, v, run: (np.tril(v[0], op.attrs["k"]),),
    doc="np.tril(m, k) (a 1-d m gives a square matrix); attrs: k", fresh_results=True, raises=())
op_registry.register(
    "norm", _infer_norm, _evaluate_norm,
    doc="np.linalg.norm(x, ord, axis, keepdims); attrs: ord, axis (None or a tuple of 1 or 2 "
        "axes), keepdims", fresh_results=True, raises=_norm_raises)


# -- reverse-mode derivatives (runtime/autodiff) ------------------------------------------------
def _vjp_norm(op, cts: tuple) -> tuple:
    """Vector norms (any ord) and the Frobenius norm: d|x|_p / dx = sign(x) |x|**(p-1) /
    |x|_p**(p-1); for ord=+-inf the cotangent goes to the elements of largest (smallest) |x|,
    split among ties; ord=0 counts (no gradient). Matrix norms other than Frobenius need
    singular values or a max over column sums: not differentiated yet."""
    b, x, ct = builders(), op.operands[0], cts[0]
    order, axis = op.attrs["ord"], op.attrs["axis"]
    matrix = len(axis) == 2 if axis is not None else x.type.ndim == 2 and order is not None
    if matrix and order not in (None, "fro"):
        raise gradient_error(op, f"np.linalg.norm with ord={order!r} of a matrix yet")
    if order == 0:
        return (None,)
    axes = None if axis is None else tuple(sorted(axis))
    y = restore_axes(op.results[0], x, axes, op.attrs["keepdims"])
    if order in (None, 2, "fro"):
        factor = b.div(x, y)
    elif order == 1:
        factor = b.op1("sign", x)
    elif order in (math.inf, -math.inf):
        hit = b.cast(b.op1("equal", b.op1("absolute", x), y), x.type.dtype)
        total = b.op1("sum", hit, axis=axes, keepdims=True, dtype=None)
        factor = b.mul(b.div(hit, total), b.op1("sign", x))
    else:
        power = b.constant(order - 1, x.type.dtype)
        ratio = b.div(b.op1("absolute", x), y)
        factor = b.mul(b.op1("sign", x), b.op1("power", ratio, power))
    return (b.mul(restore_axes(ct, x, axes, op.attrs["keepdims"]), factor),)


def _vjp_diag(op, cts: tuple) -> tuple:
    """1-d v (the matrix's diagonal k): the cotangent's diagonal k. 2-d m: the cotangent added
    (``scatter_add``) into zeros at the diagonal's positions."""
    (v,), ct, k = op.operands, cts[0], op.attrs["k"]
    if v.type.ndim == 1:
        return (build.op1("diag", ct, k=k),)
    int64 = np.dtype(np.int64)
    length = build.op1("dim", ct, axis=0)
    positions = []
    for start in (max(0, -k), max(0, k)):
        first = build.constant(start, int64)
        positions.append(build.op1("arange", first, build.add(first, length),
                                   build.constant(1, int64), dtype=int64))
    return (build.op1("scatter_add", build.zeros_like(v), ct, *positions, index=("?", "?")),)


def _vjp_triangle(op, cts: tuple) -> tuple:
    """The cotangent's own triangle; a 1-d operand (each row of the result is a masked copy of
    it) gets the sum of the rows."""
    ct = build.op1(op.name, cts[0], k=op.attrs["k"])
    if op.operands[0].type.ndim == 1:
        ct = build.op1("sum", ct, axis=(0,), keepdims=False, dtype=None)
    return (ct,)


op_registry.lookup("diag").vjp = _vjp_diag
op_registry.lookup("triu").vjp = _vjp_triangle
op_registry.lookup("tril").vjp = _vjp_triangle
op_registry.lookup("norm").vjp = _vjp_norm
