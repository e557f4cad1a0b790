"""CPU lowerings of the run-time checks of Python-number arithmetic (``runtime/ops/checks.py``).

``raise_if`` is a native ``if test: raise Kind(args)`` (Numba raises builtin exceptions with
literal arguments itself; any other exception goes through the ``raise`` op's Python callback);
``int_overflows`` calls the overflow tests of ``int_overflow.py`` (LLVM's overflow intrinsics) on
native scalars. Weak values, the only ones checked, are always 0-d. ``python_arith`` calls
CPython's algorithms compiled by Numba (``python_arith.py``).
"""

from __future__ import annotations

from autostage.runtime import ir
from autostage.runtime.backends.cpu import int_overflow, python_arith
from autostage.runtime.backends.cpu.codegen import (
    Emitter,
    LoweringError,
    hashed_import,
    is_scalar,
    lowering,
)
from autostage.runtime.backends.cpu.lower_io import _raise

_IMPORT = hashed_import(int_overflow, "cpu_ovf")
_ARITH_IMPORT = hashed_import(python_arith, "cpu_pyarith")


@lowering("raise_if")
def _raise_if(op: ir.Op, em: Emitter) -> None:
    em.line(f"if {em.name(op.operands[0])}:")
    with em.block():
        _raise(op, em)


@lowering("int_overflows")
def _int_overflows(op: ir.Op, em: Emitter) -> None:
    _call_scalar_helper(op, em, "cpu_ovf", _IMPORT)


@lowering("python_arith")
def _python_arith(op: ir.Op, em: Emitter) -> None:
    _call_scalar_helper(op, em, "cpu_pyarith", _ARITH_IMPORT)


def _call_scalar_helper(op: ir.Op, em: Emitter, module: str, import_line: str) -> None:
    """``result = <module>.<op's attr 'op'>(operands)``: a compiled function of native scalars
    (weak values, the only ones these ops take, are always 0-d)."""
    if not all(is_scalar(v.type) for v in (*op.operands, *op.results)):
        raise LoweringError(f"autostage: {op.name} of arrays at {op.loc} is not lowered")
    args = ", ".join(em.name(v) for v in op.operands)
    em.module_line(module, import_line)
    em.line(f"{em.name(op.results[0])} = {module}.{op.attrs['op']}({args})")
