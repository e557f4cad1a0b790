"""Inlining of small staged callees: a ``call`` op replaced by a copy of the callee's body.

A helper called in a hot loop (``k1 = f(y)`` in an ODE step, a cell function in an RNN) costs a
native call and, above all, hides its allocations and element-wise ops from the caller's passes:
after inlining, fusion sees across the call, and the loop-buffer pass can give the callee's
temporaries one buffer per loop. A callee is inlined when it is small (at most ``MAX_OPS`` ops,
nested regions counted) and does not reach itself through calls (staged recursion stays a call);
a call marked ``recompute`` (``autostage.checkpoint``: its backward pass recomputes the callee
instead of keeping its intermediates) stays a call; each caller inlines at most ``BUDGET`` ops
in all, so a helper called from a hundred unrolled sites stays a call instead of multiplying the
compile time. Copied ops keep the callee's
locations, so errors still name the helper's lines. Functions no longer called are dropped.

Nothing observable changes: a callee body is pure data flow over its parameters (it captures
nothing of the caller), and its effects (prints, Variable updates, raises) keep their order.
"""

from __future__ import annotations

from autostage.runtime import ir
from autostage.runtime.passes.analysis import replace_uses

MAX_OPS = 48
BUDGET = 400


def run(module: ir.Module) -> bool:
    """Inlines small non-recursive callees into every function; returns whether it did."""
    sizes = {name: _size(f.body) for name, f in module.functions.items()}
    recursive = {name for name in module.functions if _reaches(module, name, name, set())}
    changed = False
    for function in list(module.functions.values()):
        budget = [BUDGET]
        changed |= _inline_region(module, function.body, sizes, recursive, budget)
    if changed:
        _drop_unreachable(module)
    return changed


def _inline_region(module: ir.Module, region: ir.Region, sizes: dict[str, int],
                   recursive: set[str], budget: list[int]) -> bool:
    changed = False
    ops: list[ir.Op] = []
    mapping: dict[ir.Value, ir.Value] = {}
    for op in region.ops:
        if mapping:
            _rewrite(op, mapping)
        callee = op.attrs.get("callee") if op.name == "call" else None
        if (callee is not None and callee not in recursive and not op.attrs.get("recompute")
                and sizes[callee] <= min(MAX_OPS, budget[0])
                and len(module.functions[callee].body.args) == len(op.operands)):
            budget[0] -= sizes[callee]
            body = module.functions[callee].body
            copies = dict(zip(body.args, op.operands, strict=True))
            for inner in body.ops:
                ops.append(ir.copy_op(inner, copies))
            mapping.update(zip(op.results, (copies[v] for v in body.results), strict=True))
            changed = True
            continue
        for inner in op.regions:
            changed |= _inline_region(module, inner, sizes, recursive, budget)
        ops.append(op)
    if changed:
        region.ops = []
        for op in ops:
            region.append(op)
        if mapping:
            region.results = tuple(mapping.get(v, v) for v in region.results)
    return changed


def _rewrite(op: ir.Op, mapping: dict[ir.Value, ir.Value]) -> None:
    """Rewrites ``op``'s reads (its operands and inside its regions) of inlined call results."""
    op.operands = tuple(mapping.get(v, v) for v in op.operands)
    for inner in op.regions:
        replace_uses(inner, mapping)


def _size(region: ir.Region) -> int:
    return sum(1 + sum(_size(r) for r in op.regions) for op in region.ops)


def _callees(function: ir.Function) -> set[str]:
    return {op.attrs["callee"] for op in function.body.walk() if op.name == "call"}


def _reaches(module: ir.Module, start: str, target: str, seen: set[str]) -> bool:
    for callee in _callees(module.functions[start]):
        if callee == target:
            return True
        if callee not in seen:
            seen.add(callee)
            if _reaches(module, callee, target, seen):
                return True
    return False


def _drop_unreachable(module: ir.Module) -> None:
    reached, todo = {module.entry}, [module.entry]
    while todo:
        for callee in _callees(module.functions[todo.pop()]):
            if callee not in reached:
                reached.add(callee)
                todo.append(callee)
    for name in [n for n in module.functions if n not in reached]:
        del module.functions[name]
