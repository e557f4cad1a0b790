"""``given_back(x, spare)``: a loop's dead operand as the spare buffer of the op that replaces it.

Generated loops that recycle buffers (``recycle_buffer``, passes/loop_buffers.py) keep each op's
spare buffer in a variable of the op's own array type (writable, C-contiguous). When the loop
started from the caller's array (``fresh_after_first``), the operand's variable has the type
Numba unifies from that array and the op's results, which is the spare's type for the usual
argument (a writable C-contiguous array), so the buffer itself is given back; for a read-only,
strided or Fortran-ordered argument it is another type, which the spare variable cannot take:
then a new buffer of the spare's shape is, and the loop allocates at each iteration as it would
without recycling. Chosen when Numba compiles, per argument types: no test at run time.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic


def _new_like(x, spare):
    return np.empty_like(spare)


@intrinsic
def given_back(typingctx, x, spare):
    """``x`` when it can be the spare, else a new array like ``spare`` (compiled code only).
    (An intrinsic, not an overload: an overload's implementation was compiled again in each
    process compiling a new program that used it, ~20 ms.)"""
    if not (isinstance(x, types.Array) and isinstance(spare, types.Array)):
        return None
    same = x == spare  # the same Numba array type: the buffer itself

    def codegen(context, builder, signature, args):
        if same:
            return impl_ret_borrowed(context, builder, spare, args[0])
        return context.compile_internal(builder, _new_like, signature, args)
    return spare(x, spare), codegen
