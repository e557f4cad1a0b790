"""NumPy's array-rearranging functions on staged tensors, as composites of existing ops.

split/array_split, repeat, tile, the stacks (vstack/hstack/column_stack/dstack, atleast_nd),
flip/fliplr/flipud/rot90, roll, diff, pad, take, swapaxes/moveaxis, append and broadcast_arrays
are written the way NumPy writes them, in terms of slicing (negative steps included),
concatenate, broadcast_to, reshape, transpose and element-wise ops, so that they stage on every
target with NumPy's result dtypes, shapes and values. Sizes known only at run time (``x.shape[0]``
of an argument) become staged integer arithmetic, and NumPy's errors that depend on them
(an unequal split, a negative repeat count) are staged ``raise_if`` checks. ``np.repeat`` with
an array of counts has a data-dependent size: it is the one op of its own (``ops/rearrange.py``).
Results NumPy gives as views (split, flip, swapaxes, moveaxis) are staged views, so that writing
into them is the clear error of ``array_shapes.check_writable``; the others are fresh arrays.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence

import numpy as np
from autostage.runtime import array_api, array_shapes, dtype_rules, tracing
from autostage.runtime.array_api import as_tensor, ufunc
from autostage.runtime.array_shapes import dim, getitem, reshape, transpose
from autostage.runtime.tensor import StagingTypeError, Tensor, constant
from autostage.runtime.tracing import at as _at  # " at file:line" for messages

_normalize_axes = np.lib.array_utils.normalize_axis_tuple


# --- staged integer helpers (Python ints stay Python ints) -------------------------------------


def refuse(function: str, what: str, instead: str = "") -> StagingTypeError:
    """The error for an argument of ``function`` that autostage does not stage."""
    return StagingTypeError(f"{function}{_at()}: {what} is not supported on staged tensors"
                            + (f"; {instead}" if instead else ""))


def is_int(value: object) -> bool:
    """A static integer or a staged 0-d integer (a size, a count, a shift)."""
    if isinstance(value, Tensor):
        return value.ndim == 0 and value.dtype.kind in "iu"
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def index_int(value: object) -> int | Tensor:
    """A Python int, or a staged 0-d integer as int64."""
    if isinstance(value, Tensor):
        return value if value.dtype == np.int64 else array_api.astype(value, np.int64)
    return operator.index(value)


def smallest(a: object, b: object) -> object:
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return ufunc("minimum", a, b)
    return min(a, b)


def largest(a: object, b: object) -> object:
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return ufunc("maximum", a, b)
    return max(a, b)


def check(test: object, error: BaseException) -> None:
    """Raises ``error`` now if ``test`` is True, at run time if it is a staged bool."""
    if isinstance(test, Tensor):
        tracing.emit("raise_if", (test.value,), {"exception": error})
    elif test:
        raise error


def product(sizes: Sequence[object]) -> object:
    result: object = 1
    for size in sizes:
        result = result * size
    return result


def along(x: Tensor, axis: int, item: object) -> Tensor:
    """``x[:, ..., item]`` with ``item`` at ``axis``."""
    return getitem(x, (slice(None),) * axis + (item,))


def _fresh_reshape(x: Tensor, shape: Sequence[object]) -> Tensor:
    return reshape(x, tuple(shape), view=False)


# --- split ------------------------------------------------------------------------------------


def _split_bounds(n: object, sections: object, equal: bool) -> list:
    """Where each of ``sections`` pieces of an axis of ``n`` starts, then ``n``; ``equal``: the
    pieces are known to be equal (``np.split`` checked), so no piece takes one of the rest."""
    if isinstance(sections, Tensor):
        raise refuse("np.split", "a staged number of sections",
                     "the number of pieces must be known when staging (a Python int)")
    sections = operator.index(sections)
    if sections <= 0:
        raise ValueError("number sections must be larger than 0.")
    each = n // sections
    if equal:
        return [0, *(each if i == 1 else i * each for i in range(1, sections)), n]
    extras = n % sections
    return [0] + [i * each + smallest(i, extras) for i in range(1, sections + 1)]


def array_split(ary: object, indices_or_sections: object, axis: object = 0) -> list[Tensor]:
    """``np.array_split``: a list of views of ``ary`` (sections or a list of split points)."""
    return _split(ary, indices_or_sections, axis, equal=False)


def _split(ary: object, indices_or_sections: object, axis: object, equal: bool
           ) -> list[Tensor]:
    x = as_tensor(ary)
    axis = dtype_rules.normalize_axis(axis, x.ndim)
    n = dim(x, axis)
    if isinstance(indices_or_sections, Tensor) and indices_or_sections.ndim > 0:
        raise refuse("np.array_split", "a staged array of split points",
                     "pass a list of indices (Python ints or staged scalars)")
    if is_int(indices_or_sections):
        bounds = _split_bounds(n, indices_or_sections, equal)
    else:
        bounds = [0, *(index_int(i) for i in indices_or_sections), n]
    return [along(x, axis, slice(bounds[i], bounds[i + 1])) for i in range(len(bounds) - 1)]


def split(ary: object, indices_or_sections: object, axis: object = 0) -> list[Tensor]:
    """``np.split``: like array_split, but sections must divide the axis equally."""
    if is_int(indices_or_sections) and not isinstance(indices_or_sections, Tensor):
        x = as_tensor(ary)
        n = dim(x, dtype_rules.normalize_axis(axis, x.ndim))
        sections = operator.index(indices_or_sections)
        if sections == 0:
            raise ZeroDivisionError("integer modulo by zero")
        check(n % sections != 0, ValueError("array split does not result in an equal division"))
        return _split(ary, sections, axis, equal=True)
    return array_split(ary, indices_or_sections, axis)


# --- repeat and tile --------------------------------------------------------------------------


def repeat(a: object, repeats: object, axis: object = None) -> Tensor:
    """``np.repeat``: a count (static or staged) broadcasts; an array of counts is the
    ``repeat`` op (its result size depends on the counts' values)."""
    x = as_tensor(a)
    if axis is None:
        x, axis = array_shapes.ravel(x), 0
    else:
        axis = dtype_rules.normalize_axis(axis, x.ndim)
    if isinstance(repeats, (bool, np.bool_)):
        repeats = int(repeats)
    if isinstance(repeats, Tensor) and repeats.ndim == 0 and repeats.dtype.kind == "b":
        repeats = array_api.astype(repeats, np.int64)
    if is_int(repeats):
        return _repeat_count(x, axis, index_int(repeats))
    counts = as_tensor(repeats)
    if counts.ndim > 1 or not np.can_cast(counts.dtype, np.int64, "safe"):
        if counts.ndim > 1:
            raise ValueError("object too deep for desired array")
        raise TypeError(f"Cannot cast array data from dtype('{counts.dtype}') to "
                        "dtype('int64') according to the rule 'safe'")
    if counts.ndim == 0:
        return _repeat_count(x, axis, index_int(counts))
    counts = array_api.astype(counts, np.int64) if counts.dtype != np.int64 else counts
    (result,) = tracing.emit("repeat", (x.value, counts.value), {"axis": axis})
    return Tensor(result)


def _repeat_count(x: Tensor, axis: int, count: object) -> Tensor:
    check(count < 0, ValueError("negative dimensions are not allowed"))
    shape = list(array_shapes.shape_of(x))
    wide = array_shapes.expand_dims(x, axis + 1)
    wide = array_shapes.broadcast_to(wide, (*shape[:axis + 1], count, *shape[axis + 1:]))
    return _fresh_reshape(wide, (*shape[:axis], shape[axis] * count, *shape[axis + 1:]))


def tile(A: object, reps: object) -> Tensor:
    """``np.tile``: each axis ``(a,)`` becomes ``(r, a)`` by broadcasting, then merged."""
    reps = (reps,) if is_int(reps) else tuple(reps)
    reps = tuple(index_int(r) for r in reps)
    x = as_tensor(A)
    x = atleast_nd(x, len(reps), view=False)
    reps = (1,) * (x.ndim - len(reps)) + reps
    for r in reps:
        check(r < 0, ValueError("negative dimensions are not allowed"))
    if all(isinstance(r, int) and r == 1 for r in reps):
        return array_api.copy(x)
    shape = array_shapes.shape_of(x)
    wide = array_shapes.expand_dims(x, tuple(range(0, 2 * x.ndim, 2)))
    wide = array_shapes.broadcast_to(wide, tuple(d for pair in zip(reps, shape, strict=True)
                                                 for d in pair))
    return _fresh_reshape(wide, [r * d for r, d in zip(reps, shape, strict=True)])


# --- atleast_nd and the stacks ----------------------------------------------------------------


def atleast_nd(x: Tensor, ndim: int, view: bool = True) -> Tensor:
    """``x`` with 1-dims prepended up to ``ndim`` (``np.array(x, ndmin=ndim)``)."""
    if x.ndim >= ndim:
        return x
    return reshape(x, (1,) * (ndim - x.ndim) + array_shapes.shape_of(x), view=view)


def _atleast(shapes: Callable[[Tensor], tuple]) -> Callable:
    def atleast(*arys: object) -> object:
        results = []
        for a in arys:
            x = as_tensor(a)
            shape = shapes(x)
            results.append(x if shape is None else reshape(x, shape))
        return results[0] if len(results) == 1 else tuple(results)
    return atleast


def _shape_1d(x: Tensor) -> tuple | None:
    return (1,) if x.ndim == 0 else None


def _shape_2d(x: Tensor) -> tuple | None:
    return {0: (1, 1), 1: (1, *array_shapes.shape_of(x))}.get(x.ndim)


def _shape_3d(x: Tensor) -> tuple | None:
    shape = array_shapes.shape_of(x)
    return {0: (1, 1, 1), 1: (1, *shape, 1), 2: (*shape, 1)}.get(x.ndim)


atleast_1d = _atleast(_shape_1d)
atleast_2d = _atleast(_shape_2d)
atleast_3d = _atleast(_shape_3d)


def _arrays(function: str, tup: object, dtype: object, casting: object = "same_kind"
            ) -> list[Tensor]:
    if dtype is not None or casting != "same_kind":
        raise refuse(function, "dtype= and casting=", "cast the result with .astype()")
    return [as_tensor(t) for t in tup]


def vstack(tup: object, *, dtype: object = None, casting: object = "same_kind") -> Tensor:
    arrays = [atleast_2d(t) for t in _arrays("np.vstack", tup, dtype, casting)]
    return array_shapes.concatenate(arrays, 0)


def hstack(tup: object, *, dtype: object = None, casting: object = "same_kind") -> Tensor:
    arrays = [atleast_1d(t) for t in _arrays("np.hstack", tup, dtype, casting)]
    return array_shapes.concatenate(arrays, 0 if arrays and arrays[0].ndim == 1 else 1)


def dstack(tup: object) -> Tensor:
    return array_shapes.concatenate([atleast_3d(t) for t in _arrays("np.dstack", tup, None)], 2)


def column_stack(tup: object) -> Tensor:
    columns = []
    for x in _arrays("np.column_stack", tup, None):
        columns.append(transpose(atleast_2d(x)) if x.ndim < 2 else x)
    return array_shapes.concatenate(columns, 1)


def append(arr: object, values: object, axis: object = None) -> Tensor:
    """``np.append``: raveled inputs for ``axis=None``, else a concatenate."""
    x, v = as_tensor(arr), as_tensor(values)
    if axis is None:
        return array_shapes.concatenate([array_shapes.ravel(x), array_shapes.ravel(v)], 0)
    return array_shapes.concatenate([x, v], axis)


def broadcast_arrays(*args: object, subok: bool = False) -> tuple[Tensor, ...]:
    """``np.broadcast_arrays``: each argument broadcast to the common shape (views)."""
    tensors = [as_tensor(a) for a in args]
    shape = broadcast_shape(tensors)
    return tuple(t if t.type.shape == shape and None not in shape
                 else array_shapes.broadcast_to(t, shape) for t in tensors)


def broadcast_shape(tensors: Sequence[Tensor]) -> tuple:
    """The broadcast shape of ``tensors``; a dimension known only at run time is the first
    one that is not 1 (broadcast_to then checks the others at run time)."""
    ndim = max((t.ndim for t in tensors), default=0)
    static = dtype_rules.broadcast_shapes(*(t.type.shape for t in tensors))
    shape = []
    for axis in range(ndim):
        if static[axis] is not None:
            shape.append(static[axis])
            continue
        size: object = 1
        for t in tensors:
            k = axis - (ndim - t.ndim)
            if k >= 0 and t.type.shape[k] != 1:
                d = dim(t, k)
                size = d if isinstance(size, int) else array_api.where(size == 1, d, size)
        shape.append(size)
    return tuple(shape)


# --- flips, rotations and axes ----------------------------------------------------------------


def flip(m: object, axis: object = None) -> Tensor:
    """``np.flip``: a view with negative steps."""
    x = as_tensor(m)
    axes = range(x.ndim) if axis is None else _normalize_axes(axis, x.ndim)
    index = tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(x.ndim))
    return getitem(x, index)


