"""What the CPU backend's per-element loops can compute: its answer to the fusion pass.

The fusion pass (generic) asks the target, op by op, whether one loop may compute an op element by
element (``Target.fuses``). The CPU target says no where Numba's scalar code cannot match NumPy:
``heaviside`` has no Numba implementation; complex transcendental functions are computed by NumPy
on whole arrays (``complex_math``, since Numba's ``cmath`` differs from NumPy's); and Numba has no
float16 arithmetic. Such ops stay whole-array ops. This module imports neither Numba nor the
lowering, so that the pass pipeline can ask it before anything is compiled.
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import ir
from autostage.runtime.types import TensorType

NOT_PER_ELEMENT = frozenset({"heaviside"})  # no Numba implementation
# Complex transcendental functions: computed by NumPy on whole arrays (``complex_math``).
NUMPY_COMPLEX = frozenset({
    "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan",
    "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
    "power", "float_power"})


def fuses(op: ir.Op) -> bool:
    """Whether a CPU per-element loop may compute ``op`` (an element-wise op or a fusible
    reduction): not an op Numba lacks, not a complex function NumPy computes, no float16."""
    if op.name in NOT_PER_ELEMENT:
        return False
    values = (*op.operands, *op.results)
    if any(isinstance(v.type, TensorType) and v.type.dtype == np.float16 for v in values):
        return False
    return not (op.name in NUMPY_COMPLEX and any(
        isinstance(v.type, TensorType) and v.type.dtype.kind == "c" for v in values))
