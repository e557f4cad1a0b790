"""Sorting and scans: ``sort``, ``argsort``, ``take_along_axis``, ``cumsum``, ``cumprod``.

Attrs: ``axis`` (a non-negative int, or None = over the flattened array; the front end
normalizes it), ``kind`` for sort/argsort (None or NumPy's kind name: the NumPy reference sorts
with that very kind, so ties come out in NumPy's order), ``dtype`` for the scans (np.dtype or
None). Result dtypes are NumPy's (argsort: int64; cumsum of bool/int8 -> int64...). Printed:
``%2:i64[?] = argsort %1 {axis=0, kind='stable'}``.
"""

from __future__ import annotations

import math

import numpy as np
from autostage.runtime import dtype_rules, ir, op_registry
from autostage.runtime.ops.vjp_support import (
    INDEX_DTYPE,
    builders,
    const,
    flatten,
    gradient_error,
    reverse_cumsum,
    unflatten,
)
from autostage.runtime.types import TensorType


def _tensor(t: object, what: str) -> TensorType:
    if not isinstance(t, TensorType):
        raise TypeError(f"{what} expects a tensor, got {t}")
    return t


def flat_length(shape: tuple) -> int | None:
    """The size of an array of ``shape`` (None when a dimension is unknown)."""
    return None if None in shape else math.prod(shape)


def _along(x: TensorType, axis: int | None) -> tuple:
    """The shape of a result that keeps ``x``'s shape along ``axis`` (None: flattened)."""
    if axis is None:
        return (flat_length(x.shape),)
    dtype_rules.normalize_axis(axis, x.ndim)
    return x.shape


def _infer_sort(operand_types: tuple, attrs: dict) -> tuple:
    x = _tensor(operand_types[0], "sort")
    return (TensorType(x.dtype, _along(x, attrs["axis"])),)


def _infer_argsort(operand_types: tuple, attrs: dict) -> tuple:
    x = _tensor(operand_types[0], "argsort")
    return (TensorType(INDEX_DTYPE, _along(x, attrs["axis"])),)


def _evaluate_sort(op, values: tuple, run) -> tuple:
    return (np.sort(values[0], axis=op.attrs["axis"], kind=op.attrs["kind"]),)


def _evaluate_argsort(op, values: tuple, run) -> tuple:
    return (np.asarray(np.argsort(values[0], axis=op.attrs["axis"], kind=op.attrs["kind"])),)


def _infer_take_along_axis(operand_types: tuple, attrs: dict) -> tuple:
    arr = _tensor(operand_types[0], "take_along_axis")
    indices = _tensor(operand_types[1], "take_along_axis")
    if indices.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    axis = attrs["axis"]
    if axis is None:
        if indices.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        return (TensorType(arr.dtype, indices.shape),)
    if indices.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    dtype_rules.normalize_axis(axis, arr.ndim)
    shape = []
    for i, (a, n) in enumerate(zip(arr.shape, indices.shape, strict=True)):
        if i == axis:
            shape.append(n)
            continue
        try:
            shape.append(dtype_rules.broadcast_dim(a, n))
        except ValueError:
            raise ValueError(
                f"shape mismatch: indexing arrays could not be broadcast together with shapes "
                f"{dtype_rules.format_shape(arr.shape)} {dtype_rules.format_shape(indices.shape)}"
            ) from None
    return (TensorType(arr.dtype, tuple(shape)),)


def _scan(name: str):
    function = getattr(np, name)

    def infer(operand_types: tuple, attrs: dict) -> tuple:
        x = _tensor(operand_types[0], name)
        dtype = dtype_rules.reduction_dtype(name, x.dtype, attrs["dtype"])
        shape = (flat_length(x.shape),) if attrs["axis"] is None or x.ndim == 0 else x.shape
        if attrs["axis"] is not None:
            dtype_rules.normalize_axis(attrs["axis"], max(x.ndim, 1))
        return (TensorType(dtype, shape),)

    def evaluate(op, values: tuple, run) -> tuple:
        return (np.asarray(function(values[0], axis=op.attrs["axis"], dtype=op.attrs["dtype"])),)

    return infer, evaluate


op_registry.register(
    "sort", _infer_sort, _evaluate_sort,
    doc="np.sort(x, axis, kind); attrs: axis (int, or None = flattened), kind (None or name)",
    fresh_results=True, raises=())
op_registry.register(
    "argsort", _infer_argsort, _evaluate_argsort,
    doc="np.argsort(x, axis, kind) (int64); attrs: axis (int, or None = flattened), kind",
    fresh_results=True, raises=())
op_registry.register(
    "take_along_axis", _infer_take_along_axis,
    lambda op, v, run: (np.asarray(np.take_along_axis(v[0], v[1], axis=op.attrs["axis"])),),
    doc="np.take_along_axis(arr, indices, axis); operands arr, indices; attrs: axis (int or "
        "None)", fresh_results=True, raises=(IndexError,))  # out of bounds, or not broadcast
