"""The Generator draws generated code makes natively, as compiled functions cached per machine.

Numba implements ``Generator.normal`` and the other ``lower_random.NATIVE`` methods as
overloads: each is compiled (with the distribution functions it calls) in every process that
compiles new code drawing from it, ~0.5 s for ``normal`` alone. Generated code calls these
functions instead (``cpu_draw.normal(g, loc=..., size=...)``), each the method itself, so
Numba's implementation is compiled once per machine and argument types, then loaded from the
cache with the function. The parameters and their defaults are NumPy's (the generated call
passes the arguments the program passed, by name); the values drawn are the method's own.

Generated modules import this module as ``cpu_draw`` (``hashed_import``).
"""

from __future__ import annotations

import sys

import numba
import numpy as np
from autostage.runtime.backends.cpu import numba_cache

_JIT = dict(cache=True, error_model="numpy", nogil=True, no_cfunc_wrapper=True,
            no_cpython_wrapper=True)


@numba.njit(**_JIT)
def random(g, size=None, dtype=np.float64):
    return g.random(size, dtype)


@numba.njit(**_JIT)
def standard_normal(g, size=None, dtype=np.float64):
    return g.standard_normal(size, dtype)


@numba.njit(**_JIT)
def normal(g, loc=0.0, scale=1.0, size=None):
    return g.normal(loc, scale, size)


@numba.njit(**_JIT)
def uniform(g, low=0.0, high=1.0, size=None):
    return g.uniform(low, high, size)


@numba.njit(**_JIT)
def integers(g, low, high, size=None, dtype=np.int64):
    return g.integers(low, high, size, dtype)


@numba.njit(**_JIT)
def exponential(g, scale=1.0, size=None):
    return g.exponential(scale, size)


@numba.njit(**_JIT)
def standard_exponential(g, size=None, dtype=np.float64):
    return g.standard_exponential(size, dtype)


numba_cache.tie_data_files(sys.modules[__name__])  # content-named, private files
