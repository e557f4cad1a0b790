"""Where a staged function's call starts: its fast path before any Python frame of ours.

A cache-hit call of a staged function is a handful of tests and the compiled code's own call.
In Python, the frames in front of it (``StagedFunction.__call__``, then the generated fast
path: ``fast_calls``) cost ~0.35 us, as much as Numba's whole dispatch of a small array call
on these machines. So ``StagedFunction``'s class derives from ``Base``, whose C ``tp_call``
(``_fastcall.c``) runs the fast path in ``_fast`` and calls ``self._call(*args, **kwargs)``,
the full path, only when there is none or it returns ``MISS``; an exception leaving the fast
path goes to ``self._error_hook`` as one leaving the full path does. A fast path is a ``Plan``,
tests
and a call of the compiled entry point done in C, where it covers the call (arrays and NumPy
scalars, nothing read through objects, no argument written), else a Python function of the
argument tuple.

The C extension is optional (``setup.py``): without it ``Base`` below does the same in Python,
and ``Plan`` is None (fast paths are Python functions).
"""

from __future__ import annotations

from typing import Any

try:
    from autostage.runtime._fastcall import (
        ALIGNED,
        C_CONTIGUOUS,
        F_CONTIGUOUS,
        FINISH_ARGUMENT,
        FINISH_CALL,
        FINISH_FIRST,
        FINISH_NONE,
        FINISH_SCALAR,
        MISS,
        PASS_AS_IS,
        PASS_SCALAR,
        WRITEABLE,
        Base,
        Plan,
        engage_eager,
    )
except ImportError:  # built without a C compiler: the same in Python, fast paths in Python
    MISS = object()
    Plan = None  # type: ignore[assignment,misc]
    ALIGNED = C_CONTIGUOUS = F_CONTIGUOUS = WRITEABLE = 0  # (what a Plan tests: no Plans)
    PASS_AS_IS, PASS_SCALAR = 0, 1
    # (how a fast path finishes: ``fast_calls._finish`` tells them apart)
    FINISH_NONE, FINISH_FIRST, FINISH_ARGUMENT, FINISH_SCALAR, FINISH_CALL = range(5)
    _eager = [False]

    def engage_eager() -> None:
        _eager[0] = True

    class Base:  # type: ignore[no-redef]
        """Calls its fast path, else ``self._call(*args, **kwargs)``; an exception leaving the
        fast path goes to ``self._error_hook(e)`` first (unless it is None)."""

        _fast: Any = None

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            fast = self._fast
            if fast and not kwargs and not _eager[0]:
                try:
                    out = fast(args)
                except Exception as e:
                    if self._error_hook is not None:
                        self._error_hook(e)
                    raise
                if out is not MISS:
                    return out
            return self._call(*args, **kwargs)

__all__ = ["ALIGNED", "C_CONTIGUOUS", "F_CONTIGUOUS", "FINISH_ARGUMENT", "FINISH_CALL",
           "FINISH_FIRST", "FINISH_NONE", "FINISH_SCALAR", "MISS", "PASS_AS_IS", "PASS_SCALAR",
           "WRITEABLE", "Base", "Plan", "engage_eager"]
