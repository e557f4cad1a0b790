"""What the backward loop of a staged ``while`` (or a backward branch of a ``cond``) reads from
the forward one: saved or recomputed.

The backward loop (``control_flow.while_vjp``) replays the forward body of each iteration from the
carried values the forward loop pushed onto stacks, and differentiates the copy. Replaying all of
it runs the forward pass a second time: in an RNN, the two matmuls and the tanh of every step.
Once the backward body is built, ``read_saved`` finds the forward values (residuals) it reads — a
tanh's result for its derivative, a matmul's operands — and for each one:

* recomputes it when that is cheap: views and shape queries (``_RECOMPUTED``) and 0-d
  arithmetic, from their operands (which are then residuals too);
* otherwise saves it: the forward loop pushes it onto a stack of its own (``add_stacks``) and the
  backward body reads it back by iteration index;
* but a value read only for its shape (the primal of a ``sum_to`` that undoes broadcasting) is
  neither: the backward body derives its sizes from those of saved and recomputed values by the
  shape rules of element-wise ops and 2-d matmul (``_Sizes``; else the forward loop pushes the
  sizes alone), and the ``sum_to`` takes them, so no data is kept and the forward ops stay fused.

The replayed ops that only computed saved values are then dead, and removed. A saved value is the
one the forward pass computed (replays of random draws and Variable writes are refused anyway), so
nothing changes but the work. Memory: O(iterations x size of the saved values), as for the
carried values; ``autostage.checkpoint`` on a function called in the body trades the memory of
its insides for recomputation.

A backward ``cond`` replays the taken branch in the same way; ``yield_saved`` makes the forward
``cond`` yield the costly values each branch computes (the other branch yields placeholders of
their types, ``undef``) and the backward branch read them: the branch's matmuls and
transcendentals run once, not twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np
from autostage.runtime import ir, op_registry, tracing
from autostage.runtime.autodiff import build
from autostage.runtime.types import TensorType, scalar

INDEX = scalar(np.int64)

# Recomputed rather than saved: they copy no data (or only a shape), so a replay costs nothing.
_RECOMPUTED = frozenset((
    "getitem", "reshape", "transpose", "expand_dims", "squeeze", "broadcast_to", "dim", "size",
    "constant", "full", "full_like", "list_get", "list_length", "stop_gradient"))


def read_saved(op: ir.Op, backward: ir.Region, index: ir.Value, replayed: Sequence[ir.Op],
               copies: dict[ir.Value, ir.Value]) -> None:
    """Makes ``backward`` (the backward body of the ``while`` ``op``, built from a replay
    ``replayed`` of its forward body with map ``copies``) read saved residuals at iteration
    ``index`` instead of recomputing them, and removes the replayed ops left unused."""
    body = op.regions[1]
    original = {copies[r]: r for o in body.ops for r in o.results if r in copies}
    replay = set(replayed)
    values, shapes, recomputed = _to_save(body, _residuals(backward, replay, original))
    if not values and not shapes:
        return
    sizes = _Sizes(body, copies, set(values), recomputed)
    pushed = [v for v in shapes if not sizes.derivable(v)]
    stacks = _stacks_of(op, values, [v for v in pushed if None in v.type.shape])

    def read_back() -> dict[ir.Value, ir.Value]:  # at the top of the backward body
        sizes.pushed = {v: [d if d is not None else build.op1("list_get", stacks[v, k], index)
                            for k, d in enumerate(v.type.shape)] for v in pushed}
        return {copies[v]: build.op1("list_get", stacks[v], index) for v in values}

    sizes.read, gets = build.placed(backward, 0, read_back)
    _substitute(backward, sizes.read, skip=set(gets))
    after = max(backward.ops.index(o) for o in replay) + 1 if replay else len(gets)
    targets, _ = build.placed(backward, after, lambda: {  # once the replay made the operands
        copies[v]: (v, sizes.of(v)) for v in shapes})
    _read_shapes(backward, targets, skip=replay)
    _remove_unused(backward, replay)


def yield_saved(op: ir.Op, backwards: Sequence[tuple[ir.Region, Sequence[ir.Op], dict]]
                ) -> None:
    """Makes each backward branch of the ``cond`` ``op`` (``backwards``: per forward branch,
    the backward region, its replay of the branch and the replay's map) read the costly
    values of the replay from new results of ``op`` (rebuilt in place, keeping its result
    values), and removes the replayed ops left unused. Values read for their shape only are
    saved too: yielding a value the branch computes costs at most writing it to an array where
    it was fused."""
    if not op.results:
        return
    saved = []
    for region, (backward, replayed, copies) in zip(op.regions, backwards, strict=True):
        original = {copies[r]: r for o in region.ops for r in o.results if r in copies}
        needed = _residuals(backward, set(replayed), original)
        values, shapes, _ = _to_save(region, needed)
        saved.append([*values, *shapes])
    if not any(saved):
        return
    for k, region in enumerate(op.regions):
        with tracing.reopen(region):
            region.results = (*region.results, *(
                v if j == k else build.op1("undef", type=v.type)
                for j, values in enumerate(saved) for v in values))
    extra = build.add_results(op, [v.type for values in saved for v in values])
    op.attrs = {**op.attrs, "result_types": tuple(v.type for v in op.results)}
    found = iter(extra)
    for values, (backward, replayed, copies) in zip(saved, backwards, strict=True):
        _substitute(backward, {copies[v]: next(found) for v in values}, skip=set())
        _remove_unused(backward, set(replayed))


def _residuals(backward: ir.Region, replay: set[ir.Op],
               original: dict[ir.Value, ir.Value]) -> dict[ir.Value, bool]:
    """The forward body's values (as ``original`` maps the replay's) that the ops of
    ``backward`` other than the replay read, in first-read order: True for those read only for
    their shape (``OpDef.shape_operands``: a ``sum_to``'s primal, a ``full_like``'s)."""
    found: dict[ir.Value, bool] = {}

    def read(value: ir.Value, shape_only: bool) -> None:
        if value in original:
            found[value] = found.get(value, True) and shape_only

    for _, inner, k, shape_only in _operand_reads(backward, replay):
        read(inner.operands[k], shape_only)
    for op in backward.ops:
        if op in replay:
            continue
        for region in op.regions:
            for v in _yields(region):
                read(v, False)
    for v in backward.results:
        read(v, False)
    return {original[v]: shape_only for v, shape_only in found.items()}


def _yields(region: ir.Region) -> list[ir.Value]:
    return [*region.results, *(v for o in region.walk() for r in o.regions for v in r.results)]


def _to_save(body: ir.Region, needed: dict[ir.Value, bool]
             ) -> tuple[list[ir.Value], list[ir.Value], set[ir.Value]]:
    """Of the forward ``body``'s values ``needed`` (True: only for their shape), those to save,
    those whose shape is needed, and those recomputed. Cheap values are recomputed from their
    operands, which are needed in turn; an argument is saved already (the carried values'
    stacks); a list cannot be saved (a list of lists is not a type): recomputed."""
    produced = {r: o for o in body.ops for r in o.results}
    chosen: dict[ir.Value, None] = {}
    shapes: dict[ir.Value, None] = {}
    seen: set[ir.Value] = set()
    pending = [v for v, shape_only in needed.items() if not shape_only]
    while pending:
        value = pending.pop()
        if value in seen or value not in produced:
            continue
        seen.add(value)
        producer = produced[value]
        if _cheap(producer) or not isinstance(value.type, TensorType):
            pending.extend(producer.operands)
            pending.extend(v for r in producer.regions for o in r.walk() for v in o.operands)
        else:
            chosen[value] = None
    for value, shape_only in needed.items():
        if shape_only and value in produced and value not in seen:
            shapes[value] = None
    return list(chosen), list(shapes), seen - set(chosen)


def _cheap(op: ir.Op) -> bool:
    """A view, a shape query or 0-d arithmetic (not a reduction of an array to a 0-d value)."""
    if op.name in _RECOMPUTED:
        return True
    return not op.regions and all(isinstance(v.type, TensorType) and v.type.shape == ()
                                  for v in (*op.operands, *op.results))


class _Sizes:
    """The sizes of forward values in the backward body, without their data: read from a saved
    or recomputed value, derived by the shape rule of an element-wise op (broadcasting: the
    larger of the operands' sizes) or a 2-d matmul, or else pushed by the forward loop."""

    def __init__(self, body: ir.Region, copies: dict, saved: set, recomputed: set):
        self.produced = {r: o for o in body.ops for r in o.results}
        self.copies, self.saved, self.recomputed = copies, saved, recomputed
        self.read: dict[ir.Value, ir.Value] = {}  # replay value -> its saved copy
        self.pushed: dict[ir.Value, list] = {}  # value -> its sizes read back
        self._found: dict[ir.Value, list] = {}

    def _available(self, v: ir.Value) -> bool:
        return v in self.saved or v in self.recomputed or v not in self.produced

    def derivable(self, v: ir.Value) -> bool:
        if self._available(v) or v.type.shape == ():
            return True
        producer = self.produced[v]
        if op_registry.lookup(producer.name).elementwise:
            return all(self.derivable(u) for u in producer.operands)
        return _is_matmul(producer) and all(self.derivable(u) for u in producer.operands)

    def of(self, v: ir.Value) -> list:
        """One entry per axis of ``v``: an int, or a 0-d int64 value (emitted here)."""
        if v not in self._found:
            self._found[v] = self._sizes(v)
        return self._found[v]

    def _sizes(self, v: ir.Value) -> list:
        if v in self.pushed:
            return self.pushed[v]
        if self._available(v):
            there = self.copies.get(v, v)
            there = self.read.get(there, there)
            return [d if d is not None else build.op1("dim", there, axis=k)
                    for k, d in enumerate(v.type.shape)]
        producer = self.produced[v]
        if _is_matmul(producer):
            a, b = producer.operands
            return [self.of(a)[0], self.of(b)[1]]
        rank = len(v.type.shape)
        found = []
        for k, static in enumerate(v.type.shape):
            if static is not None:
                found.append(static)
                continue
            candidates = [self.of(u)[k - rank + u.type.ndim] for u in producer.operands
                          if k - rank + u.type.ndim >= 0]
            staged = [c for c in candidates if not isinstance(c, int)]
            larger = [c for c in candidates if isinstance(c, int) and c != 1]
            if larger:  # the operands broadcast: any other size is 1 or this one
                found.append(larger[0])
                continue
            size = staged[0]
            for other in staged[1:]:
                size = build.op1("maximum", size, other)
            found.append(size)
        return found


def _is_matmul(op: ir.Op) -> bool:
    return op.name == "matmul" and all(u.type.ndim == 2 for u in op.operands)


def _operand_reads(region: ir.Region, skip: set[ir.Op]
                   ) -> Iterator[tuple[ir.Op, ir.Op, int, bool]]:
    """(top-level op, op at any depth in it, operand position, read only for the shape) for
    each operand of the ops of ``region`` but ``skip`` and the ops inside them."""
    for op in region.ops:
        if op in skip:
            continue
        for inner in (op, *(o for r in op.regions for o in r.walk())):
            shape_only = op_registry.lookup(inner.name).shape_operands
            for k in range(len(inner.operands)):
                yield op, inner, k, k in shape_only


def _stand_in(value: ir.Value, sizes: list[ir.Value]) -> ir.Value:
    """A zero-strided array of ``value``'s dtype and shape, for an op that reads the shape."""
    zero = build.constant(0, value.type.dtype)
    return build.op1("broadcast_to", zero, *sizes, shape=value.type.shape)


def _read_shapes(region: ir.Region, targets: dict, skip: set[ir.Op]) -> None:
    """Makes the ops of ``region`` but ``skip`` (at any depth) that read a value of
    ``targets`` (replay value -> (forward value, sizes)) for its shape only take the sizes
    instead: a ``sum_to`` its staged sizes, any other op a zero-strided stand-in."""
    stand_ins: dict[ir.Value, ir.Value] = {}
    for op, inner, k, shape_only in _operand_reads(region, skip):
        v = inner.operands[k] if k < len(inner.operands) else None
        if not shape_only or v not in targets:
            continue
        value, sizes = targets[v]
        staged = [d for d in sizes if not isinstance(d, int)]
        if inner.name == "sum_to":  # (its only shape operand: the target's sizes instead)
            inner.operands = (inner.operands[0], *staged)
            inner.attrs = {**inner.attrs, "shape": value.type.shape}
            continue
        if v not in stand_ins:
            stand_ins[v], _ = build.placed(region, op, _stand_in, value, staged)
        inner.operands = tuple(stand_ins[v] if j == k else u
                               for j, u in enumerate(inner.operands))


def _stacks_of(op: ir.Op, values: list[ir.Value], sized: list[ir.Value]) -> dict:
    """The stack of each body value in ``values`` (key: the value), and of each unknown size
    of those in ``sized`` (key: (value, axis)): one the forward loop pushes it onto already, or
    a new one (``add_stacks``)."""
    body = op.regions[1]
    stacks = body.args[op.attrs["saved_inputs"]:]
    pushes = {o.operands[1]: op.results[body.args.index(o.operands[0])] for o in body.ops
              if o.name == "list_append" and o.operands[0] in stacks}
    dims = {(o.operands[0], o.attrs["axis"]): o.results[0] for o in body.ops if o.name == "dim"}
    wanted = [*((v, v) for v in values), *(((v, k), dims.get((v, k))) for v in sized
                                           for k, size in enumerate(v.type.shape) if size is None)]
    found = {key: pushes[pushed] for key, pushed in wanted if pushed in pushes}
    new = [key for key, _ in wanted if key not in found]
    if new:
        def pushed(copies: dict) -> list[ir.Value]:
            return [copies[key] if isinstance(key, ir.Value) else
                    build.op1("dim", copies[key[0]], axis=key[1]) for key in new]

        types = [key.type if isinstance(key, ir.Value) else INDEX for key in new]
        found.update(zip(new, add_stacks(op, pushed, types), strict=True))
    return found


def add_stacks(op: ir.Op, pushed: Callable[[dict], list[ir.Value]], types: Sequence,
               at_start: bool = False) -> tuple[ir.Value, ...]:
    """Rebuilds the ``while`` ``op`` (in place, keeping its result values) to push, at the end
    of each iteration, the values ``pushed(copies)`` picks from its rebuilt body (``copies``
    maps the old body's values to the new) onto new stacks of element ``types``, which it
    carries; returns the stacks, new results of ``op``. ``at_start``: ``pushed`` computes its
    values before the body's ops, from the arguments (a list's length before its appends,
    which may then update it in place)."""
    region = op.results[0].region
    stacks, _ = build.placed(region, op, lambda: [build.op1("list_new", element=t) for t in types])
    n = len(op.operands)
    cond, body = op.regions
    carried = (*(v.type for v in op.results), *(s.type for s in stacks))
    with tracing.region(carried) as new_cond:
        _, copies = replay_all(cond, new_cond.args[:n])
        new_cond.results = tuple(copies.get(v, v) for v in cond.results)
    with tracing.region(carried) as new_body:
        early = pushed(dict(zip(body.args, new_body.args, strict=False))) if at_start else None
        _, copies = replay_all(body, new_body.args[:n])
        pushes = [build.op1("list_append", s, x) for s, x in zip(
            new_body.args[n:], early if at_start else pushed(copies), strict=True)]
        new_body.results = (*(copies.get(v, v) for v in body.results), *pushes)
    op.operands = (*op.operands, *stacks)
    op.regions = (new_cond, new_body)
    op.attrs = {**op.attrs, "carried_types": carried}
    return build.add_results(op, [s.type for s in stacks])


def replay_all(region: ir.Region, args: Sequence[ir.Value]) -> tuple[list[ir.Op], dict]:
    """Copies every op of ``region`` into the current region (the forward loop rebuilt must
    still print), its arguments bound to ``args``; returns the copies and the map."""
    copies: dict[ir.Value, ir.Value] = dict(zip(region.args, args, strict=True))
    target = tracing.current().region
    return [target.append(ir.copy_op(op, copies)) for op in region.ops], copies


def _substitute(region: ir.Region, new: dict[ir.Value, ir.Value], skip: set[ir.Op]) -> None:
    """Makes every op of ``region`` (at any depth) but ``skip``, and every yield, read
    ``new[v]`` for each value ``v`` it read."""
    for op in region.walk():
        if op not in skip and any(v in new for v in op.operands):
            op.operands = tuple(new.get(v, v) for v in op.operands)
        for inner in op.regions:
            inner.results = tuple(new.get(v, v) for v in inner.results)
    region.results = tuple(new.get(v, v) for v in region.results)


def _remove_unused(region: ir.Region, removable: set[ir.Op]) -> None:
    """Removes the ops of ``removable`` (top-level ops of ``region``, replays of ops that ran
    in the forward pass) whose results nothing reads, last first."""
    used: set[ir.Value] = set(region.results)
    kept = []
    for op in reversed(region.ops):
        if op in removable and not any(r in used for r in op.results):
            continue
        kept.append(op)
        for inner in (op, *(o for r in op.regions for o in r.walk())):
            used.update(inner.operands)
        for inner in op.regions:
            used.update(_yields(inner))
    region.ops[:] = reversed(kept)
