"""IR passes run before lowering: inlining, dead code, common subexpressions, constants,
size tests the shapes decide, fusion, the identity broadcasts of gradients, the marking of
setitems that may write in place, of loop temporaries that may reuse a buffer and of fills
overwritten before they are read.

``optimize(module)`` runs ``DEFAULT`` (or the named passes given) through the ``PassManager``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from autostage.runtime import ir
from autostage.runtime.passes import (
    batched_products,
    broadcast_adjoints,
    constant_folding,
    counters,
    cse,
    dce,
    flag_threading,
    fusion,
    inline,
    inplace,
    int_ranges,
    loop_buffers,
    overflow_versioning,
    size_tests,
    speculation,
    written_prefix,
)
from autostage.runtime.passes.pass_manager import Pass, PassError, PassManager, checks

PASSES: dict[str, Pass] = {p.name: p for p in (
    Pass("inline", inline.run),
    Pass("flag_threading", flag_threading.run),
    Pass("constant_folding", constant_folding.run),
    Pass("broadcast_adjoints", broadcast_adjoints.run),
    Pass("counters", counters.run),
    Pass("int_ranges", int_ranges.run),
    Pass("size_tests", size_tests.run),
    Pass("speculation", speculation.run),
    Pass("overflow_versioning", overflow_versioning.run),
    Pass("cse", cse.run),
    Pass("dce", dce.run),
    Pass("batched_products", batched_products.run),
    Pass("fusion", fusion.run),
    Pass("inplace", inplace.run),
    Pass("loop_buffers", loop_buffers.run),
    Pass("written_prefix", written_prefix.run),
)}
# Inlining first, so every later pass sees small helpers' ops in their callers' loops; flag
# conds (early return, break) threaded into the conds that set their flags next, for folding to
# keep the branch each path takes; folding next, so CSE merges the constants it makes; the
# identity ``sum_to`` of gradients dropped before
# CSE and fusion see them; the overflow tests of counters and of arithmetic whose operands' ranges
# keep it within int64 dropped before DCE removes them, as are the size tests of in-place
# operators that the shape facts decide (their sizes would keep an intermediate from fusing),
# and small checked branches made straight-line code before CSE merges their constants; loops
# whose arithmetic is still tested then run strips of untested steps while their ints are small
# (on the straight-line code, whose tests the strips' analysis reads); CSE before
# DCE, which removes what both left dead; loop products batched next (on loops CSE and DCE made
# plain, before fusion takes the product's reader into a loop of its own); fusion next, on the
# fewest ops, since it fuses only values with a single use; the in-place marking next, on the
# very IR the backend lowers (it is a fact about all readers); the buffer reuse of loop
# temporaries next, since it counts an in-place write as the same buffer; the fills overwritten
# before they are read last (a mark only the lowering reads).
DEFAULT: tuple[str, ...] = ("inline", "flag_threading", "constant_folding", "broadcast_adjoints",
                            "counters", "int_ranges", "size_tests", "speculation",
                            "overflow_versioning", "cse", "dce",
                            "batched_products", "fusion", "inplace", "loop_buffers",
                            "written_prefix")


def optimize(module: ir.Module, passes: Sequence[str] = DEFAULT,
             verify: bool | None = None, fuses: Callable[[ir.Op], bool] | None = None
             ) -> ir.Module:
    """Runs the named passes on ``module`` in place and returns it.

    Args:
      fuses: the target's answer to which ops its per-element loops compute (``Target.fuses``),
        asked by fusion; None: every element-wise op (``targets.Target.optimize`` passes its own).

    Raises:
      KeyError: an unknown pass name.
      PassError: a pass failed or (checks on) left invalid IR.
    """
    unknown = [name for name in passes if name not in PASSES]
    if unknown:
        raise KeyError(f"unknown passes {unknown}; known: {', '.join(PASSES)}")
    pipeline = [PASSES[name] for name in passes]
    if fuses is not None:
        pipeline = [Pass(p.name, functools.partial(fusion.run, fuses=fuses)) if p.name == "fusion"
                    else p for p in pipeline]
    return PassManager(pipeline, verify=verify).run(module)


__all__ = ["DEFAULT", "PASSES", "Pass", "PassError", "PassManager", "checks", "optimize"]
