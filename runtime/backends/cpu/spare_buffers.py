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
from numba.extending import overload


def given_back(x: np.ndarray, spare: np.ndarray) -> np.ndarray:
    """What compiled code gets (Python never calls it): ``x`` when it can be the spare."""
    return x


@overload(given_back)
def _given_back(x, spare):
    if x == spare:  # the same Numba array type: the buffer itself
        return lambda x, spare: x
    return lambda x, spare: np.empty_like(spare)
