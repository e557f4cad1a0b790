"""New arrays for generated code, through functions compiled once per machine.

Numba compiles its implementation of ``np.empty``/``np.zeros``/``np.ascontiguousarray`` into
each function that calls it, once per shape type and dtype, in every process that compiles a
new function: 20-90 ms per signature, ~0.1 s per realistic program (4.8 s of the 44 programs'
compile time in ``benchmarks/compile_time.py``). Called through these, it is compiled once per
signature and loaded from Numba's disk cache after; LLVM inlines the call when it links them.

A shape is a tuple of int64: a literal size must be passed as ``np.int64(n)`` (``shape``),
or Numba would type the tuple with the literal and compile once per value.

Generated modules import this module as ``cpu_new`` (``hashed_import``: its source hash is part
of theirs, so their cached code is dropped when it changes).
"""

from __future__ import annotations

import sys

import numba
import numpy as np
from autostage.runtime.backends.cpu import numba_cache
from numba import types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

# (Options of its own, not shared_helpers': Numba's cache of this module is keyed by this file.)
_JIT = dict(cache=True, error_model="numpy", nogil=True, no_cfunc_wrapper=True,
            no_cpython_wrapper=True)


@numba.njit(**_JIT)
def empty(shape, dtype):
    return np.empty(shape, dtype)


@numba.njit(**_JIT)
def zeros(shape, dtype):
    return np.zeros(shape, dtype)


@numba.njit(**_JIT)
def contiguous(x):
    return np.ascontiguousarray(x)


@numba.njit(**_JIT)
def full(shape, value):
    return np.full(shape, value)


@intrinsic
def flat_view(typingctx, x):
    """A C-contiguous array ``x`` as a 1-d view of its elements; the caller has tested
    ``x.flags.c_contiguous`` (or ``x`` is typed C). Numba's ``x.reshape(-1)`` validates the new
    shape in code (~200 LLVM instructions in every function that links it); this is a new
    array header only."""
    if not isinstance(x, types.Array):
        return None
    flat = types.Array(x.dtype, 1, "C", readonly=not x.mutable, aligned=x.aligned)

    def codegen(context, builder, signature, args):
        source = make_array(signature.args[0])(context, builder, value=args[0])
        out = make_array(flat)(context, builder)
        populate_array(out, data=source.data, shape=[source.nitems],
                       strides=[source.itemsize], itemsize=source.itemsize,
                       meminfo=source.meminfo, parent=source.parent)
        return impl_ret_borrowed(context, builder, flat, out._getvalue())
    return flat(x), codegen


numba_cache.tie_data_files(sys.modules[__name__])  # content-named, private files
