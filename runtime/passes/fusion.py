"""Fusion: chains of element-wise ops become one ``fused`` op, computed in one loop.

Requires use counts (``analysis.use_counts``) and builds ``fused`` ops (``ops/fused.py``). A group
grows from a root (an element-wise op of rank >= 1, or a ``sum``/``max``/``min`` that one loop can
accumulate) up through operands produced by element-wise ops of the same region whose only uses are
by one op of the group (``x * x`` reads ``x`` twice), so no intermediate is needed elsewhere and
none is materialized. Groups of one op stay as they are. A cheap element-wise value (a compare, a
sum, a cast: ``CHEAP``) read by several ops that each fuse is first copied, one copy per reader,
so that each loop recomputes it instead of all reading an array written for them (a gradient's
``logits == max`` mask and the shifted logits of a softmax were each a pass of their own).
Operations never move across a side-effect op (each group lies between the same two effects), so
errors and warnings keep their order with prints. The target decides which ops its loops
compute (``fuses``, e.g. the CPU's: no float16, no complex transcendentals; see
``targets.Target``): the others stay unfused. Fused ops' bodies are nested regions of their own
and are never fused again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from autostage.runtime import ir
from autostage.runtime.ops.fused import is_fusible_reduction, per_element
from autostage.runtime.passes import analysis
from autostage.runtime.types import TensorType

# Element-wise ops cheap enough to compute again in each loop that reads them (no division, no
# transcendental: at most one instruction or two per element).
CHEAP = frozenset({
    "add", "subtract", "multiply", "negative", "positive", "absolute", "square", "maximum",
    "minimum", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "where",
    "logical_and", "logical_or", "logical_not", "cast", "full_like"})


def every_op(op: ir.Op) -> bool:
    """The answer of a target whose loops compute every element-wise op."""
    return True


def run(module: ir.Module, fuses: Callable[[ir.Op], bool] = every_op) -> bool:
    """Fuses element-wise chains in every function; returns whether it fused any.

    Args:
      fuses: the target's answer to whether its per-element loop computes an op
        (``Target.fuses``); ops it refuses stay whole-array ops.
    """
    changed = False
    for function in module.functions.values():
        changed |= _function(function, fuses)
    return changed


def _function(function: ir.Function, fuses: Callable[[ir.Op], bool]) -> bool:
    _shapes_from_operands(function)
    regions = [function.body] + [r for op in function.body.walk() if op.name != "fused"
                                 for r in op.regions]
    for region in regions:
        _copy_cheap_values(region, fuses)
    counts = analysis.use_counts(function)
    mapping: dict[ir.Value, ir.Value] = {}
    bodies: list[tuple[ir.Op, ir.Region]] = []
    for region in regions:
        for group in _plan(region, counts, fuses):
            fused, body = _build(region, group)
            mapping[group[-1].results[0]] = fused.results[0]
            bodies.append((fused, body))
    analysis.replace_uses(function.body, mapping)  # before bodies exist: they yield old values
    for fused, body in bodies:
        fused.regions = (body,)
    return bool(bodies)


def _shapes_from_operands(function: ir.Function) -> None:
    """``dim``/``size``/``full_like`` of an element-wise result whose array operands are all one
    value read that value instead (``x * x`` has ``x``'s shape; ``full_like`` only where the
    dtypes agree), so that asking for the result's shape (a mean's gradient does) does not keep
    the result from fusing into its one consumer."""
    for op in function.body.walk():
        if op.name not in ("dim", "size", "full_like") or not op.operands:
            continue
        value = source = op.operands[0]
        while isinstance(value.producer, ir.Op) and per_element(value.producer):
            arrays = {v for v in value.producer.operands
                      if isinstance(v.type, TensorType) and v.type.ndim}
            if len(value.producer.results) != 1 or len(arrays) != 1:
                break
            (value,) = arrays
            if value.type.ndim != source.type.ndim or op.name == "full_like" and (
                    value.type.dtype != source.type.dtype):
                break
            source = value
        if source is not op.operands[0]:
            op.operands = (source, *op.operands[1:])


def _copy_cheap_values(region: ir.Region, fuses: Callable[[ir.Op], bool]) -> None:
    """Gives each reader of a ``CHEAP`` value its own copy of the op computing it, where every
    reader is an op of ``region`` that fuses (a root or member of a group with its copy) with no
    side effect in between, and the value is not yielded; consumers first, so that a cheap
    value feeding a copied one is copied in turn. The original, read by its first reader
    only, then fuses into it. Copies of copies are bounded by the region's size: a recurrence
    unrolled from a Python loop (``b0 = x * b1 - b2 + c`` reading two earlier ``b0``) would
    otherwise copy every path through its values, exponentially many."""
    budget = len(region.ops)
    readers: dict[ir.Value, list[ir.Op]] = {}
    nested: set[ir.Value] = set(region.results)
    for op in region.ops:
        for value in op.operands:
            readers.setdefault(value, []).append(op)
        for inner in op.regions:
            nested.update(analysis.region_reads(inner))
    epoch, effects = {}, 0
    for op in region.ops:
        effects += analysis.has_effects(op)
        epoch[op] = effects
    for op in reversed(list(region.ops)):
        if op.name not in CHEAP or len(op.results) != 1 or not _is_root(op, fuses):
            continue
        value = op.results[0]
        users = list(dict.fromkeys(readers.get(value, ())))
        if len(users) < 2 or value in nested or len(users) - 1 > budget or not all(
                epoch[user] == epoch[op] and _is_root(user, fuses) for user in users):
            continue
        budget -= len(users) - 1
        for user in users[1:]:
            copy = ir.Op(op.name, op.operands, (value.type,), op.attrs, loc=op.loc)
            region.ops.insert(region.ops.index(user), copy)
            epoch[copy] = epoch[op]
            user.operands = tuple(copy.results[0] if v is value else v for v in user.operands)
            for operand in op.operands:
                readers.setdefault(operand, []).append(copy)
        readers[value] = users[:1]


def _plan(region: ir.Region, counts: Counter, fuses: Callable[[ir.Op], bool]
          ) -> list[list[ir.Op]]:
    """Disjoint groups of ops of ``region``, each in program order with its root last."""
    epoch, effects = {}, 0
    for op in region.ops:
        effects += analysis.has_effects(op)
        epoch[op] = effects
    taken: set[ir.Op] = set()
    groups = []
    for root in reversed(region.ops):  # consumers first: a root takes its producers
        if root in taken or not _is_root(root, fuses):
            continue
        members = _grow(root, counts, epoch, taken, fuses)
        if len(members) >= 2:
            taken |= members
            groups.append([op for op in region.ops if op in members])
    return groups


def _is_root(op: ir.Op, fuses: Callable[[ir.Op], bool]) -> bool:
    if is_fusible_reduction(op):
        return _tensors_only(op) and fuses(op)
    return (per_element(op) and len(op.results) == 1 and _tensors_only(op) and fuses(op)
            and op.results[0].type.ndim >= 1)


def _grow(root: ir.Op, counts: Counter, epoch: dict, taken: set,
          fuses: Callable[[ir.Op], bool]) -> set[ir.Op]:
    members, stack = {root}, [root]
    while stack:
        consumer = stack.pop()
        for value in consumer.operands:
            producer = value.producer
            # its only uses are this consumer's (``x * x`` reads x twice)
            only_here = counts[value] == consumer.operands.count(value)
            if (isinstance(producer, ir.Op) and producer in epoch and producer not in members
                    and producer not in taken and per_element(producer)
                    and len(producer.results) == 1 and only_here
                    and epoch[producer] == epoch[root] and _tensors_only(producer)
                    and fuses(producer)):
                members.add(producer)
                stack.append(producer)
    return members


def _tensors_only(op: ir.Op) -> bool:
    """Whether every value ``op`` touches is a tensor (a fused body takes and yields tensors)."""
    return all(isinstance(value.type, TensorType) for value in (*op.operands, *op.results))


def _build(region: ir.Region, group: list[ir.Op]) -> tuple[ir.Op, ir.Region]:
    """Replaces ``group`` in ``region`` by one ``fused`` op; returns it and its unattached body."""
    produced = {v for op in group for v in op.results}
    inputs = list(dict.fromkeys(v for op in group for v in op.operands if v not in produced))
    body = ir.Region([v.type for v in inputs])
    args = dict(zip(inputs, body.args, strict=True))
    root = group[-1]
    result = root.results[0]
    fused = ir.Op("fused", inputs, (result.type,), {"result_types": (result.type,)},
                  loc=root.loc)
    position = region.ops.index(root)
    members = set(group)
    for op in group:
        op.operands = tuple(args.get(v, v) for v in op.operands)
        body.append(op)
    body.results = (result,)
    region.ops[position] = fused
    fused.results[0].region = region
    region.ops[:] = [op for op in region.ops if op not in members]
    return fused, body
