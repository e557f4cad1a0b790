"""CPU lowering of ``fused``: one loop nest over the output elements, no temporaries.

The loop shape is NumPy's broadcast of the array operands, computed inline in time linear in
the operands (``run_errors.broadcast_extents``, which also raises NumPy's ``ValueError`` for
incompatible shapes; ``np.broadcast_shapes`` in Numba costs ~60 ns a call); each operand is read
at the loop index times its step per axis (0 where it is broadcast: ``_steps``), or, with more
such steps along the innermost axis than a loop vectorises with, at the index from its broadcast
copy (``_expanded``); 0-d operands are native scalars.
The body runs per element as 0-d ("shadow") copies of its ops lowered by their ordinary CPU rules
(``lower_core``), so each op has exactly the dtype rules of its unfused scalar form. A final
``sum`` accumulates in its result dtype: integers in order, floats pairwise as NumPy adds the
C-contiguous array the element-wise values would form (``lower_reductions.PairwiseSum``: NumPy's
bits, over the whole array or each row; fewer than 8 values known to the trace add in order, as
NumPy adds them, without the buffers), complex values with their real and imaginary parts
each pairwise (within a few ulps of NumPy's); ``max``/``min`` propagate NaN and raise NumPy's
error on an empty reduction; a float ``mean`` is that sum divided by the count in float64, as
``np.mean`` computes it. Requires ``runtime/ops/fused`` (the op) and ``lower_core`` (scalar
rules).
"""

from __future__ import annotations

import math

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cpu import (
    lower_core,  # noqa: F401 - the scalar rules used here
    lower_lists,
    run_errors,
)
from autostage.runtime.backends.cpu import lower_support as s
from autostage.runtime.backends.cpu.codegen import Emitter, lowering, np_dtype
from autostage.runtime.backends.cpu.lower_reductions import PairwiseSum, replaces
from autostage.runtime.ops import fused as fused_op
from autostage.runtime.types import TensorType, scalar


@lowering("fused")
def _fused(op: ir.Op, em: Emitter) -> None:
    (body,) = op.regions
    reduction = body.ops[-1] if fused_op.is_fusible_reduction(body.ops[-1]) else None
    element_ops = body.ops[:-1] if reduction else body.ops
    looped = reduction.operands[0] if reduction else body.results[0]
    rank = looped.type.ndim
    known = _proven_extents(op, em, rank)
    extents = known or _loop_shape(op, em, rank)
    indices = s.fresh_indices(em, rank)
    out = em.name(op.results[0])
    if reduction is None:
        if not lower_lists.place_row(em, op.results[0], out, extents, looped.type.dtype):
            s.allocate(em, op, out, extents, looped.type.dtype)

        def nest(steps: dict[tuple[str, int], str]) -> None:
            with s.loops(em, indices, extents):
                value = _element(op, em, element_ops, looped, indices, steps)
                em.line(f"{s.index_expr(out, indices)} = {value}")
    else:
        nest = _reduce(op, em, reduction, element_ops, indices, extents)
    axes = [] if known else _stepped_axes(op, em, extents)
    if sum(k == v.type.ndim - 1 for v, k in axes) <= INNER_STEPS:
        nest(_steps(em, axes))
        return
    # More steps along the innermost axis than LLVM versions a loop on: each operand that may
    # be broadcast is read from its broadcast copy (itself unless it is broadcast), so that one
    # loop reads every operand at the loop index and vectorises. (A second copy of the loop for
    # the broadcast case took Numba 15% of an RNN step's compile.)
    names = {v: em.name(v) for v, _ in axes}
    for v in names:
        em.bind(v, _expanded(em, v, extents))
    nest({})
    for v, name in names.items():
        em.bind(v, name)


# The most steps along the innermost axis with which one loop still vectorises: LLVM versions it
# on the steps being 1 (a 128x256 tanh of three operands: 16 us direct, 17 us with two steps,
# 28 us with three, not vectorised).
INNER_STEPS = 2


def elementwise_loop(op: ir.Op, em: Emitter) -> None:
    """Lowers one element-wise op on arrays as the loop of a one-op ``fused`` (its scalar rule
    per element): for ops whose Numba array implementation differs from NumPy (integer ``//``
    traps on MIN // -1, integer ``**`` goes through floats), see ``lower_core.LOOPED``."""
    body = ir.Region([v.type for v in op.operands])
    inner = ir.Op(op.name, body.args, [v.type for v in op.results], op.attrs, loc=op.loc)
    body.ops.append(inner)
    body.results = inner.results
    types = tuple(v.type for v in op.results)
    fused = ir.Op("fused", op.operands, types, {"result_types": types}, (body,), loc=op.loc)
    em.bind(fused.results[0], em.name(op.results[0]))
    _fused(fused, em)


