"""Vectorisable ``exp``, ``log`` and ``tanh`` of float64 and float32 for compiled code.

Numba computes ``np.exp`` and friends by calling libm once per element, and the PyPI llvmlite has
no vector math library (SVML), so LLVM cannot vectorise a loop that calls them (a 128x256 tanh
was 13x slower than NumPy's). These kernels are straight-line arithmetic with selects instead of
branches and bit casts as LLVM instructions (``@intrinsic``), compiled once (and cached) as
ordinary functions: LLVM inlines them into the caller when it links it, so its loop vectoriser
turns a loop calling them into SIMD code. (Inlined at Numba's IR level instead, each call site
cost Numba's typing of the whole kernel again: 0.7-1.1 s of a large program's compile.)
Generated modules import this module (``cpu_vmath``) for every real ``exp``/``log``/``tanh``
(``lower_core``); ``AUTOSTAGE_EXACT_MATH=1`` keeps libm. The float32 kernels compute in float32
(twice the lanes; through the float64 kernels a float32 tanh was 3x slower). Accuracy, tested in
``tests/unit/runtime/test_cpu_vector_math.py`` over the whole range with NumPy's special values
(subnormals, signed zeros, inf, nan, overflow to inf, underflow to 0): within 3 ulp of NumPy's
result, 4 for float32 log, where NumPy's own is 3.8 ulp from the exact value (the contract,
DESIGN.md: 4).

- exp: ``x = k*ln2 + r`` (Cody-Waite: ``ln2`` in two parts, the high one exact times any ``k``;
  ``k`` rounded by adding ``1.5 * 2**52``), ``e**r = 1 + r + r**2 * Q(r)``, and ``2**k`` as two
  factors built from exponent bits, so that subnormal results round once and overflow gives inf
  (``x`` clamped to ``[-746, 710]`` first; nan stays nan).
- log: ``x = 2**k * m``, ``m`` in ``[sqrt(1/2), sqrt(2))`` (subnormals scaled by ``2**54``
  first), ``log(m) = 2*s + s*z*P(z)`` with ``s = (m-1)/(m+1)``, ``z = s**2``, summed as fdlibm
  does; 0, negatives, inf and nan selected at the end.
- tanh: ``(1 - e) / (1 + e)`` with ``e = exp(-2|x|)`` kept as ``2**k * (1 + p)``, ``p = e**r - 1``
  from exp's polynomial: numerator ``(1 - 2**k) - 2**k * p`` and denominator
  ``(1 + 2**k) + 2**k * p`` lose nothing to cancellation near 0 (for ``k = 0`` the numerator is
  ``-p`` itself), so one formula serves the whole range; ``|x|`` is clamped to 20 (where tanh
  rounds to 1), which keeps ``2**k`` one normal factor; the sign is copied from ``x``. Twice as
  fast as a polynomial for small ``|x|`` next to the exp formula, both computed and one selected.

The coefficients come from ``tools/vector_math_coefficients.py`` (mpmath's Chebyshev fits, near
minimax; ``--check`` compares them with this file).
"""

from __future__ import annotations

import math
import sys

import numba
import numpy as np
from autostage.runtime.backends.cpu import numba_cache
from autostage.runtime.backends.cpu.direct_types import in_line
from llvmlite import ir as llvm_ir
from numba import types
from numba.extending import intrinsic

# (no CPython or cfunc wrapper: compiled code calls these; ~15 ms less to compile each)
_JIT = dict(cache=True, error_model="numpy", nogil=True, no_cfunc_wrapper=True,
            no_cpython_wrapper=True)


# -- LLVM instructions Numba does not spell ---------------------------------------------------

_BITS = {types.float64: types.int64, types.float32: types.int32}
_LLVM = {types.float64: llvm_ir.DoubleType(), types.float32: llvm_ir.FloatType()}


@intrinsic
def _as_int(typingctx, x):
    """The bits of a float64 (float32) as an int64 (int32): ``bitcast``."""
    if x not in _BITS:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], llvm_ir.IntType(x.bitwidth))

    return _BITS[x](x), codegen


