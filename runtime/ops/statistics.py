"""Order statistics and data-dependent results: ``median``, ``quantile``, ``searchsorted``,
``bincount`` and ``nonzero``.

``median`` (operand x) and ``quantile`` (operands x, q: a 0-d or 1-d real tensor of
quantiles in [0, 1], checked by the front end) take attrs ``axis`` (None = the flattened array,
else one non-negative int), ``keepdims`` (bool) and ``nan`` (bool: np.nanmedian/np.nanquantile,
NaNs skipped); quantile also ``weak_q`` (bool: q was a Python number, whose weak promotion
decides the result dtype, as in NumPy). Method 'linear' only. Result: q's shape followed by the
reduced shape; dtypes are NumPy's, asked of NumPy on a sample. The NumPy reference calls NumPy's
own function, so values are NumPy's.

``searchsorted``: operands a (1-d, sorted), v, and optionally sorter (1-d ints); attrs ``side``
('left' / 'right'); a and v are already of one dtype. Result: int64 of v's shape.
``bincount``: operands x (1-d non-negative ints) and optionally weights (float64 of x's
length); attrs ``minlength`` (int). Result: int64 (float64 with weights) of the data-dependent
length ``max(x.max() + 1, minlength)``: an unknown dimension. ``nonzero``: operand x (ndim >= 1);
one int64 result of unknown length per axis of x (NumPy's tuple of index arrays).
Printed: ``%2:i64[?] = bincount %1 {minlength=0}``.
"""

from __future__ import annotations

import warnings

import numpy as np
from autostage.runtime import dtype_rules, effects, op_registry
from autostage.runtime.ops.reductions import reduced_shape
from autostage.runtime.types import TensorType

INDEX_DTYPE = np.dtype(np.intp)


def _tensor(t: object, what: str) -> TensorType:
    if not isinstance(t, TensorType):
        raise TypeError(f"{what} expects a tensor, got {t}")
    return t


def _reduced(x: TensorType, attrs: dict) -> tuple:
    axis = attrs["axis"]
    if axis is not None:
        dtype_rules.normalize_axis(axis, x.ndim)
    return reduced_shape(x.shape, axis, attrs["keepdims"])


