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
from autostage.runtime.ops.vjp_support import (
    active,
    builders,
    const,
    flatten,
    reduced_count,
    unflatten,
)
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
    result = np.asarray(_quietly(function, values[0], q, axis=op.attrs["axis"],
                                 keepdims=op.attrs["keepdims"]))
    # NumPy returns a 0-d quantile of a lane holding NaN as that NaN, in the lane's dtype (a
    # float32 NaN where the same call without NaN gives float64): a dtype that depends on the
    # values, which a typed program cannot have; the NaN keeps the call's dtype (README).
    dtype = op.results[0].type.dtype
    if result.ndim == 0 and result.dtype != dtype and np.isnan(result):
        result = result.astype(dtype)
    return (result,)


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


# NumPy's weighted bincount of an empty array is int64 (its counts), not its float64 sums: a
# dtype only the run knows.
EMPTY_WEIGHTED = ("autostage: np.bincount of an empty array with weights cannot be staged: NumPy "
                  "returns int64 counts there, float64 sums otherwise; test the length first")


def _evaluate_bincount(op, values: tuple, run) -> tuple:
    weights = values[1] if len(values) == 2 else None
    if weights is not None and values[0].shape[0] == 0:
        raise ValueError(EMPTY_WEIGHTED)
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
    raises=lambda op: (IndexError, *effects.shape_errors(op)),  # IndexError: an empty x
    size_sources=lambda op: (1,) if op.attrs["axis"] is None else (0, 1))
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


# -- reverse-mode derivatives (runtime/autodiff) ------------------------------------------------
def _vjp_order_statistic(op, cts: tuple) -> tuple:
    """median and quantile (method 'linear'): the result interpolates the sorted values at
    positions ``lo = floor(q (n - 1))`` and ``lo + 1`` with weight ``g = q (n - 1) - lo``, so
    the element of rank ``lo`` gets ``(1 - g)`` of the cotangent and that of rank ``lo + 1``
    gets ``g`` (tied elements have distinct ranks: one of them gets it, a valid subgradient);
    q gets ``(v[lo + 1] - v[lo]) (n - 1)``. With ``nan``, n counts the non-NaN elements (NaNs
    rank last). Ranks come from argsort twice, so no scatter is needed."""
    b, ct = builders(), cts[0]
    dtype = ct.type.dtype
    x, axis = op.operands[0], op.attrs["axis"]
    xs, axis = (flatten(x), 0) if axis is None else (x, axis)
    q = op.operands[1] if op.name == "quantile" else const(ct, 0.5)
    lead, ndim = q.type.ndim, xs.type.ndim  # result axes from q, then xs's axes
    values = b.cast(xs, dtype)
    if op.attrs["nan"]:
        valid = b.cast(b.op1("logical_not", b.op1("isnan", xs)), dtype)
        count = b.op1("sum", valid, axis=(axis,), keepdims=True, dtype=None)
    else:
        count = reduced_count(xs, (axis,), dtype)
    last = b.sub(count, const(ct, 1))
    qs = b.cast(q, dtype)
    if lead:
        qs = b.op1("expand_dims", qs, axis=tuple(range(lead, lead + ndim)))
    position = b.mul(qs, last)
    lo = b.op1("floor", position)
    hi = b.op1("minimum", b.add(lo, const(ct, 1)), last)
    weight = b.sub(position, lo)
    order = b.op1("argsort", xs, axis=axis, kind="stable")
    ranks = b.cast(b.op1("argsort", order, axis=axis, kind="stable"), dtype)
    at_lo, at_hi = b.op1("equal", ranks, lo), b.op1("equal", ranks, hi)
    zero = const(ct, 0)
    shares = b.add(b.op1("where", at_lo, b.sub(const(ct, 1), weight), zero),
                   b.op1("where", at_hi, weight, zero))
    aligned = _aligned_cotangent(ct, op, lead, axis)
    dx = b.mul(aligned, shares)
    if lead:
        dx = b.op1("sum", dx, axis=tuple(range(lead)), keepdims=False, dtype=None)
    dx = unflatten(dx, x) if op.attrs["axis"] is None else dx
    if op.name == "median":
        return (dx,)
    dq = None
    if active(q):
        def picked(mask):
            return b.op1("sum", b.op1("where", mask, values, zero), axis=(lead + axis,),
                         keepdims=True, dtype=None)
        slope = b.mul(b.sub(picked(at_hi), picked(at_lo)), last)
        dq = b.op1("sum", b.mul(aligned, slope), axis=tuple(range(lead, lead + ndim)),
                   keepdims=False, dtype=None)
    return (dx, dq)


def _aligned_cotangent(ct, op, lead: int, axis: int):
    """The cotangent of a median/quantile with q's axes first, then the (flattened for
    ``axis=None``) operand's axes, the reduced one of size 1."""
    b = builders()
    if op.attrs["axis"] is None:
        if op.attrs["keepdims"]:  # q's axes, then one size-1 axis per axis of x
            ct = b.op1("sum", ct, axis=tuple(range(lead, ct.type.ndim)), keepdims=False,
                       dtype=None)
        return b.op1("expand_dims", ct, axis=(lead,)) if lead else ct
    if op.attrs["keepdims"] or (lead == 0 and axis == 0):
        return ct
    return b.op1("expand_dims", ct, axis=(lead + axis,))


def _vjp_bincount(op, cts: tuple) -> tuple:
    """The weights: each gets the cotangent of its bin."""
    if len(op.operands) == 1:
        return (None,)
    return (None, builders().op1("getitem", cts[0], op.operands[0], index=("?",)))


op_registry.lookup("median").vjp = _vjp_order_statistic
op_registry.lookup("quantile").vjp = _vjp_order_statistic
op_registry.lookup("bincount").vjp = _vjp_bincount
op_registry.lookup("searchsorted").vjp = op_registry.NO_GRADIENT
op_registry.lookup("nonzero").vjp = op_registry.NO_GRADIENT
