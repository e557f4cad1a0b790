"""NumPy's signed integers wrap around in compiled code too: no ``nsw`` flags on ``+ - *``.

Numba marks signed integer addition, subtraction and multiplication ``nsw`` ("no signed
wrap"), which tells LLVM an overflow cannot happen, so it may fold code as if it did not:
``(a + 1) > a`` became True for int64's largest value, ``(x * 2) // 2`` became ``x``, and the
zero-divisor test of ``y // (300 * s)`` became a test of ``s``, so that a product wrapping to 0
trapped (SIGFPE, the process killed). NumPy's int64 arithmetic wraps (two's complement), and
so does the generated code once these operations carry no flag.

Only autostage's compiles change: each Numba function of a module whose cache autostage ties
(``numba_cache.tie_data_files``: generated modules, shared helpers, the runtime's own modules)
compiles with Numba's flag rule replaced, under Numba's compiler lock (so no other compile in
the process, such as the user's own ``@numba.njit`` functions, runs meanwhile); callees compiled
from there, Numba's library code among them, compile the same way. ``STAMP`` is part of those
functions' cache keys, so code compiled with the flags is never loaded again.

The same compiles convert floats to integers as NumPy does (``float_casts``: Numba's
``fptoui`` gave 2**64 - 1 for -2.0 as a uint64); its stamp is part of ``STAMP``.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator

from autostage.runtime.backends.cpu import float_casts
from numba.core.compiler_lock import global_compiler_lock
from numba.cpython import numbers as _cpython_numbers
from numba.np.math import numbers as _numpy_numbers

# in cache keys: compiled without nsw flags, with NumPy's float to integer casts
STAMP = f"int-wrap-1,{float_casts.STAMP}"
_MODULES = (_cpython_numbers, _numpy_numbers)  # each looks ``_int_arith_flags`` up at lowering


def _no_flags(return_type: object) -> list[str]:
    """Numba's ``_int_arith_flags`` without ``nsw``: the operation wraps."""
    return []


@contextlib.contextmanager
def wrapping() -> Iterator[None]:
    """Compiles in the block lower signed ``+ - *`` without ``nsw`` and float to integer casts
    as NumPy's (re-entrant)."""
    with global_compiler_lock, float_casts.exact():
        saved = [module._int_arith_flags for module in _MODULES]
        for module in _MODULES:
            module._int_arith_flags = _no_flags
        try:
            yield
        finally:
            for module, flags in zip(_MODULES, saved, strict=True):
                module._int_arith_flags = flags


def compile_wrapping(dispatcher: object) -> None:
    """Makes each compile of ``dispatcher`` (its first call's, a caller's typing of it, a
    later signature's) run in ``wrapping``."""
    compile_ = dispatcher.compile
    if getattr(compile_, "wraps_integers", False):
        return

    @functools.wraps(compile_)
    def compile(signature: tuple) -> Callable:
        with wrapping():
            return compile_(signature)

    compile.wraps_integers = True
    dispatcher.compile = compile
