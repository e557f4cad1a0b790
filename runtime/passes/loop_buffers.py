"""Buffer reuse in loops: marks the allocations whose array may live in one buffer per loop.

An array made inside a staged loop (a fused element-wise result, ``np.zeros``/``np.empty_like``)
is a new allocation at every iteration; when it is a temporary of the iteration, the buffer of
the previous iteration is already dead when the op runs again, so the backend may reuse it
(allocating again only when the shape changes). This pass sets ``reuse_buffer=True`` on such an
op when its result

* is an array made by an op the backend allocates itself (``ALLOCATING``), in a region that runs
  more than once per call (anywhere inside a ``while``), and
* is dead at the end of its own region, with every value that may share its buffer (a view of
  it, a list holding it, a call's or a ``cond``'s result made from it, an in-place write's
  result): it is never yielded out of the region, so it cannot be carried to the next
  iteration, appended to a list that outlives it, nor returned.

The liveness facts are the in-place pass's (``inplace.Analysis``), so the pass runs after it: an
in-place write's result counts as the same buffer. The cpu lowering (``lower_support.allocate``)
keeps one buffer per marked op; other backends may ignore the mark. Reuse is per call of the
function (buffers are locals), so nothing is shared between calls or threads.

A result that does outlive its iteration (``x = x @ a``, carried to the next one) cannot keep one
buffer, but it may take the buffer of an operand that dies with this op, once the op has run:
``recycle_buffer=(k,)`` marks an allocating op in a loop whose operand ``k`` (same dtype and rank
as the result) is owned (``inplace.Analysis.owned``: allocated in this call, referred to by no
other value) and dead after the op with every value that may share its buffer. The cpu lowering
then keeps that buffer as the op's spare and writes the next iteration's result into it: two
buffers in turn, as a hand-written loop swaps them. An op marked ``reuse_buffer`` is not marked.

The operand may also be a carried value whose initial value the loop does not own (a parameter:
``x = x @ a`` from the caller's ``x``) when the body carries on the op's own result: then only
the buffers of later iterations may be taken, each the op's result of the iteration before, and
the ``while`` is marked ``fresh_after_first=(k,)`` (carried position k): the lowering keeps a
flag, false until the first iteration ends, and the op allocates while it is false.
"""

from __future__ import annotations

from autostage.runtime import ir
from autostage.runtime.ops.fused import is_fusible_reduction
from autostage.runtime.passes import inplace
from autostage.runtime.passes.analysis import set_mark
from autostage.runtime.types import TensorType

MARK = "reuse_buffer"
RECYCLE = "recycle_buffer"
FRESH_AFTER_FIRST = "fresh_after_first"
# Ops whose cpu lowering allocates their (only) array result with ``lower_support.allocate``
# (matmul: its small products of static shapes, computed inline by lower_linalg).
ALLOCATING = frozenset({"fused", "full", "full_like", "matmul"})


def run(module: ir.Module) -> bool:
    """Sets or clears ``reuse_buffer`` and ``recycle_buffer`` on every allocating op; returns
    whether any changed."""
    changed = False
    for function in module.functions.values():
        analysis = inplace.Analysis(function)
        allocating = [(op, region, in_loop) for op, region, in_loop
                      in _ops(function.body, in_loop=False) if op.name in ALLOCATING]
        for op, region, in_loop in allocating:
            changed |= set_mark(op, MARK, bool(in_loop and _reusable(op, region, analysis)))
        # Recycling after every reuse mark is known: a reused buffer is never recycled.
        flagged: dict[ir.Op, set[int]] = {}
        for op, region, in_loop in allocating:
            recycled = None
            if in_loop and not op.attrs.get(MARK):
                recycled = _recycled(op, region, analysis, flagged)
            changed |= set_mark(op, RECYCLE, () if recycled is None else (recycled,))
        for loop, _region, _in_loop in _ops(function.body, in_loop=False):
            if loop.name == "while":
                changed |= set_mark(loop, FRESH_AFTER_FIRST, tuple(sorted(flagged.get(loop, ()))))
    return changed


