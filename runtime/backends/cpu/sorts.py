"""Numba's sorts for generated code, compiled once per machine and shared by every helper.

Numba compiles its quicksort and mergesort (0.5-0.7 s) into each function that calls
``np.sort``/``np.argsort``, once per dtype and layout. Sort, argsort, median and quantile call
these instead, so a median after a sort of the same lanes compiles no sort again (the sort is
loaded from Numba's disk cache once per process).

``np.sort``/``np.argsort`` give NumPy's result exactly, ties included. Where a lane has no ties
every sort agrees, and Numba's is used: its quicksort for values, its stable mergesort for
indices. Where it has ties, the order of tied elements is the sort's own: a stable sort's
(``kind='stable'``/``'mergesort'``) is index order, which the mergesort gives; NumPy's default
quicksort (on this machine AVX-512 code) orders them as it happens to, from 16 elements on not in
index order, so such a lane is sorted by NumPy itself. For values, ties are visible only where
equal values differ in their bits (zeros of both signs, NaNs); so is the sign of a zero quantile
of zeros of both signs, which then comes from NumPy too.

NumPy is called back through C functions made with ctypes (which take the GIL), registered with
LLVM under fixed names at import (``llvmlite.binding.add_symbol``): compiled code refers to them
by name, so Numba's disk cache stays valid across processes, and compiling a call costs nothing
(``numba.objmode`` blocks cost ~0.5 s each per signature).

Generated modules import this module as ``cpu_sort`` (``hashed_import``: its source hash is part
of theirs, so their cached code is dropped when it changes).
"""

from __future__ import annotations

import ctypes
import sys

import numba
import numpy as np
from autostage.runtime.backends.cpu import numba_cache
from llvmlite import binding as llvm
from numba import types
from numba.extending import overload

# (Options of its own, not shared_helpers': Numba's cache of this module is keyed by this file.)
_JIT = dict(cache=True, error_model="numpy", nogil=True, no_cfunc_wrapper=True,
            no_cpython_wrapper=True)


# ``kind`` codes of generated calls (NumPy's kind names: None is quicksort).
QUICKSORT, HEAPSORT, STABLE = 0, 1, 2
KINDS = {None: QUICKSORT, "quicksort": QUICKSORT, "heapsort": HEAPSORT, "stable": STABLE,
         "mergesort": STABLE}
_KIND_NAMES = ("quicksort", "heapsort", "stable")

# The dtypes a callback reads, by code (``_dtype_code``).
_DTYPES = tuple(np.dtype(t) for t in (
    np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint64,
    np.uint32, np.uint16, np.uint8, np.bool_, np.complex128, np.complex64))
_INT64 = _DTYPES.index(np.dtype(np.int64))


def _view(address: int, n: int, code: int, stride: int) -> np.ndarray:
    """The ``n`` values of dtype ``_DTYPES[code]`` at ``address``, ``stride`` bytes apart."""
    dtype = _DTYPES[code]
    if n == 0:
        return np.empty(0, dtype)
    low = address + min(stride, 0) * (n - 1)
    span = (n - 1) * abs(stride) + dtype.itemsize
    return np.ndarray((n,), dtype, (ctypes.c_char * span).from_address(low),
                      offset=address - low, strides=(stride,))


# Each takes the values' address, count, dtype code and stride, then its own arguments.
_VALUES = (ctypes.c_int64,) * 4


@ctypes.CFUNCTYPE(None, *_VALUES, ctypes.c_int64, ctypes.c_int64)
def _numpy_sort_back(values, n, code, stride, kind, out):
    sorted_values = np.sort(_view(values, n, code, stride), kind=_KIND_NAMES[kind])
    _view(out, n, code, _DTYPES[code].itemsize)[:] = sorted_values


@ctypes.CFUNCTYPE(None, *_VALUES, ctypes.c_int64, ctypes.c_int64)
def _numpy_argsort_back(values, n, code, stride, kind, out):
    order = np.argsort(_view(values, n, code, stride), kind=_KIND_NAMES[kind])
    _view(out, n, _INT64, 8)[:] = order


@ctypes.CFUNCTYPE(ctypes.c_double, *_VALUES, ctypes.c_double, ctypes.c_int64)
def _numpy_quantile_back(values, n, code, stride, q, flags):
    """``flags``: 1 for nanquantile, 2 for an integer ``q`` (which NumPy takes as an element)."""
    function = np.nanquantile if flags & 1 else np.quantile
    return float(function(_view(values, n, code, stride), int(q) if flags & 2 else q))


