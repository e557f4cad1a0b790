"""Small checked branches become straight-line code; a test still raises only when its branch
is the one Python takes."""

import numpy as np
import pytest
from test_passes_support import optimized, staged

import autostage


def step(k):
    n = int(k)  # a Python int: its arithmetic is tested (NumPy's int64 would wrap)
    if n % 2 == 0:
        m = n // 2
    else:
        m = 3 * n + 1  # tested: may leave int64
    return m


def _conds(text: str) -> int:
    return sum(" = cond " in line or line.strip().startswith("cond ") for line in
               text.splitlines())


def test_a_checked_branch_becomes_straight_line_code():
    n = np.int64(7)
    module = staged(step, n)
    assert _conds(optimized(module, [], (n,))) == 1
    text = optimized(module, ["speculation", "dce"], (n,), (np.int64(8),), (np.int64(-3),))
    assert _conds(text) == 0
    assert " = where " in text and "int_overflows" in text


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_the_test_of_the_branch_not_taken_never_raises(target):
    f = autostage.convert(step, target=target)
    big_even = 2**62  # 3 * n + 1 would overflow, but Python takes n // 2
    assert f(np.int64(big_even)) == step(big_even)
    with pytest.raises(OverflowError, match=r"Python int arithmetic \(\*\) does not fit"):
        f(np.int64(2**62 + 1))  # odd: Python's 3n + 1 leaves int64
    assert f(np.int64(7)) == 22 and f(np.int64(10)) == 5


def printing(k):
    n = int(k)
    if n % 2 == 0:
        m = n // 2
    else:
        print("odd")  # an effect: the branch must not run when not taken
        m = 3 * n + 1
    return m


def dividing(k, d):
    n = int(k)
    if n > 0:
        m = n // int(d)  # may raise ZeroDivisionError: not speculated
    else:
        m = 3 * n + 1
    return m


def arrays(k, x):
    n = int(k)
    if n % 2 == 0:
        y = x * 2.0
    else:
        y = x + float(3 * n + 1)
    return y


@pytest.mark.parametrize("fn, args", [
    (printing, (np.int64(7),)),
    (dividing, (np.int64(7), np.int64(2))),
    (arrays, (np.int64(7), np.ones(3))),
])
def test_branches_with_effects_failures_or_arrays_stay(fn, args):
    module = staged(fn, *args)
    assert _conds(optimized(module, ["speculation", "dce"], args)) == 1


def test_only_branches_with_a_test_change():
    def plain(k):
        n = int(k)
        return n // 2 if n % 2 == 0 else n * 3  # n * 3 is tested: rewritten

    def untested(x):
        return x[0] * 2.0 if x[0] > 0 else x[0] - 1.0  # float arithmetic: no test

    x = np.ones(3)
    assert _conds(optimized(staged(untested, x), ["speculation", "dce"], (x,))) == 1
    n = np.int64(5)
    assert _conds(optimized(staged(plain, n), ["speculation", "dce"], (n,))) == 0
