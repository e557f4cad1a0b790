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

import numpy as np
from autostage.runtime import effects, op_registry
from autostage.runtime.ops.reductions import reduced_shape
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
