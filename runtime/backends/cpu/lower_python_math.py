"""CPU lowering of ``python_math`` (``runtime/ops/python_math.py``): the function of Python's
``math`` module called inside Numba on native float64 scalars (libm's functions, as CPython's;
``hypot2`` is two-argument ``math.hypot``), but gamma and lgamma, CPython's own (``python_gamma``).
Numba's ``math`` functions do not raise under ``error_model="numpy"``: the front end's
``raise_if`` ops raise Python's errors.
"""

from __future__ import annotations

from autostage.runtime import ir
from autostage.runtime.backends.cpu import python_gamma
from autostage.runtime.backends.cpu.codegen import (
    Emitter,
    LoweringError,
    hashed_import,
    is_scalar,
    lowering,
)

_GAMMA_IMPORT = hashed_import(python_gamma, "cpu_gamma")


@lowering("python_math")
def _python_math(op: ir.Op, em: Emitter) -> None:
    if not all(is_scalar(v.type) for v in (*op.operands, *op.results)):
        raise LoweringError(f"autostage: python_math of arrays at {op.loc} is not lowered")
    name = op.attrs["function"]
    # Numba has no math.fmod; NumPy's fmod of two scalars is C's (exact, as CPython's)
    function = {"hypot2": "math.hypot", "fmod": "np.fmod"}.get(name, f"math.{name}")
    if name in ("gamma", "lgamma"):
        em.module_line("cpu_gamma", _GAMMA_IMPORT)
        function = f"cpu_gamma.{name}"
    args = ", ".join(em.name(v) for v in op.operands)
    em.line(f"{em.name(op.results[0])} = {function}({args})")
