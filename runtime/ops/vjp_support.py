"""What the VJP rules of several op modules share: the autodiff builders, whether an operand
needs a cotangent, and the shape bookkeeping of reductions and scans (restoring reduced axes,
counting reduced elements, reversing an axis, reshaping back).

Rules run while a gradient is traced (``runtime/autodiff``, which imports no op module). Every
helper emits ops that have VJPs themselves, so the backward program can be differentiated again.
"""

from __future__ import annotations

import math

import numpy as np
from autostage.runtime.autodiff import backprop, build

INDEX_DTYPE = np.dtype(np.int64)
FULL_SLICE = (None, None, None)


def builders():
    """``runtime/autodiff/build``: emits the backward program's ops."""
    return build


def active(value) -> bool:
    """Whether the running sweep needs ``value``'s cotangent (rules build only those)."""
    return backprop.is_active(value)


def gradient_error(op, what: str) -> Exception:
    """The ``GradientError`` of a rule that cannot differentiate ``op``: ``what`` says why;
    the message adds the user's line."""
    where = f" (at {op.loc})" if op.loc is not None else ""
    return backprop.GradientError(f"autostage cannot differentiate {what}{where}")


def const(like, value: float):
    """A 0-d constant of ``like``'s dtype."""
    return builders().constant(value, like.type.dtype)


def reduced_axes(x, axis) -> tuple[int, ...]:
    """The axes a reduction of ``x`` with attr ``axis`` (None, an int or a tuple) reduces."""
    if axis is None:
        return tuple(range(x.type.ndim))
    return (axis,) if isinstance(axis, int) else tuple(axis)


def restore_axes(ct, x, axis, keepdims: bool):
    """``ct`` (a reduction's cotangent or result) with the reduced axes back, size 1, so that it
    broadcasts against ``x``; leading axes need not come back (broadcasting adds them)."""
    axes = reduced_axes(x, axis)
    if keepdims or axes == tuple(range(len(axes))):
        return ct
    return builders().op1("expand_dims", ct, axis=axes)


def spread(ct, x, axis, keepdims: bool):
    """A reduction's cotangent ``ct`` broadcast back to ``x``'s shape."""
    b = builders()
    return b.add(restore_axes(ct, x, axis, keepdims), b.zeros_like(x))


def reduced_count(x, axis, dtype):
    """How many elements of ``x`` each result element of a reduction over ``axis`` reduces, as
    a 0-d value of ``dtype``: a constant for static shapes, else from the ``size`` or ``dim``
    of ``x``."""
    b = builders()
    axes = reduced_axes(x, axis)
    sizes = [x.type.shape[i] for i in axes]
    if None not in sizes:
        return b.constant(math.prod(sizes), dtype)
    if len(axes) == x.type.ndim:
        return b.cast(b.op1("size", x), dtype)
    count = b.constant(math.prod(d for d in sizes if d is not None), INDEX_DTYPE)
    for i, d in zip(axes, sizes, strict=True):
        if d is None:
            count = b.mul(count, b.op1("dim", x, axis=i))
    return b.cast(count, dtype)


def flip(x, axis: int):
    """``x`` reversed along ``axis`` (a view: ``x[..., ::-1]``)."""
    index = (FULL_SLICE,) * axis + ((None, None, -1),)
    return builders().op1("getitem", x, index=index)


def reverse_cumsum(x, axis: int):
    """``s[i] = sum(x[i:])`` along ``axis``, exactly (no subtraction of partial sums)."""
    b = builders()
    return flip(b.op1("cumsum", flip(x, axis), axis=axis, dtype=None), axis)


def flatten(x):
    """``x`` as a 1-d array (the operand of a scan or sort over ``axis=None``)."""
    if x.type.ndim == 1:
        return x
    return builders().op1("reshape", x, shape=(-1,))


def unflatten(x, like):
    """``x``, a 1-d array of ``like``'s size (a flattened cotangent), in ``like``'s shape (its
    staged sizes read from ``like``)."""
    b = builders()
    if like.type.ndim == 1:
        return x
    shape = like.type.shape
    sizes = [b.op1("dim", like, axis=i) for i, d in enumerate(shape) if d is None]
    return b.emit("reshape", [x, *sizes], {"shape": shape})[0]
