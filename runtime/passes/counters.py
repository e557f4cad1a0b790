"""Counters need no overflow check: drops the int64 overflow tests of ``x + 1`` and ``x - 1``
where ``x`` is a counter.

Staged Python ints are int64, and Python's are exact: each ``+``, ``-`` and ``*`` of Python
ints is tested (``int_overflows`` and ``raise_if``, ``runtime/ops/checks.py``). A *counter* is
an int64 scalar that starts as a constant of at most 2**32 in size and changes only by steps of
one: ``x + 1``, ``1 + x``, ``x - 1``, carried around loops and out of branches
(``count += 1``, a ``for`` loop's index). After N steps its size is at most 2**32 + N, so it
leaves int64 only after more than 9 * 10**18 steps: more than fifty years of steps at one per
clock cycle, and a program Python would not finish in any time at all. The test of such a step
is dropped (the arithmetic stays), so a loop that counts runs as fast as hand-written code.

The counters are found as the largest set of values all of whose definitions are counters (an
optimistic fixpoint over the loops' carried values), and only steps whose test names a counter
and the constant one lose their test.
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import ir
from autostage.runtime.types import TensorType

START_LIMIT = 2**32  # the largest start a counter may have
_STEPS = {"add": (1, -1), "subtract": (1, -1)}  # the steps of size one


def run(module: ir.Module) -> bool:
    """Drops the overflow tests of counters' steps in every function; whether any went."""
    changed = False
    for function in module.functions.values():
        changed |= _drop_tests(function.body, counters_of(function))
    return changed


def counters_of(function: ir.Function) -> set[ir.Value]:
    """The values of ``function`` that are counters."""
    return _counters(_sources(function.body))


def _is_int64_scalar(value: ir.Value) -> bool:
    return isinstance(value.type, TensorType) and value.type.shape == () and (
        value.type.dtype == np.int64)


def _constant(value: ir.Value) -> int | None:
    """The int a ``constant`` op gives ``value``, or None."""
    op = value.producer
    if not isinstance(op, ir.Op) or op.name != "constant" or not _is_int64_scalar(value):
        return None
    return int(np.asarray(op.attrs["value"]))


def _unit_step(op: ir.Op) -> ir.Value | None:
    """The value ``op`` steps by one (``x + 1``, ``1 + x``, ``x - 1``), or None."""
    if op.name not in _STEPS or len(op.operands) != 2:
        return None
    a, b = op.operands
    if _constant(b) in _STEPS[op.name]:
        return a
    if op.name == "add" and _constant(a) in _STEPS[op.name]:
        return b
    return None


def _sources(region: ir.Region, sources: dict | None = None) -> dict[ir.Value, list | None]:
    """For each int64 scalar a counter could be: the values it is made from (a step's operand,
    a loop's start and next values, a branch's yields), ``[]`` for a small constant, None for
    anything else."""
    sources = {} if sources is None else sources
    for op in region.ops:
        for value in op.results:
            if not _is_int64_scalar(value):
                continue
            start = _constant(value)
            stepped = _unit_step(op)
            if start is not None:
                sources[value] = [] if abs(start) <= START_LIMIT else None
            elif stepped is not None:
                sources[value] = [stepped]
            else:
                sources[value] = None
        if op.name == "while":
            cond, body = op.regions
            for i, carried in enumerate(op.operands):
                made = [carried, body.results[i]]
                for value in (cond.args[i], body.args[i], op.results[i]):
                    if _is_int64_scalar(value):
                        sources[value] = made
        elif op.name == "cond":
            for i, value in enumerate(op.results):
                if _is_int64_scalar(value):
                    sources[value] = [r.results[i] for r in op.regions]
        for inner in op.regions:
            _sources(inner, sources)
    return sources


def _counters(sources: dict[ir.Value, list | None]) -> set[ir.Value]:
    """The largest set of values made only from counters (all of them, at first; then every
    value made from one outside the set leaves it, until none does)."""
    counters = {v for v, made in sources.items() if made is not None}
    changed = True
    while changed:
        changed = False
        for value in list(counters):
            if any(m not in counters for m in sources[value]):
                counters.discard(value)
                changed = True
    return counters


def _drop_tests(region: ir.Region, counters: set[ir.Value]) -> bool:
    """Removes each ``raise_if`` of an ``int_overflows`` test of a counter's unit step (the test
    itself is left to dead-code elimination)."""
    kept, changed = [], False
    for op in region.ops:
        for inner in op.regions:
            changed |= _drop_tests(inner, counters)
        test = op.operands[0].producer if op.name == "raise_if" else None
        if isinstance(test, ir.Op) and test.name == "int_overflows" and _counts(test, counters):
            changed = True
            continue
        kept.append(op)
    region.ops[:] = kept
    return changed


def _counts(test: ir.Op, counters: set[ir.Value]) -> bool:
    """Whether ``test`` checks a counter's unit step."""
    op = test.attrs.get("op")
    if op not in _STEPS or len(test.operands) != 2:
        return False
    a, b = test.operands
    return (a in counters and _constant(b) in _STEPS[op]) or (
        op == "add" and b in counters and _constant(a) in _STEPS[op])