@intrinsic
def _as_float(typingctx, i):
    """The float64 with the bits of an int64: ``bitcast``."""
    if i != types.int64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], llvm_ir.DoubleType())

    return types.float64(types.int64), codegen


@intrinsic
def _as_float32(typingctx, i):
    """The float32 with the low 32 bits of an integer (Numba widens int32 arithmetic to
    int64): ``trunc`` and ``bitcast``."""
    if i not in (types.int64, types.int32):
        return None

    def codegen(context, builder, signature, args):
        low = builder.trunc(args[0], llvm_ir.IntType(32)) if i.bitwidth == 64 else args[0]
        return builder.bitcast(low, llvm_ir.FloatType())

    return types.float32(i), codegen


@intrinsic
def _select(typingctx, condition, a, b):
    """``a if condition else b`` as one ``select`` instruction (both already computed)."""
    kind = types.unliteral(a)
    if condition != types.boolean or kind != types.unliteral(b) or kind not in (
            types.float64, types.float32, types.int64):
        return None

    def codegen(context, builder, signature, args):
        return builder.select(*args)

    return kind(types.boolean, kind, kind), codegen


@intrinsic
def _mul_add(typingctx, a, b, c):
    """``a * b + c``: one fused multiply-add where the CPU has a fast one, else two operations
    (``llvm.fmuladd``; either way within the kernels' error bounds)."""
    if not (a == b == c and a in _LLVM):
        return None

    def codegen(context, builder, signature, args):
        return builder.call(_fmuladd(builder, _LLVM[a]), args)

    return a(a, a, a), codegen


def _fmuladd(builder, kind):
    """LLVM's ``llvm.fmuladd`` of ``kind``, declared in the builder's module."""
    name = f"llvm.fmuladd.{kind.intrinsic_name}"
    return builder.module.globals.get(name) or llvm_ir.Function(
        builder.module, llvm_ir.FunctionType(kind, [kind] * 3), name)


def _f32(*values: float) -> tuple[np.float32, ...]:
    return tuple(np.float32(v) for v in values)


# -- coefficients (tools/vector_math_coefficients.py) -----------------------------------------

# float64: e**r = 1 + r + r**2 * Q(r), |r| <= ln(2)/2
# chebyfit error 1.4e-18
EXP_Q = (
    0.5,
    0.1666666666666667,
    0.04166666666666667,
    0.008333333333326141,
    0.0013888888888883752,
    0.00019841269874800493,
    2.4801587325533363e-05,
    2.7557255425746198e-06,
    2.755727366134847e-07,
    2.510520637405601e-08,
    2.0914679376654634e-09,
)
# float64: log((1 + s) / (1 - s)) = 2*s + s * z * P(z), z = s**2 <= 0.0295
# chebyfit error 3.1e-16
LOG_P = (
    0.666666666666667,
    0.39999999999899505,
    0.28571428625975487,
    0.22222211134795036,
    0.18182889125264798,
    0.15331721600453765,
    0.14616449686307575,
)
# float32: the same, of lower degrees
# chebyfit error 1.4e-09
EXP32_Q = _f32(
    0.5,
    0.16666667,
    0.041666467,
    0.0083333105,
    0.0013933642,
    0.00019890981,
)
# chebyfit error 1.2e-09
LOG32_P = _f32(
    0.6666667,
    0.40000123,
    0.28550822,
    0.23330468,
)

# -- constants --------------------------------------------------------------------------------

INV_LN2 = 1.4426950408889634
LN2_HI = 6.93147180369123816490e-01  # 0x3fe62e42fee00000: k * LN2_HI is exact for |k| < 2**21
LN2_LO = 1.90821492927058770002e-10  # ln(2) - LN2_HI
SHIFTER = 6755399441055744.0  # 1.5 * 2**52: adding it rounds to an integer held in the low bits
SHIFTER_BITS = 0x4338000000000000
EXP_HI = 710.0   # exp(710) overflows (the threshold is 709.78...)
EXP_LO = -746.0  # exp(-746) rounds to 0 (the smallest subnormal is exp(-744.44...))
MIN_NORMAL = 2.2250738585072014e-308
TWO54 = 18014398509481984.0
SQRT_HALF_BITS = 0x3fe6a09e667f3bcd  # sqrt(1/2)
MANTISSA = 0x000fffffffffffff
TANH_ONE = 20.0  # tanh(x) rounds to 1 from x = 19.06 on
INF = math.inf
NAN = math.nan


