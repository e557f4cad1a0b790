"""CPython's own algorithms, compiled by Numba, for the ``python_arith`` op on the CPU target.

Python computes ``int / int`` from the exact integers (correctly rounded), NumPy converts each
int to float64 first (a different last bit beyond 2**53); Python's complex division and power
(``_Py_c_quot``, ``c_powi``/``_Py_c_pow`` in CPython's Objects/complexobject.c) round differently
from NumPy's and Numba's (NumPy multiplies by a reciprocal, uses libm's ``cpow`` and
special-cases small powers). The interpreter target computes ``python_arith`` with Python's own
operators; these functions do the same float operations CPython does, so compiled code gives
Python's bits. No errors are raised here: the front end stages the checks (``ZeroDivisionError``
before, ``OverflowError: complex exponentiation`` where the result is infinite, as CPython's
``_Py_ADJUST_ERANGE2``).
"""

from __future__ import annotations

import math
import sys

import numba
import numpy as np
from autostage.runtime.backends.cpu import numba_cache

_TWO_53 = 2**53
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U2_53 = np.uint64(2**53)
_U2_54 = np.uint64(2**54)


@numba.njit(cache=True)
def _magnitude(a):
    """|a| of an int64 as a uint64 (|-2**63| = 2**63 fits)."""
    return np.uint64(a) if a >= 0 else _U0 - np.uint64(a)


@numba.njit(cache=True)
def int_true_divide(a, b):
    """``a / b`` of two int64 values as Python computes it: correctly rounded (b != 0)."""
    if b == 0:
        return math.nan
    if -_TWO_53 <= a <= _TWO_53 and -_TWO_53 <= b <= _TWO_53:
        return float(a) / float(b)  # exact operands: one IEEE rounding, as Python
    negative = (a < 0) != (b < 0)
    ua = _magnitude(a)
    ub = _magnitude(b)
    q = ua // ub
    r = ua - q * ub
    exponent = 0
    while q < _U2_54:  # 55 significant bits or more: 53, a guard bit, one more
        r = r + r  # r < ub <= 2**63: fits in 64 bits
        q = q + q
        if r >= ub:
            r = r - ub
            q = q + _U1
        exponent -= 1
    shift = np.uint64(0)
    while (q >> shift) >= _U2_53:
        shift = shift + _U1
    low = q & ((_U1 << shift) - _U1)
    half = _U1 << (shift - _U1)
    mantissa = q >> shift
    if low > half or (low == half and (r != _U0 or (mantissa & _U1) == _U1)):
        mantissa = mantissa + _U1
    result = math.ldexp(float(mantissa), exponent + np.int64(shift))
    return -result if negative else result


@numba.njit(cache=True)
def _quot(ar, ai, br, bi):
    abs_breal = -br if br < 0 else br
    abs_bimag = -bi if bi < 0 else bi
    if abs_breal >= abs_bimag:
        if abs_breal == 0.0:
            return 0.0, 0.0
        ratio = bi / br
        denom = br + bi * ratio
        return (ar + ai * ratio) / denom, (ai - ar * ratio) / denom
    if abs_bimag >= abs_breal:
        ratio = br / bi
        denom = br * ratio + bi
        return (ar * ratio + ai) / denom, (ai * ratio - ar) / denom
    return math.nan, math.nan  # a part of b is nan


@numba.njit(cache=True)
def complex_true_divide(a, b):
    """CPython's ``_Py_c_quot`` (the caller raised ZeroDivisionError for a zero divisor)."""
    r, i = _quot(a.real, a.imag, b.real, b.imag)
    return complex(r, i)


@numba.njit(cache=True)
def _c_pow(ar, ai, br, bi):
    if br == 0.0 and bi == 0.0:
        return 1.0, 0.0
    if ar == 0.0 and ai == 0.0:
        return 0.0, 0.0  # to a negative or complex power: the caller raised
    vabs = math.hypot(ar, ai)
    length = math.pow(vabs, br)
    at = math.atan2(ai, ar)
    phase = at * br
    if bi != 0.0:
        length /= math.exp(at * bi)
        phase += bi * math.log(vabs)
    return length * math.cos(phase), length * math.sin(phase)


@numba.njit(cache=True)
def _c_powu(ar, ai, n):
    rr, ri = 1.0, 0.0
    pr, pi = ar, ai
    mask = 1
    while mask > 0 and n >= mask:
        if n & mask:
            rr, ri = rr * pr - ri * pi, rr * pi + ri * pr
        mask <<= 1
        pr, pi = pr * pr - pi * pi, pr * pi + pi * pr
    return rr, ri


@numba.njit(cache=True)
def complex_power(a, b):
    """CPython's ``complex ** complex`` before its error checks: a small integral exponent by
    repeated multiplication (``c_powi``), any other by ``_Py_c_pow``."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    if bi == 0.0 and br == math.floor(br) and abs(br) <= 100.0:
        n = int(br)
        if n >= 0:
            rr, ri = _c_powu(ar, ai, n)
        else:
            pr, pi = _c_powu(ar, ai, -n)
            rr, ri = _quot(1.0, 0.0, pr, pi)
    else:
        rr, ri = _c_pow(ar, ai, br, bi)
    return complex(rr, ri)


numba_cache.tie_data_files(sys.modules[__name__])  # content-named, private files
