"""Staging hooks of ``print_`` and ``assert_stmt``: ``print`` / ``assert`` ops that run at run
time, every call, in program order.

Python arguments are formatted at trace time into the op's template (``str``, as ``print``
does); staged tensors are operands formatted at run time. ``print``'s ``sep``/``end`` must be
Python strings and ``file`` ``None``, ``sys.stdout`` or ``sys.stderr``. ``assert``'s message is
computed at trace time (Python computes it only when the assertion fails: a message with side
effects would see them once per trace).
"""

from __future__ import annotations

import sys

from autostage.runtime import tracing
from autostage.runtime.operator_hooks import register_operator_hook
from autostage.runtime.staging import errors, values
from autostage.runtime.staging.control_flow import predicate
from autostage.runtime.staging.tensor_lists import TensorList
from autostage.runtime.tensor import Tensor


def _template(items: tuple, sep: str, end: str) -> tuple[tuple, list]:
    """The parts of a template (strings joined, tensor operands as indices) and operands."""
    parts, operands, text = [], [], []
    for k, x in enumerate(items):
        if k:
            text.append(sep)
        if isinstance(x, values.MaybeUnbound):
            raise x.error()
        if isinstance(x, TensorList):
            raise errors.StagingTypeError(f"printing a tensor list{errors.at()} is not "
                                          "supported; print np.stack(lst)")
        if isinstance(x, Tensor):
            parts.append("".join(text))
            text = []
            parts.append(len(operands))
            operands.append(x.value)
        else:
            text.append(str(x))
    text.append(end)
    parts.append("".join(text))
    return tuple(p for p in parts if p != ""), operands


def _stream(file: object) -> str:
    if file is None or file is sys.stdout:
        return "stdout"
    if file is sys.stderr:
        return "stderr"
    raise errors.StagingTypeError(f"print(..., file=...) of staged values{errors.at()} "
                                  "supports sys.stdout and sys.stderr only")


def print_(*items: object, sep: str | None = " ", end: str | None = "\n", file: object = None,
           flush: bool = False) -> None:
    sep = " " if sep is None else sep
    end = "\n" if end is None else end
    if not (isinstance(sep, str) and isinstance(end, str)):
        raise errors.StagingTypeError(f"print()'s sep and end must be Python strings"
                                      f"{errors.at()}")
    parts, operands = _template(items, sep, end)
    tracing.emit("print", operands, {"parts": parts, "stream": _stream(file),
                                     "flush": bool(flush)})


def assert_stmt(test: object, msg_fn=None) -> None:
    pred = predicate(test, "the assert condition")
    parts, operands = None, []
    if msg_fn is not None:
        message = msg_fn()
        if isinstance(message, Tensor):
            parts, operands = (0,), [message.value]
        else:
            parts, operands = _template((message,), "", "")
    tracing.emit("assert", (pred.value, *operands), {"parts": parts})


register_operator_hook("print_", print_)
register_operator_hook("assert_stmt", assert_stmt)
