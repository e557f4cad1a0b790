"""Staged statistics and data-dependent NumPy functions: median/quantile/percentile (and their
nan variants), searchsorted, digitize, bincount, nonzero/argwhere/flatnonzero, unique,
count_nonzero, the nan reductions, isclose/allclose, round/around, ptp and average.

Order statistics, searchsorted, bincount and nonzero are ops (``ops/statistics.py``); the rest
are composites of existing ops that follow NumPy's own code step by step (same operations, same
dtypes, same order), so values match NumPy's: the nan reductions replace NaNs exactly as
``numpy.lib._nanfunctions_impl`` does, isclose is NumPy's formula, round scales by NumPy's
power of ten, multiplies, rounds half to even and divides back. Arguments that are not staged
(``out=``, quantile methods other than 'linear', ``unique(axis=...)``) are a clear
``StagingTypeError`` naming the function and the argument. NumPy's RuntimeWarnings (all-NaN
slices, degrees of freedom <= 0) are not given by staged code; the values are NumPy's.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from autostage.runtime import array_api, array_shapes, dtype_rules, tracing, value_info
from autostage.runtime.tensor import StagingTypeError, Tensor, constant
from autostage.runtime.tracing import at as _at  # " at file:line" for messages

_LINEAR = "linear"
_METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
            "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
            "normal_unbiased", "lower", "higher", "midpoint", "nearest")


def _refuse(function: str, argument: str, why: str = "") -> StagingTypeError:
    return StagingTypeError(f"{function}: the argument {argument} is not supported on staged "
                            f"tensors{_at()}{why}")


def _emit(name: str, operands: list, attrs: dict | None = None) -> tuple[Tensor, ...]:
    results = tracing.emit(name, [o.value for o in operands], attrs)
    return tuple(Tensor(r) for r in results)


def _raise_if(test: Tensor, exception: BaseException) -> None:
    """Raises ``exception`` at run time where the 0-d bool ``test`` holds."""
    tracing.emit("raise_if", (test.value,), {"exception": exception})


def _no_out(function: str, out: object) -> None:
    if out is not None:
        raise _refuse(function, "out=", ": staged values are immutable; use the result")


def _axis(function: str, axis: object, ndim: int) -> int | None:
    """One normalized axis or None (a tuple of one axis is that axis)."""
    if isinstance(axis, (tuple, list)):
        if len(axis) != 1:
            raise _refuse(function, f"axis={tuple(axis)!r}", " (one axis or None only)")
        axis = axis[0]
    return None if axis is None else dtype_rules.normalize_axis(axis, max(ndim, 1))


def _inexact(x: Tensor) -> bool:
    return x.dtype.kind in "fc"


def _reduce(name: str, x: object, axis: object = None, dtype: object = None,
            keepdims: bool = False, ddof: object = 0) -> Tensor:
    return array_api.reduce(name, x, axis, dtype, None, keepdims, ddof)


# --- median, quantile, percentile -------------------------------------------------------------


def _median(nan: bool) -> Callable:
    function = "np.nanmedian" if nan else "np.median"

    def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
        _no_out(function, out)
        x = array_api.as_tensor(a)
        (result,) = _emit("median", [x], {"axis": _axis(function, axis, x.ndim),
                                          "keepdims": bool(keepdims), "nan": nan})
        return result
    return median


def _check_method(function: str, method: str, interpolation: object) -> None:
    if interpolation is not None:
        raise _refuse(function, "interpolation=", " (deprecated in NumPy); use method=")
    if method not in _METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: "
                         f"dict_keys({list(_METHODS)!r})")
    if method != _LINEAR:
        raise _refuse(function, f"method={method!r}", "; only method='linear' (the default) "
                      "is staged")


def _quantile(kind: str, nan: bool) -> Callable:
    function = f"np.{'nan' if nan else ''}{kind}"
    percent = kind == "percentile"
    message = ("Percentiles must be in the range [0, 100]" if percent else
               "Quantiles must be in the range [0, 1]")

    def quantile(a, q, axis=None, out=None, overwrite_input=False, method=_LINEAR,
                 keepdims=False, *, weights=None, interpolation=None):
        _no_out(function, out)
        _check_method(function, method, interpolation)
        if weights is not None:
            raise _refuse(function, "weights=", " (NumPy weighs only method='inverted_cdf')")
        x = array_api.as_tensor(a)
        if x.dtype.kind == "c":
            raise TypeError("a must be an array of real numbers")
        weak = type(q) in (int, float)
        if isinstance(q, Tensor):
            q = array_api.ufunc("true_divide", q, 100) if percent else q
            bad = array_api.ufunc("logical_not", array_api.ufunc(
                "logical_and", array_api.ufunc("greater_equal", q, 0),
                array_api.ufunc("less_equal", q, 1)))
            _raise_if(_reduce("any", bad), ValueError(message))
        else:
            q = np.true_divide(q, 100) if percent else np.asanyarray(q)
            if q.dtype.kind not in "biuf":
                raise TypeError(f"{function}: q must be real numbers, not {q.dtype}")
            with np.errstate(invalid="ignore"):
                if q.size and not (np.min(q) >= 0 and np.max(q) <= 1):
                    raise ValueError(message)
            q = constant(q)
        lane_dtype = np.result_type(x.dtype, 0.0)
        if (nan and axis is not None and not weak and q.ndim
                and np.result_type(lane_dtype, q.dtype) != lane_dtype):
            # NumPy computes each lane apart and takes the first lane's dtype: an all-NaN
            # first lane gives the input's dtype, another one the promoted dtype.
            raise _refuse(function, "q", f" as an array of {q.dtype} with axis= for {x.dtype} "
                          "data (NumPy's result dtype then depends on whether the first lane is "
                          f"all NaN): give q the data's dtype, q.astype(np.{lane_dtype})")
        (result,) = _emit("quantile", [x, q], {
            "axis": _axis(function, axis, x.ndim), "keepdims": bool(keepdims), "nan": nan,
            "weak_q": weak})
        return result
    return quantile


# --- searchsorted, digitize, bincount -------------------------------------------------------


def _search_operands(function: str, a: object, v: object) -> tuple[Tensor, Tensor]:
    """a and v converted to the dtype NumPy compares in (Python scalars count as their
    default NumPy dtype, as ``PyArray_DescrFromObject`` does)."""
    a = array_api.as_tensor(a)
    v_dtype = v.dtype if isinstance(v, Tensor) else np.asarray(v).dtype
    dtype = np.promote_types(a.dtype, v_dtype)
    if dtype.kind == "c":
        raise StagingTypeError(f"{function} of complex values is not supported on staged "
                               f"tensors{_at()}")
    return array_api.as_tensor(a, dtype), array_api.as_tensor(v, dtype)


def searchsorted(a, v, side="left", sorter=None):
    """``np.searchsorted(a, v, side, sorter)`` (binary search; NaNs sort last, as NumPy)."""
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    a, v = _search_operands("np.searchsorted", a, v)
    operands = [a, v] if sorter is None else [a, v, array_api.as_tensor(sorter)]
    return _emit("searchsorted", operands, {"side": side})[0]


def _monotonicity(bins: np.ndarray) -> int:
    """NumPy's ``_monotonicity`` (C): 1 increasing, -1 decreasing, 0 neither."""
    n = len(bins)
    if n == 0:
        return 1
    last = bins[0]
    i = 1
    while i < n and bins[i] == last:
        i += 1
    if i == n:
        return 1
    nxt = bins[i]
    if last < nxt:
        for j in range(i, n):
            if bins[j] < last:
                return 0
            last = bins[j]
        return 1
    for j in range(i, n):
        if bins[j] > last:
            return 0
        last = bins[j]
    return -1