# -- float64 kernels --------------------------------------------------------------------------

@intrinsic
def _horner(typingctx, c, x):
    """``c[0] + c[1]*x + c[2]*x**2 + ...`` of a tuple of constants: the chain of ``_mul_add``
    written in line (a function of its own, looping over the tuple, cost 35-50 ms of compile
    per tuple length in the program meeting a kernel first)."""
    if not (isinstance(c, types.UniTuple) and c.dtype == x and x in _LLVM and c.count > 1):
        return None

    def codegen(context, builder, signature, args):
        coefficients, value = args
        fn = _fmuladd(builder, _LLVM[x])
        acc = builder.extract_value(coefficients, c.count - 1)
        for i in range(c.count - 2, -1, -1):
            acc = builder.call(fn, [acc, value, builder.extract_value(coefficients, i)])
        return acc

    return x(c, x), codegen


@in_line
@numba.njit(**_JIT)
def _exp_parts(x):
    """``k`` and ``p`` with ``e**x = 2**k * (1 + p)`` for ``x`` in [EXP_LO, EXP_HI]."""
    kd = x * INV_LN2 + SHIFTER
    k = _as_int(kd) - SHIFTER_BITS
    kd = kd - SHIFTER
    r = (x - kd * LN2_HI) - kd * LN2_LO
    return k, r + r * r * _horner(EXP_Q, r)


@in_line
@numba.njit(**_JIT)
def exp(x):
    """e**x of a float64 (float32 and integers are converted), within 1 ulp."""
    x = np.float64(x)
    x = _select(x > EXP_HI, EXP_HI, x)
    k, p = _exp_parts(_select(x < EXP_LO, EXP_LO, x))
    # 2**k as 2**k1 * 2**k2, both normal for k in [-1076, 1024]: (1 + p) * 2**k1 is exact, and
    # the second product rounds once (into a subnormal, or to inf).
    k1 = k >> 1
    return (1.0 + p) * _as_float((k1 + 1023) << 52) * _as_float((k - k1 + 1023) << 52)


@in_line
@numba.njit(**_JIT)
def log(x):
    """The natural logarithm of a float64 (float32 and integers are converted), within 1 ulp."""
    x = np.float64(x)
    subnormal = x < MIN_NORMAL
    bits = _as_int(_select(subnormal, x * TWO54, x)) - SQRT_HALF_BITS
    k = (bits >> 52) - _select(subnormal, np.int64(54), np.int64(0))
    f = _as_float((bits & MANTISSA) + SQRT_HALF_BITS) - 1.0  # m - 1, m in [sqrt(1/2), sqrt(2))
    s = f / (2.0 + f)
    z = s * s
    p = _horner(LOG_P, z)
    hfsq = 0.5 * f * f
    dk = _as_float(k + SHIFTER_BITS) - SHIFTER  # float(k), exact: |k| < 2**51
    # log(m) = f - hfsq + s * (hfsq + z*P(z)), with the small terms added first (fdlibm)
    y = s * (hfsq + z * p) + dk * LN2_LO - hfsq + f + dk * LN2_HI
    y = _select(x == INF, x, y)
    y = _select(x == 0.0, -INF, y)
    y = _select(x < 0.0, NAN, y)
    return _select(x != x, x, y)


@in_line
@numba.njit(**_JIT)
def tanh(x):
    """The hyperbolic tangent of a float64 (float32 and integers are converted), within 3 ulp."""
    x = np.float64(x)
    a = abs(x)
    k, p = _exp_parts(-2.0 * _select(a > TANH_ONE, TANH_ONE, a))  # e**-2a, normal
    scale = _as_float((k + 1023) << 52)  # 2**k
    return math.copysign(_mul_add(-scale, p, 1.0 - scale) / _mul_add(scale, p, 1.0 + scale), x)


