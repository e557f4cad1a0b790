"""IR passes run before lowering: dead code, common subexpressions, constants, fusion, and
the marking of setitems that may write in place.

``optimize(module)`` runs ``DEFAULT`` (or the named passes given) through the ``PassManager``.
"""

from __future__ import annotations

from collections.abc import Sequence

from autostage.runtime import ir
from autostage.runtime.passes import constant_folding, cse, dce, fusion, inplace
from autostage.runtime.passes.pass_manager import Pass, PassError, PassManager, checks

PASSES: dict[str, Pass] = {p.name: p for p in (
    Pass("constant_folding", constant_folding.run),
    Pass("cse", cse.run),
    Pass("dce", dce.run),
    Pass("fusion", fusion.run),
    Pass("inplace", inplace.run),
)}
# Folding first, so CSE merges the constants it makes; CSE before DCE, which removes what both
# left dead; fusion next, on the fewest ops, since it fuses only values with a single use; the
# in-place marking last, on the very IR the backend lowers (it is a fact about all readers).
DEFAULT: tuple[str, ...] = ("constant_folding", "cse", "dce", "fusion", "inplace")


def optimize(module: ir.Module, passes: Sequence[str] = DEFAULT,
             verify: bool | None = None) -> ir.Module:
    """Runs the named passes on ``module`` in place and returns it.

    Raises:
      KeyError: an unknown pass name.
      PassError: a pass failed or (checks on) left invalid IR.
    """
    unknown = [name for name in passes if name not in PASSES]
    if unknown:
        raise KeyError(f"unknown passes {unknown}; known: {', '.join(PASSES)}")
    return PassManager([PASSES[name] for name in passes], verify=verify).run(module)


__all__ = ["DEFAULT", "PASSES", "Pass", "PassError", "PassManager", "checks", "optimize"]
