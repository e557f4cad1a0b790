"""``raise``: raises, at run time, an exception like one raised while tracing.

A staged branch (or a function whose trace raised after ops with effects) that raised a user
exception while it was traced must raise it whenever it runs, in program order; the staging
helpers that emit this op live in ``runtime/staging/raises.py``. attrs: ``exception`` (the
instance raised while tracing); a new exception of its type and arguments is raised each time.
"""

from __future__ import annotations

from autostage.runtime import op_registry


def _infer_raise(operand_types: tuple, attrs: dict) -> tuple:
    return ()


def _evaluate_raise(op, values: tuple, run) -> tuple:
    exc = op.attrs["exception"]
    raise type(exc)(*exc.args)


op_registry.register(
    "raise", _infer_raise, _evaluate_raise, effects=op_registry.Effects(raises=True),
    raises=lambda op: (type(op.attrs["exception"]),), vjp=op_registry.NO_GRADIENT,
    doc="attrs: exception (the instance raised while tracing); raises a new one like it at run "
        "time")