for _name in ("cumsum", "cumprod"):
    _infer, _evaluate = _scan(_name)
    op_registry.register(
        _name, _infer, _evaluate,
        doc=f"np.{_name}(x, axis, dtype); attrs: axis (int, or None = flattened), dtype",
        fresh_results=True, raises=())


# -- reverse-mode derivatives (runtime/autodiff) ------------------------------------------------
def _scan_axis(op) -> tuple:
    """The operand of a scan or sort as its op sees it (flattened for ``axis=None``), and the
    axis."""
    x, axis = op.operands[0], op.attrs["axis"]
    return (flatten(x), 0) if axis is None else (x, axis)


def _unflatten(cotangent, op):
    """The cotangent of a scan's or sort's operand from that of its flattened operand."""
    x = op.operands[0]
    return unflatten(cotangent, x) if op.attrs["axis"] is None else cotangent


def _vjp_cumsum(op, cts: tuple) -> tuple:
    """The cotangent summed from each position to the end."""
    _, axis = _scan_axis(op)
    return (_unflatten(reverse_cumsum(cts[0], axis), op),)


def _vjp_cumprod(op, cts: tuple) -> tuple:
    """d y[k] / d x[i] is the product of x[:k+1] without x[i] (k >= i), exact at zeros: before
    the first 0 of the slice it is ``y[k] / x[i]``; at the first 0, the products that skip it;
    after it, 0 (their products hold that 0). The rule's own derivative is exact away from
    zeros (and at them, except through the positions after the first 0)."""
    b, ct, y = builders(), cts[0], op.results[0]
    x, axis = _scan_axis(op)
    x = b.cast(x, ct.type.dtype)
    zero = b.op1("equal", x, const(x, 0))
    seen = b.op1("cumsum", b.cast(zero, INDEX_DTYPE), axis=axis, dtype=None)  # zeros so far
    before = b.op1("equal", seen, const(seen, 0))
    first = b.op1("logical_and", zero, b.op1("equal", seen, const(seen, 1)))
    safe = b.op1("where", zero, const(x, 1), x)
    at_before = b.div(reverse_cumsum(b.mul(ct, y), axis), safe)
    skipping = b.op1("cumprod", b.op1("where", first, const(x, 1), x), axis=axis, dtype=None)
    from_first = b.op1("where", b.op1("logical_not", before), b.mul(ct, skipping), const(x, 0))
    at_first = b.op1("sum", from_first, axis=(axis,), keepdims=True, dtype=None)
    cotangent = b.op1("where", before, at_before,
                      b.op1("where", first, at_first, const(x, 0)))
    return (_unflatten(cotangent, op),)


def _vjp_sort(op, cts: tuple) -> tuple:
    """Each element gets the cotangent of the position it was sorted to: the cotangent gathered
    through the inverse of the sorting permutation."""
    b = builders()
    x, axis = _scan_axis(op)
    order = b.op1("argsort", x, axis=axis, kind="stable")
    inverse = b.op1("argsort", order, axis=axis, kind="stable")
    gathered = b.op1("take_along_axis", cts[0], inverse, axis=axis)
    return (_unflatten(gathered, op),)


def _vjp_take_along_axis(op, cts: tuple) -> tuple:
    """Gathering along an axis by a permutation (indices from ``argsort``, as in ``np.sort``'s
    VJP) is undone by gathering with the inverse permutation. Other indices may repeat, which
    needs a scatter-add autostage does not have yet."""
    b = builders()
    arr, indices = op.operands
    axis = 0 if op.attrs["axis"] is None else op.attrs["axis"]
    if not _is_permutation(indices, arr, op.attrs["axis"]):
        raise gradient_error(op, "take_along_axis unless its indices are an argsort along the "
                                 "same axis (a permutation) yet")
    inverse = b.op1("argsort", indices, axis=axis, kind="stable")
    gathered = b.op1("take_along_axis", cts[0], inverse, axis=axis)
    return (unflatten(gathered, arr) if op.attrs["axis"] is None else gathered, None)


def _is_permutation(indices, arr, axis: int | None) -> bool:
    """Whether ``indices`` is an argsort along ``axis`` of an array whose length there is
    ``arr``'s (static sizes, or the same type: sort's VJP gathers one of those)."""
    producer = indices.producer
    if not (isinstance(producer, ir.Op) and producer.name == "argsort"):
        return False
    source = producer.operands[0]
    if axis is None:
        return producer.attrs["axis"] in (None, 0) and (
            flat_length(source.type.shape) == flat_length(arr.type.shape) is not None
            or source.type.shape == arr.type.shape)
    if producer.attrs["axis"] != axis or source.type.ndim != arr.type.ndim:
        return False
    length, wanted = source.type.shape[axis], arr.type.shape[axis]
    return (length == wanted and length is not None) or source.type.shape == arr.type.shape


op_registry.lookup("cumsum").vjp = _vjp_cumsum
op_registry.lookup("cumprod").vjp = _vjp_cumprod
op_registry.lookup("sort").vjp = _vjp_sort
op_registry.lookup("take_along_axis").vjp = _vjp_take_along_axis
op_registry.lookup("argsort").vjp = op_registry.NO_GRADIENT
