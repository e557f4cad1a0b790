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
from autostage.runtime.ops.shapes import check_sizes, fill_shape
from autostage.runtime.ops.vjp_support import (
    INDEX_DTYPE,
    builders,
    const,
    reduced_count,
    restore_axes,
    spread,
)
from autostage.runtime.types import TensorType

# op name -> the extra attrs it takes besides axis and keepdims
REDUCTIONS: dict[str, tuple[str, ...]] = {
    "sum": ("dtype",), "prod": ("dtype",), "mean": ("dtype",),
    "max": (), "min": (), "any": (), "all": (), "argmax": (), "argmin": (),
    "std": ("ddof",), "var": ("ddof",),
}
# A fused element-wise loop may end in one of these (under the conditions of ops/fused.py).
FUSIBLE = frozenset({"sum", "mean", "max", "min"})
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


def _infer_sum_to(operand_types: tuple, attrs: dict) -> tuple:
    ct, *rest = operand_types
    if "shape" in attrs:
        check_sizes(tuple(rest), attrs["shape"], "sum_to")
        shape = attrs["shape"]
    else:
        (like,) = rest
        shape = like.shape
    if ct.ndim != len(shape):
        raise TypeError(f"sum_to needs a cotangent of the target's rank, got {ct} for {shape}")
    return (TensorType(ct.dtype, tuple(shape)),)


def _evaluate_sum_to(op, values: tuple, run) -> tuple:
    ct, *rest = values
    shape = fill_shape(op.attrs["shape"], rest) if "shape" in op.attrs else rest[0].shape
    axes = tuple(i for i, (c, n) in enumerate(zip(ct.shape, shape, strict=True))
                 if n == 1 and c != 1)
    return (np.asarray(np.sum(ct, axis=axes, keepdims=True) if axes else ct),)


op_registry.register(
    "sum_to", _infer_sum_to, _evaluate_sum_to, raises=(), shape_operands=(1,),
    doc="operands ct, like (one rank), or ct and the staged sizes of attr shape (ints, None = "
        "next size operand): ct summed over the axes where the target has size 1 and ct does "
        "not, so it has the target's shape (the adjoint of broadcasting; autodiff emits it)")


# -- reverse-mode derivatives (runtime/autodiff) ------------------------------------------------
def _restore(ct, op):
    """``ct`` with ``op``'s reduced axes back (size 1)."""
    return restore_axes(ct, op.operands[0], op.attrs["axis"], op.attrs["keepdims"])


def _reduce(name: str, x, axis):
    """``name`` (sum, prod or mean) over ``axis`` of ``x``, keeping the reduced axes (size 1)."""
    return builders().op1(name, x, axis=axis, keepdims=True, dtype=None)


def _vjp_sum(op, cts: tuple) -> tuple:
    return (spread(cts[0], op.operands[0], op.attrs["axis"], op.attrs["keepdims"]),)


def _vjp_mean(op, cts: tuple) -> tuple:
    b, x, ct = builders(), op.operands[0], cts[0]
    count = reduced_count(x, op.attrs["axis"], ct.type.dtype)
    return (spread(b.div(ct, count), x, op.attrs["axis"], op.attrs["keepdims"]),)


def _vjp_extremum(op, cts: tuple) -> tuple:
    """max/min: the cotangent goes to the elements equal to the result, split equally among
    ties (as JAX)."""
    b, x, ct = builders(), op.operands[0], cts[0]
    hit = b.cast(b.op1("equal", x, _restore(op.results[0], op)), ct.type.dtype)
    share = b.div(hit, _reduce("sum", hit, op.attrs["axis"]))
    return (b.mul(_restore(ct, op), share),)


def _vjp_prod(op, cts: tuple) -> tuple:
    """The product of the other elements, exact where elements are 0, and written so that its
    own derivative is exact there too: with ``q`` the product of the non-zero others and ``z``
    the sum of the zero others (0, but it carries their derivative), the cotangent factor is
    ``q`` when no other element is 0, ``q * z`` when one is, and 0 otherwise."""
    b, x, ct, axis = builders(), op.operands[0], cts[0], op.attrs["axis"]
    x = b.cast(x, ct.type.dtype)  # (computed in the result's dtype, as np.prod with dtype)
    zero = b.op1("equal", x, const(x, 0))
    safe = b.op1("where", zero, const(x, 1), x)
    others = b.div(_reduce("prod", safe, axis), safe)
    zeros = b.op1("where", zero, x, const(x, 0))
    other_zeros = b.sub(_reduce("sum", zeros, axis), zeros)
    counts = b.cast(zero, INDEX_DTYPE)
    other_count = b.sub(_reduce("sum", counts, axis), counts)
    one_zero = b.op1("where", b.op1("equal", other_count, const(counts, 1)),
                     b.mul(others, other_zeros), const(x, 0))
    factor = b.op1("where", b.op1("equal", other_count, const(counts, 0)), others, one_zero)
    return (b.mul(_restore(ct, op), factor),)


def _vjp_moment(op, cts: tuple) -> tuple:
    """var = sum((x - mean)**2) / (n - ddof): d/dx = 2 (x - mean) / (n - ddof); std = sqrt(var):
    d/dx = (x - mean) / ((n - ddof) std)."""
    b, x, ct, axis = builders(), op.operands[0], cts[0], op.attrs["axis"]
    centered = b.sub(x, _reduce("mean", x, axis))
    dof = b.sub(reduced_count(x, axis, ct.type.dtype), const(ct, op.attrs["ddof"]))
    outer = b.scale(ct, 2) if op.name == "var" else b.div(ct, op.results[0])
    return (b.mul(_restore(b.div(outer, dof), op), centered),)


def _broadcast_back(op, cts: tuple) -> tuple:
    b = builders()
    return (b.add(cts[0], b.zeros_like(op.operands[0])), *(None,) * (len(op.operands) - 1))


op_registry.lookup("sum").vjp = _vjp_sum
op_registry.lookup("mean").vjp = _vjp_mean
op_registry.lookup("max").vjp = _vjp_extremum
op_registry.lookup("min").vjp = _vjp_extremum
op_registry.lookup("prod").vjp = _vjp_prod
op_registry.lookup("var").vjp = _vjp_moment
op_registry.lookup("std").vjp = _vjp_moment
op_registry.lookup("sum_to").vjp = _broadcast_back
for _name in ("argmax", "argmin", "any", "all"):
    op_registry.lookup(_name).vjp = op_registry.NO_GRADIENT
