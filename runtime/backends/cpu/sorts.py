"""Numba's sorts for generated code, compiled once per machine and shared by every helper.

Numba compiles its quicksort and mergesort (0.5-0.7 s) into each function that calls
``np.sort``/``np.argsort``, once per dtype and layout. Sort, argsort, median and quantile call
these instead, so a median after a sort of the same lanes compiles no sort again (the sort is
loaded from Numba's disk cache once per process).

argsort always uses Numba's stable mergesort: ties come out in index order, what NumPy gives for
kind='stable'/'mergesort' (see ``lower_sorting``).

Generated modules import this module as ``cpu_sort`` (``hashed_import``: its source hash is part
of theirs, so their cached code is dropped when it changes).
"""

from __future__ import annotations

import sys

import numba
import numpy as np
from autostage.runtime.backends.cpu import numba_cache

# (Options of its own, not shared_helpers': Numba's cache of this module is keyed by this file.)
_JIT = dict(cache=True, error_model="numpy", nogil=True, no_cfunc_wrapper=True,
            no_cpython_wrapper=True)


@numba.njit(**_JIT)
def sort(lane):
    """``lane`` (1-d) sorted into a new array, NaNs last."""
    return np.sort(lane)


@numba.njit(**_JIT)
def argsort(lane):
    """The indices that sort ``lane`` (1-d), stably."""
    return np.argsort(lane, kind="mergesort")


numba_cache.tie_data_files(sys.modules[__name__])  # content-named, private files