def fliplr(m: object) -> Tensor:
    x = as_tensor(m)
    if x.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return getitem(x, (slice(None), slice(None, None, -1)))


def flipud(m: object) -> Tensor:
    x = as_tensor(m)
    if x.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return getitem(x, (slice(None, None, -1),))


def swapaxes(a: object, axis1: object, axis2: object) -> Tensor:
    x = as_tensor(a)
    axis1 = np.lib.array_utils.normalize_axis_index(axis1, x.ndim, "axis1")
    axis2 = np.lib.array_utils.normalize_axis_index(axis2, x.ndim, "axis2")
    axes = list(range(x.ndim))
    axes[axis1], axes[axis2] = axes[axis2], axes[axis1]
    return transpose(x, axes)


def moveaxis(a: object, source: object, destination: object) -> Tensor:
    """``np.moveaxis`` (NumPy's own algorithm and errors)."""
    x = as_tensor(a)
    source = _normalize_axes(source, x.ndim, "source")
    destination = _normalize_axes(destination, x.ndim, "destination")
    if len(source) != len(destination):
        raise ValueError("`source` and `destination` arguments must have the same number of "
                         "elements")
    order = [n for n in range(x.ndim) if n not in source]
    for dest, src in sorted(zip(destination, source, strict=True)):
        order.insert(dest, src)
    return transpose(x, order)