def digitize(x, bins, right=False):
    """``np.digitize``: searchsorted on ``bins`` (constant bins: monotonicity checked when
    tracing; staged bins: at run time)."""
    xt = array_api.as_tensor(x)
    if xt.dtype.kind == "c":
        raise TypeError("x may not be complex")
    side = "left" if right else "right"
    if not isinstance(bins, Tensor):
        values = np.asarray(bins)
        if values.ndim != 1:
            raise ValueError("bins must be a 1d array" if values.ndim else
                             "object of too small depth for desired array")
        mono = _monotonicity(values)
        if mono == 0:
            raise ValueError("bins must be monotonically increasing or decreasing")
        if mono == -1:
            return array_api.ufunc("subtract", len(values), searchsorted(
                values[::-1].copy(), xt, side))
        return searchsorted(values, xt, side)
    if bins.ndim != 1:
        raise ValueError("object too deep for desired array")
    up = array_shapes.getitem(bins, slice(1, None))
    down = array_shapes.getitem(bins, slice(None, -1))
    increasing = array_api.ufunc("logical_not", _reduce("any", array_api.ufunc("less", up, down)))
    decreasing = array_api.ufunc("logical_not",
                                 _reduce("any", array_api.ufunc("greater", up, down)))
    _raise_if(array_api.ufunc("logical_not", array_api.ufunc("logical_or", increasing,
                                                             decreasing)),
              ValueError("bins must be monotonically increasing or decreasing"))
    forward = searchsorted(bins, xt, side)
    length = array_shapes.dim(bins, 0)
    backward = array_api.ufunc("subtract", length, searchsorted(
        array_shapes.getitem(bins, slice(None, None, -1)), xt, side))
    return array_api.where(increasing, forward, backward)