def _reusable(op: ir.Op, region: ir.Region, analysis: inplace.Analysis) -> bool:
    if len(op.results) != 1:
        return False
    (result,) = op.results
    if not isinstance(result.type, TensorType) or result.type.ndim == 0:
        return False
    if op.name == "fused" and is_fusible_reduction(op.regions[0].ops[-1]):
        return False  # the reduction's result is computed by the loop, not allocated
    return analysis.dead_after(result, region, len(region.ops), frozenset())


def _recycled(op: ir.Op, region: ir.Region, analysis: inplace.Analysis,
              flagged: dict[ir.Op, set[int]]) -> int | None:
    """The operand whose buffer the op's result may take in the next iteration, if any (adding
    to ``flagged`` the carried position of a loop whose first iteration must not give it)."""
    if len(op.results) != 1 or not isinstance(op.results[0].type, TensorType):
        return None
    result = op.results[0].type
    if result.ndim == 0 or (op.name == "fused" and is_fusible_reduction(op.regions[0].ops[-1])):
        return None
    after = analysis.index[op] + 1
    for k, x in enumerate(op.operands):
        if not (isinstance(x.type, TensorType) and x.type.dtype == result.dtype
                and x.type.ndim == result.ndim and analysis.local(x, region)
                and analysis.dead_after(x, region, after, frozenset())):
            continue
        if analysis.owned(x):
            if not any(o.attrs.get(MARK) for o in _origins(x, analysis, set())):
                return k
            continue
        carried = _own_result_after_first(op, x, analysis)
        if carried is not None:
            flagged.setdefault(carried[0], set()).add(carried[1])
            return k
    return None


def _own_result_after_first(op: ir.Op, x: ir.Value, analysis: inplace.Analysis
                            ) -> tuple[ir.Op, int] | None:
    """``(loop, k)`` when ``x`` is the carried value k of the ``while`` whose body it is read
    in, and the body carries on ``op``'s own result in that position, shared with nothing: from
    the second iteration on, ``x`` is the buffer ``op`` allocated the iteration before."""
    producer = x.producer
    if not isinstance(producer, ir.Region) or producer not in analysis.parent:
        return None
    loop = analysis.parent[producer][0]
    if loop.name != "while" or producer is not loop.regions[1]:  # (the body, not the test)
        return None
    carried = producer.results[x.index]
    if carried.producer is not op or not analysis.unshared_yield(carried, producer, x.index):
        return None
    return loop, x.index


def _origins(value: ir.Value, analysis: inplace.Analysis, seen: set[ir.Value]) -> set[ir.Op]:
    """The ops whose buffer an owned ``value`` may be: its producer, or through ``cond``
    results and ``while`` carried values, the producers of what they may hold. A buffer marked
    ``reuse_buffer`` stays its op's, so another op recycling it would write into it too."""
    if value in seen:
        return set()
    seen.add(value)
    producer = value.producer
    if isinstance(producer, ir.Region):  # a carried value inside the loop (owned: a loop's)
        loop = analysis.parent[producer][0]
    elif producer.name == "while":
        loop = producer
    elif producer.name == "cond":
        return set().union(*(_origins(r.results[value.index], analysis, seen)
                             for r in producer.regions))
    else:
        return {producer}
    return (_origins(loop.operands[value.index], analysis, seen)
            | _origins(loop.regions[1].results[value.index], analysis, seen))


def _ops(region: ir.Region, in_loop: bool):
    """(op, its region, whether that region runs more than once per call) for every op."""
    for op in region.ops:
        yield op, region, in_loop
        if op.name != "fused":  # a fused body is per-element scalar code
            for inner in op.regions:
                yield from _ops(inner, in_loop or op.name == "while")
