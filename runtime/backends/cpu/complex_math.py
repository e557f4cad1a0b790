"""Complex transcendental functions on the CPU target, computed by NumPy itself.

Numba's complex ``exp``, ``log``, ``sin``, ``power``... (its ``cmath``) are not NumPy's: on
finite values ``log`` near the unit circle was 300 ulp off, ``expm1`` 1e9 ulp, the imaginary part
of ``tanh`` had the wrong magnitude, ``arccosh(-2.5-0j)`` the wrong branch, and infinite or NaN
parts gave other special values (``sin(inf+0j)``: NumPy ``nan+0j``, Numba ``nan+nanj``). NumPy's
results come from C99's special-value rules and the platform's libm, which compiled code cannot
reach, so these ops call the ufunc through ``numba.objmode``: arrays in one call per op (NumPy's
own loop over the whole array; the fusion pass leaves these ops unfused, ``fusible.fuses``),
0-d values in one call each (about 1.5 us instead of 0.04 us). The values are exactly NumPy's.
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cpu.codegen import Emitter, is_scalar
from autostage.runtime.backends.cpu.fusible import NUMPY_COMPLEX
from autostage.runtime.ops.elementwise import UFUNCS

_IMPORT = "import autostage.runtime.backends.cpu.complex_math as cpu_cmath"


def call(name: str, dtype: str, operands: tuple) -> object:
    """Runs from compiled code (in objmode): the ufunc ``name`` on array ``operands`` of its
    complex loop ``dtype``, errors ignored (compiled code never warns), a contiguous array."""
    with np.errstate(all="ignore"):
        out = UFUNCS[name](*(np.asarray(v, dtype) for v in operands))
    return np.ascontiguousarray(out)


def call_scalar(name: str, dtype: str, operands: tuple) -> object:
    """``call`` for 0-d operands (Python complex numbers from objmode): a NumPy scalar."""
    make = np.dtype(dtype).type
    with np.errstate(all="ignore"):
        return UFUNCS[name](*(make(v) for v in operands))


def applies(op: ir.Op, loop: tuple[np.dtype, ...]) -> bool:
    """Whether ``op`` with these loop dtypes is computed by NumPy (``call``)."""
    return op.name in NUMPY_COMPLEX and loop[0].kind == "c"


def expr(em: Emitter, op: ir.Op, loop: tuple[np.dtype, ...], args: list[str]) -> str:
    """The expression computing complex ``op`` on ``args`` (cast to the loop dtypes) by NumPy."""
    out = op.results[0].type
    dtype = loop[0].name
    if is_scalar(out):
        numba_type = em.global_value(f"nbt_{dtype}", f"numba.types.{dtype}")
        key, function = f"cmath_{op.name}_{dtype}", "call_scalar"
    else:
        numba_type = em.global_value(f"nbt_{dtype}_{out.ndim}",
                                     f"numba.types.Array(numba.types.{dtype}, {out.ndim}, 'C')")
        key, function = f"cmath_{op.name}_{dtype}_{out.ndim}", "call"
    em.module_line("cpu_cmath", _IMPORT)
    params = ", ".join(f"a{i}" for i in range(len(args)))
    packed = "(" + "".join(f"a{i}, " for i in range(len(args))) + ")"
    helper = em.helper(key, f"@numba.njit(**JIT_IO)\ndef {{name}}({params}):\n"
                       f"    with numba.objmode(out={numba_type}):\n"
                       f"        out = cpu_cmath.{function}({op.name!r}, {dtype!r}, {packed})\n"
                       "    return out\n")
    return f"{helper}({', '.join(args)})"