def bincount(x, weights=None, minlength=0):
    """``np.bincount`` (the result's length is known at run time only)."""
    staged_minlength = None
    if isinstance(minlength, Tensor):  # x.shape[0], k = centers.shape[0]...: pad at run time
        if minlength.ndim != 0 or minlength.dtype.kind not in "iu":
            raise TypeError(f"'{minlength.dtype}' object cannot be interpreted as an integer")
        staged_minlength, minlength = minlength, 0
        _raise_if(array_api.ufunc("less", staged_minlength, 0),
                  ValueError("'minlength' must not be negative"))
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    operands = [array_api.as_tensor(x)]
    if weights is not None:
        w = array_api.as_tensor(weights)
        if not np.can_cast(w.dtype, np.float64, "safe"):
            raise TypeError(f"Cannot cast array data from dtype('{w.dtype}') to "
                            "dtype('float64') according to the rule 'safe'")
        operands.append(array_api.as_tensor(w, np.float64))
    counts = _emit("bincount", operands, {"minlength": minlength})[0]
    if staged_minlength is None:
        return counts
    missing = array_api.ufunc("maximum", array_api.ufunc(
        "subtract", staged_minlength, array_shapes.dim(counts, 0)), 0)
    return array_shapes.concatenate([counts, array_shapes.zeros((missing,), counts.dtype)])


# --- nonzero, argwhere, flatnonzero, unique, count_nonzero ---------------------------------------


def nonzero(a) -> tuple[Tensor, ...]:
    """``np.nonzero(a)``: one int64 index array per axis (lengths known at run time only)."""
    return _emit("nonzero", [array_api.as_tensor(a)])


def argwhere(a) -> Tensor:
    x = array_api.as_tensor(a)
    if x.ndim == 0:
        found = array_shapes.stack(nonzero(array_shapes.reshape(x, (1,))), axis=1)
        return array_shapes.getitem(found, (slice(None), slice(None, 0)))
    return array_shapes.stack(nonzero(x), axis=1)


def flatnonzero(a) -> Tensor:
    return nonzero(array_shapes.ravel(array_api.as_tensor(a)))[0]


