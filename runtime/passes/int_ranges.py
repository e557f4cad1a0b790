"""Python-int arithmetic whose operands' ranges keep it within int64 needs no overflow test.

Staged Python ints are int64, and Python's are exact: each ``+``, ``-``, ``*``, unary ``-`` and
``abs`` of Python ints is tested (``int_overflows`` and ``raise_if``, ``runtime/ops/checks.py``),
and each test is a branch and a raise in the compiled code (~20-30 ms of Numba's compile each).
Many of them compute with sizes, whose ranges are known: ``np.split``'s bounds
``k * (n // 4) + min(k, n % 4)``, ``len(items) + 1``, ``n // 2 - 1``. A forward pass over each
function gives every integer scalar an interval:

* a constant: itself; a cast of a narrower integer or a bool: that type's range;
* an array's size along an axis (``dim``) or its element count (``size``): [0, 2**63 - 1] (a
  broadcast view's sizes may be that large with no memory behind them);
* a list's length: [0, 2**56]: its items are in memory, and no machine addresses 2**57 bytes;
* ``add``, ``subtract``, ``multiply``, ``negative``, ``absolute``, ``floor_divide`` and
  ``remainder`` by a positive divisor, ``minimum``, ``maximum``, ``where``: computed from their
  operands' intervals when the exact result stays within the result's type (else its type's
  range: the value may have wrapped);
* a counter (``counters.py``: a loop's index, ``count += 1``): [-2**62, 2**62], since it starts
  within 2**32 of zero and changes by one per step: more than 2**62 - 2**32 steps, decades at one
  per clock cycle, to leave that interval (``i * -1``, ``start + 2 * i`` of a ``range`` loop);
* anything else (an argument, another loop-carried value, a list item): its type's range.

A test whose exact result lies within int64 for every pair of operands in their intervals is
false whatever values run: its ``raise_if`` goes (the test is left to dead-code elimination).
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import ir
from autostage.runtime.passes import counters
from autostage.runtime.types import TensorType

Interval = tuple[int, int]
LIST_LENGTH_LIMIT = 2**56  # the most items a list in memory can hold (see the docstring)
COUNTER_LIMIT = 2**62  # how far from zero a counter can get in any run (see the docstring)
_SIZE = (0, 2**63 - 1)
_EXACT = {"add": lambda a, b: (a[0] + b[0], a[1] + b[1]),
          "subtract": lambda a, b: (a[0] - b[1], a[1] - b[0]),
          "multiply": lambda a, b: _corners(lambda x, y: x * y, a, b),
          "negative": lambda a: (-a[1], -a[0]),
          "absolute": lambda a: (0 if a[0] <= 0 <= a[1] else min(abs(a[0]), abs(a[1])),
                                 max(abs(a[0]), abs(a[1]))),
          "minimum": lambda a, b: (min(a[0], b[0]), min(a[1], b[1])),
          "maximum": lambda a, b: (max(a[0], b[0]), max(a[1], b[1]))}
_TESTED = ("add", "subtract", "multiply", "negative", "absolute")  # the tests this pass drops


def run(module: ir.Module) -> bool:
    """Drops the overflow tests that cannot fail in every function; whether any went."""
    changed = False
    for function in module.functions.values():
        ranges = dict.fromkeys(counters.counters_of(function), (-COUNTER_LIMIT, COUNTER_LIMIT))
        changed |= _region(function.body, ranges)
    return changed


def _region(region: ir.Region, ranges: dict[ir.Value, Interval]) -> bool:
    """Records the intervals of ``region``'s integer scalars (values are defined once, so one
    table serves the nested regions) and removes its ``raise_if`` of tests that cannot fail."""
    kept, changed = [], False
    for op in region.ops:
        test = op.operands[0].producer if op.name == "raise_if" else None
        if isinstance(test, ir.Op) and test.name == "int_overflows" and _cannot_fail(test,
                                                                                     ranges):
            changed = True
            continue
        for inner in op.regions:
            changed |= _region(inner, ranges)
        if len(op.results) == 1 and _range_of_type(op.results[0]) is not None:
            interval = _interval(op, ranges)
            if interval is not None:
                ranges[op.results[0]] = interval
        kept.append(op)
    region.ops[:] = kept
    return changed


def _cannot_fail(test: ir.Op, ranges: dict[ir.Value, Interval]) -> bool:
    """Whether ``int_overflows`` test ``test`` is false for all operands in their intervals."""
    if test.attrs.get("op") not in _TESTED:
        return False
    low, high = _EXACT[test.attrs["op"]](*[_range(v, ranges) for v in test.operands])
    return -(2**63) <= low and high <= 2**63 - 1


def _interval(op: ir.Op, ranges: dict[ir.Value, Interval]) -> Interval | None:
    """The interval of ``op``'s integer scalar result, or None when it is its type's range."""
    name, result = op.name, op.results[0]
    if name == "constant":
        value = np.asarray(op.attrs["value"])
        return (int(value), int(value)) if value.ndim == 0 else None
    if name in ("dim", "size"):
        return _SIZE
    if name == "list_length":
        return (0, LIST_LENGTH_LIMIT)
    operands = [_range(v, ranges) for v in op.operands]
    if name == "cast":
        exact = operands[0]
    elif name in _EXACT and len(operands) == (1 if name in ("negative", "absolute") else 2):
        exact = _EXACT[name](*operands)
    elif name in ("floor_divide", "remainder") and len(operands) == 2 and operands[1][0] > 0:
        a, b = operands
        exact = _corners(lambda x, y: x // y, a, b) if name == "floor_divide" else (
            0, min(b[1] - 1, a[1]) if a[0] >= 0 else b[1] - 1)
    elif name == "where" and len(operands) == 3:
        exact = (min(operands[1][0], operands[2][0]), max(operands[1][1], operands[2][1]))
    else:
        return None
    low, high = _range_of_type(result)
    return exact if low <= exact[0] and exact[1] <= high else None


def _range(value: ir.Value, ranges: dict[ir.Value, Interval]) -> Interval:
    """``value``'s interval: recorded, else its type's range (an unbounded one for floats and
    arrays, which no test this pass drops may read)."""
    known = ranges.get(value)
    if known is not None:
        return known
    return _range_of_type(value) or (-(2**200), 2**200)


def _range_of_type(value: ir.Value) -> Interval | None:
    """The range of an integer (or bool) scalar's type; None for any other value."""
    t = value.type
    if not (isinstance(t, TensorType) and t.ndim == 0 and t.dtype.kind in "iub"):
        return None
    if t.dtype.kind == "b":
        return (0, 1)
    info = np.iinfo(t.dtype)
    return (int(info.min), int(info.max))


def _corners(f, a: Interval, b: Interval) -> Interval:
    """The interval of ``f`` over two intervals, for an ``f`` monotone in each operand on it
    (products; floor division by positive divisors): its values at the corners."""
    values = [f(x, y) for x in a for y in b]
    return (min(values), max(values))
