"""NumPy's grids, diagonals and vector products on staged tensors, as composites of existing ops.

linspace (static ``num``, staged start/stop), meshgrid, identity, tri, diagonal/trace, cross and
kron follow NumPy's own algorithms step by step (the same operations in the same dtypes), so the
values agree bit for bit on every target: ``linspace`` is ``arange(num) * step + start`` with the
last value set to ``stop``; ``diagonal`` indexes with two aranges (a read-only view in NumPy, a
staged view here); ``cross`` computes NumPy's products and differences in the promoted dtype.
"""

from __future__ import annotations

import operator

import numpy as np
from autostage.runtime import array_api, array_shapes, dtype_rules, tracing, value_info
from autostage.runtime.array_api import as_tensor, astype, ufunc
from autostage.runtime.numpy_shapes import (
    check,
    dim,
    index_int,
    largest,
    moveaxis,
    refuse,
    smallest,
)
from autostage.runtime.tensor import StagingTypeError, Tensor


def _is_staged(*values: object) -> bool:
    return any(isinstance(v, Tensor) for v in values)


# --- linspace ---------------------------------------------------------------------------------


def _sample(value: object) -> object:
    """What ``np.result_type`` sees: an array of a strong dtype, or a (weak) Python scalar."""
    if isinstance(value, Tensor):
        if value_info.is_weak(value.value):
            return value.dtype.type(0).item()
        return np.empty(0, value.dtype)
    return value if dtype_rules.is_python_scalar(value) else np.asarray(value)


def linspace(start: object, stop: object, num: object = 50, endpoint: bool = True,
             retstep: bool = False, dtype: object = None, axis: int = 0, *,
             device: object = None) -> object:
    """``np.linspace`` (NumPy's algorithm, in its dtypes); ``num`` may be staged, then NumPy's
    tests on it (``div > 0``, ``num > 1``) are staged selections."""
    if isinstance(num, Tensor):
        if num.ndim != 0 or num.dtype.kind not in "iu":
            raise TypeError(f"'{num.dtype}' object cannot be interpreted as an integer")
        if retstep:
            loc = tracing.user_location()
            raise StagingTypeError(
                f"np.linspace(..., retstep=True) with a staged num{f' at {loc}' if loc else ''}"
                " is not supported: NumPy's step is a NumPy float, or the Python float nan for "
                "a single sample, so its type would depend on num. Compute the step yourself: "
                "(stop - start) / (num - 1)")
        num = index_int(num)
        check(num < 0, ValueError("Number of samples must be non-negative."))
    else:
        num = operator.index(num)
        if num < 0:
            raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    dt = np.result_type(*(_sample(v) for v in (start, stop)), 0.0)
    if not any(isinstance(_sample(v), np.ndarray) for v in (start, stop)):
        start, stop = as_tensor(start, dt), as_tensor(stop, dt)  # NumPy makes arrays of them
    start, stop = (v if isinstance(v, Tensor) or dtype_rules.is_python_scalar(v)
                   else as_tensor(v) for v in (start, stop))
    delta = ufunc("subtract", *(v if dtype_rules.is_python_scalar(v) else _as(v, dt)
                                for v in (stop, start)))
    delta = _as(delta, dt)
    y = array_shapes.reshape(array_shapes.arange(0, num, dtype=dt), (-1, *(1,) * delta.ndim),
                             view=False)
    step: object = np.nan  # NumPy's step when div == 0: the Python float nan
    if isinstance(div, Tensor):
        return _linspace_staged_div(y, delta, start, stop, num, div, dt, endpoint, retstep,
                                    dtype, axis)
    if div > 0:
        step = _as(ufunc("true_divide", delta, div), dt)
        zero = ufunc("equal", step, 0)
        if step.ndim:
            zero = array_api.reduce("any", zero)
        slow = ufunc("multiply", _as(ufunc("true_divide", y, div), dt), delta)
        y = array_api.where(zero, slow, ufunc("multiply", y, step))
    else:
        y = ufunc("multiply", y, delta)
    y = _as(ufunc("add", y, start), dt)
    if endpoint and num > 1:
        y = array_shapes.setitem(y, -1, as_tensor(stop) if not isinstance(stop, Tensor)
                                 else stop)
    if axis != 0:
        y = moveaxis(y, 0, axis)
    if dtype is not None:
        if np.issubdtype(np.dtype(dtype), np.integer):
            y = ufunc("floor", y)
        y = astype(y, dtype)
    return (y, step) if retstep else y