def _stepped_axes(op: ir.Op, em: Emitter, extents: list[str]) -> list[tuple[ir.Value, int]]:
    """The operand axes of unknown size that may be broadcast (size 1 where the loop's extent is
    not): none for an axis whose size is the loop's extent itself; none at all when the loop
    shape is the one array operand's."""
    arrays = [v for v in op.operands if v.type.ndim > 0]
    if len(arrays) == 1 and arrays[0].type.ndim == len(extents):
        return []
    axes: dict[tuple[str, int], tuple[ir.Value, int]] = {}
    for v in arrays:
        name, offset = em.name(v), len(extents) - v.type.ndim
        for k, d in enumerate(v.type.shape):
            if d is None and extents[offset + k] != f"{name}.shape[{k}]":
                axes.setdefault((name, k), (v, k))
    return list(axes.values())


def _steps(em: Emitter, axes: list[tuple[ir.Value, int]]) -> dict[tuple[str, int], str]:
    """For each of ``axes``, the name of its step: 1 when the operand has the loop's extent, 0
    when it is broadcast (size 1); the operand is read at ``index * step``. One loop serves both
    cases: LLVM versions it on the steps being 1, so the common case still vectorises, up to
    ``INNER_STEPS`` steps along the innermost axis (a broadcast read through ``min(index, size -
    1)`` ran 4x slower)."""
    steps: dict[tuple[str, int], str] = {}
    for v, k in axes:
        name = em.name(v)
        steps[name, k] = step = em.fresh("step")
        em.line(f"{step} = np.int64({name}.shape[{k}] != 1)")
    return steps


def _expanded(em: Emitter, v: ir.Value, extents: list[str]) -> str:
    """A variable holding ``v`` broadcast to the loop's trailing extents: ``v`` itself when it
    has them, else a copy (``h_expand_<rank>``, shared by every program)."""
    rank = v.type.ndim
    own = [f"np.int64({e})" if e.isdigit() else e for e in extents[len(extents) - rank:]]
    helper = em.helper(f"expand_{rank}", _expand_source(rank))
    copy = em.fresh("b")
    em.line(f"{copy} = {helper}({em.name(v)}, {', '.join(own)})")
    return copy


def _expand_source(rank: int) -> str:
    """The helper broadcasting ``src`` to extents ``e0..``: ``src`` when it has them; else a new
    array (``new_arrays.broadcast_copy``: rows copied or filled whole)."""
    extents = ", ".join(f"e{a}" for a in range(rank))
    same = " and ".join(f"src.shape[{a}] == e{a}" for a in range(rank))
    return "\n".join([
        "@numba.njit(**JIT)", f"def {{name}}(src, {extents}):", f"    if {same}:",
        "        return src", f"    return cpu_new.broadcast_copy(src, ({extents},))"])


def _proven_extents(op: ir.Op, em: Emitter, rank: int) -> list[str] | None:
    """The loop extents read from the operands when passes/shape_facts proves that each
    operand axis of unknown size equals the loop's (no broadcast test, no clamping loop)."""
    facts = em.shape_facts
    arrays = [v for v in op.operands if v.type.ndim > 0]
    if facts is None or not arrays:
        return None
    loop = facts.broadcast(arrays, rank)
    if None in loop:
        return None
    extents = []
    for axis, symbol in enumerate(loop):
        if isinstance(symbol, int):
            extents.append(str(symbol))
            continue
        for v in arrays:
            k = axis - rank + v.type.ndim
            if k >= 0 and facts.dims(v)[k] == symbol:
                extents.append(f"{em.name(v)}.shape[{k}]")
                break
    return extents


def _loop_shape(op: ir.Op, em: Emitter, rank: int) -> list[str]:
    """The extents of the loop nest: static sizes where the type knows them, else the broadcast
    shape of the array operands computed at run time."""
    arrays = [v for v in op.operands if v.type.ndim > 0]
    if len(arrays) == 1 and arrays[0].type.ndim == rank:
        shape = em.fresh("shape")
        em.line(f"{shape} = {em.name(arrays[0])}.shape")
        return [f"{shape}[{i}]" for i in range(rank)]
    return run_errors.broadcast_extents(em, op, arrays, rank)


def _element(op: ir.Op, em: Emitter, element_ops: list[ir.Op], looped: ir.Value,
             indices: list[str], steps: dict[tuple[str, int], str]) -> str:
    """Emits the body for the element at ``indices``; returns the name of the looped value."""
    (body,) = op.regions
    shadows: dict[ir.Value, ir.Value] = {}
    for operand, arg in zip(op.operands, body.args, strict=True):
        shadow = _scalar_value(arg)
        em.bind(shadow, _read(em, operand, indices, steps))
        shadows[arg] = shadow
    em.array_elements = True  # (an array op's element: NumPy's array loop, not its scalar math)
    for inner in element_ops:
        operands = [shadows[v] for v in inner.operands]
        copy = ir.Op(inner.name, operands, [_scalar(v.type) for v in inner.results],
                     inner.attrs, loc=inner.loc)
        em.emit_op(copy)
        shadows.update(zip(inner.results, copy.results, strict=True))
    em.array_elements = False
    return em.name(shadows[looped])


def _scalar(t: TensorType) -> TensorType:
    return scalar(t.dtype)


