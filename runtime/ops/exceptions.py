"""``raise``: raises, at run time, an exception like one raised while tracing.

A staged branch (or a function whose trace raised after ops with effects) that raised a user
exception while it was traced must raise it whenever it runs, in program order; the staging
helpers that emit this op live in ``runtime/staging/raises.py``. attrs: ``exception`` (the
instance raised while tracing); a new exception of its type and arguments is raised each time,
and ``formats`` (optional): the arguments made from staged values, ``(index, template)``, each
rendered from the op's operands (``io.render``) when it is raised.
"""

from __future__ import annotations

from autostage.runtime import op_registry
from autostage.runtime.ops.io import render


def arguments(op, values: tuple) -> tuple:
    """The arguments of the exception ``op`` raises, given its operands' ``values``."""
    args = list(op.attrs["exception"].args)
    for index, template in op.attrs.get("formats", ()):
        args[index] = render(template, values)
    return tuple(args)


def _infer_raise(operand_types: tuple, attrs: dict) -> tuple:
    return ()


def _evaluate_raise(op, values: tuple, run) -> tuple:
    raise type(op.attrs["exception"])(*arguments(op, values))


op_registry.register(
    "raise", _infer_raise, _evaluate_raise, effects=op_registry.Effects(raises=True),
    raises=lambda op: (type(op.attrs["exception"]),), vjp=op_registry.NO_GRADIENT,
    doc="operands: the values of its formatted arguments; attrs: exception (the instance "
        "raised while tracing), formats (optional); raises a new one like it at run time")