def rot90(m: object, k: object = 1, axes: object = (0, 1)) -> Tensor:
    """``np.rot90`` with a static ``k`` (NumPy's algorithm: flips and a transpose)."""
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    x = as_tensor(m)
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == x.ndim:
        raise ValueError("Axes must be different.")
    if not all(-x.ndim <= a < x.ndim for a in axes):
        raise ValueError(f"Axes={axes} out of range for array of ndim={x.ndim}.")
    if isinstance(k, Tensor):
        raise refuse("np.rot90", "a staged k", "the result's shape depends on it; pass an int")
    k = operator.index(k) % 4
    if k == 0:
        return getitem(x, (slice(None),))
    if k == 2:
        return flip(flip(x, axes[0]), axes[1])
    order = list(range(x.ndim))
    order[axes[0]], order[axes[1]] = order[axes[1]], order[axes[0]]
    if k == 1:
        return transpose(flip(x, axes[1]), order)
    return flip(transpose(x, order), axes[1])


# --- roll and diff ----------------------------------------------------------------------------


def roll(a: object, shift: object, axis: object = None) -> Tensor:
    """``np.roll``: each rolled axis is two slices joined (shifts may be staged)."""
    x = as_tensor(a)
    if axis is None:
        flat = roll(array_shapes.ravel(x), shift, 0)
        return _fresh_reshape(flat, array_shapes.shape_of(x))
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    if len(shifts) != len(axes) and 1 not in (len(shifts), len(axes)):
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    pairs = zip(shifts * (len(axes) if len(shifts) == 1 else 1),
                axes * (len(shifts) if len(axes) == 1 else 1), strict=True)
    offsets: dict[int, object] = {}
    for sh, ax in pairs:
        if not is_int(sh):
            raise TypeError(f"an integer is required for the shift, not {type(sh).__name__}")
        ax = dtype_rules.normalize_axis(ax, x.ndim)
        offsets[ax] = offsets.get(ax, 0) + index_int(sh)
    result = x
    for ax, offset in offsets.items():
        n = dim(x, ax)
        cut = n - offset % largest(n, 1)
        result = array_shapes.concatenate(
            [along(result, ax, slice(cut, None)), along(result, ax, slice(None, cut))], ax)
    return array_api.copy(result) if result is x else result