# -- float32 kernels, computing in float32 ----------------------------------------------------
# The float64 algorithms with float32 constants and shorter polynomials: twice the lanes of the
# float64 kernels (a float32 tanh through the float64 kernel was 3x slower). Every constant is a
# float32, so that Numba does not promote the arithmetic to float64.

F_ZERO, F_ONE, F_TWO, F_HALF = _f32(0.0, 1.0, 2.0, 0.5)
F_INV_LN2 = np.float32(1.442695)
F_LN2_HI = np.float32(0.693145751953125)  # 0x3f317200: k * F_LN2_HI is exact for |k| < 2**9
F_LN2_LO = np.float32(1.4286068e-06)  # ln(2) - F_LN2_HI
F_SHIFTER = np.float32(12582912.0)  # 1.5 * 2**23
F_SHIFTER_BITS = 0x4b400000
F_EXP_HI = np.float32(89.0)    # expf(89) overflows (the threshold is 88.72...)
F_EXP_LO = np.float32(-104.0)  # expf(-104) rounds to 0 (the smallest subnormal: expf(-103.28))
F_MIN_NORMAL = np.float32(1.1754944e-38)
F_TWO25 = np.float32(33554432.0)
F_SQRT_HALF_BITS = 0x3f3504f3  # sqrt(1/2)
F_MANTISSA = 0x007fffff
F_TANH_ONE = np.float32(9.5)  # tanhf(x) rounds to 1 from x = 9.01 on
F_INF, F_NAN = _f32(math.inf, math.nan)


@in_line
@numba.njit(**_JIT)
def _exp_parts_f32(x):
    """``_exp_parts`` in float32."""
    kd = x * F_INV_LN2 + F_SHIFTER
    k = _as_int(kd) - F_SHIFTER_BITS
    kd = kd - F_SHIFTER
    r = (x - kd * F_LN2_HI) - kd * F_LN2_LO
    return k, r + r * r * _horner(EXP32_Q, r)


@in_line
@numba.njit(**_JIT)
def exp_f32(x):
    """e**x of a float32, computed in float32."""
    x = _select(x > F_EXP_HI, F_EXP_HI, x)
    k, p = _exp_parts_f32(_select(x < F_EXP_LO, F_EXP_LO, x))
    k1 = k >> 1  # k in [-150, 128]: 2**k1 and 2**(k - k1) are normal
    return (F_ONE + p) * _as_float32((k1 + 127) << 23) * _as_float32((k - k1 + 127) << 23)


@in_line
@numba.njit(**_JIT)
def log_f32(x):
    """The natural logarithm of a float32, computed in float32."""
    subnormal = x < F_MIN_NORMAL
    bits = np.int64(_as_int(_select(subnormal, x * F_TWO25, x))) - F_SQRT_HALF_BITS
    k = (bits >> 23) - _select(subnormal, np.int64(25), np.int64(0))
    f = _as_float32((bits & F_MANTISSA) + F_SQRT_HALF_BITS) - F_ONE
    s = f / (F_TWO + f)
    z = s * s
    p = _horner(LOG32_P, z)
    hfsq = F_HALF * f * f
    dk = _as_float32(k + F_SHIFTER_BITS) - F_SHIFTER  # float32(k), exact: |k| < 2**22
    y = s * (hfsq + z * p) + dk * F_LN2_LO - hfsq + f + dk * F_LN2_HI
    y = _select(x == F_INF, x, y)
    y = _select(x == F_ZERO, -F_INF, y)
    y = _select(x < F_ZERO, F_NAN, y)
    return _select(x != x, x, y)


@in_line
@numba.njit(**_JIT)
def tanh_f32(x):
    """The hyperbolic tangent of a float32, computed in float32 (``tanh``'s formula)."""
    a = abs(x)
    k, p = _exp_parts_f32(-F_TWO * _select(a > F_TANH_ONE, F_TANH_ONE, a))
    scale = _as_float32((k + 127) << 23)  # 2**k
    return math.copysign(
        _mul_add(-scale, p, F_ONE - scale) / _mul_add(scale, p, F_ONE + scale), x)


numba_cache.tie_data_files(sys.modules[__name__])  # content-named, private files
