"""Small checked branches become straight-line code: ``n // 2 if even else 3 * n + 1``.

A ``cond`` whose branches compute a few scalars, one of them with a tested Python-int operation
(``int_overflows`` and its ``raise_if``), keeps a branch in compiled code that a processor
mispredicts as often as the condition is irregular (Collatz: half the time), where NumPy-typed
code (no tests) compiles to a conditional move. Both branches are cheap and cannot fail, so
both may run: their ops move before the ``cond``, each test raises only if its branch is the
one taken (``raise_if(p and overflow)``, ``raise_if(not p and overflow)``: at most one of them can
fire, as in Python), and each result is ``where(p, then_value, else_value)``.

A ``cond`` is rewritten only when every op of both branches is a scalar op without effects that
cannot fail, or the ``raise_if`` of an ``int_overflows`` test of its own branch; when each branch
has at most ``MAX_OPS`` ops; and when ``where`` gives each result exactly its type.
"""

from __future__ import annotations

from autostage.runtime import effects, ir
from autostage.runtime.passes import analysis
from autostage.runtime.types import TensorType

MAX_OPS = 12  # ops per branch: both run, so each must be cheap


def run(module: ir.Module) -> bool:
    """Rewrites the small checked ``cond``s of every function; whether any changed."""
    replaced: dict[ir.Value, ir.Value] = {}  # a rewritten cond's result -> its where
    for function in module.functions.values():
        _rewrite(function.body, module, replaced)
    if replaced:
        for function in module.functions.values():
            analysis.replace_uses(function.body, replaced)
    return bool(replaced)


def _rewrite(region: ir.Region, module: ir.Module, replaced: dict) -> None:
    ops = []
    for op in region.ops:
        for inner in op.regions:
            _rewrite(inner, module, replaced)
        flat = _flattened(op, module, replaced) if op.name == "cond" else None
        ops += [op] if flat is None else flat
    region.ops[:] = ops
    for op in ops:
        for value in op.results:
            value.region = region


def _scalar(value: ir.Value) -> bool:
    return isinstance(value.type, TensorType) and value.type.ndim == 0


def _speculable(branch: ir.Region, module: ir.Module) -> bool | None:
    """Whether every op of ``branch`` may run when the branch is not taken (None: no); True when
    it holds a tested int operation, False when it holds none."""
    if len(branch.ops) > MAX_OPS:
        return None
    own = {value for op in branch.ops for value in op.results}
    tested = False
    for op in branch.ops:
        if op.regions or not all(_scalar(v) for v in (*op.operands, *op.results)):
            return None
        if op.name == "raise_if":
            test = op.operands[0]
            if test not in own or test.producer.name != "int_overflows":
                return None
            tested = True
        elif effects.has_effects(op, module) or effects.may_fail(op, module):
            return None
    return tested


def _flattened(cond: ir.Op, module: ir.Module, replaced: dict) -> list[ir.Op] | None:
    """The ops that replace ``cond`` (its results' replacements go into ``replaced``), or None
    when it stays."""
    predicate = cond.operands[0]
    then, other = cond.regions
    kinds = [_speculable(branch, module) for branch in (then, other)]
    if None in kinds or not any(kinds) or not all(_scalar(v) for v in cond.results):
        return None
    selects = [analysis.new_op("where", (predicate, a, b), cond.loc)
               for a, b in zip(then.results, other.results, strict=True)]
    if any(s.results[0].type != r.type for s, r in zip(selects, cond.results, strict=True)):
        return None
    negated = analysis.new_op("logical_not", (predicate,), cond.loc)
    ops: list[ir.Op] = [negated] if kinds[1] else []
    for branch, taken in ((then, predicate), (other, negated.results[0])):
        for op in branch.ops:
            if op.name != "raise_if":
                ops.append(op)
                continue
            # (the test first: lowered as a short-circuit `and`, it is false almost always, so
            # the predicate, as irregular as the data, is not branched on)
            both = analysis.new_op("logical_and", (op.operands[0], taken), op.loc)
            ops += [both, ir.Op("raise_if", (*both.results, *op.operands[1:]), (), op.attrs,
                                 loc=op.loc)]
    ops += selects
    replaced.update(zip(cond.results, [s.results[0] for s in selects], strict=True))
    return ops