def diff(a: object, n: int = 1, axis: int = -1, prepend: object = np._NoValue,
         append: object = np._NoValue) -> Tensor:
    """``np.diff`` (NumPy's algorithm; bool arrays use not_equal)."""
    if n == 0:
        return a
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    x = as_tensor(a)
    if x.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = np.lib.array_utils.normalize_axis_index(axis, x.ndim)
    combined = []
    for extra in (prepend, x, append):
        if extra is np._NoValue:
            continue
        extra = as_tensor(extra)
        if extra.ndim == 0:
            shape = list(array_shapes.shape_of(x))
            shape[axis] = 1
            extra = array_shapes.broadcast_to(extra, tuple(shape))
        combined.append(extra)
    if len(combined) > 1:
        x = array_shapes.concatenate(combined, axis)
    op = "not_equal" if x.dtype == np.bool_ else "subtract"
    for _ in range(n):
        x = ufunc(op, along(x, axis, slice(1, None)), along(x, axis, slice(None, -1)))
    return x


# --- take and pad -----------------------------------------------------------------------------


def _gather(x: Tensor, axis: int, indices: object) -> Tensor:
    """``x[..., indices]`` at ``axis`` as a fresh array (never a view, as np.take gives)."""
    index, operands, _ = array_shapes.index_operands((slice(None),) * axis + (indices,))
    (result,) = tracing.emit("getitem", [x.value, *operands], {"index": index})
    return Tensor(result)


