"""Standard-library calls whose result changes from call to call: refused while tracing.

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
"""

from __future__ import annotations

import datetime
import os
import secrets
import time
import uuid
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


def _overload(function: Callable[..., Any], spelled: str) -> Callable[..., Any]:
    def overload(*args: Any, **kwargs: Any) -> Any:
        if is_tracing():
            return stage_operator("nondeterministic_call", function, spelled, *args, **kwargs)
        return function(*args, **kwargs)

    return register(function, overload, spelled, "refused while tracing")


OVERLOADS: dict[str, Callable[..., Any]] = {}
for _function, _spelled in NONDETERMINISTIC.items():
    _overload_function = _overload(_function, _spelled)
    OVERLOADS[_overload_function.__name__] = _overload_function
BY_FUNCTION: dict[Callable[..., Any], Callable[..., Any]] = {
    f: OVERLOADS[spelled.replace(".", "_")] for f, spelled in NONDETERMINISTIC.items()}
globals().update(OVERLOADS)
__all__ = ["BY_FUNCTION", "NONDETERMINISTIC", *OVERLOADS]