def count_nonzero(a, axis=None, *, keepdims=False) -> Tensor:
    x = array_api.as_tensor(a)
    return _reduce("sum", array_api.astype(x, np.bool_), axis, np.intp, keepdims)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True):
    """``np.unique`` of the flattened array: a stable argsort, the first element of each run
    of equal values (NaNs one run when ``equal_nan``), and the index arithmetic NumPy does."""
    if axis is not None:
        raise _refuse("np.unique", f"axis={axis!r}", "; only axis=None (the flattened array)")
    if not sorted:
        raise _refuse("np.unique", "sorted=False", "; the staged result is always sorted")
    x = array_api.as_tensor(ar)
    flat = array_shapes.ravel(x)
    perm = array_api.sort("argsort", flat, 0, "stable")
    values = array_shapes.getitem(flat, perm)
    head = array_shapes.getitem(values, slice(1, None))
    tail = array_shapes.getitem(values, slice(None, -1))
    differs = array_api.ufunc("not_equal", head, tail)
    if equal_nan and _inexact(values):
        both_nan = array_api.ufunc("logical_and", array_api.ufunc("isnan", head),
                                   array_api.ufunc("isnan", tail))
        differs = array_api.ufunc("logical_and", differs,
                                  array_api.ufunc("logical_not", both_nan))
    first = array_shapes.full_like(array_shapes.getitem(values, slice(None, 1)), True, np.bool_)
    mask = array_shapes.concatenate([first, differs])
    results = [array_shapes.getitem(values, mask)]
    if return_index:
        results.append(array_shapes.getitem(perm, mask))
    if return_inverse:
        rank = array_api.ufunc("subtract", array_api.scan("cumsum", mask), 1)
        inverse = array_shapes.getitem(rank, array_api.sort("argsort", perm, 0, "stable"))
        results.append(array_shapes.reshape(inverse, array_shapes.shape_of(x), view=False))
    if return_counts:
        starts = nonzero(mask)[0]
        total = array_shapes.reshape(array_api.as_tensor(array_shapes.size_of(flat), np.intp),
                                     (1,), view=False)
        bounds = array_shapes.concatenate([starts, total])
        results.append(array_api.ufunc("subtract", array_shapes.getitem(bounds, slice(1, None)),
                                       array_shapes.getitem(bounds, slice(None, -1))))
    return results[0] if len(results) == 1 else tuple(results)


# --- nan reductions -------------------------------------------------------------------------


def _replace_nan(x: Tensor, value: float) -> tuple[Tensor, Tensor | None]:
    """NumPy's ``_replace_nan``: NaNs of an inexact array replaced by ``value``, and the mask."""
    if not _inexact(x):
        return x, None
    mask = array_api.ufunc("isnan", x)
    return array_api.where(mask, value, x), mask


def _count_reduced(x: Tensor, axis: object) -> object:
    """The number of elements each result of reducing ``axis`` combines (an int or staged)."""
    axes = dtype_rules.normalize_axes(axis, x.ndim)
    count: object = 1
    for a in axes:
        d = array_shapes.dim(x, a)
        count = d * count if isinstance(count, int) and isinstance(d, int) else (
            array_api.ufunc("multiply", d, count))
    return count


