"""Variable ops: ``var_read``, ``var_assign``, ``var_assign_add`` and ``var_assign_sub``
(``runtime/state.py``).

Attrs: ``var``, the index of the Variable in the state table of the op's module
(``ir.Module.state``), and ``type``, the Variable's type: a type rule sees only operand types and
attributes, and the verifier checks that ``type`` is the entry's. Running the op touches the
storage of the live Variable the entry holds, so a trace reused across calls sees the current
value. Reads are effects too (they read state): they must stay ordered with respect to
assignments, and two reads around an assignment must never be merged. Assignments cast to the
Variable's dtype (same-kind casts only) and must have its shape; ``var_assign_sub`` of a bool
Variable is NumPy's TypeError (``a -= b`` on booleans). This module does not import
``state`` (which needs the tensor, which needs the ops): running an op uses only what the
table's entry offers.
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import effects, ir, op_registry
from autostage.runtime.autodiff import build
from autostage.runtime.types import TensorType


def _infer_read(operand_types: tuple, attrs: dict) -> tuple:
    return (attrs["type"],)


def _infer_assign(operand_types: tuple, attrs: dict) -> tuple:
    var_type = attrs["type"]
    (value_type,) = operand_types
    if not isinstance(value_type, TensorType):
        raise TypeError(f"cannot assign a {value_type} to a Variable")
    if not np.can_cast(value_type.dtype, var_type.dtype, casting="same_kind"):
        raise TypeError(f"cannot assign a {value_type} value to a Variable of type {var_type} "
                        "(only same-kind casts)")
    if value_type.ndim != var_type.ndim or any(
            d is not None and d != n for d, n in zip(value_type.shape, var_type.shape,
                                                     strict=False)):
        raise ValueError(f"cannot assign a {value_type} value to a Variable of type {var_type}")
    return ()


def _infer_assign_sub(operand_types: tuple, attrs: dict) -> tuple:
    if attrs["type"].dtype == np.bool_:
        raise TypeError("numpy boolean subtract, the `-` operator, is not supported: "
                        "assign_sub of a bool Variable (use assign with np.logical_xor)")
    return _infer_assign(operand_types, attrs)


def _check(op: ir.Op, module: ir.Module) -> str | None:
    """``var`` indexes the module's state table, whose entry has the op's ``type``."""
    index = op.attrs.get("var")
    if not (type(index) is int and 0 <= index < len(module.state)):
        return f"names state {index!r}, which is not in the module's table of " \
               f"{len(module.state)} entries"
    entry_type = module.state[index].type
    if entry_type != op.attrs.get("type"):
        return f"says state {index} has type {op.attrs.get('type')}, but it has {entry_type}"
    return None


def _evaluate_read(op, values: tuple, run) -> tuple:
    var = run.module.live_state(op.attrs["var"])
    return (var._storage.copy(),)  # a copy: later assignments must not change it


def _evaluator(combine: object):
    """Runs an assignment: ``Variable._store`` with ``combine`` (None: replace; np.add...)."""
    def evaluate(op, values: tuple, run) -> tuple:
        run.module.live_state(op.attrs["var"])._store(np.asarray(values[0]), combine)
        return ()
    return evaluate


op_registry.register("var_read", _infer_read, _evaluate_read, verify=_check,
                     raises=effects.shape_errors,
                     effects=op_registry.Effects(reads_state=True),
                     doc="attrs: var (index into the module's state table), type; result: the "
                         "Variable's current value")
# An assigned value's size unknown when tracing may not be the Variable's: ValueError.
op_registry.register("var_assign", _infer_assign, _evaluator(None), verify=_check,
                     raises=(ValueError,), vjp=op_registry.NO_GRADIENT,
                     effects=op_registry.Effects(writes_state=True),
                     doc="attrs: var, type; operand: the new value (cast to the Variable's dtype)")
op_registry.register("var_assign_add", _infer_assign, _evaluator(np.add), verify=_check,
                     raises=(ValueError,), vjp=op_registry.NO_GRADIENT,
                     effects=op_registry.STATE,
                     doc="attrs: var, type; operand: the value added to it in place")
op_registry.register("var_assign_sub", _infer_assign_sub, _evaluator(np.subtract),
                     verify=_check, raises=(ValueError,), vjp=op_registry.NO_GRADIENT,
                     effects=op_registry.STATE,
                     doc="attrs: var, type; operand: the value subtracted from it in place")


def _vjp_read(op, cotangents: tuple) -> dict:
    """A read passes its cotangent to the Variable itself (a source of the tape's gradient)."""
    return {build.StateSource(op.attrs["var"], op.attrs["type"]): cotangents[0]}


op_registry.lookup("var_read").vjp = _vjp_read
