"""Loops whose Python-int arithmetic is tested run strips of untested steps while their ints are
small: the same values, and the same OverflowError at the same step, as the tested loop."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_passes_support import optimized, staged

import autostage

INT64 = (-(2**63), 2**63 - 1)


def collatz_steps(start):
    n = int(start)  # a Python int: its arithmetic is tested
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def _fits(value: int) -> int:
    if not INT64[0] <= value <= INT64[1]:
        raise OverflowError("Python int arithmetic does not fit in int64")
    return value


def collatz_reference(start: int) -> int:
    """Python's steps, raising where an exact intermediate leaves int64 (autostage's contract
    for staged Python ints)."""
    n, steps = start, 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else _fits(_fits(3 * n) + 1)
        steps += 1
    return steps


def _whiles(text: str) -> int:
    return sum(" = while " in line for line in text.splitlines())


def test_the_tested_loop_gets_a_strip_of_untested_steps():
    n = np.int64(7)
    module = staged(collatz_steps, n)
    before = optimized(module, ["counters", "int_ranges", "speculation", "dce"], (n,))
    text = optimized(module, ["overflow_versioning", "cse", "dce"], (n,), (np.int64(27),),
                     (np.int64(2**60),), (np.int64(5),))
    assert _whiles(before) == 1 and _whiles(text) == 2  # the strip is a loop of its own
    # the guard: -B <= n <= B for the largest power of two B whose K steps of 3n + 1 stay
    # within int64 (K: as many steps as fit the analysis' budget, at most 16)
    bound = int(re.search(r"= constant (\d+)\n.*= less_equal %9 ", text).group(1))
    steps = int(re.search(r"= constant (\d+)\n.*= less %21 ", text).group(1))
    assert f"= constant -{bound}\n" in text and bound & (bound - 1) == 0
    assert 2 <= steps <= 16 and 3**steps * bound < 2**63 <= 3**steps * 2 * bound
    assert text.count("int_overflows") == before.count("int_overflows") == 2  # the tested step


@pytest.mark.parametrize("start", [1, 2, 3, 7, 27, 97, 871, 2**43 - 1, 2**43, 2**43 + 1,
                                   2**55 + 1, 2**61 + 1, 2**62, 2**62 - 1,
                                   3074457345618258602, 3074457345618258603, 2**62 + 1,
                                   2**63 - 1])
def test_compiled_collatz_matches_python_near_every_bound(start):
    f = autostage.convert(collatz_steps)
    try:
        expected = collatz_reference(start)
    except OverflowError:
        with pytest.raises(OverflowError, match=r"Python int arithmetic \([*+]\) does not fit"):
            f(np.int64(start))
    else:
        assert f(np.int64(start)) == expected == collatz_steps(start)


def recurrence(start, a, b, limit):
    n, limit = int(start), int(limit)  # Python ints: tested arithmetic
    a, b = int(a) % 13 - 6, int(b) % 1001 - 500  # within [-6, 6] and [-500, 500]
    k = 0
    while n < limit and n > -limit and k < 60:
        if n % 3 == 0:
            n = n // 3 - b
        else:
            n = a * n + b
        k += 1
    return n, k


def recurrence_reference(start, a, b, limit):
    n, k = start, 0
    a, b = a % 13 - 6, b % 1001 - 500
    while n < limit and n > -limit and k < 60:
        n = _fits(n // 3 - b) if n % 3 == 0 else _fits(_fits(a * n) + b)
        k += 1
    return n, k


_converted_recurrence = autostage.convert(recurrence)


def test_a_recurrence_with_bounded_coefficients_is_versioned():
    args = tuple(np.int64(v) for v in (5, 9, 3, 2**40))
    module = staged(recurrence, *args)
    text = optimized(module, ["counters", "int_ranges", "speculation", "overflow_versioning",
                              "dce"], args, (np.int64(2**39), np.int64(0), np.int64(1000),
                                             np.int64(2**40)))
    assert _whiles(text) == 2


@settings(max_examples=80, deadline=None)
@given(start=st.one_of(st.integers(*INT64), st.integers(-2**40, 2**40)),
       a=st.integers(0, 12), b=st.integers(0, 1000),
       limit=st.sampled_from([2**20, 2**40, 2**62, 2**63 - 1]))
def test_recurrences_match_python_with_the_overflow_at_the_same_step(start, a, b, limit):
    f = _converted_recurrence
    args = (np.int64(start), np.int64(a), np.int64(b), np.int64(limit))
    try:
        expected = recurrence_reference(start, a, b, limit)
    except OverflowError:
        with pytest.raises(OverflowError):
            f(*args)
    else:
        assert tuple(int(v) for v in f(*args)) == expected


def scaled(start, m):
    n = int(start)
    k = 0
    while n != 0 and k < 10:
        n = n * int(m) // 7  # m is unknown: no bound keeps n * m within int64
        k += 1
    return n


def printed(start):
    n = int(start)
    while n > 1:
        print(n)
        n = 3 * n // 4
    return n


@pytest.mark.parametrize("fn, args", [(scaled, (np.int64(9), np.int64(5))),
                                      (printed, (np.int64(9),))])
def test_loops_without_a_bound_or_with_effects_stay(fn, args):
    module = staged(fn, *args)
    text = optimized(module, ["counters", "int_ranges", "speculation", "overflow_versioning",
                              "dce"], args)
    assert _whiles(text) == 1


def dividing(start, d):
    n = int(start)
    r = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        r = r + (100 // int(d)) % 2  # d == 0: ZeroDivisionError, in a strip as in Python
    return r


def test_other_raises_stay_in_the_untested_steps():
    args = (np.int64(27), np.int64(3))
    module = staged(dividing, *args)
    text = optimized(module, ["counters", "int_ranges", "speculation", "overflow_versioning",
                              "dce"], args, (np.int64(7), np.int64(4)))
    assert _whiles(text) == 2
    f = autostage.convert(dividing)
    assert f(*args) == dividing(27, 3) and f(np.int64(7), np.int64(4)) == dividing(7, 4)
    with pytest.raises(ZeroDivisionError):
        f(np.int64(27), np.int64(0))
