"""Dead-code elimination: removes ops whose results nobody reads and that have no side effects.

Requires only use counts (``analysis.use_counts``). Each region is swept from its last op to its
first, entering an op's regions before the ops above it, so uses inside a removed op (including
captured values of its regions) are released before their producers are looked at: a dead chain
goes in one sweep. Ops with effects (``OpDef.effects``: print, assert, raise, Variable reads and
writes, ``while`` loops, which may not terminate, and calls of callees that have any), and ops
containing them, always stay; a call of a pure callee whose results are unused goes.
Unused results of a kept ``cond`` or ``while`` stay too: trimming region yields is not worth the
risk. An unused op that may raise at run time stays too (``effects.may_fail``: ``x[10]`` out of
range, ``a + b`` of sizes that may not broadcast): Python raises there, so the staged code must
(an optimizing compiler may drop such errors; autostage gives Python's result or Python's error).
A ``raise_if`` whose test is the constant false goes (a check that a constant decided). Other
passes remove what they make redundant themselves (CSE its duplicates, fusion the ops it fuses),
so keeping these costs only the user's own unused computations.
"""

from __future__ import annotations

from collections import Counter

from autostage.runtime import effects, ir
from autostage.runtime.passes import analysis


def run(module: ir.Module) -> bool:
    """Removes dead ops from every function of ``module``; returns whether anything changed."""
    changed = False
    for function in module.functions.values():
        counts = analysis.use_counts(function)
        changed |= _sweep(function.body, counts, module)
    return changed


def _sweep(region: ir.Region, counts: Counter, module: ir.Module) -> bool:
    kept: list[ir.Op] = []
    changed = False
    for op in reversed(region.ops):
        if _is_dead(op, counts, module):
            analysis.count_op(op, counts, -1)
            changed = True
            continue
        for inner in reversed(op.regions):
            changed |= _sweep(inner, counts, module)
        kept.append(op)
    kept.reverse()
    region.ops[:] = kept
    return changed


def _is_dead(op: ir.Op, counts: Counter, module: ir.Module) -> bool:
    if _never_raises(op):
        return True
    return (all(counts[v] == 0 for v in op.results) and not analysis.has_effects(op, module)
            and not effects.may_fail(op, module))


def _never_raises(op: ir.Op) -> bool:
    """A ``raise_if`` whose test folded to false (an overflow test a constant decided): its only
    effect is one it never has."""
    if op.name != "raise_if":
        return False
    test = op.operands[0].producer
    return isinstance(test, ir.Op) and test.name == "constant" and not test.attrs["value"].any()