def take(a: object, indices: object, axis: object = None, out: object = None,
         mode: str = "raise") -> Tensor:
    """``np.take``: indexing with an integer array; 'wrap' and 'clip' adjust the indices."""
    if out is not None:
        raise refuse("np.take", "out=", "use the returned array")
    x = as_tensor(a)
    if axis is None:
        x, axis = array_shapes.ravel(x), 0
    else:
        axis = dtype_rules.normalize_axis(axis, x.ndim)
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if isinstance(indices, (int, np.integer)) and not isinstance(indices, (bool, np.bool_)):
        idx: Tensor = constant(np.int64(indices))
    else:
        idx = as_tensor(indices)
    if idx.dtype.kind == "b":
        idx = array_api.astype(idx, np.int64)  # NumPy casts booleans to 0 and 1 here
    if idx.dtype.kind not in "iu" or not np.can_cast(idx.dtype, np.int64, "same_kind"):
        raise TypeError(f"Cannot cast array data from dtype('{idx.dtype}') to dtype('int64') "
                        "according to the rule 'safe'")
    if mode != "raise":
        n = dim(x, axis)
        empty = n == 0
        if idx.ndim:
            empty = ufunc("logical_and", empty, array_shapes.size_of(idx) != 0)
        check(empty, IndexError("cannot do a non-empty take from an empty axes."))
        if mode == "wrap":
            idx = ufunc("remainder", idx, largest(n, 1))
        else:
            idx = array_api.clip(idx, 0, largest(n - 1, 0))
    return _gather(x, axis, idx)


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pad_pairs(value: object, ndim: int, what: str) -> list[tuple]:
    pairs = np.broadcast_to(np.asarray(value), (ndim, 2))
    if what == "pad_width":
        if pairs.dtype.kind not in "iu":
            raise TypeError("`pad_width` must be of integral type.")
        if (pairs < 0).any():
            raise ValueError("index can't contain negative values")
        return [(int(b), int(e)) for b, e in pairs]
    return [tuple(p) for p in pairs]


def pad(array: object, pad_width: object, mode: object = "constant", **kwargs: object
        ) -> Tensor:
    """``np.pad`` for modes constant (constant_values), edge, reflect, symmetric and wrap."""
    x = as_tensor(array)
    if not isinstance(mode, str) or mode not in _PAD_MODES:
        raise refuse("np.pad", f"mode={mode!r}",
                     f"the staged modes are {', '.join(map(repr, _PAD_MODES))}")
    allowed = {"constant_values"} if mode == "constant" else set()
    if mode in ("reflect", "symmetric"):
        allowed = {"reflect_type"}
    if set(kwargs) - allowed:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': "
                         f"{set(kwargs) - allowed}")
    if kwargs.get("reflect_type", "even") != "even":
        raise refuse("np.pad", "reflect_type='odd'", "reflect_type='even' is staged")
    if isinstance(pad_width, Tensor) or any(isinstance(p, Tensor) for p in np.ravel(
            np.asarray(pad_width, dtype=object))):
        raise refuse("np.pad", "a staged pad_width", "pass Python ints")
    widths = _pad_pairs(pad_width, x.ndim, "pad_width")
    if mode == "constant":
        values = kwargs.get("constant_values", 0)
        if isinstance(values, Tensor) and values.ndim == 0:
            fills = [(values, values)] * x.ndim
        else:
            fills = _pad_pairs(values, x.ndim, "constant_values")
        for axis, ((before, after), pair) in enumerate(zip(widths, fills, strict=True)):
            x = _pad_constant(x, axis, before, after, pair)
        return array_api.copy(x) if not any(b or e for b, e in widths) else x
    for axis, (before, after) in enumerate(widths):
        if before or after:
            x = _pad_indexed(x, axis, before, after, mode)
    return x if any(b or e for b, e in widths) else array_api.copy(x)