def _scalar_value(arg: ir.Value) -> ir.Value:
    """A 0-d stand-in for a body argument (the element the loop reads)."""
    return ir.Region([_scalar(arg.type)]).args[0]


def _read(em: Emitter, operand: ir.Value, indices: list[str],
          steps: dict[tuple[str, int], str]) -> str:
    """The element of ``operand`` at the loop index, broadcasting over its trailing axes: an
    axis of static size 1 at 0, one of unknown size at ``index * step`` (``_steps``; the index
    itself when it has no step: its size is the loop's)."""
    t = operand.type
    name = em.name(operand)
    if t.ndim == 0:
        return name
    offset = len(indices) - t.ndim
    own = [("0" if d == 1 else i) if (name, k) not in steps else f"{i} * {steps[name, k]}"
           for k, (i, d) in enumerate(zip(indices[offset:], t.shape, strict=True))]
    element = em.fresh("e")
    em.line(f"{element} = {s.index_expr(name, own)}")
    return element


def _reduce(op: ir.Op, em: Emitter, reduction: ir.Op, element_ops: list[ir.Op],
            indices: list[str], extents: list[str]):
    """The element-wise values accumulated over all axes, or over the last one per row (the
    reduced axes kept as size 1 with ``keepdims``): emits the result and the empty check,
    returns ``nest(steps)`` that emits the loops (``_steps``)."""
    out = em.name(op.results[0])
    dtype = op.results[0].type.dtype
    looped = reduction.operands[0]
    whole = reduction.attrs.get("axis") is None
    kept = ["0"] * len(indices) if whole else ["0"]  # the result index of the reduced axes
    if not reduction.attrs.get("keepdims"):
        kept = []
    outer, inner = ([], indices) if whole else (indices[:-1], indices[-1:])
    if kept or not whole:
        em.line(f"{out} = {s.empty(em, extents[:len(outer)] + ['1'] * len(kept), dtype)}")
    reduced = " * ".join(extents if whole else extents[-1:])
    pairwise = None  # float sums add pairwise, as NumPy adds the array these values would form
    if reduction.name in ("sum", "mean"):
        count = em.fresh("n")
        em.line(f"{count} = {reduced}")
        static = [e for e in (extents if whole else extents[-1:]) if e.isdigit()]
        # NumPy adds fewer than 8 floats in order: no buffers (a step of a small ODE's loop)
        few = len(static) == len(extents if whole else extents[-1:]) and math.prod(
            int(e) for e in static) < 8 and dtype.kind == "f"
        if dtype.kind in "fc" and not few:
            known = math.prod(int(e) for e in static) if len(static) == len(
                extents if whole else extents[-1:]) else None
            pairwise = PairwiseSum(em, dtype, count, known)
    if reduction.name in ("max", "min") and not (reduced.isdigit() and int(reduced) > 0):
        ufunc = {"max": "maximum", "min": "minimum"}[reduction.name]
        run_errors.check(em, op, f"{reduced} == 0", ValueError,
                         f"zero-size array to reduction operation {ufunc} which has no "
                         "identity", [])

    def nest(steps: dict[tuple[str, int], str]) -> None:
        with s.loops(em, outer, extents[:len(outer)]):
            acc = out if whole and not kept else em.fresh("acc")

            def element() -> str:
                return s.cast(_element(op, em, element_ops, looped, indices, steps), dtype)

            if pairwise is not None and len(inner) == 1:  # one axis: tile by tile
                with pairwise.over(inner[0]) as store:
                    store(element())
            elif pairwise is not None:
                pairwise.start()
                with s.loops(em, inner, extents[len(outer):]):
                    pairwise.add(element())
            else:
                em.line(f"{acc} = {_identity(reduction.name, dtype)}")
                with s.loops(em, inner, extents[len(outer):]):
                    value = element()
                    if reduction.name in ("sum", "mean"):
                        em.line(s.accumulate(acc, "+", value, dtype))
                    else:
                        v = em.fresh("v")
                        em.line(f"{v} = {value}")
                        em.line(f"if {replaces(reduction.name, v, acc)}:")
                        with em.block():
                            em.line(f"{acc} = {v}")
            if reduction.name == "mean":  # NumPy divides in float64 (``lower_reductions``)
                total = pairwise.total() if pairwise is not None else acc
                em.line(f"{acc} = {s.cast(f'np.float64({total}) / np.float64({count})', dtype)}")
            elif pairwise is not None:
                em.line(f"{acc} = {pairwise.total()}")
            if acc != out:
                em.line(f"{s.index_expr(out, outer + kept)} = {acc}")

    return nest


def _identity(name: str, dtype: np.dtype) -> str:
    """The start of an accumulation: 0, or the value every element beats (NaN sticks after)."""
    dtype = np.dtype(dtype)
    if name in ("sum", "mean"):
        return s.zero(dtype)
    low = name == "max"
    if dtype.kind == "f":
        return f"{np_dtype(dtype)}({'-' if low else ''}np.inf)"
    info = np.iinfo(dtype)
    return f"{np_dtype(dtype)}({info.min if low else info.max})"
