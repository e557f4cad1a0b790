"""CPU lowering of ``repeat`` (an array of counts): two loops, one summing the counts (with
NumPy's errors for a count array of another length and for a negative count), one copying each
slice of ``x`` along the axis as many times as its count."""

from __future__ import annotations

from autostage.runtime import ir
from autostage.runtime.backends.cpu import lower_support as s
from autostage.runtime.backends.cpu import run_errors
from autostage.runtime.backends.cpu.codegen import Emitter, lowering


@lowering("repeat")
def lower_repeat(op: ir.Op, em: Emitter) -> None:
    x, counts = op.operands
    axis, result = op.attrs["axis"], op.results[0]
    out, xname, cname = em.name(result), em.name(x), em.name(counts)
    sizes = s.dims(em, x)
    n, k = sizes[axis], s.dims(em, counts)[0]
    total, i, j, r, c = (em.fresh(h) for h in ("total", "i", "j", "r", "c"))
    run_errors.check(em, op, f"({k} != 1) & ({k} != {n})", ValueError,
                     "operands could not be broadcast together with shape ({0},) ({1},)",
                     [n, k])
    em.line(f"{total} = 0")
    em.line(f"for {i} in range({n}):")
    with em.block():
        em.line(f"{c} = {cname}[0 if {k} == 1 else {i}]")
        run_errors.check(em, op, f"{c} < 0", ValueError,
                         "repeats may not contain negative values.", [])
        em.line(f"{total} += {c}")
    out_sizes = [total if a == axis else d for a, d in enumerate(sizes)]
    em.line(f"{out} = {s.empty(em, out_sizes, result.type.dtype)}")
    em.line(f"{j} = 0")
    src = [i if a == axis else ":" for a in range(x.type.ndim)]
    dst = [j if a == axis else ":" for a in range(x.type.ndim)]
    em.line(f"for {i} in range({n}):")
    with em.block():
        em.line(f"for {r} in range({cname}[0 if {k} == 1 else {i}]):")
        with em.block():
            em.line(f"{s.index_expr(out, dst)} = {s.index_expr(xname, src)}")
            em.line(f"{j} += 1")
