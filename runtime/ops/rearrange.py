"""The ``repeat`` op: ``np.repeat(x, counts, axis)`` with an array of counts, whose result size
depends on the counts' values (a count given as one integer is a composite of broadcast_to and
reshape in ``numpy_shapes.py``).

Operands: ``x`` (at least 1-d), ``counts`` (1-d int64, of x's length along ``axis`` or of length
1, broadcast); attrs: ``axis`` (normalized). The result has x's dtype and an unknown size along
``axis``. NumPy's errors: a count array of another length ("operands could not be broadcast
together with shape (6,) (2,)") and a negative count ("repeats may not contain negative
values."). Printed: ``repeat %x %counts {axis=0}``.
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import op_registry
from autostage.runtime.autodiff import build
from autostage.runtime.types import TensorType


def _infer_repeat(operand_types: tuple, attrs: dict) -> tuple:
    x, counts = operand_types
    axis = attrs["axis"]
    if not 0 <= axis < x.ndim:
        raise ValueError(f"repeat: axis {axis} is out of range for {x}")
    if counts.ndim != 1 or counts.dtype != np.int64:
        raise TypeError(f"repeat: the counts must be a 1-d int64 array, got {counts}")
    n, k = x.shape[axis], counts.shape[0]
    if n is not None and k is not None and k not in (1, n):
        raise ValueError(f"operands could not be broadcast together with shape ({n},) ({k},)")
    shape = list(x.shape)
    shape[axis] = None
    return (TensorType(x.dtype, tuple(shape)),)


op_registry.register(
    "repeat", _infer_repeat,
    lambda op, v, run: (np.repeat(v[0], v[1], axis=op.attrs["axis"]),),
    doc="attrs: axis; operands: x, counts (1-d int64, broadcast); np.repeat(x, counts, axis)",
    raises=(ValueError,))  # a negative count, counts of another length


def _vjp_repeat(op, cts: tuple) -> tuple:
    """Each element of x gets the sum of its copies' cotangents: the cotangent added
    (``scatter_add``) into zeros at the positions ``repeat(arange(n), counts)`` along the axis."""
    x, counts = op.operands
    axis, int64 = op.attrs["axis"], np.dtype(np.int64)
    n = build.op1("dim", x, axis=axis)
    source = build.op1("arange", build.constant(0, int64), n, build.constant(1, int64),
                       dtype=int64)
    source = build.op1("repeat", source, counts, axis=0)
    index = (*((None, None, None),) * axis, "?")
    return (build.op1("scatter_add", build.zeros_like(x), cts[0], source, index=index), None)


op_registry.lookup("repeat").vjp = _vjp_repeat
