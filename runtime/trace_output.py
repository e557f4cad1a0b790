"""What code that is not converted prints while a function is traced: the call runs as Python.

Converted code's ``print`` is staged: it prints when the trace runs, at every call. A print in
code autostage does not convert (a context manager's ``__enter__``, a generator, a property or
``__bool__``, a library function) runs when the function is traced, once per trace: a second
call printed nothing, and the first printed it before the staged output (``enter``, ``exit``,
``body``). So while a function is traced, what its thread writes to ``sys.stdout`` is held
(``holding``); when something was written, the trace is dropped (``PrintsWhileTraced``), the
text discarded, and the function runs as Python, which prints it in order, at every call.
Writes of other threads pass through. A staged print under a ``contextlib.redirect_stdout`` or
``np.printoptions`` of the traced code (context managers that are not converted: they hold while
the function is traced, not when its print runs) makes it run as Python too
(``check_staged_print``). ``sys.stderr`` is held the same way (``sys.stderr.write(...)`` in the
function wrote once per trace), but for the text of warnings.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
from autostage.runtime.staging.errors import PythonSideEffectError


class PrintsWhileTraced(PythonSideEffectError):
    """Code that is not converted printed while the function was traced (``holding``): a
    call runs the function as Python instead; where a trace is required (``compile``), this
    is the error."""


# Where ``warnings`` writes a warning's text (Python 3.14 moved it to ``_py_warnings``).
_WARNINGS_FILES = frozenset({warnings.__file__, getattr(
    sys.modules.get("_py_warnings"), "__file__", None)}) - {None}


class _Held:
    """``sys.stdout`` (or ``sys.stderr``) while a trace runs: the tracing thread's writes are
    kept, not written; but a warning's text (``warnings`` shows it on ``sys.stderr``: one made
    while tracing is made once, as the warning registry would show it) passes through."""

    def __init__(self, stream: Any, thread: int):
        self.stream, self.thread, self.text = stream, thread, []

    def write(self, s: str) -> int:
        if threading.get_ident() != self.thread or (
                sys._getframe(1).f_code.co_filename in _WARNINGS_FILES):
            return self.stream.write(s)
        if not isinstance(s, str):  # (as a text stream says it: a staged Text, for one)
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        self.text.append(s)
        return len(s)

    def flush(self) -> None:
        if threading.get_ident() != self.thread:
            self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


_active = threading.local()  # .held: this thread's holders (innermost last), with options


@contextlib.contextmanager
def holding(name: str) -> Iterator[None]:
    """Holds what this thread prints (to ``sys.stdout`` and ``sys.stderr``) while the function
    ``name`` is traced; raises ``PrintsWhileTraced`` if anything was (the text is discarded), or
    writes it out if the trace raised (as Python would have printed it before the exception)."""
    original, original_err = sys.stdout, sys.stderr
    held = _Held(original, threading.get_ident())
    held_err = _Held(original_err, threading.get_ident())
    sys.stdout, sys.stderr = held, held_err
    stack = _active.__dict__.setdefault("held", [])
    stack.append((held, np.get_printoptions(), name))
    try:
        yield
    except BaseException:
        _put_back(held, original)
        _put_back(held_err, original_err, "stderr")
        original.write("".join(held.text))
        original_err.write("".join(held_err.text))
        raise
    finally:
        stack.pop()
    _put_back(held, original)
    _put_back(held_err, original_err, "stderr")
    if any(held.text) or any(held_err.text):
        first = "".join(held.text + held_err.text).strip().splitlines()[:1]
        shown = f" ({first[0][:60]!r}...)" if first else ""
        raise PrintsWhileTraced(
            f"code that autostage does not convert printed{shown} while {name} was traced (a "
            "context manager, generator, property or library function): it would print once "
            f"per trace, not at every call, so {name} runs as Python; convert the code that "
            "prints, or move the print into the function")


def check_staged_print() -> None:
    """Before a staged ``print``: code that is not converted has redirected ``sys.stdout``
    (``contextlib.redirect_stdout``) or changed NumPy's print options (``np.printoptions``)
    around it while the function is traced; those last only as long as the trace, not while
    the staged print runs: the function runs as Python (``PrintsWhileTraced``)."""
    stack = getattr(_active, "held", None)
    if not stack:
        return
    held, options, name = stack[-1]
    if sys.stdout is not held or np.get_printoptions() != options:
        raise PrintsWhileTraced(
            f"a print inside {name} runs where code that autostage does not convert has "
            "redirected sys.stdout or changed NumPy's print options (a context manager): those "
            f"hold while {name} is traced, not when its staged print runs, so {name} runs as "
            "Python")


def _put_back(held: _Held, original: Any, stream: str = "stdout") -> None:
    if getattr(sys, stream) is held:
        setattr(sys, stream, original)
