"""CPU lowerings of the creation ops: full, full_like, arange, eye.

``arange`` is a loop that reproduces NumPy's own fill: the length is ``ceil((stop - start) /
step)`` in float64, the first two values are ``start`` and ``start + step`` converted to the
dtype, and the rest ``first + i * delta`` computed in the dtype (NumPy's ``@NAME@_fill``), so
float results agree bit for bit; ``np.arange(n)`` of integers writes the positions. ``eye``
writes its diagonal into zeros.
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cpu import lower_support as s
from autostage.runtime.backends.cpu.codegen import Emitter, lowering
from autostage.runtime.backends.cpu.lower_shapes import staged_shape


def _fill(em: Emitter, op: ir.Op, sizes: list[str], fill: str) -> None:
    out, dtype = em.name(op.results[0]), op.results[0].type.dtype
    value = s.cast(fill, dtype)
    if not sizes:
        em.line(f"{out} = {value}")
        return
    written = op.attrs.get("written_prefix", 0)  # overwritten before read (passes/)
    if not written and not op.attrs.get("reuse_buffer") and not op.attrs.get("recycle_buffer"):
        # A new array: through new_arrays, compiled once (``out[...] = v`` cost Numba ~5 ms
        # per site).
        em.line(f"{out} = {s.full(em, sizes, value)}")
        return
    s.allocate(em, op, out, sizes, dtype)
    if not written:
        em.line(f"{out}[...] = {value}")
        return
    (size,) = sizes
    if size.isdigit() and int(size) <= written:
        return
    i = em.fresh("i")
    em.line(f"for {i} in range({written}, {size}):")
    with em.block():
        em.line(f"{out}[{i}] = {value}")


@lowering("full")
def lower_full(op: ir.Op, em: Emitter) -> None:
    fill, *sizes = op.operands
    shape = staged_shape(em, op.attrs["shape"], tuple(sizes))
    _fill(em, op, shape, em.name(fill))


@lowering("full_like")
def lower_full_like(op: ir.Op, em: Emitter) -> None:
    x, fill = op.operands
    _fill(em, op, s.dims(em, x), em.name(fill))


@lowering("arange")
def lower_arange(op: ir.Op, em: Emitter) -> None:
    start, stop, step = (em.name(v) for v in op.operands)
    dtype = op.results[0].type.dtype
    if dtype == np.bool_ or dtype.kind == "c":
        raise s.unsupported(em, op, f"arange of dtype {dtype} is not lowered")
    out = em.name(op.results[0])
    n, first, delta, i = em.fresh("n"), em.fresh("first"), em.fresh("delta"), em.fresh("i")
    if dtype.kind in "iu" and op.operands[1].type.dtype.kind == "i" and [
            s.scalar_constant(v) for v in op.operands[::2]] == [0, 1]:
        # ``np.arange(n)``: the values are the positions (the float length NumPy computes is
        # n itself below 2**53; above, neither array could be allocated)
        em.line(f"{n} = np.int64(np.maximum({stop}, np.int64(0)))")
        em.line(f"{out} = {s.empty(em, [n], dtype)}")
        em.line(f"for {i} in range({n}):")
        with em.block():
            em.line(f"{out}[{i}] = {s.cast(i, dtype)}")
        return
    if s.scalar_constant(op.operands[2]) in (None, 0):
        em.line(f"if {step} == 0:")
        with em.block():
            em.line("raise ZeroDivisionError('division by zero')")
    # (ufuncs and casts of scalars: Numba's builtin max and int are overloads, compiled again
    # in each process)
    em.line(f"{n} = np.int64(np.maximum(np.int64(np.ceil((np.float64({stop}) - "
            f"np.float64({start})) / np.float64({step}))), np.int64(0)))")
    em.line(f"{out} = {s.empty(em, [n], dtype)}")
    second = em.fresh("second")
    em.line(f"{first} = {s.cast(start, dtype)}")
    em.line(f"{second} = {s.cast(f'{start} + {step}', dtype)}")
    em.line(f"{delta} = {second} - {first}")
    em.line(f"if {n} > 0:")
    with em.block():
        em.line(f"{out}[0] = {first}")
    em.line(f"if {n} > 1:")
    with em.block():
        em.line(f"{out}[1] = {second}")
    em.line(f"for {i} in range(2, {n}):")
    with em.block():
        em.line(f"{out}[{i}] = {first} + {s.cast(i, dtype)} * {delta}")


@lowering("eye")
def lower_eye(op: ir.Op, em: Emitter) -> None:
    rows, cols = staged_shape(em, op.attrs["shape"], op.operands)
    k, dtype = op.attrs["k"], op.results[0].type.dtype
    out, i = em.name(op.results[0]), em.fresh("i")
    em.line(f"{out} = {s.zeros(em, [rows, cols], dtype)}")
    em.line(f"for {i} in range({max(0, -k)}, np.int64(np.minimum({rows}, {cols} - {k}))):")
    with em.block():
        em.line(f"{out}[{i}, {i} + {k}] = {s.one(dtype)}")
