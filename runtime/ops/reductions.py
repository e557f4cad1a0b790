"""Reductions: sum, prod, mean, max, min, argmax, argmin, any, all, std, var.

Attrs (all ops): ``axis`` (None = all axes, else a sorted tuple of non-negative axes; for
argmax/argmin one int or None, as NumPy allows) and ``keepdims`` (bool); sum/prod/mean also take
``dtype`` (np.dtype or None) and std/var ``ddof`` (number). Result dtypes are NumPy's (sum of
bool/int8 -> int64, mean of ints -> float64, std of complex64 -> float32...), asked of NumPy.
Printed: ``%2:i64[?] = sum %1 {axis=(1,), keepdims=False, dtype=None}``.
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import dtype_rules, op_registry
from autostage.runtime.types import TensorType

# op name -> the extra attrs it takes besides axis and keepdims
REDUCTIONS: dict[str, tuple[str, ...]] = {
    "sum": ("dtype",), "prod": ("dtype",), "mean": ("dtype",),
    "max": (), "min": (), "any": (), "all": (), "argmax": (), "argmin": (),
    "std": ("ddof",), "var": ("ddof",),
}
# A fused element-wise loop may end in one of these (under the conditions of ops/fused.py).
FUSIBLE = frozenset({"sum", "max", "min"})
# NumPy's ValueError for an empty array (no identity); the others give a value (nan for a mean).
_EMPTY_FAILS = frozenset({"max", "min", "argmax", "argmin"})


def reduced_shape(shape: tuple, axis: int | tuple | None, keepdims: bool) -> tuple:
    """The shape left after reducing ``axis`` (normalized; None = all)."""
    axes = range(len(shape)) if axis is None else (axis,) if isinstance(axis, int) else axis
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _rule(name: str):
    function = getattr(np, name)

    def infer(operand_types: tuple, attrs: dict) -> tuple:
        (x,) = operand_types
        if not isinstance(x, TensorType):
            raise TypeError(f"{name} expects a tensor, got {x}")
        dtype = dtype_rules.reduction_dtype(name, x.dtype, attrs.get("dtype"))
        shape = reduced_shape(x.shape, attrs["axis"], attrs["keepdims"])
        return (TensorType(dtype, shape),)

    def evaluate(op, values: tuple, run) -> tuple:
        kwargs = {k: v for k, v in op.attrs.items() if not (k == "dtype" and v is None)}
        return (np.asarray(function(values[0], **kwargs)),)

    return infer, evaluate


for _name, _extra in REDUCTIONS.items():
    _infer, _evaluate = _rule(_name)
    _attrs = ", ".join(("axis", "keepdims", *_extra))
    op_registry.register(
        _name, _infer, _evaluate,
        doc=f"np.{_name}(x, {_attrs}); attrs: {_attrs} (axis: None or a tuple of ints; one int "
            "or None for argmax/argmin)", fusible_reduction=_name in FUSIBLE, fresh_results=True,
        raises=(ValueError,) if _name in _EMPTY_FAILS else ())
