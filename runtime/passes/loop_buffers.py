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
"""

from __future__ import annotations

from autostage.runtime import ir
from autostage.runtime.ops.fused import is_fusible_reduction
from autostage.runtime.passes import inplace
from autostage.runtime.passes.analysis import set_mark
from autostage.runtime.types import TensorType

MARK = "reuse_buffer"
# Ops whose cpu lowering allocates their (only) array result with ``lower_support.allocate``.
ALLOCATING = frozenset({"fused", "full", "full_like"})


def run(module: ir.Module) -> bool:
    """Sets or clears ``reuse_buffer`` on every allocating op; returns whether any changed."""
    changed = False
    for function in module.functions.values():
        analysis = inplace.Analysis(function)
        for op, region, in_loop in _ops(function.body, in_loop=False):
            if op.name not in ALLOCATING:
                continue
            mark = bool(in_loop and _reusable(op, region, analysis))
            changed |= set_mark(op, MARK, mark)
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


def _ops(region: ir.Region, in_loop: bool):
    """(op, its region, whether that region runs more than once per call) for every op."""
    for op in region.ops:
        yield op, region, in_loop
        if op.name != "fused":  # a fused body is per-element scalar code
            for inner in op.regions:
                yield from _ops(inner, in_loop or op.name == "while")
