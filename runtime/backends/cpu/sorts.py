"""Sorts for generated code, compiled once per machine and shared by every helper.

Sort, argsort, median and quantile call these, so a median after a sort of the same lanes
compiles no sort again (the sort is loaded from Numba's disk cache once per process). They are
written here, not Numba's ``np.sort``/``np.argsort``: those compile a dozen functions each
(0.9 s per dtype and layout on the Intel Xeon), these a few (0.4-0.5 s), and a lane of another
layout is copied to C order first, so the sorts compile once per dtype.

``np.sort``/``np.argsort`` give NumPy's result exactly, ties included. Values are sorted by an
introsort (NumPy's quicksort scheme), indices by a stable merge sort; where a lane has no ties
every sort agrees. Where it has ties, the order of tied elements is the sort's own: a stable
sort's (``kind='stable'``/``'mergesort'``) is index order, which the merge sort gives; NumPy's
default quicksort (on this machine AVX-512 code) orders them as it happens to, from 16 elements
on not in index order, so such a lane is sorted by NumPy itself. For values, ties are visible
only where equal values differ in their bits (zeros of both signs, NaNs); so is the sign of a
zero quantile of zeros of both signs, which then comes from NumPy too. Complex lanes (whose
NaNs NumPy orders by part) are sorted by NumPy.

NumPy is called back through C functions made with ctypes (which take the GIL), registered with
LLVM under fixed names at import (``llvmlite.binding.add_symbol``): compiled code refers to them
by name, so Numba's disk cache stays valid across processes, and compiling a call costs nothing
(``numba.objmode`` blocks cost ~0.5 s each per signature).

Generated modules import this module as ``cpu_sort`` (``hashed_import``: its source hash is part
of theirs, so their cached code is dropped when it changes).
"""

from __future__ import annotations

import ctypes
import math
import sys

import numba
import numpy as np
from autostage.runtime.backends.cpu import new_arrays, numba_cache
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
def _introsort(a, n):
    """``a[:n]`` (C-contiguous, no NaNs: ``<`` orders its values totally) sorted in place, equal
    values in any order: NumPy's quicksort scheme (median-of-three pivots; ranges of fewer than
    16 values left to one insertion sort at the end; past 2 log2(n) levels, heapsort)."""
    if n < 2:
        return
    los = new_arrays.empty((np.int64(128),), np.int64)
    his = new_arrays.empty((np.int64(128),), np.int64)
    depths = new_arrays.empty((np.int64(128),), np.int64)
    limit, m = 0, n  # (2 log2(n) levels)
    while m > 1:
        m >>= 1
        limit += 2
    top = depth = lo = np.int64(0)
    hi = n - 1
    while True:
        if hi - lo >= 16 and depth > limit:
            _heapsort(a, lo, hi)
        elif hi - lo >= 16:
            mid = lo + (hi - lo) // 2
            first, pivot, last = a[lo], a[mid], a[hi]  # (their median the pivot)
            if pivot < first:
                first, pivot = pivot, first
            if last < pivot:
                pivot, last = last, pivot
                if pivot < first:
                    first, pivot = pivot, first
            a[lo] = first
            a[hi] = last
            a[mid] = a[hi - 1]
            a[hi - 1] = pivot
            i, j = lo, hi - 1  # (a[lo] <= pivot and a[hi - 1] == pivot stop both scans)
            while True:
                i += 1
                while a[i] < pivot:
                    i += 1
                j -= 1
                while pivot < a[j]:
                    j -= 1
                if i >= j:
                    break
                value = a[i]
                a[i] = a[j]
                a[j] = value
            a[hi - 1] = a[i]
            a[i] = pivot
            depth += 1
            # (the larger part waits: at most log2(n) ranges wait at once)
            depths[top] = depth
            if i - lo < hi - i:
                los[top] = i + 1
                his[top] = hi
                hi = i - 1
            else:
                los[top] = lo
                his[top] = i - 1
                lo = i + 1
            top += 1
            continue
        if top == 0:
            break
        top -= 1
        lo = los[top]
        hi = his[top]
        depth = depths[top]
    for i in range(1, n):  # (each value is fewer than 16 places from its own)
        value = a[i]
        j = i
        while j > 0 and value < a[j - 1]:
            a[j] = a[j - 1]
            j -= 1
        a[j] = value


@numba.njit(**_JIT)
def _heapsort(a, lo, hi):
    """``a[lo:hi + 1]`` sorted in place by ``<`` (introsort's fallback: n log n whatever the
    values): a max-heap built, then its root moved last; one sift-down loop serves both."""
    n = hi - lo + 1
    start, end = n // 2, n
    while end > 1:
        if start > 0:  # building the heap: sift a[start] down
            start -= 1
            root = start
        else:  # the largest value last, then sift the moved one down
            end -= 1
            value = a[lo]
            a[lo] = a[lo + end]
            a[lo + end] = value
            root = 0
        value = a[lo + root]
        child = 2 * root + 1
        while child < end:
            if child + 1 < end and a[lo + child] < a[lo + child + 1]:
                child += 1
            if not value < a[lo + child]:
                break
            a[lo + root] = a[lo + child]
            root = child
            child = 2 * root + 1
        a[lo + root] = value