def _nan_sum_like(name: str, fill: float) -> Callable:
    def reduction(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        _no_out(f"np.nan{name}", out)
        if kwargs:
            raise _refuse(f"np.nan{name}", f"{next(iter(kwargs))}=")
        x, _ = _replace_nan(array_api.as_tensor(a), fill)
        return _reduce(name, x, axis, dtype, keepdims)
    return reduction


def _nan_scan(name: str, fill: float) -> Callable:
    def scan(a, axis=None, dtype=None, out=None):
        _no_out(f"np.nan{name}", out)
        x, _ = _replace_nan(array_api.as_tensor(a), fill)
        return array_api.scan(name, x, axis, dtype)
    return scan


def _nan_extreme(name: str) -> Callable:
    """np.nanmax / np.nanmin: NumPy's ``fmax.reduce`` (NaNs skipped; an all-NaN slice is NaN;
    an empty reduction raises with fmax's message)."""
    ufunc = "fmax" if name == "max" else "fmin"

    def reduction(a, axis=None, out=None, keepdims=False, **kwargs):
        _no_out(f"np.nan{name}", out)
        if kwargs:
            raise _refuse(f"np.nan{name}", f"{next(iter(kwargs))}=")
        x = array_api.as_tensor(a)
        count = _count_reduced(x, axis)
        message = f"zero-size array to reduction operation {ufunc} which has no identity"
        if isinstance(count, int):
            if count == 0:
                raise ValueError(message)
        else:
            _raise_if(array_api.ufunc("equal", count, 0), ValueError(message))
        if not _inexact(x):
            return _reduce(name, x, axis, None, keepdims)
        filled, mask = _replace_nan(x, -np.inf if name == "max" else np.inf)
        extreme = _reduce(name, filled, axis, None, keepdims)
        return array_api.where(_reduce("all", mask, axis, None, keepdims), np.nan, extreme)
    return reduction


def _nan_arg(name: str) -> Callable:
    def reduction(a, axis=None, out=None, *, keepdims=False):
        _no_out(f"np.nan{name}", out)
        x = array_api.as_tensor(a)
        filled, mask = _replace_nan(x, -np.inf if name == "argmax" else np.inf)
        if mask is not None:
            all_nan = _reduce("any", _reduce("all", mask, _axis(f"np.nan{name}", axis, x.ndim)))
            size = array_shapes.size_of(x)
            if not isinstance(size, int):
                all_nan = array_api.ufunc("logical_and", all_nan,
                                          array_api.ufunc("greater", size, 0))
            if not (isinstance(size, int) and size == 0):
                _raise_if(all_nan, ValueError("All-NaN slice encountered"))
        return _reduce(name, filled, axis, None, keepdims)
    return reduction


def _divide_by_count(total: Tensor, count: object) -> Tensor:
    """NumPy's ``_divide_by_count``: divided in the promoted dtype, cast back (unsafe)."""
    return array_api.astype(array_api.ufunc("true_divide", total, count), total.dtype)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    _no_out("np.nanmean", out)
    if kwargs:
        raise _refuse("np.nanmean", f"{next(iter(kwargs))}=")
    x = array_api.as_tensor(a)
    arr, mask = _replace_nan(x, 0)
    if mask is None:
        return _reduce("mean", x, axis, dtype, keepdims)
    if dtype is not None and not np.issubdtype(np.dtype(dtype), np.inexact):
        raise TypeError("If a is inexact, then dtype must be inexact")
    count = _reduce("sum", array_api.ufunc("logical_not", mask), axis, np.intp, keepdims)
    total = _reduce("sum", arr, axis, dtype, keepdims)
    return _divide_by_count(total, count)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """``np.nanvar``, step by step as NumPy computes it (real inputs; complex is refused)."""
    _no_out("np.nanvar", out)
    if kwargs:
        raise _refuse("np.nanvar", f"{next(iter(kwargs))}=")
    x = array_api.as_tensor(a)
    arr, mask = _replace_nan(x, 0)
    if mask is None:
        return _reduce("var", x, axis, dtype, keepdims, ddof)
    if x.dtype.kind == "c":
        raise StagingTypeError(f"np.nanvar/np.nanstd of a complex array is not supported on "
                               f"staged tensors{_at()}")
    if dtype is not None and not np.issubdtype(np.dtype(dtype), np.inexact):
        raise TypeError("If a is inexact, then dtype must be inexact")
    valid = array_api.ufunc("logical_not", mask)
    count = _reduce("sum", valid, axis, np.intp, True)
    mean = _divide_by_count(_reduce("sum", arr, axis, dtype, True), count)
    deviation = array_api.astype(array_api.ufunc("subtract", arr, mean), arr.dtype)
    deviation = array_api.where(mask, 0, deviation)
    squares = array_api.ufunc("multiply", deviation, deviation)
    var = _reduce("sum", squares, axis, dtype, keepdims)
    dof = array_api.ufunc("subtract", _reduce("sum", valid, axis, np.intp, keepdims), ddof)
    var = _divide_by_count(var, dof)
    return array_api.where(array_api.ufunc("less_equal", dof, 0), np.nan, var)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    var = nanvar(a, axis, dtype, out, ddof, keepdims, **kwargs)
    return array_api.ufunc("sqrt", var)


# --- isclose, allclose, round, ptp, average ------------------------------------------------------


def _closeness_operand(value: object) -> object:
    return value if isinstance(value, (Tensor, int, float, complex)) else constant(
        np.asanyarray(value))


def isclose(a, b, rtol=1.e-5, atol=1.e-8, equal_nan=False) -> Tensor:
    """NumPy's ``isclose`` formula: ``|x - y| <= atol + rtol * |y|`` for finite y, or x == y."""
    x, y, atol, rtol = (_closeness_operand(v) for v in (a, b, atol, rtol))
    if isinstance(y, Tensor) and not value_info.is_weak(y.value):
        dtype = np.result_type(y.dtype, 1.)
        y = y if y.dtype == dtype else array_api.astype(y, dtype)
    elif isinstance(y, Tensor):  # a staged Python number
        if y.dtype.kind in "biu":
            y = array_api.astype(y, np.float64)
            value_info.mark_weak(y.value)
    elif isinstance(y, int):
        y = float(y)
    u = array_api.ufunc
    close = u("less_equal", u("absolute", u("subtract", x, y)),
              u("add", atol, u("multiply", rtol, u("absolute", y))))
    result = u("logical_or", u("logical_and", close, u("isfinite", y)), u("equal", x, y))
    if equal_nan:
        result = u("logical_or", result, u("logical_and", u("isnan", x), u("isnan", y)))
    return array_api.as_tensor(result)


def allclose(a, b, rtol=1.e-5, atol=1.e-8, equal_nan=False) -> Tensor:
    """``np.allclose``: a staged bool that stands for NumPy's Python bool (returned as one)."""
    result = _reduce("all", isclose(a, b, rtol, atol, equal_nan))
    value_info.mark_weak(result.value)
    return result


def array_equal(a1, a2, equal_nan=False) -> bool | Tensor:
    """``np.array_equal``: shapes equal and every element equal (NaNs at the same places with
    ``equal_nan``), a staged bool standing for NumPy's Python bool. Where sizes are known only
    at run time, the elements compared are the first ``min`` of both sizes of each flattened
    array, so that differing shapes give False rather than a broadcasting error."""
    a, b = array_api.as_tensor(a1), array_api.as_tensor(a2)
    if a.ndim != b.ndim:
        return False
    same: object = True
    for axis in range(a.ndim):
        same = array_api.ufunc("logical_and", same, array_api.ufunc(
            "equal", array_shapes.dim(a, axis), array_shapes.dim(b, axis)))
    if same is False or isinstance(same, np.bool_) and not same:
        return False
    count = array_api.ufunc("minimum", array_shapes.size_of(a), array_shapes.size_of(b))
    x = array_shapes.getitem(array_shapes.ravel(a), slice(None, count))
    y = array_shapes.getitem(array_shapes.ravel(b), slice(None, count))
    equal = array_api.ufunc("equal", x, y)
    if equal_nan and (a.dtype.kind in "fc" or b.dtype.kind in "fc"):
        both = array_api.ufunc("logical_and", array_api.ufunc("isnan", x),
                               array_api.ufunc("isnan", y))
        equal = array_api.ufunc("logical_or", equal, both)
    result = array_api.ufunc("logical_and", same, _reduce("all", equal))
    value_info.mark_weak(result.value)
    return result


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None) -> Tensor:
    """``np.nan_to_num`` of a real array: NaN and infinities replaced by values of its dtype
    (the largest finite magnitudes by default); integer and bool arrays come back unchanged."""
    if not copy:
        raise StagingTypeError(
            f"np.nan_to_num(..., copy=False){_at()} writes into its argument in place; staged "
            "code writes into an array through its name only: write `y = np.nan_to_num(y)` "
            "(or `y[...] = np.nan_to_num(y)` to change the caller's array)")
    x = array_api.as_tensor(x)
    if x.dtype.kind == "c":
        raise StagingTypeError(f"np.nan_to_num of a complex array is not supported on staged "
                               f"tensors{_at()}; apply it to z.real and z.imag of a NumPy array")
    if x.dtype.kind not in "f":
        return array_api.copy(x)
    info = np.finfo(x.dtype)
    u = array_api.ufunc

    def fill(value: object, default: object) -> Tensor:
        value = default if value is None else value
        if isinstance(value, Tensor):
            return array_api.astype(value, x.dtype)
        return constant(np.asarray(value).astype(x.dtype))

    positive = u("logical_and", u("isinf", x), u("logical_not", u("signbit", x)))
    negative = u("logical_and", u("isinf", x), u("signbit", x))
    result = array_api.where(u("isnan", x), fill(nan, 0.0), x)
    result = array_api.where(positive, fill(posinf, info.max), result)
    return array_api.where(negative, fill(neginf, info.min), result)


