"""CPU lowerings of ``getitem`` and ``setitem`` (a copy, then the assignment; or the assignment
into the operand itself when passes/inplace.py marked the write ``in_place``).

Basic indices (ints, slices, newaxis, ellipsis) are Numba's own basic indexing (views), with an
IndexError check for integers NumPy would reject (Numba does not bounds-check). Advanced indices
(integer arrays, boolean masks, and ints next to them) are one loop nest, since Numba accepts
only a single 1-d advanced index: first a basic view applies the slices and newaxes, masks
become integer arrays with ``np.nonzero``, then the loops run over the result in C order (the
broadcast advanced dimensions first, or in place of the advanced indices when those are
adjacent, as NumPy orders them), wrapping negative indices and raising IndexError when out of
bounds. setitem runs the same loops writing into the copy, last write winning as in NumPy;
scatter_add runs them adding into the copy, so repeated positions accumulate (``np.add.at``).
"""

from __future__ import annotations

from dataclasses import dataclass

from autostage.runtime import ir
from autostage.runtime.backends.cpu import array_writes
from autostage.runtime.backends.cpu import lower_support as s
from autostage.runtime.backends.cpu.codegen import Emitter, lowering
from autostage.runtime.ops.indexing import ELLIPSIS, STAGED, index_shape


@dataclass
class Item:
    """One index item: kind int/slice/newaxis/ellipsis/array/mask, with its expression(s)."""

    kind: str
    expr: object = None          # int/array/mask: the expression; slice: (start, stop, step)
    value: ir.Value | None = None  # the staged operand (array/mask: for its type)


def parse_index(em: Emitter, index: tuple, staged: tuple[ir.Value, ...]) -> list[Item]:
    """The items of an ``index`` attr with the staged operands' variables in place of ``?``."""
    operands = iter(staged)
    items = []
    for entry in index:
        if entry is None:
            items.append(Item("newaxis"))
        elif entry == ELLIPSIS:
            items.append(Item("ellipsis"))
        elif isinstance(entry, tuple):
            parts = tuple("" if p is None else em.name(next(operands)) if p == STAGED
                          else str(p) for p in entry)
            items.append(Item("slice", parts))
        elif entry == STAGED:
            v = next(operands)
            kind = ("mask" if v.type.dtype.kind == "b" else "array") if v.type.ndim else "int"
            items.append(Item(kind, em.name(v), v))
        else:
            items.append(Item("int", str(entry)))
    return items


def expand(items: list[Item], ndim: int) -> list[Item]:
    """Items with the Ellipsis (or the implicit trailing one) replaced by full slices."""
    consumed = sum(i.value.type.ndim if i.kind == "mask" else i.kind not in ("newaxis",
                                                                             "ellipsis")
                   for i in items)
    full = [Item("slice", ("", "", "")) for _ in range(ndim - consumed)]
    for position, item in enumerate(items):
        if item.kind == "ellipsis":
            return items[:position] + full + items[position + 1:]
    return items + full


def _slice_text(parts: tuple) -> str:
    start, stop, step = parts
    return f"{start}:{stop}" + (f":{step}" if step else "")


def _check_int(em: Emitter, expr: str, extent: str, axis: int) -> None:
    """The bounds test of a static index (``x[-1]``): one comparison with the size it needs."""
    index = int(expr)
    em.line(f"if {extent} < {index + 1 if index >= 0 else -index}:")
    with em.block():
        s.raise_out_of_bounds(em, expr, axis, extent)


def _checked_position(em: Emitter, item: Item, x: ir.Value, extent: str, axis: int) -> str:
    """A staged int index wrapped and checked once, as an unsigned position: Numba indexes
    with an unsigned int without wrapping it again (a signed one costs a second wrap and its
    branch in every loop that writes an element: measured 8-15% of a sieve). Inline, not a call
    of a compiled check (``checks``): in a hot loop the call cost 20-30% (sieve, edit distance),
    even inlined by LLVM. No wrap where the index is never negative, and no test where it is
    also below the axis's size (``passes/int_facts``: ``x[i]`` in ``for i in range(len(x))``):
    each test cost ~40 ms of Numba's compile. An op marked ``checked`` (the row a batched
    product's loop reads, passes/batched_products.py) is in range by construction."""
    position, expr, facts = em.fresh("at"), item.expr, em.int_facts
    if em.op.attrs.get("checked"):
        em.line(f"{position} = np.uint64({expr})")
        return position
    if item.value.type.dtype.kind == "u" or facts is not None and facts.nonnegative(item.value):
        em.line(f"{position} = np.uint64({expr})")
        if item.value.type.dtype.kind != "u" and facts.within(item.value, x, axis):
            return position
    else:
        em.line(f"{position} = np.uint64({expr} if {expr} >= 0 else {expr} + {extent})")
    em.line(f"if not {position} < np.uint64({extent}):")
    with em.block():
        s.raise_out_of_bounds(em, expr, axis, extent)
    return position


