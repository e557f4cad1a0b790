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
index order, so such a lane is sorted by NumPy itself (``numba.objmode``: the GIL, ~2 us). For
values, ties are visible only where equal values differ in their bits (zeros of both signs,
NaNs); so is the sign of a zero quantile of zeros of both signs, which then comes from NumPy
too.

Generated modules import this module as ``cpu_sort`` (``hashed_import``: its source hash is part
of theirs, so their cached code is dropped when it changes).
"""

from __future__ import annotations

import sys

import numba
import numpy as np
from autostage.runtime.backends.cpu import numba_cache
from numba import types
from numba.extending import overload

# (Options of its own, not shared_helpers': Numba's cache of this module is keyed by this file.)
_JIT = dict(cache=True, error_model="numpy", nogil=True, no_cfunc_wrapper=True,
            no_cpython_wrapper=True)


_STABLE = ("stable", "mergesort")
# (nogil only lets a Python caller's thread run without the GIL; these are called from compiled
# code, and Numba warns of an objmode block in a nogil function.)
_JIT_OBJMODE = dict(_JIT, nogil=False)


@numba.njit(**_JIT)
def sort(lane):
    """``lane`` (1-d) sorted into a new array, NaNs last (Numba's quicksort: equal values in
    any order, for the median and quantiles)."""
    return np.sort(lane)


@numba.njit(**_JIT)
def argsort(lane):
    """The indices that sort ``lane`` (1-d), stably."""
    return np.argsort(lane, kind="mergesort")


@numba.njit(**_JIT_OBJMODE)
def numpy_sort(lane, kind):
    """``np.sort(lane, kind=kind)`` of a 1-d ``lane``, bit for bit."""
    out = np.sort(lane)
    if _ties_differ(out):
        if kind in _STABLE:
            out = lane[np.argsort(lane, kind="mergesort")]
        else:
            with numba.objmode():
                out[:] = np.sort(lane, kind=kind)
    return out


@numba.njit(**_JIT_OBJMODE)
def numpy_argsort(lane, kind):
    """``np.argsort(lane, kind=kind)`` of a 1-d ``lane``."""
    order = np.argsort(lane, kind="mergesort")
    if kind not in _STABLE:
        for i in range(order.shape[0] - 1):
            a, b = lane[order[i]], lane[order[i + 1]]
            if a == b or (a != a and b != b):  # a tie: NumPy's own order
                with numba.objmode():
                    order[:] = np.argsort(lane, kind=kind)
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


@numba.njit(**_JIT_OBJMODE)
def numpy_quantile(lane, q, i, nan):
    """NumPy's ``q[i]`` quantile of the 1-d ``lane`` (in its original order) as float64."""
    out = np.empty(1)
    with numba.objmode():
        out[0] = (np.nanquantile(lane, q[i]) if nan else np.quantile(lane, q[i])).item()
    return out[0]


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
