"""The refusal of a nondeterministic standard-library call, or of a log call, while a function is
traced.

``time.time()``, ``datetime.datetime.now()``, ``os.urandom(n)``, ``uuid.uuid4()``... (the table is
``autostage/operators/nondeterministic.py``) give a different result at every call; run at trace
time, their one result would be frozen into the trace and reused by every later call. The IR has
no clock and no entropy source, so the operator hook ``nondeterministic_call`` raises
``NondeterministicCallError`` naming the call and the user's line instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autostage.runtime import tracing
from autostage.runtime.operator_hooks import register_operator_hook
from autostage.runtime.staging.errors import PythonSideEffectError, StagingError


class NondeterministicCallError(StagingError, RuntimeError):
    """A call whose result changes at every call (a clock, OS entropy) in staged code.

    Example: ``t0 = time.perf_counter()`` inside a function under ``@autostage.convert``: it would
    run once, when the function is traced, and every later call would return that first time.
    Fix: call it outside the staged function and pass the value in as an argument (or time the
    call of the staged function from outside).
    """


def _refuse(function: Callable[..., Any], spelled: str, *args: Any, **kwargs: Any) -> Any:
    loc = tracing.user_location()
    trace = tracing.current()
    traced = getattr(getattr(trace, "function", None), "name", None)
    raise NondeterministicCallError(
        f"{spelled}() in staged code{f' at {loc}' if loc is not None else ''}"
        f"{f' (tracing {traced})' if traced else ''}: its result changes from call to call, but "
        "staged code would run it once, when the function is traced, and reuse that one result "
        "at every later call (autostage cannot stage clocks or OS randomness). Call it outside "
        "the staged function and pass the value in as an argument (to time a staged function, "
        "read the clock around the call)")


def _refuse_effect(function: Callable[..., Any], spelled: str, *args: Any, **kwargs: Any) -> Any:
    loc = tracing.user_location()
    raise PythonSideEffectError(
        f"{spelled}() in staged code{f' at {loc}' if loc is not None else ''}: it would run once, "
        "when the function is traced (in a staged branch or loop whatever the data), not at "
        "each call that reaches it; autostage stages `warnings.warn`, not logging or "
        "`warnings.warn_explicit`. Log outside the staged function, from what it returns")


def _refuse_file_write(function: Callable[..., Any], spelled: str, *args: Any,
                       **kwargs: Any) -> Any:
    """``open(path, "a")`` (or ``Path.write_text``...) while a function is traced: the file
    would be written once, at trace time, not at each call. Opened to be read, it is opened."""
    mode = kwargs.get("mode", args[1] if len(args) > 1 else "r")
    if spelled.endswith(("open",)) and isinstance(mode, str) and not set(mode) & set("wax+"):
        return function(*args, **kwargs)
    loc = tracing.user_location()
    raise PythonSideEffectError(
        f"{spelled}() writing a file in staged code{f' at {loc}' if loc is not None else ''}: "
        "it would run once, when the function is traced (in a staged branch or loop whatever "
        "the data), not at each call that reaches it; autostage cannot stage file writes. "
        "Write the file outside the staged function, from what it returns")


register_operator_hook("nondeterministic_call", _refuse)
register_operator_hook("file_call", _refuse_file_write)
register_operator_hook("effect_call", _refuse_effect)