def basic_index(em: Emitter, items: list[Item], x: ir.Value) -> list[str]:
    """The parts of a basic index expression (checking integer bounds NumPy would check)."""
    sizes, parts, axis = s.dims(em, x), [], 0
    for item in items:
        if item.kind == "newaxis":
            parts.append("None")
            continue
        if item.kind == "int":
            if item.value is not None:
                parts.append(_checked_position(em, item, x, sizes[axis], axis))
            else:
                if x.type.shape[axis] is None:
                    _check_int(em, item.expr, sizes[axis], axis)
                parts.append(item.expr)
        else:
            parts.append(_slice_text(item.expr))
        axis += 1
    while len(parts) > 1 and parts[-1] == ":":
        # ``x[i]``, not ``x[i, :]``: Numba types a row of a C-contiguous array C-contiguous
        # only so (else layout "A", whose loops LLVM does not vectorise)
        parts.pop()
    return parts


def _view(em: Emitter, xname: str, items: list[Item]) -> str:
    """A basic-indexed view of ``x`` applying slices/newaxes; advanced axes kept whole."""
    parts = []
    for item in items:
        if item.kind == "newaxis":
            parts.append("None")
        elif item.kind == "slice":
            parts.append(_slice_text(item.expr))
        else:
            parts += [":"] * (item.value.type.ndim if item.kind == "mask" else 1)
    if all(p == ":" for p in parts):
        return xname
    view = em.fresh("view")
    em.line(f"{view} = {xname}[{', '.join(parts)}]")
    return view


@dataclass
class Advanced:
    """The loop structure of an advanced index: result extents, and per view axis the source
    index (a result loop index, or an expression reading an index array)."""

    view: str
    extents: list[str]
    indices: list[str]
    sources: list[str]


def _advanced_arrays(em: Emitter, items: list[Item]) -> list[tuple[str, tuple, int]]:
    """Per view axis (None for a basic axis): (array expression, static shape, rank) — masks
    become their ``np.nonzero`` arrays (checked against the indexed axes later)."""
    axes = []
    for item in items:
        if item.kind == "newaxis" or item.kind == "slice":
            axes.append(None)
        elif item.kind == "int":
            axes.append((item.expr, (), 0))
        elif item.kind == "array":
            axes.append((item.expr, item.value.type.shape, item.value.type.ndim))
        else:
            nz = em.fresh("nz")
            rank = item.value.type.ndim
            nonzero = em.helper(f"nonzero_{rank}", _nonzero_source(rank)) if rank \
                else "np.nonzero"  # (a 0-d mask: Numba's)
            em.line(f"{nz} = {nonzero}({item.expr})")
            axes += [(f"{nz}[{j}]", (None,), 1) for j in range(rank)]
    return axes


def _nonzero_source(rank: int) -> str:
    """The helper giving ``np.nonzero(mask)`` of a ``rank``-d mask: per axis, the int64 indices
    of its true elements in C order. (Numba's ``np.nonzero`` compiled its allocation again in
    each process: 0.1-0.2 s per program; this is shared by every program.)"""
    indices = [f"i{a}" for a in range(rank)]
    outs = [f"out{a}" for a in range(rank)]

    def loops(body: list[str]) -> list[str]:
        lines = [f"{'    ' * (1 + a)}for i{a} in range(mask.shape[{a}]):" for a in range(rank)]
        pad = "    " * (1 + rank)
        return [*lines, f"{pad}if mask[{', '.join(indices)}]:", *(pad + "    " + b for b in body)]

    return "\n".join([
        "@numba.njit(**JIT)", "def {name}(mask):", "    n = np.int64(0)", *loops(["n += 1"]),
        *(f"    {o} = cpu_new.empty((n,), np.int64)" for o in outs), "    k = np.int64(0)",
        *loops([*(f"{o}[k] = i{a}" for a, o in enumerate(outs)), "k += 1"]),
        f"    return ({', '.join(outs)},)"])


def _check_masks(em: Emitter, items: list[Item], view: str) -> None:
    axis = 0
    for item in items:
        if item.kind == "mask":
            for j in range(item.value.type.ndim):
                em.line(f"if {item.expr}.shape[{j}] != {view}.shape[{axis + j}]:")
                with em.block():
                    em.line("raise IndexError('boolean index did not match indexed array "
                            f"along axis {axis + j}')")
            axis += item.value.type.ndim
        else:
            axis += 1


