"""``np.interp`` of staged values: NumPy's C loop (``arr_interp`` in compiled_base.c) as
whole-array operations, so that values are NumPy's bit for bit.

For each ``x`` NumPy finds ``j`` with ``xp[j] <= x < xp[j + 1]`` (the last of equal points:
``searchsorted(xp, x, 'right') - 1``) and gives ``left``/``right`` outside ``xp``, ``fp[j]``
where ``x`` is ``xp[j]`` or the last point, else ``slope * (x - xp[j]) + fp[j]``, falling back
to the other end of the interval, then to ``fp[j]`` on equal ends, where that is NaN; a NaN
``x`` gives itself (``fp[0]`` for one sample point). Everything is float64 (complex ``fp`` and
``period=`` are refused). The sample points' own errors (empty, of different lengths) are
NumPy's, raised at run time when their lengths are. Sample points that do not increase (or hold
a NaN), which NumPy takes without a check and answers from its guessing search, are a clear
``ValueError`` at run time.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from autostage.runtime import array_api, array_shapes, numpy_statistics
from autostage.runtime.array_api import ufunc, where
from autostage.runtime.numpy_shapes import check
from autostage.runtime.tensor import StagingTypeError, Tensor


def _points(a: object, which: str) -> Tensor:
    points = array_api.as_tensor(a, np.float64) if not isinstance(a, Tensor) else a
    if points.dtype.kind == "c":
        raise StagingTypeError(f"np.interp of complex {which} is not supported on staged "
                               f"tensors{numpy_statistics._at()}")
    if points.ndim != 1:
        raise ValueError("object too deep for desired array" if points.ndim > 1 else
                         "object of too small depth for desired array")
    return array_api.astype(points, np.float64)


NOT_INCREASING = (
    "np.interp of sample points xp that do not increase (or hold a NaN) cannot be staged: "
    "NumPy does not check them and its result is then undefined ('nonsense', its documentation "
    "says: its search guesses from the previous point), and the staged search differs; sort xp, "
    "and fp with it, first")


def _increasing(xp: Tensor) -> Tensor:
    """Whether no sample point is below the one before it (nor NaN): the points where the
    whole-array search gives NumPy's intervals (NumPy's guessing search differs elsewhere)."""
    up = array_shapes.getitem(xp, slice(1, None))
    down = array_shapes.getitem(xp, slice(None, -1))
    return array_api.reduce("all", ufunc("greater_equal", up, down))


def interp(x: object, xp: object, fp: object, left: object = None, right: object = None,
           period: object = None) -> Tensor:
    if period is not None:
        raise numpy_statistics._refuse("np.interp", "period=")
    xp, fp = _points(xp, "sample points"), _points(fp, "values")
    x = array_api.astype(array_api.as_tensor(x), np.float64)
    n = array_shapes.dim(xp, 0)
    check(ufunc("not_equal", array_shapes.dim(fp, 0), n),
          ValueError("fp and xp are not of the same length."))
    check(ufunc("equal", n, 0), ValueError("array of sample points is empty"))
    check(ufunc("logical_not", _increasing(xp)), ValueError(NOT_INCREASING))
    last = n - 1
    first_y, last_y = array_shapes.getitem(fp, 0), array_shapes.getitem(fp, last)
    j = numpy_statistics.searchsorted(xp, x, "right") - 1
    low = ufunc("maximum", ufunc("minimum", j, n - 2), 0)  # an interval inside xp
    high = ufunc("minimum", low + 1, last)
    x0, x1 = array_shapes.getitem(xp, low), array_shapes.getitem(xp, high)
    y0, y1 = array_shapes.getitem(fp, low), array_shapes.getitem(fp, high)
    slope = (y1 - y0) / (x1 - x0)
    result = slope * (x - x0) + y0
    result = where(ufunc("isnan", result), slope * (x - x1) + y1, result)
    result = where(ufunc("logical_and", ufunc("isnan", result), ufunc("equal", y0, y1)), y0,
                   result)
    result = where(ufunc("logical_or", ufunc("equal", x0, x), ufunc("equal", j, last)),
                   array_shapes.getitem(fp, ufunc("maximum", j, 0)), result)
    below = first_y if left is None else array_api.astype(array_api.as_tensor(left), np.float64)
    above = last_y if right is None else array_api.astype(array_api.as_tensor(right),
                                                           np.float64)
    result = where(ufunc("less", x, array_shapes.getitem(xp, 0)), below, result)
    result = where(ufunc("greater", x, array_shapes.getitem(xp, last)), above, result)
    return where(ufunc("logical_and", ufunc("isnan", x), ufunc("greater", n, 1)), x, result)


FUNCTIONS: dict[Any, Any] = {np.interp: interp}
