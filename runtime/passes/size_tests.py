"""Run-time size tests the shape facts decide: their ``raise_if`` goes.

An in-place operator on arrays of sizes the trace left unknown (``w /= w.sum(axis=1,
keepdims=True)``) stages NumPy's test that the broadcast result fits the operand written
(``dim(result, k) != dim(w, k)`` for each axis, or-ed, raising "non-broadcastable output
operand"). Often the program proves the sizes equal: the result broadcasts ``w`` with its own
row sums. ``shape_facts`` names each axis by a symbol; a ``not_equal`` of two sizes with one
symbol is false in every run, and a ``raise_if`` of such tests (joined by ``logical_or``) never
raises: it goes (the tests are left to dead-code elimination). Besides a branch less to compile,
the sizes it read no longer keep an intermediate array alive: the softmax above then fuses.
"""

from __future__ import annotations

import functools

from autostage.runtime import ir
from autostage.runtime.passes import analysis
from autostage.runtime.passes.shape_facts import ShapeFacts


def run(module: ir.Module) -> bool:
    """Drops the size tests the shape facts prove false in every function; whether any went."""
    changed = False
    for function in module.functions.values():
        changed |= analysis.drop_raises(function.body,
                                        functools.partial(_never_true, facts=ShapeFacts(function)))
    return changed


def _never_true(test: ir.Value, facts: ShapeFacts) -> bool:
    """Whether ``test`` is false in every run: sizes of one symbol compared unequal, or-ed."""
    op = test.producer
    if not isinstance(op, ir.Op):
        return False
    if op.name == "logical_or":
        return all(_never_true(v, facts) for v in op.operands)
    if op.name == "not_equal":
        a, b = (facts.size(v) for v in op.operands)
        return a is not None and a == b
    return False