def _broadcast(em: Emitter, arrays: list[tuple[str, tuple, int]]) -> list[str]:
    """The broadcast shape of the index arrays (run-time checked, IndexError as NumPy); an
    axis only one array has is that array's (``x[order]``: no test)."""
    rank = max(n for _, _, n in arrays)
    sizes = []
    for d in range(rank):
        own = [(expr, n) for expr, _shape, n in arrays if d >= rank - n]
        if len(own) == 1:
            sizes.append(f"{own[0][0]}.shape[{d - (rank - own[0][1])}]")
            continue
        b = em.fresh("b")
        em.line(f"{b} = 1")
        for expr, _shape, n in arrays:
            if d < rank - n:
                continue
            size = f"{expr}.shape[{d - (rank - n)}]"
            em.line(f"if {size} != 1:")
            with em.block():
                em.line(f"if {b} != 1 and {b} != {size}:")
                with em.block():
                    em.line("raise IndexError('shape mismatch: indexing arrays could not be "
                            "broadcast together')")
                em.line(f"{b} = {size}")
        sizes.append(b)
    return sizes


def advanced(em: Emitter, xname: str, items: list[Item]) -> Advanced:
    """Emits the view and index-array preparation; returns the loop structure."""
    view = _view(em, xname, items)
    _check_masks(em, items, view)
    per_axis = _advanced_arrays(em, items)
    arrays = [a for a in per_axis if a is not None]
    bsizes = _broadcast(em, arrays)
    rank = len(bsizes)
    bidx = s.fresh_indices(em, rank, "j")
    positions = [p for p, i in enumerate(items) if i.kind in ("int", "array", "mask")]
    adjacent = positions == list(range(positions[0], positions[-1] + 1))
    insert_at = sum(a is None for a in per_axis[:per_axis.index(next(
        a for a in per_axis if a is not None))]) if adjacent else 0
    extents, indices, sources = [], [], []
    alone = [sum(d >= rank - n for _, _, n in arrays) == 1 for d in range(rank)]
    for axis, entry in enumerate(per_axis):
        if entry is None:
            i = em.fresh("i")
            extents.append(f"{view}.shape[{axis}]")
            indices.append(i)
            sources.append(i)
        else:
            sources.append(_index_source(entry, bidx, alone))
    extents[insert_at:insert_at] = bsizes
    indices[insert_at:insert_at] = bidx
    return Advanced(view, extents, indices, sources)


def _index_source(entry: tuple, bidx: list[str], alone: list[bool]) -> str:
    """The expression reading an index array at the broadcast loop indices (the loop index
    itself along an axis no other index array has)."""
    expr, shape, n = entry
    if n == 0:
        return expr
    own, sole = bidx[len(bidx) - n:], alone[len(alone) - n:]
    parts = [i if only else s.broadcast_index(i, d, f"{expr}.shape[{k}]")
             for k, (i, d, only) in enumerate(zip(own, shape, sole, strict=True))]
    return f"{expr}[{', '.join(parts)}]"


def _wrapped_sources(em: Emitter, adv: Advanced, kinds: list[str]) -> list[str]:
    """Inside the loops: each index array's source wrapped (negative) and bounds-checked. A
    mask's positions (``np.nonzero``) need neither: they are below the mask's size, which
    ``_check_masks`` compared with the axis's (a test per element cost ~40 ms of compile)."""
    result = []
    for axis, (src, kind) in enumerate(zip(adv.sources, kinds, strict=True)):
        if kind != "array":
            result.append(src)
            continue
        t, extent = em.fresh("t"), f"{adv.view}.shape[{axis}]"
        em.line(f"{t} = {src}")
        em.line(f"if {t} < 0:")
        with em.block():
            em.line(f"{t} += {extent}")
        em.line(f"if {t} < 0 or {t} >= {extent}:")
        with em.block():
            s.raise_out_of_bounds(em, src, axis, extent)
        result.append(t)
    return result


def _axis_kinds(items: list[Item]) -> list[str]:
    """Per view axis: "basic" (a slice or new axis), "mask" (one axis of a boolean mask) or
    "array" (an int or an index array)."""
    kinds = []
    for item in items:
        if item.kind in ("newaxis", "slice"):
            kinds.append("basic")
        elif item.kind == "mask":
            kinds += ["mask"] * item.value.type.ndim
        else:
            kinds.append("array")
    return kinds


def _prepare(op: ir.Op, em: Emitter, staged: tuple) -> tuple[list[Item], bool]:
    x = op.operands[0]
    items = expand(parse_index(em, op.attrs["index"], staged), x.type.ndim)
    return items, any(i.kind in ("array", "mask") for i in items)


