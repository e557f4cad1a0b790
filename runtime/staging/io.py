"""Staging hooks of ``print_``, ``warn`` and ``assert_stmt``: ``print`` / ``warn`` / ``assert`` ops
that run at run time, every call, in program order.

Python arguments are formatted at trace time into the op's template (``str``, as ``print``
does); staged tensors are operands formatted at run time. ``print``'s ``sep``/``end`` must be
Python strings and ``file`` ``None``, ``sys.stdout`` or ``sys.stderr``. ``assert``'s message is
computed at trace time (Python computes it only when the assertion fails: a message with side
effects would see them once per trace). ``warnings.warn`` is issued at run time from the user's
line (``user_site``: the line of the call in the user's file, as Python's warning names it), with
that module's filters and registry.
"""

from __future__ import annotations

import sys
import warnings

from autostage.runtime import ir, trace_output, tracing, value_info
from autostage.runtime.operator_hooks import register_operator_hook
from autostage.runtime.ops.io import warn_at
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
            raise errors.StagingTypeError(
                f"printing a list built in staged code{errors.at()} is not supported (Python "
                "prints each item with its own repr, known only at run time): return the list "
                "and print it outside, or print its items in a loop")
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
            if formatted:
                text.check_repr(x)
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
            self.text.append(text.python_text(repr(x) if as_repr else str(x), x))


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
    trace_output.check_staged_print()
    parts, operands = _template(items, sep, end)
    tracing.emit("print", operands, {"parts": parts, "stream": _stream(file),
                                     "flush": bool(flush)})


def user_site(stacklevel: int, frame: object) -> tuple[ir.Location, str] | None:
    """The user's line ``stacklevel`` frames up from ``frame`` (the caller of
    ``warnings.warn``), with its module's name, as ``warnings.warn`` finds them: autostage's
    own frames are skipped, converted code is at the line it was converted from. While a
    function is traced only ``stacklevel`` 1 (the line of the call) belongs to the traced code:
    None for any other."""
    if tracing.is_tracing() and stacklevel != 1:
        return None
    level = 0
    while frame is not None:
        loc = tracing._location_of(frame)
        filename = frame.f_code.co_filename
        if loc is None and not filename.startswith(tuple(tracing.internal_dirs)):  # (a library
            # frame, which Python's stack level counts too)
            loc = ir.Location(filename, frame.f_lineno, frame.f_code.co_name)
        if loc is not None:
            level += 1
            if level >= stacklevel:
                return loc, frame.f_globals.get("__name__", "<string>")
        frame = frame.f_back
    return None


def warn(message: object, category: object = None, stacklevel: int = 1, source: object = None,
         frame: object = None) -> None:
    """``warnings.warn`` in traced code: a ``warn`` op issuing it at run time, from the line of
    the call. Its message is formatted as ``str`` (a staged value at run time)."""
    if isinstance(message, Warning):
        raise errors.StagingTypeError(
            f"warnings.warn() of a Warning object{errors.at()} is not staged: pass its message "
            "and category (`warnings.warn(text, RuntimeWarning)`)")
    category = UserWarning if category is None else category
    if not (isinstance(category, type) and issubclass(category, Warning)):
        raise errors.StagingTypeError(
            f"warnings.warn() with a category that is not a Warning subclass{errors.at()} is not "
            f"staged (Python raises TypeError where it runs): got {type(category).__name__}")
    site = user_site(stacklevel, frame)
    if site is None or source is not None or "<locals>" in category.__qualname__:
        what = ("stacklevel other than 1 (the caller's line is outside the staged code)"
                if site is None else "source=" if source is not None else
                f"a category defined in a function ({category.__qualname__})")
        raise errors.StagingTypeError(f"warnings.warn() with {what}{errors.at()} is not staged; "
                                      "warn outside the staged function, from its result")
    loc, module = site
    parts, operands = _template((message,), "", "")
    tracing.emit("warn", operands, {
        "parts": parts, "category": f"{category.__module__}:{category.__qualname__}",
        "filename": loc.filename, "lineno": loc.lineno, "module": module})


def warn_now(message: object, category: object = None, stacklevel: int = 1,
             source: object = None, frame: object = None) -> None:
    """``warnings.warn`` outside tracing, from converted code: at the user's line (Python's
    own stack level would name autostage's or the generated file's)."""
    site = user_site(stacklevel, frame)
    if site is None:
        warnings.warn(message, category, stacklevel + 1, source)
        return
    loc, module = site  # (a Warning message's own class is its category)
    warn_at(message, category or UserWarning, loc.filename, loc.lineno, module, source)


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
register_operator_hook("warn", warn)
register_operator_hook("warn_now", warn_now)
