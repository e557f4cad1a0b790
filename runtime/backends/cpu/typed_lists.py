"""The typed-list operations of generated code, through functions compiled once per machine.

Numba compiles its typed-list implementations (``List.empty_list``, ``append``, item
assignment, ``len``, ``copy``, ``pop``) into each function that uses them, once per item type,
in every process that compiles a new function: a function appending to two lists and reading
an item took 1.0-1.2 s to compile, 0.47 s calling these (the realistic programs with lists
spent 0.4-0.7 s each on them). Called through these they are compiled once per item type and
loaded from Numba's disk cache after; LLVM inlines the small ones (``append``, ``length``)
when it links them.

Reading an item stays inline in generated code (``lower_lists``): LLVM did not inline a call
of it, and a loop reading items ran 20-25% slower. ``put`` and ``pop`` check their index as
Python does, with Python's messages, before Numba's own code (whose messages differ).

Generated modules import this module as ``cpu_list`` (``hashed_import``: its source hash is part
of theirs, so their cached code is dropped when it changes).
"""

from __future__ import annotations

import sys

import numba
import numpy as np
from autostage.runtime.backends.cpu import numba_cache
from numba.typed import List

# (Options of its own, not shared_helpers': Numba's cache of this module is keyed by this file.)
_JIT = dict(cache=True, error_model="numpy", nogil=True, no_cfunc_wrapper=True,
            no_cpython_wrapper=True)


@numba.njit(**_JIT)
def new(item_type):
    """An empty list of ``item_type`` (a Numba type)."""
    return List.empty_list(item_type)


@numba.njit(**_JIT)
def append(lst, item):
    lst.append(item)


@numba.njit(**_JIT)
def put(lst, index, item):
    """``lst[index] = item``."""
    if not -len(lst) <= index < len(lst):
        raise IndexError("list assignment index out of range")
    lst[index] = item


@numba.njit(**_JIT)
def pop(lst, index):
    if not -len(lst) <= index < len(lst):
        raise IndexError("pop index out of range")
    return lst.pop(index)


@numba.njit(**_JIT)
def pop_last(lst):
    if len(lst) == 0:
        raise IndexError("pop from empty list")
    return lst.pop()


@numba.njit(**_JIT)
def length(lst):
    return np.int64(len(lst))


@numba.njit(**_JIT)
def copy(lst):
    return lst.copy()


numba_cache.tie_data_files(sys.modules[__name__])  # content-named, private files
