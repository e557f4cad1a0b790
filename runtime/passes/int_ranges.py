"""Python-int arithmetic whose operands' ranges keep it within int64 needs no overflow test.

Staged Python ints are int64, and Python's are exact: each ``+``, ``-``, ``*``, unary ``-`` and
``abs`` of Python ints is tested (``int_overflows`` and ``raise_if``, ``runtime/ops/checks.py``),
and each test is a branch and a raise in the compiled code (~20-30 ms of Numba's compile each).
Many of them compute with sizes, whose ranges are known: ``np.split``'s bounds
``k * (n // 4) + min(k, n % 4)``, ``len(items) + 1``, ``n // 2 - 1``, a backwards ``range``'s
index ``n - 1 - i``. ``int_facts`` gives every integer scalar an interval (constants, sizes,
list lengths, counters, a loop's carried values and what its test tells its body); a test whose
exact result lies within int64 for every pair of operands in their intervals is false whatever
values run: its ``raise_if`` goes (the test is left to dead-code elimination).
"""

from __future__ import annotations

import functools

from autostage.runtime import ir
from autostage.runtime.passes import analysis
from autostage.runtime.passes.int_facts import EXACT, IntFacts

_TESTED = ("add", "subtract", "multiply", "negative", "absolute")  # the tests this pass drops


def run(module: ir.Module) -> bool:
    """Drops the overflow tests that cannot fail in every function; whether any went."""
    changed = False
    for function in module.functions.values():
        changed |= analysis.drop_raises(function.body,
                                        functools.partial(_cannot_fail, facts=IntFacts(function)))
    return changed


def _cannot_fail(value: ir.Value, facts: IntFacts) -> bool:
    """Whether ``value`` is an ``int_overflows`` test false for all operands in their
    intervals."""
    test = value.producer
    if not isinstance(test, ir.Op) or test.name != "int_overflows":
        return False
    if test.attrs.get("op") not in _TESTED:
        return False
    low, high = EXACT[test.attrs["op"]](*[facts.interval(v) for v in test.operands])
    return -(2**63) <= low and high <= 2**63 - 1
