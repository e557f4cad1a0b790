"""Drops the ``sum_to`` ops of gradients where the shapes are proven equal.

Reverse-mode differentiation (``runtime/autodiff``) reduces each cotangent to its primal's shape
with ``sum_to``, since a trace's unknown sizes may broadcast at run time. Usually nothing was
broadcast: the cotangent of ``y * x`` for ``x`` has ``x``'s shape whenever ``y`` has it. Where
``ShapeFacts`` proves the two shapes equal, the op is the identity and its uses read the
cotangent itself, so fusion sees through it (the op, left unused, is removed by DCE).
"""

from __future__ import annotations

from autostage.runtime import ir
from autostage.runtime.passes.analysis import replace_uses
from autostage.runtime.passes.shape_facts import ShapeFacts


def run(module: ir.Module) -> bool:
    """Rewrites the reads of every provably identical ``sum_to``; returns whether it did."""
    changed = False
    for function in module.functions.values():
        ops = [op for op in function.body.walk() if op.name == "sum_to"]
        if not ops:
            continue
        facts = ShapeFacts(function)
        mapping = {op.results[0]: op.operands[0] for op in ops
                   if facts.dims(op.operands[0]) == facts.dims(op.results[0])}
        replace_uses(function.body, mapping)
        changed |= bool(mapping)
    return changed
