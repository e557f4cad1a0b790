"""Numba's LLVM-lock events left out of autostage's compiles (issue 14, goal 5).

llvmlite calls back at each call into LLVM (its lock's acquire and release), and Numba's
callbacks broadcast a "numba:llvm_lock" start and end event, which the dispatcher times for the
compile result's metadata (``timers``). That is ~4 us a call, and a compile makes thousands:
the GRU encoder with attention's, 6,900 calls, ~28 ms of its ~1.15 s cold compile. autostage
reads no such timings, so while a thread compiles autostage's code (``quiet()``) the callbacks
skip Numba's events on that thread; other threads (a user's own Numba compiles) still broadcast
them, and a quiet thread's events stay paired (it is never quiet inside an LLVM call).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

from llvmlite.binding import ffi

_quiet = threading.local()  # .depth: quiet() scopes entered on this thread
_MARK = "_autostage_unless_quiet"


def _unless_quiet(callback: Callable[[], None]) -> Callable[[], None]:
    def call() -> None:
        if not getattr(_quiet, "depth", 0):
            callback()

    setattr(call, _MARK, True)
    return call


def install() -> None:
    """Makes Numba's LLVM-lock callbacks skip quiet threads (idempotent; nothing if llvmlite's
    lock no longer keeps a callback list)."""
    callbacks = getattr(getattr(ffi.lib, "_lock", None), "_cblist", None)
    if not isinstance(callbacks, list):
        return
    for i, pair in enumerate(list(callbacks)):
        acquire, release = pair
        if getattr(acquire, "__module__", None) == "numba.core.base" \
                and not getattr(acquire, _MARK, False):
            callbacks[i] = (_unless_quiet(acquire), _unless_quiet(release))  # (atomic)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """No "numba:llvm_lock" events from this thread inside the ``with``."""
    _quiet.depth = getattr(_quiet, "depth", 0) + 1
    try:
        yield
    finally:
        _quiet.depth -= 1
