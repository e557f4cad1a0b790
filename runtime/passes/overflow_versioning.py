"""A loop whose Python-int arithmetic is tested for int64 overflow runs several steps untested
while its carried ints are small.

Staged Python ints are int64 and Python's are exact, so ``n = 3 * n + 1`` in a ``while`` loop is
tested at every step (``int_overflows`` and ``raise_if``): a compare and a branch on the loop's
critical path that hand-written Numba, which wraps, does not pay (Collatz: 1.22x Numba on the
AMD EPYC). No analysis bounds such a loop's values over all its steps, but one bounds a few:
if ``|n| <= B`` then ``3 * n + 1`` and the next ``K - 1`` steps' tests cannot fail when
``3**K * B`` is within int64. So the loop's body becomes

    if -B <= n <= B:       # each carried int the tests read
        k = 0; while k < K and test: step; k += 1      (no overflow tests; LLVM unrolls it)
    else:
        step                                         (the original, tested step)

Every step still runs in order with the loop's test before it, every other test and raise
stays where it was, and a step outside the bound is the original step: the same values and the
same ``OverflowError``, at the same step, as before. The bound ``B`` is the largest power of two
for which ``int_facts`` proves every overflow test of the ``K`` copies false, given ``[-B, B]``
for the guarded ints and the loop's own facts for everything else.

The untested steps are a loop of their own so that Numba types and lowers one copy of the
body (unrolled in the IR, eight steps cost Collatz 0.4 s of compile; as a loop, ~0.07 s) while
LLVM unrolls it. A loop qualifies when its body is small scalar code (``K`` copies of it at most
``COPIED_OPS`` ops, for the analysis; ``K`` at most ``STEPS`` and at least 2; no nested loops or
calls, no effects but raises) and so is its test: the test also runs after each strip, where it
only reads values or raises as it did at that point before. Collatz on the AMD EPYC: 1.22x ->
1.00-1.02x hand-written Numba.
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import effects, ir
from autostage.runtime.passes import analysis
from autostage.runtime.passes.int_facts import EXACT, IntFacts
from autostage.runtime.types import TensorType

STEPS = 16  # untested steps per strip (K), at most (8: Collatz 1.05x Numba; 16: 1.01x)
COPIED_OPS = 320  # ops of the K steps the analysis copies, at most: a larger body takes fewer
_SMALLEST = 8  # the least exponent of B worth a strip: |n| <= 2**8
_LARGEST = 62
_INT64 = (-(2**63), 2**63 - 1)


def run(module: ir.Module) -> bool:
    """Versions every qualifying loop of every function; whether any changed."""
    changed = False
    for function in module.functions.values():
        facts = None
        for loop in [op for op in function.body.walk() if op.name == "while"]:
            if not _qualifies(loop, module):
                continue
            facts = facts or IntFacts(function)
            changed |= _version(loop, facts)
    return changed


def _scalar(value: ir.Value) -> bool:
    return isinstance(value.type, TensorType) and value.type.ndim == 0


def _tested(raise_op: ir.Op) -> ir.Op | None:
    """The ``int_overflows`` test that ``raise_op`` raises on (alone, or and-ed with the
    predicate of the branch that computes it: ``speculation``), else None."""
    test = raise_op.operands[0].producer
    if isinstance(test, ir.Op) and test.name == "logical_and":
        tests = [v.producer for v in test.operands if isinstance(v.producer, ir.Op)
                 and v.producer.name == "int_overflows"]
        return tests[0] if tests else None
    return test if isinstance(test, ir.Op) and test.name == "int_overflows" else None


def _qualifies(loop: ir.Op, module: ir.Module) -> bool:
    """Whether ``loop`` is small scalar code with an overflow test in its body."""
    cond, body = loop.regions
    return (_steps(body) >= 2 and any(_raises_on_overflow(op) for op in body.walk())
            and _scalar_code(body, module) and _scalar_code(cond, module))


def _scalar_code(region: ir.Region, module: ir.Module) -> bool:
    """Whether ``region`` computes scalars without effects, but for raising (which a step or a
    test then does at the same point of the loop as before)."""
    for op in region.walk():
        if not all(_scalar(v) for v in (*op.operands, *op.results)):
            return False
        if op.name not in ("raise_if", "raise", "cond") and (op.regions or effects.own(op, module)):
            return False
    return all(_scalar(v) for v in region.args)


def _steps(body: ir.Region) -> int:
    """How many untested steps a strip of ``body`` takes."""
    return min(STEPS, COPIED_OPS // max(1, sum(1 for _ in body.walk())))


def _inline(region: ir.Region, args, into: ir.Region, untested: bool = False
            ) -> list[ir.Value]:
    """Copies ``region``'s ops into ``into`` reading ``args`` for its arguments (without their
    overflow raises when ``untested``); its yields."""
    copies = dict(zip(region.args, args, strict=True))
    for op in region.ops:
        if untested and _raises_on_overflow(op):
            continue
        copy = ir.copy_op(op, copies)
        if untested:
            _drop_overflow_raises(copy)
        into.append(copy)
    return [copies.get(v, v) for v in region.results]


def _raises_on_overflow(op: ir.Op) -> bool:
    return op.name == "raise_if" and _tested(op) is not None


def _drop_overflow_raises(op: ir.Op) -> None:
    for region in op.regions:
        region.ops[:] = [inner for inner in region.ops if not _raises_on_overflow(inner)]
        for inner in region.ops:
            _drop_overflow_raises(inner)


def _version(loop: ir.Op, facts: IntFacts) -> bool:
    """Rewrites ``loop``'s body into strips, when a bound is found; whether it was."""
    cond, body = loop.regions
    steps = _steps(body)
    strip = ir.Region([v.type for v in body.args])  # the tested steps, for the analysis
    values = list(strip.args)
    for _ in range(steps):
        values = _inline(body, values, strip)
    strip.results = tuple(values)
    tests = [_tested(op) for op in strip.walk() if _raises_on_overflow(op)]
    guarded = _read_by(tests, strip)
    if not guarded or any(body.args[k].type.dtype != np.int64 for k in guarded):
        return False
    # what the loop's facts know of its carried values (true at every step) and of the values
    # from outside it that the body reads
    known = {strip.args[k]: facts.interval(arg) for k, arg in enumerate(body.args)}
    inside = {v for op in body.walk() for v in op.results} | set(body.args)
    known.update((v, facts.interval(v)) for op in body.walk() for v in op.operands
                 if v not in inside)
    bound = _largest_bound(strip, tests, guarded, known)
    if bound is None:
        return False
    guarded = [k for k in guarded if not -bound <= known[strip.args[k]][0] <= known[
        strip.args[k]][1] <= bound]  # (those the facts keep within the bound need no guard)
    if not guarded:
        return False
    loop.regions = (cond, _strips(loop, bound, guarded, steps))
    return True