for _name, _callback in (("sort", _numpy_sort_back), ("argsort", _numpy_argsort_back),
                         ("quantile", _numpy_quantile_back)):
    llvm.add_symbol(f"autostage_numpy_{_name}", ctypes.cast(_callback, ctypes.c_void_p).value)
# (Called with arrays the caller keeps alive: an argument, or a result used after the call;
# Numba releases a local array after its last use, which ``x.ctypes.data`` would be.)
_i64 = types.int64
_SORT_BACK = types.ExternalFunction("autostage_numpy_sort", types.void(*(_i64,) * 6))
_ARGSORT_BACK = types.ExternalFunction("autostage_numpy_argsort", types.void(*(_i64,) * 6))
_QUANTILE_BACK = types.ExternalFunction("autostage_numpy_quantile", types.float64(
    *(_i64,) * 4, types.float64, _i64))


@numba.njit(**_JIT)
def sort(lane):
    """``lane`` (1-d) sorted into a new array, NaNs last (Numba's quicksort: equal values in
    any order, for the median and quantiles)."""
    return np.sort(lane)


@numba.njit(**_JIT)
def numpy_sort(lane, kind):
    """``np.sort(lane, kind=KINDS[kind])`` of a 1-d ``lane``, bit for bit."""
    out = np.sort(lane)
    if _ties_differ(out):
        _SORT_BACK(lane.ctypes.data, lane.shape[0], _dtype_code(lane), lane.strides[0], kind,
                   out.ctypes.data)
    return out


@numba.njit(**_JIT)
def numpy_argsort(lane, kind):
    """``np.argsort(lane, kind=KINDS[kind])`` of a 1-d ``lane``."""
    order = np.argsort(lane, kind="mergesort")
    if kind != STABLE:
        for i in range(order.shape[0] - 1):
            a, b = lane[order[i]], lane[order[i + 1]]
            if a == b or (a != a and b != b):  # a tie: NumPy's own order
                _ARGSORT_BACK(lane.ctypes.data, lane.shape[0], _dtype_code(lane),
                              lane.strides[0], kind, order.ctypes.data)
                break
    return order


@numba.njit(**_JIT)
def zeros_of_both_signs(lane, k):
    """Whether the first ``k`` values of the sorted ``lane`` hold both 0.0 and -0.0: then which
    of them a quantile interpolates is NumPy's selection's own (``numpy_quantile``)."""
    positive = negative = False
    for i in range(k):
        if lane[i] == 0:
            if np.signbit(lane[i]):
                negative = True
            else:
                positive = True
    return positive and negative


@numba.njit(**_JIT)
def numpy_quantile(lane, q, nan, integer):
    """NumPy's ``q`` quantile (nanquantile for ``nan``; ``integer``: ``q`` is an integer) of
    the 1-d ``lane`` (in its original order) as float64."""
    return _QUANTILE_BACK(lane.ctypes.data, lane.shape[0], _dtype_code(lane), lane.strides[0],
                          np.float64(q), np.int64(nan + 2 * integer))


def _dtype_code(values):
    """The index of ``values``' dtype in ``_DTYPES`` (a constant of the compiled code)."""


@overload(_dtype_code, jit_options=_JIT)
def _dtype_code_typed(values):
    code = _DTYPES.index(np.dtype(str(values.dtype)))
    return lambda values: code


def _ties_differ(out):
    """Whether the sorted ``out`` has equal neighbours that differ in their bits."""


@overload(_ties_differ, jit_options=_JIT)
def _ties_differ_typed(out):
    if isinstance(out.dtype, types.Float):
        def floats(out):
            for i in range(out.shape[0] - 1):
                a, b = out[i], out[i + 1]
                if (a == b or (a != a and b != b)) and np.signbit(a) != np.signbit(b):
                    return True
            return False
        return floats
    if isinstance(out.dtype, types.Complex):
        def complexes(out):  # (parts' signs and NaNs: NumPy's order, whenever two are equal)
            for i in range(out.shape[0] - 1):
                a, b = out[i], out[i + 1]
                if a == b or (a != a and b != b):
                    return True
            return False
        return complexes
    return lambda out: False


numba_cache.tie_data_files(sys.modules[__name__])  # content-named, private files
