"""Counters need no overflow check: the tests of ``x + 1`` / ``x - 1`` on counters go, every
other Python-int test stays (and still raises)."""

import numpy as np
import pytest
from test_passes_support import optimized, staged

import autostage


def collatz_total(limit):
    total = 0
    for start in range(1, limit + 1):
        n = start
        while n != 1:
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            total += 1
    return total


def _tests(text: str) -> list[str]:
    """The ``op`` of each overflow test left in printed IR."""
    return [line.split("{op='")[1].split("'")[0] for line in text.splitlines()
            if "int_overflows" in line]


def test_collatz_keeps_only_the_tests_of_three_n_plus_one():
    limit = np.int64(30)
    module = staged(collatz_total, limit)
    before = _tests(optimized(module, [], (limit,)))
    after = _tests(optimized(module, ["counters", "dce"], (limit,), (np.int64(1),)))
    assert sorted(before) == ["add", "add", "add", "add", "add", "multiply"]
    assert sorted(after) == ["add", "multiply"]  # 3 * n, then + 1: n is not a counter


def count_from(start, steps, step):
    x = start
    for _ in range(steps):
        x += step
    return x


@pytest.mark.parametrize("start, step, kept", [
    (0, 1, 0),            # a counter: no test
    (0, -1, 0),
    (2**32, 1, 0),        # the largest start
    (2**32 + 1, 1, 1),    # too big a start: tested
    (0, 2, 1),            # steps of two: tested
])
def test_which_starts_and_steps_make_a_counter(start, step, kept):
    def f(steps):
        x = start
        i = 0
        while i < steps:
            x += step
            i += 1
        return x

    module = staged(f, np.int64(3))
    text = optimized(module, ["counters", "dce"], (np.int64(3),))
    assert len(_tests(text)) == kept


def test_a_value_made_by_other_arithmetic_is_not_a_counter():
    def f(steps):
        x = 0
        i = 0
        while i < steps:
            x = x * 2 + 1  # grows geometrically: both tests stay
            i += 1
        return x

    text = optimized(staged(f, np.int64(3)), ["counters", "dce"], (np.int64(3),))
    assert sorted(_tests(text)) == ["add", "multiply"]


def test_a_counter_started_from_an_argument_keeps_its_test_and_raises():
    def f(start, steps):
        x = start + 0  # not a constant: its size is unknown
        i = 0
        while i < steps:
            x += 1
            i += 1
        return x

    staged_f = autostage.convert(f)
    top = np.int64(2**63 - 3)
    with pytest.raises(OverflowError, match=r"Python int arithmetic \(\+\) does not fit"):
        staged_f(int(top), np.int64(5))
    assert staged_f(int(top), np.int64(2)) == 2**63 - 1


def test_counters_through_branches_and_nested_loops():
    def f(n):
        hits = 0
        i = 0
        while i < n:
            j = 0
            while j < i:
                if (i + j) % 3 == 0:
                    hits += 1
                else:
                    hits -= 1
                j += 1
            i += 1
        return hits

    module = staged(f, np.int64(7))
    text = optimized(module, ["counters", "dce"], (np.int64(7),), (np.int64(0),))
    assert _tests(text) == ["add"]  # i + j: a sum of counters is not a step of one
    assert autostage.convert(f)(np.int64(9)) == f(9)
