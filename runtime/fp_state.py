"""NumPy's floating-point error state (``np.seterr`` / ``np.errstate``) and staged code.

Staged code computes as NumPy does with floating-point errors ignored: a division by zero gives
inf, an invalid operation nan, integer overflow wraps (compiled code has no error flags to test,
and the interpreter runs its ops under ``np.errstate(all="ignore")`` to match it). So it never
raises ``FloatingPointError``, never calls the ``np.seterrcall`` handler, never prints, and emits
no NumPy ``RuntimeWarning``. Warnings are not values ('warn', NumPy's default, and 'ignore' are
accepted); but where Python would raise, call or print ('raise', 'call', 'print', 'log'), running
the staged code would silently differ. Such a state is a clear error: while tracing (checked when
a call starts, when a ``with``/``try`` body is entered in the traced function, and when tracing
ends) and on every later call. The per-call test compares NumPy's error-state object (a context
variable) with the last one found acceptable: ~20 ns; ``np.geterr()`` (~0.5 us) only when it
changed.
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import tracing

try:  # NumPy 2 keeps the error state in a context variable: reading it costs ~15 ns
    from numpy._core.umath import _extobj_contextvar as _STATE
except ImportError:  # pragma: no cover - another NumPy: ask np.geterr() each time
    _STATE = None

_ACCEPTED = ("ignore", "warn")


class FloatingPointModeError(tracing.StagingError, RuntimeError):
    """NumPy's error state asks for floating-point errors to raise (or call, print, log) while
    a staged function is traced or called; staged code does not check them.

    Example: ``with np.errstate(divide="raise"): f(x)`` where ``f`` is staged. Fix: call it with
    the default state (or ``np.errstate(all="ignore")``) and test the results explicitly
    (``np.isfinite(y).all()``), or use ``to_graph`` (plain NumPy) for that code.
    """


# NumPy's error-state object now (a new object whenever the state changes; without the context
# variable, a new object every time: then every call asks np.geterr()).
current = _STATE.get if _STATE is not None else object


accepted = [None]  # the last error-state object found acceptable (compared by identity)


def check(what: str) -> None:
    """Raises ``FloatingPointModeError`` unless every category is 'ignore' or 'warn'.

    ``what``: the situation, for the message ("when calling f", "while tracing f at ...").
    """
    state = current()
    modes = np.geterr()
    refused = {k: v for k, v in modes.items() if v not in _ACCEPTED}
    if not refused:
        accepted[0] = state
        return
    settings = ", ".join(f"{k}={v!r}" for k, v in sorted(refused.items()))
    raise FloatingPointModeError(
        f"staged code does not check floating-point errors, but NumPy's error state has "
        f"{settings} (np.seterr / np.errstate) {what}: staged code computes as NumPy does with "
        "errors ignored (inf, nan, wrapped integers) and never raises FloatingPointError or "
        "calls, prints or logs an error; call it with errors ignored or warned (NumPy's "
        "default) and test the results explicitly (e.g. np.isfinite), or run that code "
        "unstaged")


def check_while_tracing() -> None:
    """The check inside a traced function (a ``with``/``try`` body, the end of tracing)."""
    if current() is not accepted[0]:
        loc = tracing.user_location()
        check("while the staged function is traced" + (f" (at {loc})" if loc else ""))
