"""Creation ops: ``full`` (zeros/ones/full/empty), ``full_like`` (zeros_like/ones_like/
full_like), ``arange`` and ``eye``, with static or staged sizes.

Sizes use the convention of ``shapes.py``: the ``shape`` attr holds ints, and None for each staged
size taken from the extra 0-d integer operands in order. ``np.empty`` stages as zeros (its
contents are unspecified, and a deterministic program is easier to test).
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import op_registry
from autostage.runtime.ops.shapes import check_sizes, fill_shape
from autostage.runtime.ops.vjp_support import INDEX_DTYPE, active, builders
from autostage.runtime.types import TensorType


def _infer_full(operand_types: tuple, attrs: dict) -> tuple:
    fill, *sizes = operand_types
    if fill.ndim != 0:
        raise ValueError("full: the fill value must be a scalar")
    check_sizes(tuple(sizes), attrs["shape"], "full")
    return (TensorType(attrs["dtype"], attrs["shape"]),)


def _evaluate_full(op, values: tuple, run) -> tuple:
    shape = fill_shape(op.attrs["shape"], values[1:])
    return (np.full(shape, values[0], dtype=op.attrs["dtype"]),)


def _infer_full_like(operand_types: tuple, attrs: dict) -> tuple:
    x, fill = operand_types
    return (TensorType(attrs["dtype"], x.shape),)


def _infer_arange(operand_types: tuple, attrs: dict) -> tuple:
    for t in operand_types:
        if t.ndim != 0:
            raise ValueError("arange: start, stop and step must be scalars")
    return (TensorType(attrs["dtype"], (None,)),)


def _evaluate_arange(op, values: tuple, run) -> tuple:
    start, stop, step = (np.asarray(v).item() for v in values)
    return (np.arange(start, stop, step, dtype=op.attrs["dtype"]),)


def _infer_eye(operand_types: tuple, attrs: dict) -> tuple:
    check_sizes(operand_types, attrs["shape"], "eye")
    return (TensorType(attrs["dtype"], attrs["shape"]),)


def _evaluate_eye(op, values: tuple, run) -> tuple:
    n, m = fill_shape(op.attrs["shape"], values)
    return (np.eye(n, m, k=op.attrs["k"], dtype=op.attrs["dtype"]),)


def _negative_size(op) -> tuple:
    """NumPy's ValueError for a negative size: only a staged size can be one (static sizes are
    checked when tracing)."""
    return (ValueError,) if None in op.attrs["shape"] else ()


op_registry.register(
    "full", _infer_full, _evaluate_full,
    doc="attrs: shape (ints, None = staged size), dtype; operands: fill (0-d), sizes",
    fresh_results=True, raises=_negative_size)
op_registry.register(
    "full_like", _infer_full_like,
    lambda op, v, run: (np.full_like(v[0], v[1], dtype=op.attrs["dtype"]),), raises=(),
    doc="attrs: dtype; operands: x (for its shape), fill (0-d)", fresh_results=True,
    shape_operands=(0,), elementwise=True)  # element-wise: a fused loop computes the fill
op_registry.register(
    "arange", _infer_arange, _evaluate_arange,
    doc="attrs: dtype; operands: start, stop, step (0-d); np.arange of them", fresh_results=True,
    raises=(ValueError, ZeroDivisionError))  # too long, or nan bounds; a zero step
op_registry.register(
    "eye", _infer_eye, _evaluate_eye,
    doc="attrs: shape (N, M; None = staged size), k, dtype; operands: staged sizes",
    fresh_results=True, raises=_negative_size)


def _total(ct):
    return builders().op1("sum", ct, axis=None, keepdims=False, dtype=None)


def _vjp_full_like(op, cts: tuple) -> tuple:
    """No gradient through the shape operand; the fill gets the sum of the cotangent."""
    return (None, _total(cts[0]))


def _vjp_full(op, cts: tuple) -> tuple:
    """The fill gets the sum of the cotangent; the sizes are integers."""
    return (_total(cts[0]),) + (None,) * (len(op.operands) - 1)


def _vjp_arange(op, cts: tuple) -> tuple:
    """Element i is ``start + i * step``: start gets the sum of the cotangent, step its sum
    weighted by i; the length depends on stop only piecewise (no gradient)."""
    b, ct = builders(), cts[0]
    start, _, step = op.operands
    d_step = None
    if active(step):
        index = b.op1("arange", b.constant(0, INDEX_DTYPE), b.op1("dim", ct, axis=0),
                      b.constant(1, INDEX_DTYPE), dtype=ct.type.dtype)
        d_step = _total(b.mul(ct, index))
    return (_total(ct) if active(start) else None, None, d_step)


op_registry.lookup("full_like").vjp = _vjp_full_like
op_registry.lookup("full").vjp = _vjp_full
op_registry.lookup("arange").vjp = _vjp_arange
op_registry.lookup("eye").vjp = op_registry.NO_GRADIENT  # (its operands are integer sizes)
