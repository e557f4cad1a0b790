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
from autostage.runtime import dtype_rules, op_registry
from autostage.runtime.types import TensorType

INDEX_DTYPE = np.dtype(np.intp)


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