def _power_of_ten(n: int) -> float:
    """NumPy's ``power_of_ten`` (C): a table up to 1e8, then repeated multiplication."""
    if n < 9:
        return float(10**n)
    result = 1e9
    for _ in range(n - 9):
        result *= 10.
    return result


def round_(a, decimals=0, out=None) -> Tensor:
    """``np.round`` / ``np.around`` / ``ndarray.round``, as NumPy's ``PyArray_Round``: scale
    by a power of ten, round half to even, scale back (integers: divide, round, multiply)."""
    _no_out("np.round", out)
    if isinstance(decimals, Tensor):
        raise _refuse("np.round", "decimals= (staged)", "; pass a Python int")
    decimals = operator.index(decimals)
    x = array_api.as_tensor(a)
    if x.dtype.kind == "c":
        raise StagingTypeError(f"np.round of a complex array is not supported on staged "
                               f"tensors{_at()}")
    integer = x.dtype.kind in "iu"
    if decimals >= 0 and integer:
        return array_api.copy(x)  # (NumPy's result is a new array)
    if x.dtype.kind == "b":
        x = array_api.astype(x, np.float16)
    scale = _power_of_ten(abs(decimals))
    first, second = ("multiply", "true_divide") if decimals >= 0 else ("true_divide",
                                                                        "multiply")
    scaled = array_api.ufunc(first, x, scale)
    rounded = array_api.ufunc(second, array_api.ufunc("rint", scaled), scale)
    return array_api.astype(rounded, x.dtype) if integer else rounded


