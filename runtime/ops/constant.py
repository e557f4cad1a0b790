"""``constant``: a value known at trace time (a NumPy array or scalar) embedded in the IR."""

from __future__ import annotations

import numpy as np
from autostage.runtime import op_registry
from autostage.runtime.types import TensorType


def _infer(operand_types: tuple, attrs: dict) -> tuple:
    value = attrs["value"]
    return (TensorType(value.dtype, value.shape),)


def _evaluate(op, values: tuple, run) -> tuple:
    return (op.attrs["value"],)


op_registry.register(
    "constant", _infer, _evaluate,
    doc="attrs: value (a read-only np.ndarray, 0-d for scalars); result: its tensor type",
    bare_attr="value", raises=())


def as_constant_array(value: object, dtype: object = None) -> np.ndarray:
    """The read-only array a constant op holds (copied, so later user mutation can't change it)."""
    array = np.array(value, dtype=dtype)
    array.setflags(write=False)
    return array

op_registry.lookup("constant").vjp = op_registry.NO_GRADIENT