def _read_by(tests: list[ir.Op], region: ir.Region) -> list[int]:
    """The positions of ``region``'s arguments that ``tests`` read, through any ops."""
    producers = {v: op for op in region.walk() for v in op.results}
    seen, stack = set(), [v for test in tests for v in test.operands]
    while stack:
        value = stack.pop()
        if value in seen:
            continue
        seen.add(value)
        op = producers.get(value)
        if op is not None:
            stack += op.operands
            stack += [v for inner in op.regions for nested in inner.walk()
                      for v in nested.operands] + [v for inner in op.regions
                                                   for v in inner.results]
    return [k for k, arg in enumerate(region.args) if arg in seen]


def _largest_bound(strip: ir.Region, tests: list[ir.Op], guarded: list[int],
                   known: dict) -> int | None:
    """The largest ``2**e`` for which every test of ``strip`` is false when its guarded
    arguments lie within ``[-2**e, 2**e]``; None when not even ``2**_SMALLEST`` is."""
    function = ir.Function("strip", strip)

    def cannot_fail(exponent: int) -> bool:
        assumed = dict(known)
        for k in guarded:
            low, high = known.get(strip.args[k], _INT64)
            assumed[strip.args[k]] = (max(low, -(2**exponent)), min(high, 2**exponent))
        strip_facts = IntFacts(function, assumed=assumed)
        for test in tests:
            low, high = EXACT[test.attrs["op"]](*[strip_facts.interval(v) for v in test.operands])
            if not (_INT64[0] <= low and high <= _INT64[1]):
                return False
        return True

    if any(test.attrs.get("op") not in EXACT for test in tests) or not cannot_fail(_SMALLEST):
        return None
    low, high = _SMALLEST, _LARGEST  # cannot_fail(low) holds; find the largest that does
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if cannot_fail(middle) else (low, middle - 1)
    return 2**low


