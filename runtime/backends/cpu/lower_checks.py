"""CPU lowerings of the run-time checks of Python-number arithmetic (``runtime/ops/checks.py``).

``raise_if`` is a native ``if test: raise Kind(args)`` (Numba raises builtin exceptions with
literal arguments itself; any other exception goes through the ``raise`` op's Python callback);
``int_overflows`` calls the overflow tests of ``int_overflow.py`` (LLVM's overflow intrinsics) on
native scalars. Weak values, the only ones checked, are always 0-d. ``python_arith`` calls
CPython's algorithms compiled by Numba (``python_arith.py``).
"""

from __future__ import annotations

from autostage.runtime import ir
from autostage.runtime.backends.cpu.codegen import Emitter, LoweringError, is_scalar, lowering
from autostage.runtime.backends.cpu.lower_io import _raise

_IMPORT = "import autostage.runtime.backends.cpu.int_overflow as cpu_ovf"
_ARITH_IMPORT = "import autostage.runtime.backends.cpu.python_arith as cpu_pyarith"


@lowering("raise_if")
def _raise_if(op: ir.Op, em: Emitter) -> None:
    em.line(f"if {em.name(op.operands[0])}:")
    with em.block():
        _raise(op, em)


@lowering("int_overflows")
def _int_overflows(op: ir.Op, em: Emitter) -> None:
    if not all(is_scalar(v.type) for v in (*op.operands, *op.results)):
        raise LoweringError(f"autostage: int_overflows of arrays at {op.loc} is not lowered")
    args = ", ".join(em.name(v) for v in op.operands)
    em.module_line("cpu_ovf", _IMPORT)
    em.line(f"{em.name(op.results[0])} = cpu_ovf.{op.attrs['op']}({args})")


@lowering("python_arith")
def _python_arith(op: ir.Op, em: Emitter) -> None:
    if not all(is_scalar(v.type) for v in (*op.operands, *op.results)):
        raise LoweringError(f"autostage: python_arith of arrays at {op.loc} is not lowered")
    args = ", ".join(em.name(v) for v in op.operands)
    em.module_line("cpu_pyarith", _ARITH_IMPORT)
    em.line(f"{em.name(op.results[0])} = cpu_pyarith.{op.attrs['op']}({args})")
