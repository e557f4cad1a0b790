"""Python-int arithmetic on values of known ranges (sizes, lengths, small constants) needs no
overflow test: those tests go; every test that could fail stays, and still raises."""

import numpy as np
import pytest
from autostage.runtime.passes import int_facts
from hypothesis import given, settings
from hypothesis import strategies as st
from test_passes_support import optimized, staged

import autostage


def _tests(text: str) -> list[str]:
    """The ``op`` of each overflow test left in printed IR."""
    return [line.split("{op='")[1].split("'")[0] for line in text.splitlines()
            if "int_overflows" in line]


def quarters(x):
    """np.array_split's bounds: k * (n // 4) + min(k, n % 4) for k = 1..4, each tested."""
    a, b, c, d = np.array_split(x, 4)
    return a.sum() + 2 * b.sum() + 3 * c.sum() + 4 * d.sum()


def equal_quarters(x):
    """np.split's bounds, whose pieces it checks are equal: k * (n // 4) for k = 2, 3."""
    a, b, c, d = np.split(x, 4)
    return a.sum() + 2 * b.sum() + 3 * c.sum() + 4 * d.sum()


def test_split_bounds_lose_their_tests():
    x = np.arange(12.0)
    module = staged(quarters, x)
    before = _tests(optimized(module, [], (x,)))
    after = _tests(optimized(module, ["int_ranges", "dce"], (x,), (np.arange(8.0),)))
    assert sorted(before) == ["add"] * 4 + ["multiply"] * 4
    assert after == []
    assert autostage.convert(quarters)(x) == quarters(x)
    module = staged(equal_quarters, x)
    assert sorted(_tests(optimized(module, [], (x,)))) == ["multiply"] * 2
    assert autostage.convert(equal_quarters)(x) == equal_quarters(x)
    with pytest.raises(ValueError, match="does not result in an equal division"):
        autostage.convert(equal_quarters)(np.arange(10.0))


def sizes(x):
    items = []
    for i in range(x.shape[0] // 2):  # a staged loop: a staged list
        items.append(x[i])
    n = x.shape[0]
    m = len(items)
    return (n // 2 - 1, m + 1, (n % 7) * 3, -m, abs(n - m), n * n, n + n, n * 2, n + 1)


def test_which_size_arithmetic_keeps_its_test():
    """Sizes are in [0, 2**63 - 1], list lengths in [0, 2**56]: ``n * n``, ``n + n``, ``n * 2``
    and ``n + 1`` of a size may leave int64 (a broadcast view can be that large); the rest
    cannot."""
    x = np.ones(5)
    module = staged(sizes, x)
    text = optimized(module, ["counters", "int_ranges", "dce"], (x,), (np.ones(9),))
    assert sorted(_tests(text)) == ["add", "add", "multiply", "multiply"]


def test_a_huge_broadcast_view_still_raises():
    """A size may be as large as 2**63 - 1 (bytes, for a view of bools with no memory behind
    it): its arithmetic keeps the tests that can fail, and raises as Python's ints cannot."""
    def f(x):
        n = x.shape[0]
        return n // 3 * 2 + n % 3, n * 4

    view = np.broadcast_to(np.bool_(False), (2**63 - 1,))
    with pytest.raises(OverflowError, match=r"Python int arithmetic \(\*\) does not fit"):
        autostage.convert(f)(view)
    small = np.broadcast_to(np.bool_(False), (2**60,))
    assert autostage.convert(f)(small) == f(small)


BOUND = 2**64
ints = st.integers(-BOUND, BOUND)


@st.composite
def interval_and_point(draw):
    a, b = sorted((draw(ints), draw(ints)))
    return (a, b), draw(st.integers(a, b))


_PYTHON = {"add": lambda x, y: x + y, "subtract": lambda x, y: x - y,
           "multiply": lambda x, y: x * y, "minimum": min, "maximum": max,
           "negative": lambda x: -x, "absolute": abs}


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(_PYTHON)), interval_and_point(), interval_and_point())
def test_intervals_hold_every_exact_result(name, first, second):
    (a, x), (b, y) = first, second
    arity = 1 if name in ("negative", "absolute") else 2
    low, high = int_facts.EXACT[name](*(a, b)[:arity])
    assert low <= _PYTHON[name](*(x, y)[:arity]) <= high


@settings(max_examples=300, deadline=None)
@given(interval_and_point(), interval_and_point())
def test_floor_division_and_remainder_intervals_hold(first, second):
    (a, x), (b, y) = first, second
    if b[0] <= 0:
        b, y = (1, max(b[1], 1)), max(y, 1)
    low, high = int_facts._corners(lambda p, q: p // q, a, b)
    assert low <= x // y <= high
    assert 0 <= x % y <= (min(b[1] - 1, a[1]) if a[0] >= 0 else b[1] - 1)


def backwards(x):
    """A loop over a list backwards, as L-BFGS walks its history: ``start + k * -1`` of its
    counter ``k`` cannot overflow (the counter stays within 2**62), ``n * k`` of a size can."""
    items = []
    for i in range(x.shape[0]):
        items.append(x[i] * 2)
    total = 0.0
    for k in range(len(items) - 1, -1, -1):
        total = total + items[k]
    far = 0
    for k in range(3):
        far = x.shape[0] * k
    return total, far


def test_counters_have_a_range():
    x = np.arange(5.0)
    module = staged(backwards, x)
    assert len(_tests(optimized(module, [], (x,)))) >= 3
    text = optimized(module, ["counters", "int_ranges", "dce"], (x,), (np.arange(2.0),))
    assert _tests(text) == ["multiply"]
    assert autostage.convert(backwards)(x) == backwards(x)