def _op(name: str, operands: tuple, loc: ir.Location | None, into: ir.Region) -> ir.Value:
    return into.append(analysis.new_op(name, operands, loc)).results[0]


def _constant(value: int, like: ir.Value, loc: ir.Location | None, into: ir.Region) -> ir.Value:
    array = np.asarray(value, like.type.dtype)
    return into.append(ir.Op("constant", (), (like.type,), {"value": array}, loc=loc)).results[0]


def _strips(loop: ir.Op, bound: int, guarded: list[int], steps: int) -> ir.Region:
    """The new body: ``steps`` untested steps when the guarded values are within the bound,
    else the original step."""
    cond, body = loop.regions
    new = ir.Region([v.type for v in body.args])
    small = None
    for k in guarded:
        arg = new.args[k]
        within = _op("logical_and", (
            _op("greater_equal", (arg, _constant(-bound, arg, loop.loc, new)), loop.loc, new),
            _op("less_equal", (arg, _constant(bound, arg, loop.loc, new)), loop.loc, new)),
            loop.loc, new)
        small = within if small is None else _op("logical_and", (small, within), loop.loc, new)
    fast = ir.Region()
    fast.results = tuple(_strip_loop(cond, body, list(new.args), steps, fast, loop.loc))
    tested = ir.Region()
    tested.results = tuple(_inline(body, new.args, tested))
    choice = new.append(_cond(small, fast, tested, loop.loc))
    new.results = choice.results
    return new


def _strip_loop(cond: ir.Region, body: ir.Region, args: list, steps: int, into: ir.Region,
                loc: ir.Location | None) -> list[ir.Value]:
    """A loop of at most ``steps`` untested copies of ``body`` from ``args`` into ``into``,
    each run while the loop's test is true (LLVM unrolls it: the steps leave the loop as soon as
    the test fails, and Numba compiles one copy); the values after the last that ran."""
    count = TensorType(np.int64, ())
    types = (count, *[v.type for v in args])
    test, step = ir.Region(types), ir.Region(types)
    more = _op("less", (test.args[0], _constant(steps, test.args[0], loc, test)), loc, test)
    test.results = (_op("logical_and", (more, *_inline(cond, test.args[1:], test)), loc, test),)
    values = _inline(body, step.args[1:], step, untested=True)
    step.results = (_op("add", (step.args[0], _constant(1, step.args[0], loc, step)), loc, step),
                    *values)
    loop = ir.Op("while", (_constant(0, test.args[0], loc, into), *args), types,
                 {"carried_types": types}, (test, step), loc=loc)
    return list(into.append(loop).results[1:])


def _cond(predicate: ir.Value, then: ir.Region, other: ir.Region, loc: ir.Location | None
          ) -> ir.Op:
    types = tuple(v.type for v in other.results)
    return ir.Op("cond", (predicate,), types, {"result_types": types}, (then, other), loc=loc)
