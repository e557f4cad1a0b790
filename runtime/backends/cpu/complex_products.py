"""Complex multiplication as NumPy's loops compute it, imported by generated code.

NumPy's complex ``multiply`` loops (its SIMD ones, where the CPU has fused multiply-adds) round
each part once: ``(fma(ar, br, -(ai * bi)), fma(ar, bi, ai * br))``. Numba's ``a * b`` rounds
each product: on random values 44% of NumPy's results differed in the last bits, and a product
whose parts overflow was ``nan+infj`` where NumPy's is ``-inf+infj``. Which form NumPy uses is
asked of NumPy itself once (``numpy_fuses``): on a CPU or a NumPy build without the fused loop,
generated code keeps Numba's ``a * b``, which is then NumPy's.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import types
from numba.extending import intrinsic


@intrinsic
def fma(typingctx, a, b, c):  # noqa: ARG001 - Numba's intrinsic signature
    """``a * b + c`` rounded once (LLVM's ``fma``), for float32 or float64 operands."""
    if not (isinstance(a, types.Float) and a == b == c):
        return None

    def codegen(context, builder, signature, args):  # noqa: ARG001
        return builder.fma(*args)

    return a(a, b, c), codegen


@numba.njit(cache=True, error_model="numpy", nogil=True, no_cpython_wrapper=True)
def multiply(a, b):
    """``a * b`` of two complex values of one dtype, NumPy's way."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    return type(a)(complex(fma(ar, br, -(ai * bi)), fma(ar, bi, ai * br)))


@functools.cache
def numpy_fuses(dtype: np.dtype) -> bool:
    """Whether NumPy's complex ``multiply`` of ``dtype`` rounds each part once: the real part
    of (1+e + 1j) * (1+e + (1+2e)j) is e**2, which only a fused multiply-add keeps (the
    product (1+e)**2 rounds it away)."""
    part = np.dtype(f"f{np.dtype(dtype).itemsize // 2}").type
    e = part(2.0 ** (-13 if part is np.float32 else -30))
    a = np.array([complex(1 + e, 1)], dtype)
    b = np.array([complex(1 + e, 1 + 2 * e)], dtype)
    with np.errstate(all="ignore"):
        return bool((a * b)[0].real != 0)
