"""Standard-library calls whose result changes from call to call, or whose effect is a log
record: refused while tracing; ``warnings.warn``: staged.

``time.time()``, ``datetime.datetime.now()``, ``os.urandom(16)``, ``uuid.uuid4()``... called in
converted code while a function is traced would run once, at trace time, and their one result
would be frozen into the trace: every later call of the staged function would reuse it (the same
timestamp, the same "random" bytes). They cannot be staged (the IR has no clock and no OS entropy),
so each is refused where it is written, with a ``NondeterministicCallError`` naming the function
and the user's line. Outside tracing (plain calls, ``to_graph`` code) they run as Python runs them.

``NONDETERMINISTIC`` is the one table: function -> how the user spells it. The call-trees
converter routes a call of one of them to its overload here (``ag__.time_time()``), as it does for
NumPy's functions (``BUILTINS``); ``ag__.converted`` does the same for a call it resolves only at
run time (``clock = time.perf_counter; clock()``). Not seen: such calls inside code that is not
converted (a ``do_not_convert`` helper, a library function that reads the clock itself).
Python's ``random`` module (and so ``secrets.choice``/``secrets.randbits``, methods of a
``random.SystemRandom``) is refused by ``random_overloads.stdlib_method_overload``.
``os.getpid()`` is not here: its value is the same at every call of the process.

``EFFECTS`` (``warnings.warn_explicit``, ``logging.warning``, a logger's ``warning``...) would
likewise run once, at trace time: a log record in a staged branch was made on the first call
whatever the data, and never again. They are refused while tracing with a
``PythonSideEffectError`` (``effect_call``) naming the call and the line. ``warnings.warn``
itself is staged (``warnings_warn``: a ``warn`` op issuing it at run time from the user's line),
and outside tracing issued from the user's line too (Python's stack level would name the
generated file).

``FILES`` (``open``, ``Path.open`` in a mode that writes, ``Path.write_text``...) would write
the file once, at trace time: a log line appended at each call was appended at the first only.
They are refused while tracing (``file_call``); opening a file to read it is not (what is read
is frozen into the trace, as any value computed there).
"""

from __future__ import annotations

import builtins
import datetime
import logging
import os
import pathlib
import secrets
import sys
import time
import uuid
import warnings
from collections.abc import Callable
from typing import Any

from autostage.operators.numpy_overloads import register
from autostage.runtime import is_tracing, stage_operator

# function -> as written in user code. Python functions among them (uuid, secrets) are also
# found by ``calls._decide``, which would otherwise call them as they are.
NONDETERMINISTIC: dict[Callable[..., Any], str] = {
    time.time: "time.time", time.time_ns: "time.time_ns",
    time.perf_counter: "time.perf_counter", time.perf_counter_ns: "time.perf_counter_ns",
    time.monotonic: "time.monotonic", time.monotonic_ns: "time.monotonic_ns",
    time.process_time: "time.process_time", time.process_time_ns: "time.process_time_ns",
    time.thread_time: "time.thread_time", time.thread_time_ns: "time.thread_time_ns",
    datetime.datetime.now: "datetime.datetime.now",
    datetime.datetime.utcnow: "datetime.datetime.utcnow",
    datetime.datetime.today: "datetime.datetime.today",
    datetime.date.today: "datetime.date.today",
    os.urandom: "os.urandom",
    secrets.token_bytes: "secrets.token_bytes", secrets.token_hex: "secrets.token_hex",
    secrets.token_urlsafe: "secrets.token_urlsafe", secrets.randbelow: "secrets.randbelow",
    uuid.uuid1: "uuid.uuid1", uuid.uuid4: "uuid.uuid4",
}


_LEVELS = ("debug", "info", "warning", "warn", "error", "exception", "critical", "log")
# function -> as written in user code (a logger's methods as ``logger.<method>``: a bound
# method is found by its function, ``calls._target``).
EFFECTS: dict[Callable[..., Any], str] = {
    warnings.warn_explicit: "warnings.warn_explicit",
    **{getattr(logging, level): f"logging.{level}" for level in _LEVELS},
    **{getattr(logging.Logger, level): f"logger.{level}" for level in _LEVELS},
    **{getattr(logging.LoggerAdapter, level): f"adapter.{level}" for level in _LEVELS},
}


# function -> as written in user code: opening a file to write it (the mode decides,
# ``file_call``), or writing it, would happen once, at trace time.
FILES: dict[Callable[..., Any], str] = {
    builtins.open: "open", pathlib.Path.open: "Path.open",
    pathlib.Path.write_text: "Path.write_text", pathlib.Path.write_bytes: "Path.write_bytes",
}


def _overload(function: Callable[..., Any], spelled: str, hook: str) -> Callable[..., Any]:
    def overload(*args: Any, **kwargs: Any) -> Any:
        if is_tracing():
            return stage_operator(hook, function, spelled, *args, **kwargs)
        return function(*args, **kwargs)

    return register(function, overload, spelled, "refused while tracing")


def _warn(message: object, category: object = None, stacklevel: int = 1, source: object = None
          ) -> None:
    hook = "warn" if is_tracing() else "warn_now"
    stage_operator(hook, message, category, stacklevel, source, frame=sys._getframe(1))


OVERLOADS: dict[str, Callable[..., Any]] = {
    "warnings_warn": register(warnings.warn, _warn, "warnings.warn", "staged while tracing")}
BY_FUNCTION: dict[Callable[..., Any], Callable[..., Any]] = {warnings.warn: _warn}
for _table, _hook in ((NONDETERMINISTIC, "nondeterministic_call"), (EFFECTS, "effect_call"),
                      (FILES, "file_call")):
    for _function, _spelled in _table.items():
        _overload_function = _overload(_function, _spelled, _hook)
        OVERLOADS[_overload_function.__name__] = BY_FUNCTION[_function] = _overload_function
globals().update(OVERLOADS)
__all__ = ["BY_FUNCTION", "EFFECTS", "FILES", "NONDETERMINISTIC", *OVERLOADS]