def ptp(a, axis=None, out=None, keepdims=False) -> Tensor:
    _no_out("np.ptp", out)
    x = array_api.as_tensor(a)
    return array_api.ufunc("subtract", _reduce("max", x, axis, None, keepdims),
                           _reduce("min", x, axis, None, keepdims))


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """``np.average`` as NumPy computes it (the mean, or sum(a * w) / sum(w) in NumPy's
    result dtype; a zero weight sum raises ZeroDivisionError at run time)."""
    x = array_api.as_tensor(a)
    if weights is None:
        avg = _reduce("mean", x, axis, None, keepdims)
        scale = array_api.astype(_count_as_tensor(x, axis), avg.dtype)
    else:
        w = array_api.as_tensor(weights)
        if x.dtype.kind in "biu":
            dtype = np.result_type(x.dtype, w.dtype, "f8")
        else:
            dtype = np.result_type(x.dtype, w.dtype)
        w, axis = _broadcast_weights(x, w, axis)
        scale = _reduce("sum", w, axis, dtype, keepdims)
        _raise_if(_reduce("any", array_api.ufunc("equal", scale, 0.0)),
                  ZeroDivisionError("Weights sum to zero, can't be normalized"))
        product = array_api.ufunc("multiply", array_api.astype(x, dtype),
                                  array_api.astype(w, dtype))
        avg = array_api.ufunc("true_divide", _reduce("sum", product, axis, None, keepdims),
                              scale)
    if not returned:
        return avg
    if scale.type.shape != avg.type.shape:
        scale = array_api.copy(array_shapes.broadcast_to(scale, array_shapes.shape_of(avg)))
    return avg, scale


