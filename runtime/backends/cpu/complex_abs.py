"""Complex ``absolute`` as NumPy's loop computes it, imported by generated code.

NumPy's complex ``absolute`` loop (its SIMD one, ``simd_cabsolute``) is not libm's hypot: with
``larger``/``smaller`` the parts' magnitudes it gives ``sqrt(fma(r, r, 1)) * larger`` for
``r = smaller / larger`` (an infinite part gives inf, else a NaN part NaN; r is 0 where
``larger`` is 0 or ``smaller`` inf), 1 ulp from hypot on ``abs(-1.5+1j)``. NumPy's scalar math
(``abs()`` of a NumPy scalar) is libm's hypot, as Python's ``abs`` of a complex is. Which form
the loop uses is asked of NumPy itself once (``numpy_loop_form``): where NumPy's loop is hypot
(no SIMD loop, or no fused multiply-add), generated code keeps hypot.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from autostage.runtime.backends.cpu.complex_products import fma


@numba.njit(cache=True, error_model="numpy", nogil=True, no_cpython_wrapper=True)
def absolute(z):
    """``np.abs(z)`` of a complex value, as NumPy's SIMD loop computes it (``simd_cabsolute``)."""
    re, im = abs(z.real), abs(z.imag)
    inf = type(re)(np.inf)
    if re == inf or im == inf:
        return inf
    if re != re or im != im:
        return type(re)(np.nan)
    larger, smaller = max(re, im), min(re, im)
    ratio = smaller / larger if larger != 0 else type(re)(0)
    return np.sqrt(fma(ratio, ratio, type(re)(1))) * larger


@functools.cache
def numpy_loop_form(dtype: np.dtype) -> bool:
    """Whether NumPy's complex ``absolute`` loop of ``dtype`` computes the SIMD form (not
    hypot): asked of values where they differ (checked against a grid by the tests)."""
    part = np.dtype(f"f{np.dtype(dtype).itemsize // 2}").type
    samples = np.array([complex(-1.5, 1), complex(0.3, 0.7), complex(1e-3, 2.5),
                        complex(7.1, -0.9), complex(1.1, 1.3)], dtype)
    with np.errstate(all="ignore"):
        looped = np.abs(samples)
        hypot = np.hypot(samples.real, samples.imag)
    return bool(np.any(looped != hypot)) and looped.dtype == part
