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
    doc="attrs: dtype; operands: x (for its shape), fill (0-d)", fresh_results=True)
op_registry.register(
    "arange", _infer_arange, _evaluate_arange,
    doc="attrs: dtype; operands: start, stop, step (0-d); np.arange of them", fresh_results=True,
    raises=(ValueError, ZeroDivisionError))  # too long, or nan bounds; a zero step
op_registry.register(
    "eye", _infer_eye, _evaluate_eye,
    doc="attrs: shape (N, M; None = staged size), k, dtype; operands: staged sizes",
    fresh_results=True, raises=_negative_size)