def _pad_constant(x: Tensor, axis: int, before: int, after: int, fills: tuple) -> Tensor:
    if not before and not after:
        return x
    shape = list(array_shapes.shape_of(x))
    parts = [x]
    for width, fill, at_end in ((before, fills[0], False), (after, fills[1], True)):
        if not width:
            continue
        if isinstance(fill, Tensor):
            value = fill if fill.dtype == x.dtype else array_api.astype(fill, x.dtype)
        else:
            with np.errstate(all="ignore"):
                value = constant(np.asarray(fill).astype(x.dtype))
        shape[axis] = width
        block = array_shapes.full(tuple(shape), value, x.dtype)
        parts = [*parts, block] if at_end else [block, *parts]
    return array_shapes.concatenate(parts, axis)


def _pad_indexed(x: Tensor, axis: int, before: int, after: int, mode: str) -> Tensor:
    """The padded axis gathered with NumPy's index pattern (periodic for wide pads)."""
    n = dim(x, axis)
    check(n == 0, ValueError(f"can't extend empty axis {axis} using modes other than "
                             "'constant' or 'empty'"))
    idx = array_shapes.arange(-before, n + after)
    if mode == "edge":
        idx = array_api.clip(idx, 0, largest(n - 1, 0))
    elif mode == "wrap":
        idx = ufunc("remainder", idx, largest(n, 1))
    elif mode == "reflect":
        period = largest(2 * (n - 1), 1)
        m = ufunc("remainder", idx, period)
        idx = array_api.where(ufunc("greater_equal", m, n), ufunc("subtract", period, m), m)
    else:  # symmetric
        m = ufunc("remainder", idx, largest(2 * n, 1))
        idx = array_api.where(ufunc("greater_equal", m, n), 2 * n - 1 - m, m)
    if idx.dtype != np.int64:
        idx = array_api.astype(idx, np.int64)
    return _gather(x, axis, idx)


def unravel_index(indices: object, shape: object, order: str = "C") -> tuple:
    """``np.unravel_index``: each coordinate by floor division and remainder, from the last
    axis (C order) or the first (F), int64; an index outside ``[0, size)`` is a clear
    ValueError at run time (NumPy's names the index, which the check cannot)."""
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    index = as_tensor(indices)
    if index.dtype.kind not in "iu":
        raise TypeError("only int indices permitted")
    index = array_api.astype(index, np.int64)
    dims = list(shape) if isinstance(shape, tuple | list) else [shape]
    size = product(dims)
    outside = ufunc("logical_or", ufunc("less", index, 0), ufunc("greater_equal", index, size))
    if outside.ndim:
        outside = array_api.reduce("any", outside, None, None, None, False)
    bounds = f"array with size {size}" if isinstance(size, int) else "the shape's size"
    check(outside, ValueError(f"autostage: np.unravel_index: an index is out of bounds for "
                              f"{bounds} (NumPy's message names the index)"))
    coordinates = []
    for d in (reversed(dims) if order == "C" else dims):
        coordinates.append(ufunc("remainder", index, d))
        index = ufunc("floor_divide", index, d)
    return tuple(reversed(coordinates) if order == "C" else coordinates)


FUNCTIONS: dict[Callable, Callable] = {
    np.unravel_index: unravel_index,
    np.split: split, np.array_split: array_split, np.repeat: repeat, np.tile: tile,
    np.vstack: vstack, np.hstack: hstack, np.column_stack: column_stack, np.dstack: dstack,
    np.atleast_1d: atleast_1d, np.atleast_2d: atleast_2d, np.atleast_3d: atleast_3d,
    np.flip: flip, np.fliplr: fliplr, np.flipud: flipud, np.roll: roll, np.diff: diff,
    np.pad: pad, np.take: take, np.swapaxes: swapaxes, np.moveaxis: moveaxis, np.rot90: rot90,
    np.append: append, np.broadcast_arrays: broadcast_arrays,
}

# ndarray methods (``x.repeat(2)``) with NumPy's signatures.
METHODS: dict[str, Callable] = {
    "repeat": lambda self, repeats, axis=None: repeat(self, repeats, axis),
    "take": lambda self, indices, axis=None, out=None, mode="raise": take(
        self, indices, axis, out, mode),
    "swapaxes": lambda self, axis1, axis2: swapaxes(self, axis1, axis2),
}
