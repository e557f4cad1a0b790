"""Variable ops: ``var_read``, ``var_assign`` and ``var_assign_add`` (``runtime/state.py``).

Each holds the ``Variable`` itself in attr ``var`` (captured by reference) and touches its storage
when the op runs, so a trace reused across calls sees the current value. Reads are effects too
(they read state): they must stay ordered with respect to assignments, and two reads around an
assignment must never be merged. Assignments cast to the Variable's dtype (same-kind casts only)
and must have its shape. This module does not import ``state`` (which needs the tensor, which
needs the ops): the rules use only what the Variable in the attribute offers.
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import op_registry
from autostage.runtime.types import TensorType


def _infer_read(operand_types: tuple, attrs: dict) -> tuple:
    return (attrs["var"].type,)


def _infer_assign(operand_types: tuple, attrs: dict) -> tuple:
    var = attrs["var"]
    (value_type,) = operand_types
    if not isinstance(value_type, TensorType):
        raise TypeError(f"cannot assign a {value_type} to Variable {var.name}")
    if not np.can_cast(value_type.dtype, var.dtype, casting="same_kind"):
        raise TypeError(f"cannot assign a {value_type} value to Variable {var.name} of type "
                        f"{var.type} (only same-kind casts)")
    if value_type.ndim != var.ndim or any(
            d is not None and d != n for d, n in zip(value_type.shape, var.shape, strict=False)):
        raise ValueError(f"cannot assign a {value_type} value to Variable {var.name} of type "
                         f"{var.type}")
    return ()


def _evaluate_read(op, values: tuple, run) -> tuple:
    return (op.attrs["var"]._storage.copy(),)  # a copy: later assignments must not change it


def _evaluate_assign(op, values: tuple, run) -> tuple:
    op.attrs["var"]._store(np.asarray(values[0]), add=False)
    return ()


def _evaluate_assign_add(op, values: tuple, run) -> tuple:
    op.attrs["var"]._store(np.asarray(values[0]), add=True)
    return ()


op_registry.register("var_read", _infer_read, _evaluate_read,
                     effects=op_registry.Effects(reads_state=True),
                     doc="attrs: var (the Variable, by reference); result: its current value")
op_registry.register("var_assign", _infer_assign, _evaluate_assign,
                     effects=op_registry.Effects(writes_state=True),
                     doc="attrs: var; operand: the new value (cast to the Variable's dtype)")
op_registry.register("var_assign_add", _infer_assign, _evaluate_assign_add,
                     effects=op_registry.STATE,
                     doc="attrs: var; operand: the value added to it in place")

op_registry.lookup("var_read").vjp = op_registry.NO_GRADIENT  # (no operands: the tape watches it)
