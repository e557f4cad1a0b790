"""Facts about the IR that every pass needs: use counts, effects, and value replacement.

Nothing here changes what a program computes; the passes decide what to do with the facts. Uses
count every place a value is read: op operands (in any nested region), region results and the
function's results, so a value a ``cond`` branch yields or a function returns is never dead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator

import numpy as np
from autostage.runtime import effects, ir, op_registry
from autostage.runtime.ops import buffers
from autostage.runtime.types import TensorType


def use_counts(function: ir.Function) -> Counter:
    """How many times each value of ``function`` is read (operands, yields and returns)."""
    counts: Counter = Counter()
    _count_region(function.body, counts)
    return counts


def _count_region(region: ir.Region, counts: Counter) -> None:
    for op in region.ops:
        count_op(op, counts, 1)
    counts.update(region.results)


def count_op(op: ir.Op, counts: Counter, sign: int) -> None:
    """Adds ``sign`` for every value ``op`` reads, including inside its regions."""
    for value in op.operands:
        counts[value] += sign
    for region in op.regions:
        for inner in region.ops:
            count_op(inner, counts, sign)
        for value in region.results:
            counts[value] += sign


def region_reads(region: ir.Region) -> list[ir.Value]:
    """Every value read in ``region`` and its nested regions (operands and yields)."""
    values = list(region.results)
    for op in region.ops:
        values += op.operands
        for inner in op.regions:
            values += region_reads(inner)
    return values


def read_into_new_arrays(region: ir.Region, value: ir.Value,
                         allowed: frozenset[ir.Op] = frozenset(), yielded: bool = False) -> bool:
    """Whether every op of ``region`` (and of its nested regions) that reads ``value`` makes
    new arrays of it (``buffers.is_fresh``) or is in ``allowed``, and no region yields it
    (``yielded``: ``region`` itself may): then no view of ``value`` outlives those readers."""
    if value in region.results and not yielded:
        return False
    for op in region.ops:
        if value in op.operands and op not in allowed and not buffers.is_fresh(op):
            return False
        if not all(read_into_new_arrays(inner, value, allowed) for inner in op.regions):
            return False
    return True


def new_op(name: str, operands: tuple, loc: ir.Location | None) -> ir.Op:
    """A new attribute-less op of ``operands``, its result types by the op's type rule."""
    types = op_registry.REGISTRY[name].infer(tuple(v.type for v in operands), {})
    return ir.Op(name, operands, types, {}, loc=loc)


def int_constant(value: ir.Value) -> int | None:
    """The integer a ``constant`` op gives the 0-d integer ``value``, or None."""
    op = value.producer
    if not (isinstance(op, ir.Op) and op.name == "constant"
            and isinstance(value.type, TensorType) and value.type.ndim == 0
            and value.type.dtype.kind in "iu"):
        return None
    return int(np.asarray(op.attrs["value"]))


def counted_loop(loop: ir.Op) -> tuple[int, ir.Value, int] | None:
    """``(k, bound, start)`` when ``loop`` (a ``while``) only tests ``i < bound`` for the
    integer it carries at position ``k``, from the constant ``start`` and stepped by one
    (``for i in range(start, bound)``, staged); else None."""
    cond, body = loop.regions
    if len(cond.ops) != 1 or cond.ops[0].name != "less" or cond.results != cond.ops[0].results:
        return None
    i, bound = cond.ops[0].operands
    if i not in cond.args or not isinstance(bound.type, TensorType) or bound.type.ndim or (
            bound.type.dtype.kind not in "iu"):
        return None
    k = cond.args.index(i)
    start, step = int_constant(loop.operands[k]), body.results[k].producer
    if start is None or not (isinstance(step, ir.Op) and step.name == "add"
                             and step.operands[0] is body.args[k]
                             and int_constant(step.operands[1]) == 1):
        return None
    return k, bound, start


def has_effects(op: ir.Op, module: ir.Module | None = None) -> bool:
    """Whether ``op`` (or any op in its regions) must run even if nothing reads its results
    (``runtime/effects.py``; pass the module, or every ``call`` counts as effectful)."""
    return effects.has_effects(op, module)


def set_mark(op: ir.Op, key: str, value: object) -> bool:
    """Sets attribute ``key`` of ``op`` to ``value``, or removes it when ``value`` is falsy (a
    pass's mark recomputed each run); returns whether the op changed."""
    if value == op.attrs.get(key, type(value)()):
        return False
    if value:
        op.attrs[key] = value
    else:
        del op.attrs[key]
    return True


def regions_of(module: ir.Module) -> Iterator[ir.Region]:
    """Every region of every function, outer regions before the regions nested in them."""
    for function in module.functions.values():
        yield function.body
        for op in function.body.walk():
            yield from op.regions


def replace_uses(region: ir.Region, mapping: dict[ir.Value, ir.Value]) -> None:
    """Rewrites every read of a key of ``mapping`` in ``region`` (recursively) to its value."""
    if not mapping:
        return
    for op in region.ops:
        if any(v in mapping for v in op.operands):
            op.operands = tuple(mapping.get(v, v) for v in op.operands)
        for inner in op.regions:
            replace_uses(inner, mapping)
    if any(v in mapping for v in region.results):
        region.results = tuple(mapping.get(v, v) for v in region.results)


def drop_raises(region: ir.Region, never_true: Callable[[ir.Value], bool]) -> bool:
    """Removes the ``raise_if`` ops of ``region`` (and of its nested regions) whose test
    ``never_true`` proves false in every run; whether any went. The tests themselves are left
    to dead-code elimination."""
    kept, changed = [], False
    for op in region.ops:
        if op.name == "raise_if" and never_true(op.operands[0]):
            changed = True
            continue
        for inner in op.regions:
            changed |= drop_raises(inner, never_true)
        kept.append(op)
    region.ops[:] = kept
    return changed
