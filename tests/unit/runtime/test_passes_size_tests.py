"""Size tests of in-place operators that the shape facts decide go (passes/size_tests.py); a
test the facts cannot decide stays, and still raises NumPy's error."""

import numpy as np
import pytest
from test_passes_support import optimized, staged

import autostage


def _size_tests(text: str) -> int:
    """The in-place size tests (their raise_if) in printed IR."""
    return sum("raise_if" in line and "non-broadcastable" in line for line in text.splitlines())


def softmax_rows(s):
    w = np.exp(s - s.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)  # the result has w's shape: proven
    return w


def grow(a, b):
    a = a * 1.0
    a += b  # b may be larger than a: NumPy raises
    return a


def rows_in_a_loop(x, n):
    for _ in range(n):
        x = x - x.mean(axis=0, keepdims=True)
        x *= x.std(axis=0, keepdims=True) + 1.0
    return x


def test_a_proven_in_place_test_goes_and_the_softmax_fuses():
    s = np.arange(12.0).reshape(3, 4) / 7
    module = staged(softmax_rows, s)
    assert _size_tests(optimized(module, [], (s,))) == 1
    after = optimized(module, ["size_tests", "dce"], (s,), (np.ones((2, 5)),))
    assert "raise_if" not in after and " dim " not in after
    fused = optimized(staged(softmax_rows, s), ["size_tests", "dce", "fusion"], (s,))
    assert "subtract" in fused.split("fused")[1] and "exp" in fused.split("fused")[1]
    for shape in [(3, 4), (1, 6), (5, 1)]:
        x = np.random.default_rng(0).normal(size=shape)
        np.testing.assert_allclose(autostage.convert(softmax_rows)(x), softmax_rows(x),
                                   rtol=1e-15)


def test_a_test_the_facts_cannot_decide_stays_and_raises():
    a, b = np.ones((1, 3)), np.ones((2, 3))
    module = staged(grow, a, b)
    after = optimized(module, ["size_tests", "dce"], (a, np.ones((1, 3))), (np.ones((2, 3)),
                                                                              np.ones((2, 3))))
    assert _size_tests(after) == 1
    for target in ("interpreter", "cpu"):
        with pytest.raises(ValueError, match="non-broadcastable output operand"):
            autostage.convert(grow, target=target)(a, b)
        np.testing.assert_array_equal(autostage.convert(grow, target=target)(b, a), grow(b, a))


def test_tests_inside_a_staged_loop_are_decided_per_iteration():
    x = np.arange(6.0).reshape(3, 2)
    module = staged(rows_in_a_loop, x, np.int64(3))
    assert _size_tests(optimized(module, [], (x, np.int64(3)))) == 1
    after = optimized(module, ["size_tests", "dce"], (x, np.int64(3)), (np.ones((4, 1)),
                                                                         np.int64(2)))
    assert _size_tests(after) == 0
    np.testing.assert_allclose(autostage.convert(rows_in_a_loop, target="cpu")(x, np.int64(3)),
                               rows_in_a_loop(x, 3), rtol=1e-14)