@numba.njit(**_JIT)
def _nans_last(a):
    """Moves the NaNs of the C-contiguous ``a`` to its end (in any order); returns how many
    values are not NaN (all, for integers: LLVM drops the test)."""
    m = a.shape[0]
    i = 0
    while i < m:
        if a[i] != a[i]:
            m -= 1
            a[i], a[m] = a[m], a[i]
        else:
            i += 1
    return m


@numba.njit(**_JIT)
def _stable_order(keys):
    """The stable ascending order of the C-contiguous 1-d real ``keys``, NaNs last in index
    order: runs of 16 indices sorted by insertion, then merged pairwise."""
    n = keys.shape[0]
    order = new_arrays.empty((n,), np.int64)
    other = new_arrays.empty((n,), np.int64)
    for start in range(0, n, 16):
        end = start + 16 if start + 16 < n else n
        for i in range(start, end):
            value = keys[i]
            j = i
            while j > start:
                before = keys[order[j - 1]]
                if not (value < before or (before != before and value == value)):
                    break
                order[j] = order[j - 1]
                j -= 1
            order[j] = i
    width = 16
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = lo + width if lo + width < n else n
            hi = lo + 2 * width if lo + 2 * width < n else n
            i, j = lo, mid
            for k in range(lo, hi):
                take_right = i == mid  # (the left run used up: the right one is not)
                if not take_right and j < hi:
                    left, right = keys[order[i]], keys[order[j]]
                    take_right = right < left or (left != left and right == right)
                if take_right:
                    other[k] = order[j]
                    j += 1
                else:
                    other[k] = order[i]
                    i += 1
        order, other = other, order
        width *= 2
    return order


@numba.njit(**_JIT)
def sort(lane):
    """``lane`` (1-d, real) sorted into a new array, NaNs last (equal values in any order, for
    the median and quantiles)."""
    out = new_arrays.copy(lane)
    _introsort(out, _nans_last(out))
    return out


@numba.njit(**_JIT)
def numpy_sort(lane, kind):
    """``np.sort(lane, kind=KINDS[kind])`` of a 1-d lane of real values, bit for bit: sorted
    here, or by NumPy where equal values differ in their bits (``_ties_differ``), whose order
    is NumPy's sort's own. (Plain functions, not overloads choosing by dtype: ``direct``
    compiles them, where Numba's pipeline took 0.3-0.5 s more per dtype.)"""
    out = sort(lane)
    if _ties_differ(out):
        _by_numpy(lane, kind, out, False)
    return out


@numba.njit(**_JIT)
def numpy_sort_complex(lane, kind):
    """``np.sort`` of a 1-d lane of complex values, by NumPy (its order of NaNs by part)."""
    return _by_numpy(lane, kind, new_arrays.empty((lane.shape[0],), lane.dtype), False)


@numba.njit(**_JIT)
def numpy_argsort(lane, kind):
    """``np.argsort(lane, kind=KINDS[kind])`` of a 1-d lane of real values: a stable order,
    which is NumPy's where no two are equal and for a stable ``kind``; NumPy's own otherwise."""
    keys = new_arrays.contiguous(lane)
    order = _stable_order(keys)
    if kind != STABLE:
        for i in range(order.shape[0] - 1):
            a, b = keys[order[i]], keys[order[i + 1]]
            if a == b or (a != a and b != b):  # a tie: NumPy's own order
                _by_numpy(lane, kind, order, True)
                break
    return order


@numba.njit(**_JIT)
def numpy_argsort_complex(lane, kind):
    """``np.argsort`` of a 1-d lane of complex values, by NumPy."""
    return _by_numpy(lane, kind, new_arrays.empty((lane.shape[0],), np.int64), True)


@numba.njit(**_JIT)
def _by_numpy(lane, kind, out, order):
    """NumPy's sort of ``lane`` (``order``: its argsort) written into ``out``; ``out``."""
    if order:
        _ARGSORT_BACK(lane.ctypes.data, lane.shape[0], _dtype_code(lane), lane.strides[0],
                      kind, out.ctypes.data)
    else:
        _SORT_BACK(lane.ctypes.data, lane.shape[0], _dtype_code(lane), lane.strides[0], kind,
                   out.ctypes.data)
    return out


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


@numba.njit(**_JIT)
def _ties_differ(out):
    """Whether the sorted ``out`` has equal neighbours that differ in their bits (zeros of both
    signs, NaNs of both signs; never for integers and booleans)."""
    for i in range(out.shape[0] - 1):
        a, b = out[i], out[i + 1]
        if (a == b or (a != a and b != b)) and math.copysign(1.0, a) != math.copysign(1.0, b):
            return True
    return False


# (content-named, private files; new arrays are written in line: new_arrays' source in the key)
numba_cache.tie_data_files(sys.modules[__name__], writes_in_line=(new_arrays,))
