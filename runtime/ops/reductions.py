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
            "or None for argmax/argmin)", fusible_reduction=_name in FUSIBLE, fresh_results=True)


def _infer_sum_to(operand_types: tuple, attrs: dict) -> tuple:
    ct, like = operand_types
    if ct.ndim != like.ndim:
        raise TypeError(f"sum_to needs operands of one rank, got {ct} and {like}")
    return (TensorType(ct.dtype, like.shape),)


def _evaluate_sum_to(op, values: tuple, run) -> tuple:
    ct, like = values
    axes = tuple(i for i, (c, n) in enumerate(zip(ct.shape, like.shape, strict=True))
                 if n == 1 and c != 1)
    return (np.asarray(np.sum(ct, axis=axes, keepdims=True) if axes else ct),)


op_registry.register(
    "sum_to", _infer_sum_to, _evaluate_sum_to, may_fail=False,
    doc="operands ct, like (one rank): ct summed over the axes where like has size 1 and ct "
        "does not, so it has like's shape (the adjoint of broadcasting; autodiff emits it)")


def _restore_axes(ct, x, op):
    """``ct`` (a reduction's cotangent) with the reduced axes back, size 1, if not kept."""
    from autostage.runtime.autodiff import build
    axis = op.attrs["axis"]
    if op.attrs["keepdims"] or x.type.ndim == 0:
        return ct
    axes = tuple(range(x.type.ndim)) if axis is None else axis
    return build.op1("expand_dims", ct, axis=tuple(axes))


def _vjp_sum(op, cts: tuple) -> tuple:
    from autostage.runtime.autodiff import build
    x = op.operands[0]
    ct = _restore_axes(cts[0], x, op)
    return (build.add(ct, build.zeros_like(x)),)  # broadcast back to x's shape


op_registry.lookup("sum").vjp = _vjp_sum
op_registry.lookup("sum_to").vjp = lambda op, cts: _broadcast_back(op, cts)
for _name in ("argmax", "argmin", "any", "all"):
    op_registry.lookup(_name).vjp = op_registry.NO_GRADIENT


def _broadcast_back(op, cts: tuple) -> tuple:
    from autostage.runtime.autodiff import build
    return (build.add(cts[0], build.zeros_like(op.operands[0])), None)
