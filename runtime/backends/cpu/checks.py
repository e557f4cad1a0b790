"""The run-time checks of generated code as compiled functions: one call per checked site.

A check written inline (``if a != b: fail(...); raise ...``) adds basic blocks to the program's
function, and Numba's compile time grows with its blocks: an inline shape check cost ~20-30 ms
of compile per site, a call of ``check`` ~2-3 ms. It is compiled once per signature and cached
(int64 sizes: the same signatures in every program), and LLVM inlines it into the caller when it
links it. A failed check records the site's key and sizes and raises ``SiteFailure``, which the
runner replaces with the site's error (``site_error``: NumPy's or Python's message, the sizes,
the note naming the op and the user's line).

Used for the checks of shapes, which run once per op, not per element: in a hot loop the call
cost 15-30% of the loop's time even inlined (bounds checks of a sieve and an edit distance, the
overflow test of Collatz' ``3 * n + 1``), so those stay inline branches.

Generated modules import this module as ``cpu_chk``; its source hash is part of their source
(``hashed_import``), so Numba's cache of a module that inlined these is dropped when they change.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from typing import Any

import llvmlite.binding as ll
import numba
import numpy as np
from autostage.runtime.backends.cpu import numba_cache
from autostage.runtime.backends.cpu.direct_types import in_line
from llvmlite import ir as llvm_ir
from numba.core import cgutils, types
from numba.extending import intrinsic

# (Options of its own, not shared_helpers': Numba's cache of this module is keyed by this file.)
_JIT = dict(cache=True, error_model="numpy", nogil=True, no_cfunc_wrapper=True,
            no_cpython_wrapper=True)


# The padding of size tuples (``run_errors``): read by generated code as constants.
ZERO, ONE = np.int64(0), np.int64(1)
_INT64 = llvm_ir.IntType(64)

LOCATION_ATTR = "__autostage_location__"  # the failing op's ir.Location, for tracebacks
# key -> (exception type, message template, note, location); filled when a module's source is
# generated (in every process, also when the compiled code then comes from Numba's cache).
SITES: dict[int, tuple[type[BaseException], str, str, Any]] = {}


class SiteFailure(Exception):
    """Raised by compiled code where a checked site failed (``fail_site``): never seen by the
    user, the runner raises ``site_error()`` instead."""


_FAILED = threading.local()  # .site: (key, sizes) of the last site failed in this thread


def _record(key: int, count: int, address: int) -> None:
    _FAILED.site = (key, tuple((ctypes.c_int64 * count).from_address(address)))


# Compiled code calls ``_record`` by a symbol name the JIT linker resolves in every process (so
# the calling code is cached), through a ctypes callback, which holds the GIL while it runs.
_RECORD = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)(_record)
ll.add_symbol("autostage_site_failed", ctypes.cast(_RECORD, ctypes.c_void_p).value)
_site_failed = types.ExternalFunction(
    "autostage_site_failed", types.void(types.int64, types.int64, types.voidptr))


def site_error() -> BaseException:
    """The error of the checked site this thread's compiled code failed last, with its run-time
    sizes: NumPy's or Python's exception and message, the note naming the op and the user's
    line."""
    key, sizes = _FAILED.site
    kind, template, note, loc = SITES[key]
    error = kind(template.format(*sizes))
    error.add_note(note)
    setattr(error, LOCATION_ATTR, loc)
    return error


@in_line
@numba.njit(**_JIT)
def fail_site(key, sizes):
    """Fails checked site ``key`` with its run-time ``sizes``: records them for ``site_error``
    and raises ``SiteFailure``. The inline tests of per-element checks (bounds) call it in their
    cold branch, followed by a native ``raise`` Numba needs to see the branch end. (Numba's
    raise with run-time values leaks ~0.8 KB per raise; entering Python with ``numba.objmode``
    compiled through Numba's own pipeline, ~0.1 s per length of ``sizes``.) Lowered in line
    where ``direct`` compiles the caller: a call and a raise, where a function of its own per
    length of ``sizes`` was a code library each, compiled once per machine."""
    _site_failed(key, len(sizes), _stored(sizes))
    raise SiteFailure


def _integer_tuple(sizes) -> bool:
    """Whether ``sizes`` is a tuple of integers (empty included)."""
    return isinstance(sizes, types.BaseTuple) and all(isinstance(t, types.Integer)
                                                       for t in sizes)


@intrinsic
def _stored(typingctx, sizes):
    """The address of ``sizes`` (a tuple of integers) stored as int64s in the caller's frame:
    straight-line stores (a loop over the tuple into a new array cost 30-45 ms of compile per
    tuple length, in the program meeting the length first)."""
    if not _integer_tuple(sizes):
        return None

    def codegen(context, builder, signature, args):
        stored = cgutils.alloca_once(builder, llvm_ir.ArrayType(_INT64, max(len(sizes), 1)))
        for i, kind in enumerate(sizes):
            value = context.cast(builder, builder.extract_value(args[0], i), kind, types.int64)
            builder.store(value, cgutils.gep_inbounds(builder, stored, 0, i))
        return builder.bitcast(stored, cgutils.voidptr_t)

    return types.voidptr(sizes), codegen


@intrinsic
def _extent(typingctx, sizes):
    """``broadcast_extent`` in straight-line code: per size, a compare and a select."""
    if not _integer_tuple(sizes):
        return None

    def codegen(context, builder, signature, args):
        one = _INT64(1)
        extent, conflict = one, cgutils.false_bit
        for i, kind in enumerate(sizes):
            size = context.cast(builder, builder.extract_value(args[0], i), kind, types.int64)
            sized = builder.icmp_signed("!=", size, one)
            clash = builder.and_(builder.icmp_signed("!=", extent, one),
                                 builder.icmp_signed("!=", size, extent))
            conflict = builder.or_(conflict, builder.and_(sized, clash))
            extent = builder.select(sized, size, extent)
        return builder.select(conflict, _INT64(-1), extent)

    return types.int64(sizes), codegen


@numba.njit(**_JIT)
def check(failed, key, sizes):
    """Raises the error of site ``key`` (its message formatted with ``sizes``) when ``failed``."""
    if failed:
        fail_site(key, sizes)


@numba.njit(**_JIT)
def broadcast_extent(sizes):
    """NumPy's extent of one axis broadcast over operands whose sizes along it are ``sizes`` (a
    tuple of run-time sizes): the size other than 1 they share, or -1 where two differ (the
    caller's check raises NumPy's error). One call and one comparison per axis in the program,
    where a comparison per operand cost Numba ~1 ms of compile each."""
    return _extent(sizes)


@numba.njit(**_JIT)
def broadcast_shape_1(key, sizes0):
    """``broadcast_extent`` of one axis's sizes, raising the error of site ``key`` (its
    message's fields: the sizes) where they do not broadcast: the extent and its test in one
    call, where two cost Numba about twice the compile."""
    extent = _extent(sizes0)
    if extent < 0:
        fail_site(key, sizes0)
    return extent


@numba.njit(**_JIT)
def broadcast_shape_2(key, sizes0, sizes1):
    """``broadcast_shape_1`` of two axes (the message's fields: both tuples' sizes, in order)."""
    extent0, extent1 = _extent(sizes0), _extent(sizes1)
    if extent0 < 0 or extent1 < 0:
        fail_site(key, sizes0 + sizes1)
    return extent0, extent1


@numba.njit(**_JIT)
def broadcast_shape_3(key, sizes0, sizes1, sizes2):
    """``broadcast_shape_1`` of three axes."""
    extents = _extent(sizes0), _extent(sizes1), _extent(sizes2)
    if extents[0] < 0 or extents[1] < 0 or extents[2] < 0:
        fail_site(key, sizes0 + sizes1 + sizes2)
    return extents


numba_cache.tie_data_files(sys.modules[__name__])  # (content-named, private files)
