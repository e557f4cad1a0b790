"""IR ops for structured control flow: ``cond``, ``while`` and ``undef``.

``cond``: operand ``pred`` (``bool[]``); attr ``result_types`` (a tuple of types, since a type rule
sees operands and attrs, not regions); regions ``then`` and ``else``, without arguments, each
yielding values of ``result_types`` (a yield may be more specific in unknown dimensions).
``while``: operands are the initial loop-carried values, results the final ones, typed by attr
``carried_types`` (an initial value may be more specific, e.g. a known dimension the loop makes
unknown); region ``cond`` (args = carried, yields one ``bool[]``) and region ``body`` (args =
carried, yields the new carried values). ``undef``: attr ``type``; a value of that type standing
for a variable not assigned yet (carried through a branch or loop where the staging proved it is
assigned before it is read); its NumPy reference is zeros (unknown dimensions 0) or an empty list.
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import op_registry
from autostage.runtime.types import ListType, TensorType


def _infer_cond(operand_types: tuple, attrs: dict) -> tuple:
    (pred,) = operand_types
    if not (isinstance(pred, TensorType) and pred.dtype == np.bool_ and pred.is_scalar):
        raise TypeError(f"cond needs a bool[] predicate, got {pred}")
    return tuple(attrs["result_types"])


def _evaluate_cond(op, values: tuple, run) -> tuple:
    branch = op.regions[0] if bool(values[0]) else op.regions[1]
    return tuple(run(branch, ()))


def _infer_while(operand_types: tuple, attrs: dict) -> tuple:
    carried = tuple(attrs.get("carried_types", operand_types))
    if len(carried) != len(operand_types):
        raise TypeError(f"while has {len(operand_types)} initial values for {len(carried)} "
                        "carried types")
    return carried


def _evaluate_while(op, values: tuple, run) -> tuple:
    cond, body = op.regions
    carried = tuple(values)
    while True:
        (go,) = run(cond, carried)
        if not bool(go):
            return carried
        carried = tuple(run(body, carried))


def _infer_undef(operand_types: tuple, attrs: dict) -> tuple:
    return (attrs["type"],)


def _evaluate_undef(op, values: tuple, run) -> tuple:
    return (placeholder_value(op.attrs["type"]),)


def placeholder_value(type_: object) -> object:
    """The NumPy reference value of ``undef``: never read, so any value of the type works."""
    if isinstance(type_, ListType):
        return []
    shape = tuple(0 if d is None else d for d in type_.shape)
    return np.zeros(shape, type_.dtype)


op_registry.register(
    "cond", _infer_cond, _evaluate_cond,
    doc="operands: pred bool[]; attrs: result_types; regions: then, else (no args, yield the "
        "results); runs one region")
op_registry.register(
    "while", _infer_while, _evaluate_while,
    doc="operands: initial carried values; attrs: carried_types; regions: cond (args carried, "
        "yields bool[]) and body (args carried, yields new carried); results: final carried")
op_registry.register(
    "undef", _infer_undef, _evaluate_undef,
    doc="attrs: type; a value of that type for a variable not assigned yet, proven unread")