def _linspace_staged_div(y: Tensor, delta: Tensor, start: object, stop: object, num: Tensor,
                         div: Tensor, dt: np.dtype, endpoint: bool, retstep: bool,
                         dtype: object, axis: int) -> object:
    """linspace's tail for a staged ``num``: both of NumPy's branches, selected at run time
    (the step is then a NumPy nan where NumPy gives the Python float nan)."""
    positive = ufunc("greater", div, 0)
    step = _as(ufunc("true_divide", delta, div), dt)
    zero = ufunc("equal", step, 0)
    if step.ndim:
        zero = array_api.reduce("any", zero)
    slow = ufunc("multiply", _as(ufunc("true_divide", y, div), dt), delta)
    scaled = array_api.where(zero, slow, ufunc("multiply", y, step))
    y = array_api.where(positive, scaled, ufunc("multiply", y, delta))
    step = array_api.where(positive, step, np.nan)
    y = _as(ufunc("add", y, start), dt)
    if endpoint:
        last = ufunc("logical_and", ufunc("equal", array_shapes.arange(0, num), num - 1),
                     ufunc("greater", num, 1))
        last = array_shapes.reshape(last, (-1, *(1,) * (y.ndim - 1)), view=False)
        y = array_api.where(last, stop if not isinstance(stop, Tensor) else _as(stop, dt), y)
        y = _as(y, dt)
    if axis != 0:
        y = moveaxis(y, 0, axis)
    if dtype is not None:
        if np.issubdtype(np.dtype(dtype), np.integer):
            y = ufunc("floor", y)
        y = astype(y, dtype)
    return (y, step) if retstep else y


def _as(x: Tensor, dtype: np.dtype) -> Tensor:
    return x if x.dtype == dtype else astype(x, dtype)


# --- meshgrid, identity, tri ------------------------------------------------------------------


