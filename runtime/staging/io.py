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

from autostage.runtime import tracing, value_info
from autostage.runtime.operator_hooks import register_operator_hook
from autostage.runtime.staging import errors, text, values
from autostage.runtime.staging.control_flow import predicate
from autostage.runtime.staging.tensor_lists import TensorList
from autostage.runtime.tensor import Tensor


def _contains_staged(x: object) -> bool:
    if isinstance(x, (Tensor, TensorList, values.MaybeUnbound)):
        return True
    if isinstance(x, (tuple, list)):
        return any(_contains_staged(e) for e in x)
    if isinstance(x, dict):
        return any(_contains_staged(e) for e in (*x.keys(), *x.values()))
    return False


class _Template:
    """Builds a template: text from Python values, operand slots for tensors."""

    def __init__(self) -> None:
        self.parts: list = []
        self.operands: list = []
        self.text: list[str] = []

    def add(self, x: object, as_repr: bool = False) -> None:
        """Adds ``x`` as ``print`` shows it (``str``; items of containers with ``repr``)."""
        if isinstance(x, values.MaybeUnbound):
            raise x.error()
        if isinstance(x, TensorList):
            raise errors.StagingTypeError(f"printing a tensor list{errors.at()} is not "
                                          "supported; print np.stack(lst)")
        if isinstance(x, text.Text):  # its parts, with its operands after ours
            self.parts.append("".join(self.text))
            self.text = []
            self.parts += x.parts_after(len(self.operands))
            self.operands += [t.value for t in x.tensors]
        elif isinstance(x, Tensor):
            self.parts.append("".join(self.text))
            self.text = []
            # A weak value (a size from x.shape) is a Python number in plain Python: str == repr.
            formatted = as_repr and not value_info.is_weak(x.value)
            self.parts.append(("repr", len(self.operands)) if formatted else len(self.operands))
            self.operands.append(x.value)
        elif isinstance(x, (tuple, list)) and _contains_staged(x):
            self.text.append("(" if isinstance(x, tuple) else "[")
            for k, item in enumerate(x):
                self.text.append(", " if k else "")
                self.add(item, as_repr=True)
            self.text.append(("," if isinstance(x, tuple) and len(x) == 1 else "")
                             + (")" if isinstance(x, tuple) else "]"))
        elif isinstance(x, dict) and _contains_staged(x):
            raise errors.StagingTypeError(f"printing a dict of staged values{errors.at()} is not "
                                          "supported; print its values")
        else:
            self.text.append(repr(x) if as_repr else str(x))


def _template(items: tuple, sep: str, end: str) -> tuple[tuple, list]:
    """The parts of a template (strings joined, tensor operands as indices) and operands."""
    template = _Template()
    for k, x in enumerate(items):
        if k:
            template.text.append(sep)
        template.add(x)
    template.text.append(end)
    template.parts.append("".join(template.text))
    return tuple(p for p in template.parts if p != ""), template.operands


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
