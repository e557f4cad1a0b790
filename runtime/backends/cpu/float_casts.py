"""Float to integer conversions in compiled code give NumPy's results on x86-64, all of them.

Numba lowers a float to integer cast (``x.astype(np.uint64)``, ``np.uint32(v)``, a float stored
into an integer array) as LLVM's ``fptosi``/``fptoui``, whose result is undefined for NaN and for
values out of the integer's range; with AVX-512, ``fptoui`` gave the largest value (-2.0 became
2**64 - 1). NumPy's casts are C casts compiled by gcc, whose results are those of x86's
truncating conversions, which give the "integer indefinite" ``-2**w-1`` for NaN and values out of
range: to int64 that conversion; to int32 the 32-bit one; to int8/int16/uint8/uint16 the low bits
of the 32-bit one; to uint32 the low 32 bits of the 64-bit one; to uint64 the 64-bit one of
``x - 2**63`` with the top bit flipped where ``x >= 2**63``, else of ``x`` (-2.0 becomes
2**64 - 2, NaN 2**63, 1e20 0). Here each such cast is that, written out with explicit range
tests (a compare pair and a select in range: the conversion stays as cheap as one instruction's).

NumPy's own contiguous float to uint32 loop is vectorised in blocks of four whose NaN and out of
range results follow uint64's rule at 32 bits (NaN 2**31 instead of 0); the tail of the array,
strided arrays and scalars give the rule above, which is the one compiled code follows. An
array cast to uint32 that holds such a value raises instead (``array_api.astype``).

Only autostage's compiles change (``exact``, entered by ``int_wrap.wrapping``, under Numba's
compiler lock); ``STAMP`` is part of their cache keys.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from llvmlite import ir
from numba.core import types
from numba.core.base import BaseContext
from numba.core.compiler_lock import global_compiler_lock

STAMP = "float-int-1"  # in cache keys: float to integer casts as x86 NumPy's
_DOUBLE = ir.DoubleType()


def _truncate(builder: ir.IRBuilder, x: ir.Value, width: int) -> ir.Value:
    """x86's truncating conversion of the double ``x`` to a ``width``-bit integer: the
    indefinite ``-2**(width-1)`` for NaN and values out of range (a NaN fails both tests)."""
    limit = float(2 ** (width - 1))
    kind = ir.IntType(width)
    inside = builder.and_(builder.fcmp_ordered(">=", x, ir.Constant(_DOUBLE, -limit)),
                          builder.fcmp_ordered("<", x, ir.Constant(_DOUBLE, limit)))
    return builder.select(inside, builder.fptosi(x, kind), ir.Constant(kind, -2 ** (width - 1)))


def lower(builder: ir.IRBuilder, value: ir.Value, fromty: types.Float,
          toty: types.Integer) -> ir.Value:
    """``value`` (of float type ``fromty``) converted to ``toty`` as NumPy converts it."""
    x = value if fromty.bitwidth == 64 else builder.fpext(value, _DOUBLE)  # exact
    width, kind = toty.bitwidth, ir.IntType(toty.bitwidth)
    if width == 64 and not toty.signed:
        top = float(2 ** 63)
        high = builder.fcmp_ordered(">=", x, ir.Constant(_DOUBLE, top))
        shifted = builder.xor(_truncate(builder, builder.fsub(x, ir.Constant(_DOUBLE, top)), 64),
                              ir.Constant(kind, -2 ** 63))
        return builder.select(high, shifted, _truncate(builder, x, 64))
    if width == 64 or (width == 32 and not toty.signed):
        result = _truncate(builder, x, 64)
    else:
        result = _truncate(builder, x, 32)
    return result if width == result.type.width else builder.trunc(result, kind)


@contextlib.contextmanager
def exact() -> Iterator[None]:
    """Compiles in the block lower float to integer casts with ``lower`` (re-entrant)."""
    with global_compiler_lock:
        original = BaseContext.cast
        if getattr(original, "exact_float_casts", False):
            yield
            return

        def cast(self: BaseContext, builder: ir.IRBuilder, val: ir.Value, fromty: types.Type,
                 toty: types.Type) -> ir.Value:
            if isinstance(fromty, types.Float) and isinstance(toty, types.Integer):
                return lower(builder, val, fromty, toty)
            return original(self, builder, val, fromty, toty)

        cast.exact_float_casts = True
        BaseContext.cast = cast
        try:
            yield
        finally:
            BaseContext.cast = original