def meshgrid(*xi: object, copy: bool = True, sparse: bool = False, indexing: str = "xy"
             ) -> tuple[Tensor, ...]:
    """``np.meshgrid`` (NumPy's algorithm: reshapes, then broadcasts unless sparse)."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    tensors = [as_tensor(x) for x in xi]
    sizes = [array_shapes.size_of(t) for t in tensors]
    shapes = []
    for i in range(ndim):
        shape = [1] * ndim
        shape[i] = sizes[i]
        shapes.append(shape)
    if indexing == "xy" and ndim > 1:
        for shape in shapes:
            shape[0], shape[1] = shape[1], shape[0]
        sizes[0], sizes[1] = sizes[1], sizes[0]
    output = [array_shapes.reshape(t, tuple(s)) for t, s in zip(tensors, shapes, strict=True)]
    if not sparse:
        output = [array_shapes.broadcast_to(o, tuple(sizes)) for o in output]
    if copy:
        output = [array_api.copy(o) for o in output]
    return tuple(output)


def identity(n: object, dtype: object = None, *, like: object = None) -> Tensor:
    return array_shapes.eye(n, None, 0, float if dtype is None else dtype)


def tri(N: object, M: object = None, k: object = 0, dtype: object = float, *,
        like: object = None) -> Tensor:
    """``np.tri``: ``arange(N)[:, None] >= arange(-k, M - k)``, as NumPy computes it."""
    M = N if M is None else M
    rows = array_shapes.arange(0, N, dtype=np.int64)
    cols = array_shapes.arange(-k, M - k, dtype=np.int64)
    if not _is_staged(rows, cols):
        return as_tensor(np.tri(N, M, k, dtype))
    mask = ufunc("greater_equal", array_shapes.expand_dims(as_tensor(rows), 1),
                 array_shapes.expand_dims(as_tensor(cols), 0))
    return astype(mask, dtype)


# --- diagonal and trace -----------------------------------------------------------------------


def diagonal(a: object, offset: object = 0, axis1: object = 0, axis2: object = 1) -> Tensor:
    """``np.diagonal``: the two axes moved last, then indexed with two aranges (a view)."""
    x = as_tensor(a)
    if x.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    axis1 = np.lib.array_utils.normalize_axis_index(axis1, x.ndim, "axis1")
    axis2 = np.lib.array_utils.normalize_axis_index(axis2, x.ndim, "axis2")
    if axis1 == axis2:
        raise ValueError("axis1 and axis2 cannot be the same")
    if isinstance(offset, Tensor):
        raise refuse("np.diagonal", "a staged offset", "pass a Python int")
    k = operator.index(offset)
    rest = [i for i in range(x.ndim) if i not in (axis1, axis2)]
    moved = array_shapes.transpose(x, (*rest, axis1, axis2))
    rows, cols = dim(x, axis1), dim(x, axis2)
    length = largest(smallest(rows - max(-k, 0), cols - max(k, 0)), 0)
    i = as_tensor(array_shapes.arange(0, length, dtype=np.int64))
    index = (Ellipsis, ufunc("add", i, max(-k, 0)), ufunc("add", i, max(k, 0)))
    result = array_shapes.getitem(moved, index)
    value_info.mark_view(result.value, x.value)
    return result


def trace(a: object, offset: object = 0, axis1: object = 0, axis2: object = 1,
          dtype: object = None, out: object = None) -> Tensor:
    """``np.trace``: the sum of the diagonal (NumPy's sum dtype rules)."""
    if out is not None:
        raise refuse("np.trace", "out=", "use the returned value")
    return array_api.reduce("sum", diagonal(a, offset, axis1, axis2), -1, dtype)


# --- cross and kron ---------------------------------------------------------------------------


def cross(a: object, b: object, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: object = None) -> Tensor:
    """``np.cross`` of 2- and 3-vectors. A vector size known only at run time is staged as
    3 (a 2-vector cross has another rank), checked at run time with a clear error."""
    if axis is not None:
        axisa, axisb, axisc = (axis,) * 3
    x, y = as_tensor(a), as_tensor(b)
    x = moveaxis(x, np.lib.array_utils.normalize_axis_index(axisa, x.ndim, "axisa"), -1)
    y = moveaxis(y, np.lib.array_utils.normalize_axis_index(axisb, y.ndim, "axisb"), -1)
    sizes = []
    for t in (x, y):
        size = t.type.shape[-1]
        if size not in (2, 3, None):
            raise ValueError("incompatible dimensions for cross product\n"
                             "(dimension must be 2 or 3)")
        if size is None:
            n = dim(t, -1)
            check(ufunc("logical_and", n != 2, n != 3), ValueError(
                "incompatible dimensions for cross product\n(dimension must be 2 or 3)"))
            check(n == 2, ValueError(
                "np.cross: the vectors' size is known only at run time, and autostage staged "
                "3-vectors (a cross product of 2-vectors has another shape), but they have 2 "
                "components here. "
                "Give the vectors a size known when staging (e.g. np.stack of components)"))
            size = 3
        sizes.append(size)
    dtype = np.promote_types(x.dtype, y.dtype)
    x, y = _as(x, dtype), _as(y, dtype)
    a0, a1, b0, b1 = (array_shapes.getitem(t, (Ellipsis, i)) for t in (x, y) for i in (0, 1))

    def mul(p, q):
        return ufunc("multiply", p, q)

    def sub(p, q):
        return ufunc("subtract", p, q)
    if sizes == [2, 2]:
        return _as(sub(mul(a0, b1), mul(a1, b0)), dtype)
    a2 = array_shapes.getitem(x, (Ellipsis, 2)) if sizes[0] == 3 else None
    b2 = array_shapes.getitem(y, (Ellipsis, 2)) if sizes[1] == 3 else None
    if a2 is None:
        parts = [mul(a1, b2), ufunc("negative", mul(a0, b2)), sub(mul(a0, b1), mul(a1, b0))]
    elif b2 is None:
        parts = [ufunc("negative", mul(a2, b1)), mul(a2, b0), sub(mul(a0, b1), mul(a1, b0))]
    else:
        parts = [sub(mul(a1, b2), mul(a2, b1)), sub(mul(a2, b0), mul(a0, b2)),
                 sub(mul(a0, b1), mul(a1, b0))]
    shape = broadcast_shape_of(parts)
    parts = [_as(array_shapes.broadcast_to(p, shape), dtype) for p in parts]
    result = array_shapes.stack(parts, -1)
    axisc = np.lib.array_utils.normalize_axis_index(axisc, result.ndim, "axisc")
    return moveaxis(result, -1, axisc)


def broadcast_shape_of(tensors: list) -> tuple:
    from autostage.runtime.numpy_shapes import broadcast_shape
    return broadcast_shape(tensors)


def kron(a: object, b: object) -> Tensor:
    """``np.kron`` (NumPy's algorithm: interleaved expand_dims, multiply, reshape)."""
    y = as_tensor(b)
    x = as_tensor(a)
    if x.ndim < y.ndim:
        x = array_shapes.reshape(x, (1,) * (y.ndim - x.ndim) + array_shapes.shape_of(x))
    nda, ndb = x.ndim, y.ndim
    if nda == 0 or ndb == 0:
        return ufunc("multiply", x, y)
    nd = max(nda, ndb)
    xs, ys = array_shapes.shape_of(x), array_shapes.shape_of(y)
    xs = (1,) * max(0, ndb - nda) + xs
    ys = (1,) * max(0, nda - ndb) + ys
    if ndb < nda:
        y = array_shapes.reshape(y, ys)
    x = array_shapes.expand_dims(x, tuple(range(1, nd * 2, 2)))
    y = array_shapes.expand_dims(y, tuple(range(0, nd * 2, 2)))
    result = ufunc("multiply", x, y)
    return array_shapes.reshape(result, tuple(p * q for p, q in zip(xs, ys, strict=True)),
                                view=False)


FUNCTIONS: dict = {
    np.linspace: linspace, np.meshgrid: meshgrid, np.diagonal: diagonal, np.trace: trace,
    np.cross: cross, np.kron: kron,
}

# Functions NumPy calls without dispatching (their arguments are sizes): staged sizes reach them
# through ``numpy_dispatch.staged_function``.
CREATION: dict = {np.identity: identity, np.tri: tri}

METHODS: dict = {
    "diagonal": lambda self, offset=0, axis1=0, axis2=1: diagonal(self, offset, axis1, axis2),
    "trace": lambda self, offset=0, axis1=0, axis2=1, dtype=None, out=None: trace(
        self, offset, axis1, axis2, dtype, out),
}