def _broadcast_weights(x: Tensor, w: Tensor, axis: object) -> tuple[Tensor, object]:
    """NumPy's checks of ``weights`` against ``a`` (unknown sizes checked at run time) and
    weights of one axis reshaped to broadcast along it."""
    consistent = "Shape of weights must be consistent with shape of a along specified axis."
    if x.ndim == w.ndim:
        _check_same_dims(x, w, ValueError(consistent) if axis is not None else TypeError(
            "Axis must be specified when shapes of a and weights differ."))
        return w, axis
    if axis is None:
        raise TypeError("Axis must be specified when shapes of a and weights differ.")
    axes = dtype_rules.normalize_axes(axis, x.ndim)
    if w.ndim != 1 or len(axes) != 1:
        raise ValueError(consistent)
    (ax,) = axes
    _check_same_dims(array_shapes.getitem(x, tuple(slice(None) if i == ax else 0
                                                   for i in range(x.ndim))), w,
                     ValueError(consistent))
    w = array_shapes.reshape(w, tuple(-1 if i == ax else 1 for i in range(x.ndim)), view=False)
    return w, axes


def _check_same_dims(x: Tensor, w: Tensor, error: BaseException) -> None:
    for i in range(x.ndim):
        a, b = array_shapes.dim(x, i), array_shapes.dim(w, i)
        if isinstance(a, int) and isinstance(b, int):
            if a != b:
                raise error
        else:
            _raise_if(array_api.ufunc("not_equal", a, b), error)


def _count_as_tensor(x: Tensor, axis: object) -> Tensor:
    count = _count_reduced(x, axis)
    return count if isinstance(count, Tensor) else constant(np.int64(count))


FUNCTIONS: dict[Callable, Callable[..., Any]] = {
    np.median: _median(False), np.nanmedian: _median(True),
    np.quantile: _quantile("quantile", False), np.percentile: _quantile("percentile", False),
    np.nanquantile: _quantile("quantile", True),
    np.nanpercentile: _quantile("percentile", True),
    np.searchsorted: searchsorted, np.digitize: digitize, np.bincount: bincount,
    np.nonzero: nonzero, np.argwhere: argwhere, np.flatnonzero: flatnonzero,
    np.count_nonzero: count_nonzero, np.unique: unique,
    np.nansum: _nan_sum_like("sum", 0), np.nanprod: _nan_sum_like("prod", 1),
    np.nancumsum: _nan_scan("cumsum", 0), np.nancumprod: _nan_scan("cumprod", 1),
    np.nanmax: _nan_extreme("max"), np.nanmin: _nan_extreme("min"),
    np.nanargmax: _nan_arg("argmax"), np.nanargmin: _nan_arg("argmin"),
    np.nanmean: nanmean, np.nanvar: nanvar, np.nanstd: nanstd,
    np.isclose: isclose, np.allclose: allclose, np.nan_to_num: nan_to_num,
    np.array_equal: array_equal,
    np.round: round_, np.around: round_, np.ptp: ptp, np.average: average,
}
