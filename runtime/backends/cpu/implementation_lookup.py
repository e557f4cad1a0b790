"""Numba's lookup of an operation's implementation, without reading its signature each time.

Each ``context.get_function(...)`` of Numba's lowering (every call, operator and attribute that
``direct_lowering`` emits) wraps the implementation it finds and asks ``inspect.signature``
whether that implementation takes ``loc``: ~13 us, 541 times (~7 ms) in the GRU encoder's cold
compile. The answer never changes for a function, so it is kept per function, weakly (the
implementations Numba makes per type may be collected).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from numba.core import base

_answers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # implementation -> answer


def install() -> None:
    """Makes Numba's ``_has_loc`` remember its answers (idempotent)."""
    if getattr(base._has_loc, "remembers", False):
        return
    base._has_loc = _remembering(base._has_loc)


def _remembering(has_loc: Callable[[object], bool]) -> Callable[[object], bool]:
    def remembered(fn: object) -> bool:
        try:
            return _answers[fn]
        except (KeyError, TypeError):  # (TypeError: not weakly referable, or unhashable)
            pass
        answer = has_loc(fn)
        try:
            _answers[fn] = answer
        except TypeError:
            pass
        return answer

    remembered.remembers = True
    return remembered
