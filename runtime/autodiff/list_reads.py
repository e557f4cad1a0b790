"""Reads of a carried list in the replay of a loop body: the final list, at that moment's index.

The replay of a ``while`` body binds a carried list to the loop's final list (``list_appends``).
A read in iteration ``i`` (``h = outs[-1]``, ``len(outs)``) saw the list as it was then: its
first ``L`` elements, ``L`` being the length at the start of iteration ``i`` (the forward loop
saves it: ``length_stacks``) plus the appends of the iteration before the read. The body only
appends, so element ``j < L`` of that list is element ``j`` of the final list, which the replay
reads at ``j`` normalized against ``L`` (a negative index counts from ``L``); ``len()`` is ``L``;
and the cotangent of such a list value has ``L`` rows (``list_length`` of it is ``L`` for the
VJP rules too). A read of a list that a branch or an inner loop appended to in the same iteration
has no known ``L``: refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from autostage.runtime import ir
from autostage.runtime.autodiff import build, residuals
from autostage.runtime.autodiff.backprop import GradientError, captured
from autostage.runtime.types import ListType, scalar

INDEX = scalar(np.int64)
_READS = ("list_get", "list_length")


def read_lists(body: ir.Region, n: int, appended: dict[int, bool]) -> list[int]:
    """The positions of the carried lists (among the ``n`` carried values) that ``body`` reads
    at its top level, directly or after appends; ``appended``: whether the body yields each
    one after appends (``list_appends``), rather than a list it makes.

    Raises:
      GradientError: a read of the list after a branch or an inner loop appended to it, or of
        a list the body replaces with one it makes (the final list does not hold the earlier
        iterations' lists).
    """
    found = []
    for k, arg in enumerate(body.args[:n]):
        if not isinstance(arg.type, ListType):
            continue
        chain, derived = {arg}, set()
        for op in body.ops:
            if op.name == "list_append" and op.operands[0] in chain:
                chain.add(op.results[0])
            elif op.name in _READS and op.operands[0] in chain:
                if not appended.get(k, True):
                    raise GradientError(
                        "autostage can differentiate a staged loop that reads a list it carries "
                        "only when the loop appends to that list; this one replaces it with a "
                        f"new list{_at(op)}: carry the value read (h = outs[-1]) instead")
                found.append(k) if k not in found else None
            elif op.name in _READS and op.operands[0] in derived:
                raise GradientError(
                    "autostage can differentiate a staged loop that reads a list it carries "
                    f"only where the read sees the list's appends one by one{_at(op)}: read it "
                    "before a branch or an inner loop appends to it")
            elif any(v in chain or v in derived for v in (*op.operands, *_captured(op))):
                derived.update(r for r in op.results if isinstance(r.type, ListType))
    return found


def length_stacks(op: ir.Op, positions: list[int]) -> dict[int, ir.Value]:
    """For each carried list at ``positions``, the stack of its length at the start of each
    iteration of the ``while`` ``op``: pushed already, or pushed from now on."""
    body = op.regions[1]
    stacks = body.args[op.attrs["saved_inputs"]:]
    pushed = {}
    for o in body.ops:
        if o.name == "list_append" and o.operands[0] in stacks:
            source = o.operands[1].producer
            if isinstance(source, ir.Op) and source.name == "list_length" and (
                    source.operands[0] in body.args):
                pushed[body.args.index(source.operands[0])] = op.results[
                    body.args.index(o.operands[0])]
    new = [k for k in positions if k not in pushed]
    if new:
        def lengths(copies: dict) -> list[ir.Value]:
            return [build.op1("list_length", copies[body.args[k]]) for k in new]

        made = residuals.add_stacks(op, lengths, [INDEX] * len(new), at_start=True)
        pushed.update(zip(new, made, strict=True))
    return {k: pushed[k] for k in positions}


def rewrite(region: ir.Region, replayed: Sequence[ir.Op], lengths: dict[ir.Value, ir.Value]
            ) -> Callable[[], None]:
    """Makes the reads among ``replayed`` (ops of ``region``) of the list values ``lengths``
    starts from (replay value -> its length then) and of the appends to them read the final
    list at normalized indices. Returns the step to run once the backward ops exist: every
    ``len()`` of those list values, the replay's and the VJP rules', becomes its length then."""
    lengths, lens = dict(lengths), {}
    for op in replayed:
        lst = op.operands[0] if op.operands else None
        if lst not in lengths:
            continue
        if op.name == "list_append":
            lengths[op.results[0]], _ = build.placed(region, op, _one_more, lengths[lst])
        elif op.name == "list_get":
            index, _ = build.placed(region, op, _normalized, op.operands[1], lengths[lst])
            op.operands = (lst, index)
        elif op.name == "list_length":
            lens[op.results[0]] = lengths[lst]
    return lambda: substitute_lengths(region, lengths, lens)


def substitute_lengths(region: ir.Region, lengths: dict[ir.Value, ir.Value],
                       lens: dict[ir.Value, ir.Value]) -> None:
    """Every ``list_length`` in ``region`` of a list value of ``lengths`` reads as its length
    then: the replay's (``lens``), and those the VJP rules made for the cotangent rows."""
    new = {op.results[0]: lengths[op.operands[0]] for op in region.walk()
           if op.name == "list_length" and op.operands[0] in lengths}
    new.update(lens)
    for op in region.walk():
        if any(v in new for v in op.operands):
            op.operands = tuple(new.get(v, v) for v in op.operands)
        for inner in op.regions:
            inner.results = tuple(new.get(v, v) for v in inner.results)
    region.results = tuple(new.get(v, v) for v in region.results)


def _normalized(index: ir.Value, length: ir.Value) -> ir.Value:
    """``index`` (a staged int, maybe negative) as an index from 0 of a list of ``length``."""
    index = build.cast(index, INDEX.dtype)
    negative = build.op1("less", index, build.constant(0, INDEX.dtype))
    return build.op1("where", negative, build.add(index, length), index)


def _one_more(length: ir.Value) -> ir.Value:
    return build.add(length, build.constant(1, INDEX.dtype))


def _at(op: ir.Op) -> str:
    return f" (at {op.loc})" if op.loc is not None else ""


def _captured(op: ir.Op) -> list[ir.Value]:
    return captured(op) if op.regions else []
