"""``call``: a call of another function of the same module (staged calls stay calls in the IR).

attrs: ``callee`` (the function's name in the module) and ``result_types`` (its result types,
recorded when the call was traced, because a type rule sees only operand types and attributes;
the verifier checks they match the callee). Printed ``%3:f64[?] = call @helper %1 %2 {...}``.
The NumPy reference runs the callee in a new interpreter frame (``run.call``).
"""

from __future__ import annotations

from autostage.runtime import op_registry


def _infer(operand_types: tuple, attrs: dict) -> tuple:
    return tuple(attrs["result_types"])


def _evaluate(op, values: tuple, run) -> tuple:
    return tuple(run.call(op.attrs["callee"], values))


op_registry.register(
    "call", _infer, _evaluate,
    doc="attrs: callee (function name in the module), result_types; operands: its arguments",
    side_effects=True)  # the callee may read or assign Variables