@lowering("getitem")
def lower_getitem(op: ir.Op, em: Emitter) -> None:
    x, *staged = op.operands
    result = op.results[0]
    out, xname = em.name(result), em.name(x)
    items, is_advanced = _prepare(op, em, tuple(staged))
    if x.type.ndim == 0:
        em.line(f"{out} = {xname}" if result.type.ndim == 0 else
                f"{out} = {s.full(em, ['1'] * result.type.ndim, xname)}")
        return
    if not is_advanced:
        em.line(f"{out} = {xname}[{', '.join(basic_index(em, items, x))}]")
        return
    adv = advanced(em, xname, items)
    em.line(f"{out} = {s.empty(em, adv.extents, result.type.dtype)}")
    with s.loops(em, adv.indices, adv.extents):
        sources = _wrapped_sources(em, adv, _axis_kinds(items))
        em.line(f"{out}[{', '.join(adv.indices)}] = {adv.view}[{', '.join(sources)}]")


@lowering("setitem")
def lower_setitem(op: ir.Op, em: Emitter) -> None:
    x, v, *staged = op.operands
    xname, vname = em.name(x), em.name(v)
    if x.type.ndim == 0:
        out = em.name(op.results[0])
        em.line(f"{out} = {vname if v.type.ndim == 0 else s.first(vname, v.type.ndim)}")
        return
    items, is_advanced = _prepare(op, em, tuple(staged))
    if op.attrs.get("in_place"):  # x is dead (passes/inplace.py): write into its buffer
        em.bind(op.results[0], xname)
        out = xname
        if op.attrs.get("copy_value") and v.type.ndim and is_advanced:  # v reads x's buffer
            vname = em.fresh("value")  # (NumPy's overlap; array_writes.assign checks its own)
            em.line(f"{vname} = {s.copy(em, em.name(v))}")
    else:
        out = em.name(op.results[0])
        em.line(f"{out} = {s.copy(em, xname)}")
    if not is_advanced:
        index = ", ".join(basic_index(em, items, x))
        target_shape = index_shape(x.type.shape, op.attrs["index"], [v.type for v in staged])
        if v.type.ndim == 0 or not target_shape:  # a scalar written, or written into one
            em.line(f"{out}[{index}] = {vname}")
            return
        view = em.fresh("view")
        em.line(f"{view} = {out}[{index}]")
        array_writes.check_assignable(em, op, view, target_shape, v)
        array_writes.assign(em, view, len(target_shape), vname, v.type.ndim)
        return
    adv = advanced(em, out, items)
    selecting = [i for i in items if i.kind not in ("newaxis", "ellipsis")]
    one_mask = len(selecting) == 1 and selecting[0].kind == "mask" and (
        selecting[0].value.type.ndim == x.type.ndim)
    array_writes.check_indexed_assignable(em, op, adv.extents, v, one_mask)
    with s.loops(em, adv.indices, adv.extents):
        sources = _wrapped_sources(em, adv, _axis_kinds(items))
        em.line(f"{adv.view}[{', '.join(sources)}] = {_value_at(em, v, adv, vname)}")


@lowering("scatter_add")
def lower_scatter_add(op: ir.Op, em: Emitter) -> None:
    x, v, *staged = op.operands
    out, xname, vname = em.name(op.results[0]), em.name(x), em.name(v)
    if x.type.ndim == 0:  # the index selects x itself (maybe with unit axes): one element
        em.line(f"{out} = {xname} + {vname if v.type.ndim == 0 else s.first(vname, v.type.ndim)}")
        return
    items, is_advanced = _prepare(op, em, tuple(staged))
    em.line(f"{out} = {s.copy(em, xname)}")
    if not is_advanced:  # each position once
        at = f"{out}[{', '.join(basic_index(em, items, x))}]"
        em.line(f"{at} = {at} + {vname}")
        return
    adv = advanced(em, out, items)
    with s.loops(em, adv.indices, adv.extents):
        sources = _wrapped_sources(em, adv, _axis_kinds(items))
        em.line(f"{adv.view}[{', '.join(sources)}] += {_value_at(em, v, adv, vname)}")


def _value_at(em: Emitter, v: ir.Value, adv: Advanced, name: str) -> str:
    """The element of the (broadcast) value, held in variable ``name``, for the current target
    position."""
    n = v.type.ndim
    if n == 0:
        return name
    own = adv.indices[len(adv.indices) - n:] if n <= len(adv.indices) else None
    if own is None:
        raise s.unsupported(em, em.op, "a value of higher rank than the indexed target")
    vdims = s.dims(em, v)
    parts = [s.broadcast_index(i, d, e) for i, d, e in zip(own, v.type.shape, vdims,
                                                            strict=True)]
    return f"{name}[{', '.join(parts)}]"
