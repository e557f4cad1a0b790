"""The run-time checks of generated code as compiled functions: one call per checked site.

A check written inline (``if not 0 <= i < n: fail(...); raise ...``) adds basic blocks to the
program's function, and Numba's compile time grows with its blocks: an inline bounds check cost
~20-30 ms of compile per site, a call of these functions ~2-3 ms. They are compiled once per
signature and cached (int64 sizes: the same signatures in every program), and LLVM inlines them
into the caller when it links it, so the compiled code is the inline check's. A failed check
raises the error of its site (``run_errors.fail``: NumPy's or Python's message, the sizes, the
note naming the op and the user's line), entering Python only then.

Generated modules import this module as ``cpu_chk``; its source hash is part of their source
(``hashed_import``), so Numba's cache of a module that inlined these is dropped when they change.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

_JIT = dict(cache=True, error_model="numpy", nogil=True, no_cfunc_wrapper=True,
            no_cpython_wrapper=True)
_JIT_IO = dict(cache=True, error_model="numpy", no_cfunc_wrapper=True, no_cpython_wrapper=True)


LOCATION_ATTR = "__autostage_location__"  # the failing op's ir.Location, for tracebacks
# key -> (exception type, message template, note, location); filled when a module's source is
# generated (in every process, also when the compiled code then comes from Numba's cache).
SITES: dict[int, tuple[type[BaseException], str, str, Any]] = {}


def fail(key: int, sizes: tuple) -> None:
    """Raises the error of checked site ``key`` with its run-time ``sizes`` (from objmode)."""
    kind, template, note, loc = SITES[int(key)]
    error = kind(template.format(*[int(s) for s in sizes]))
    error.add_note(note)
    setattr(error, LOCATION_ATTR, loc)
    raise error


@numba.njit(**_JIT_IO)
def _fail(key, sizes):
    with numba.objmode():
        fail(key, sizes)


@numba.njit(**_JIT)
def check(failed, key, sizes):
    """Raises the error of site ``key`` (its message formatted with ``sizes``) when ``failed``."""
    if failed:
        _fail(key, sizes)


@numba.njit(**_JIT)
def position(index, size, key):
    """A signed ``index`` into an axis of ``size``, a negative one counted from the end, as
    the unsigned position Numba indexes with (no second wrap); site ``key``'s IndexError when
    it is out of bounds."""
    at = np.uint64(index if index >= 0 else index + size)
    if not at < np.uint64(size):
        _fail(key, (np.int64(index), np.int64(size)))
    return at


@numba.njit(**_JIT)
def unsigned_position(index, size, key):
    """``position`` of an unsigned ``index`` (never counted from the end)."""
    at = np.uint64(index)
    if not at < np.uint64(size):
        _fail(key, (np.int64(index), np.int64(size)))
    return at


@numba.njit(**_JIT)
def broadcast_size(extent, size):
    """The extent of an axis after broadcasting one more operand's ``size`` against it: the
    first size other than 1 (whether the others are 1 or that size is checked apart)."""
    return size if extent == 1 else extent
