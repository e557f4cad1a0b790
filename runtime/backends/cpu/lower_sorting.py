"""CPU lowerings of sort, argsort, take_along_axis, cumsum and cumprod.

sort/argsort sort one 1-d lane at a time with ``sorts.numpy_sort`` / ``numpy_argsort`` (compiled
once per machine): Numba compiles its sorts in 0.5-5 s, which a program's own function would pay in
each process that compiles it. Their results are NumPy's for the same ``kind``, ties included
(see ``sorts``). The scans are loops with an accumulator of the result dtype, adding in
order exactly as NumPy's accumulate does. take_along_axis is a loop nest with NumPy's broadcasting,
negative indices and IndexError.
"""

from __future__ import annotations

from autostage.runtime import ir
from autostage.runtime.backends.cpu import array_writes, sorts
from autostage.runtime.backends.cpu import lower_support as s
from autostage.runtime.backends.cpu.codegen import Emitter, hashed_import, lowering

_SORTS_IMPORT = hashed_import(sorts, "cpu_sort")



def sort_call(em: Emitter, function: str) -> str:
    """``cpu_sort.<function>`` (``sorts``: compiled once per machine), imported."""
    em.module_line("cpu_sort", _SORTS_IMPORT)
    return f"cpu_sort.{function}"


def _lanes(op: ir.Op, em: Emitter, function: str) -> None:
    """out[..., :, ...] = ``sorts.<function>`` of x[..., :, ...] for every lane along ``axis``."""
    x, result = op.operands[0], op.results[0]
    axis = op.attrs["axis"]
    out = em.name(result)
    sort = sort_call(em, function)
    kind = f"np.int64({sorts.KINDS[op.attrs['kind']]})"  # (sorts.QUICKSORT, HEAPSORT, STABLE)
    if axis is None or x.type.ndim <= 1:
        em.line(f"{out} = {sort}({s.raveled(em, x)}, {kind})")
        return
    sizes = s.dims(em, x)
    idx = s.fresh_indices(em, x.type.ndim)
    lane = [":" if a == axis else idx[a] for a in range(x.type.ndim)]
    others = [a for a in range(x.type.ndim) if a != axis]
    em.line(f"{out} = {s.empty(em, sizes, result.type.dtype)}")
    with s.loops(em, [idx[a] for a in others], [sizes[a] for a in others]):
        array_writes.assign(em, s.index_expr(out, lane), 1,
                            f"{sort}({s.index_expr(em.name(x), lane)}, {kind})", 1)


@lowering("sort")
def lower_sort(op: ir.Op, em: Emitter) -> None:
    _lanes(op, em, _for_lanes(op, "numpy_sort"))


@lowering("argsort")
def lower_argsort(op: ir.Op, em: Emitter) -> None:
    _lanes(op, em, _for_lanes(op, "numpy_argsort"))


def _for_lanes(op: ir.Op, function: str) -> str:
    """``function``, or its version for complex lanes (sorted by NumPy: ``*_complex``)."""
    return f"{function}_complex" if op.operands[0].type.dtype.kind == "c" else function



def _wrap(em: Emitter, expr: str, extent: str, axis: int = 0) -> str:
    t = em.fresh("t")
    em.line(f"{t} = {expr}")
    em.line(f"if {t} < 0:")
    with em.block():
        em.line(f"{t} += {extent}")
    em.line(f"if {t} < 0 or {t} >= {extent}:")
    with em.block():
        s.raise_out_of_bounds(em, expr, axis, extent)
    return t


@lowering("take_along_axis")
def lower_take_along_axis(op: ir.Op, em: Emitter) -> None:
    arr, ind = op.operands
    result, axis = op.results[0], op.attrs["axis"]
    out = em.name(result)
    if axis is None:
        flat, i = em.fresh("flat"), em.fresh("i")
        em.line(f"{flat} = {s.raveled(em, arr)}")
        em.line(f"{out} = {s.empty(em, s.dims(em, ind), result.type.dtype)}")
        with s.loops(em, [i], [s.dims(em, ind)[0]]):
            t = _wrap(em, f"{em.name(ind)}[{i}]", f"{flat}.shape[0]")
            em.line(f"{out}[{i}] = {flat}[{t}]")
        return
    ad, nd = s.dims(em, arr), s.dims(em, ind)
    ndim = arr.type.ndim
    extents = [nd[a] if a == axis else f"({ad[a]} if {ad[a]} != 1 else {nd[a]})"
               for a in range(ndim)]
    idx = s.fresh_indices(em, ndim)
    em.line(f"{out} = {s.empty(em, extents, result.type.dtype)}")
    with s.loops(em, idx, extents):
        ind_at = [s.broadcast_index(idx[a], ind.type.shape[a], nd[a]) if a != axis else idx[a]
                  for a in range(ndim)]
        t = _wrap(em, s.index_expr(em.name(ind), ind_at), ad[axis], axis)
        arr_at = [t if a == axis else s.broadcast_index(idx[a], arr.type.shape[a], ad[a])
                  for a in range(ndim)]
        em.line(f"{s.index_expr(out, idx)} = {s.index_expr(em.name(arr), arr_at)}")


def _scan(op: ir.Op, em: Emitter, combine: str) -> None:
    x, result = op.operands[0], op.results[0]
    dtype, axis = result.type.dtype, op.attrs["axis"]
    out, acc = em.name(result), em.fresh("acc")
    flat = axis is None or x.type.ndim <= 1
    src = s.raveled(em, x) if flat else em.name(x)
    if flat:
        source = em.fresh("flat")
        em.line(f"{source} = {src}")
        src, sizes, axis, ndim = source, [f"{source}.shape[0]"], 0, 1
    else:
        sizes, ndim = s.dims(em, x), x.type.ndim
    idx = s.fresh_indices(em, ndim)
    others = [a for a in range(ndim) if a != axis]
    em.line(f"{out} = {s.empty(em, sizes, dtype)}")
    # (a float sum starts at -0.0, which adds nothing even to -0.0: NumPy's first element is
    # the input's own, sign of a zero included)
    identity = s.one(dtype) if combine == "*" else (
        f"-{s.zero(dtype)}" if dtype.kind in "fc" else s.zero(dtype))
    with s.loops(em, [idx[a] for a in others], [sizes[a] for a in others]):
        em.line(f"{acc} = {identity}")
        with s.loops(em, [idx[axis]], [sizes[axis]]):
            value = s.index_expr(src, idx)
            if dtype.kind == "b":
                logical = "and" if combine == "*" else "or"
                em.line(f"{acc} = {acc} {logical} ({value} != 0)")
            else:
                em.line(f"{acc} {combine}= {s.cast(value, dtype)}")
            em.line(f"{s.index_expr(out, idx)} = {acc}")


@lowering("cumsum")
def lower_cumsum(op: ir.Op, em: Emitter) -> None:
    _scan(op, em, "+")


@lowering("cumprod")
def lower_cumprod(op: ir.Op, em: Emitter) -> None:
    _scan(op, em, "*")
