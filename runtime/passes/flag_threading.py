"""Flag threading: a ``cond`` on a flag that the ``cond`` before it set is moved into that one.

Early ``return``, ``break`` and ``continue`` are lowered to flags (``do_return``, ``break_``), so
``if c: a[0] += 1; return a`` followed by the rest of the function traces to two ``cond`` ops:
the first yields ``do_return`` (a constant on each path), the second runs the rest under ``not
do_return``. At run time the second branch taken is known on each path of the first, but the
in-place pass sees two ``cond``s joined by the flag: the argument's state and the return value
(the same array on the returning path) meet in one ``cond`` result, so the rest's write into the
argument had to copy it (and a write-back was refused). This pass copies the second ``cond``
(with the ``not``/``and``/``or`` ops between that compute its predicate) to the end of each
branch of the first, where the flag is the constant that branch yields; constant folding then
keeps only the branch taken. The rest of the function so lands on the path that did not return,
as the user wrote it.

It applies only where folding removes every copy but one per path: each branch of the first
``cond`` yields a constant for the flag, or a flag that a ``cond`` at the end of that branch
yields constants for (a nested ``if``'s ``break`` paths); a ``while`` body tests its loop flag
(``while not break_``) as False. Neither ``cond`` may be on a path that raises.
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import ir
from autostage.runtime.passes.analysis import replace_uses

_LOGIC = frozenset({"logical_not", "logical_and", "logical_or"})


def run(module: ir.Module) -> bool:
    """Threads every flag ``cond`` it can (see the module doc); returns whether it did any."""
    changed = False
    for function in module.functions.values():
        changed |= _region(function.body)
    return changed


def _region(region: ir.Region) -> bool:
    changed = False
    for op in region.ops:
        if op.name == "while":
            changed |= _loop_flag(op)
        for inner in op.regions:
            changed |= _region(inner)
    i = 0
    while i < len(region.ops):
        if region.ops[i].name == "cond" and _thread_after(region, i):
            changed = True
            for branch in region.ops[i].regions:  # (the copies may thread into a nested cond)
                _region(branch)
            continue  # the merged cond may be followed by another flag cond
        i += 1
    return changed


def _loop_flag(loop: ir.Op) -> bool:
    """``while not flag``: the body runs only where the carried flag is False, so its reads of
    the flag are the constant False (a flag cond inside then folds)."""
    test, body = loop.regions
    if (len(test.ops) != 1 or test.ops[0].name != "logical_not"
            or test.results != test.ops[0].results or test.ops[0].operands[0] not in test.args):
        return False
    arg = body.args[test.args.index(test.ops[0].operands[0])]
    if arg.type.dtype != np.bool_ or not _reads(body, arg):  # (a float's -0.0 is not 0.0)
        return False
    false = ir.Op("constant", (), (arg.type,), {"value": np.zeros((), arg.type.dtype)},
                  loc=loop.loc)
    replace_uses(body, {arg: false.results[0]})
    body.ops.insert(0, false)
    false.results[0].region = body
    return True


def _reads(region: ir.Region, value: ir.Value) -> bool:
    return value in region.results or any(_reads_in(op, value) for op in region.ops)


def _thread_after(region: ir.Region, i: int) -> bool:
    """Copies the flag cond after ``region.ops[i]`` (and the logic ops computing its
    predicate) into each branch of that cond, which yields its results too; whether it did."""
    first = region.ops[i]
    chain: list[ir.Op] = []
    second = None
    for op in region.ops[i + 1:]:
        if op.name not in _LOGIC:
            second = op
            break
        chain.append(op)
    if second is None or second.name != "cond" or any(
            r.raises() for r in (*first.regions, *second.regions)):
        return False
    flags = _flags(first, chain, second.operands[0])
    if not flags or not all(_folds(r, r.results[k]) for k in flags for r in first.regions):
        return False
    for branch in first.regions:
        copies = dict(zip(first.results, branch.results, strict=True))
        for op in (*chain, second):
            branch.append(ir.copy_op(op, copies))
        branch.results = (*branch.results, *(copies[v] for v in second.results))
    rest = region.ops[region.ops.index(second) + 1:]
    # the results something after it reads: the first cond's are often only the flags (and an
    # array it yields, which would keep the branches' writes into it from going in place)
    wanted = [k for k, v in enumerate((*first.results, *second.results))
              if any(_reads_in(op, v) for op in (*chain, *rest)) or v in region.results]
    for branch in first.regions:
        branch.results = tuple(branch.results[k] for k in wanted)
    old = [(*first.results, *second.results)[k] for k in wanted]
    types = tuple(v.type for v in old)
    merged = ir.Op("cond", first.operands, types, {**first.attrs, "result_types": types},
                   first.regions, loc=first.loc)
    del region.ops[i:]
    for op in (merged, *chain, *rest):  # (the chain stays for any other reader: DCE's)
        region.append(op)
    replace_uses(region, dict(zip(old, merged.results, strict=True)))
    return True


def _reads_in(op: ir.Op, value: ir.Value) -> bool:
    return value in op.operands or any(_reads(r, value) for r in op.regions)


def _flags(first: ir.Op, chain: list[ir.Op], pred: ir.Value) -> list[int]:
    """The indices of ``first``'s results that ``pred`` is computed from through ``chain``
    (and nothing else but constants); empty if it reads anything else."""
    made = {op.results[0]: op for op in chain}
    found: set[int] = set()
    pending = [pred]
    while pending:
        v = pending.pop()
        if v in made:
            pending += made[v].operands
        elif v.producer is first:
            found.add(v.index)
        else:
            return []
    return sorted(found)


def _folds(region: ir.Region, flag: ir.Value) -> bool:
    """Whether ``flag``, as ``region`` yields it, is a constant on each path through it."""
    producer = flag.producer
    if isinstance(producer, ir.Op) and producer.name == "constant":
        return True
    if isinstance(producer, ir.Op) and producer.name == "cond" and region.ops and (
            region.ops[-1] is producer) and not any(r.raises() for r in producer.regions):
        return all(_folds(r, r.results[flag.index]) for r in producer.regions)
    return False