def _quietly(function, *args, **kwargs):
    """NumPy's value with its RuntimeWarnings (all-NaN slices, empty means) dropped: compiled
    code does not warn, so neither target does."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return function(*args, **kwargs)


def _infer_median(operand_types: tuple, attrs: dict) -> tuple:
    x = _tensor(operand_types[0], "median")
    function = np.nanmedian if attrs["nan"] else np.median
    dtype = np.asarray(_quietly(function, np.zeros(2, x.dtype))).dtype
    return (TensorType(dtype, _reduced(x, attrs)),)


def _evaluate_median(op, values: tuple, run) -> tuple:
    function = np.nanmedian if op.attrs["nan"] else np.median
    return (np.asarray(_quietly(function, values[0], axis=op.attrs["axis"],
                                keepdims=op.attrs["keepdims"])),)


def _q_argument(q: np.ndarray, weak: bool) -> object:
    return q.item() if weak else q


def _infer_quantile(operand_types: tuple, attrs: dict) -> tuple:
    x = _tensor(operand_types[0], "quantile")
    q = _tensor(operand_types[1], "quantile")
    if q.ndim > 1:
        raise ValueError("q must be a scalar or 1d")
    if q.dtype.kind not in "biuf":
        raise TypeError(f"quantile: q must be real numbers, got {q.dtype}")
    function = np.nanquantile if attrs["nan"] else np.quantile
    sample = _q_argument(np.zeros(q.shape if None not in q.shape else (1,), q.dtype),
                         attrs["weak_q"] and q.ndim == 0)
    dtype = np.asarray(_quietly(function, np.zeros(2, x.dtype), sample)).dtype
    return (TensorType(dtype, q.shape + _reduced(x, attrs)),)


def _evaluate_quantile(op, values: tuple, run) -> tuple:
    function = np.nanquantile if op.attrs["nan"] else np.quantile
    q = _q_argument(values[1], op.attrs["weak_q"])
    return (np.asarray(_quietly(function, values[0], q, axis=op.attrs["axis"],
                                keepdims=op.attrs["keepdims"])),)


def _infer_searchsorted(operand_types: tuple, attrs: dict) -> tuple:
    a = _tensor(operand_types[0], "searchsorted")
    v = _tensor(operand_types[1], "searchsorted")
    if a.ndim != 1:
        raise ValueError("object too deep for desired array" if a.ndim > 1 else
                         "object of too small depth for desired array")
    if len(operand_types) == 3:
        sorter = _tensor(operand_types[2], "searchsorted")
        if sorter.ndim != 1 or sorter.dtype.kind not in "iu":
            raise TypeError("searchsorted: sorter must be a 1-d integer array")
    if attrs["side"] not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {attrs['side']!r})")
    return (TensorType(INDEX_DTYPE, v.shape),)


def _evaluate_searchsorted(op, values: tuple, run) -> tuple:
    sorter = values[2] if len(values) == 3 else None
    return (np.asarray(np.searchsorted(values[0], values[1], side=op.attrs["side"],
                                       sorter=sorter)),)


def _infer_bincount(operand_types: tuple, attrs: dict) -> tuple:
    x = _tensor(operand_types[0], "bincount")
    if x.ndim != 1:
        raise ValueError("object too deep for desired array" if x.ndim > 1 else
                         "object of too small depth for desired array")
    if x.dtype.kind not in "biu" or not np.can_cast(x.dtype, INDEX_DTYPE, "safe"):
        raise TypeError(f"Cannot cast array data from dtype('{x.dtype}') to dtype('int64') "
                        "according to the rule 'safe'")
    dtype = INDEX_DTYPE
    if len(operand_types) == 2:
        weights = _tensor(operand_types[1], "bincount")
        if weights.ndim != 1:
            raise ValueError("object too deep for desired array" if weights.ndim > 1 else
                             "object of too small depth for desired array")
        if weights.dtype != np.float64:
            raise TypeError("bincount: the weights operand must be float64 (the front end "
                            "converts them)")
        dtype = np.dtype(np.float64)
    return (TensorType(dtype, (None,)),)


def _evaluate_bincount(op, values: tuple, run) -> tuple:
    weights = values[1] if len(values) == 2 else None
    return (np.asarray(np.bincount(values[0], weights, op.attrs["minlength"])),)


def _infer_nonzero(operand_types: tuple, attrs: dict) -> tuple:
    x = _tensor(operand_types[0], "nonzero")
    if x.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "np.atleast_1d(scalar).nonzero() instead.")
    return tuple(TensorType(INDEX_DTYPE, (None,)) for _ in range(x.ndim))


def _evaluate_nonzero(op, values: tuple, run) -> tuple:
    return tuple(np.asarray(i) for i in np.nonzero(values[0]))


op_registry.register(
    "median", _infer_median, _evaluate_median,
    doc="np.median / np.nanmedian (attr nan); attrs: axis (None or int), keepdims, nan",
    raises=effects.shape_errors)
op_registry.register(
    "quantile", _infer_quantile, _evaluate_quantile,
    doc="np.quantile / np.nanquantile, method 'linear'; operands x, q (0-d or 1-d); attrs: "
        "axis (None or int), keepdims, nan, weak_q",
    raises=lambda op: (IndexError, *effects.shape_errors(op)))  # IndexError: an empty x
op_registry.register(
    "searchsorted", _infer_searchsorted, _evaluate_searchsorted,
    doc="np.searchsorted(a, v, side, sorter); operands a, v[, sorter]; attrs: side",
    raises=effects.shape_errors)
op_registry.register(
    "bincount", _infer_bincount, _evaluate_bincount,
    doc="np.bincount(x, weights, minlength); operands x[, weights]; attrs: minlength; the "
        "result length is data dependent",
    raises=(ValueError,))  # a negative x, weights of another length
op_registry.register(
    "nonzero", _infer_nonzero, _evaluate_nonzero,
    doc="np.nonzero(x): one int64[?] result per axis of x; no attrs", raises=effects.shape_errors)
