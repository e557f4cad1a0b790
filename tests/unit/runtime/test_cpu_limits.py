"""Tests for runtime/backends/cpu/limits.py (issue 9, item 9): a rank-32 array op and a chain of
40 nested calls either compile and give Python's values, or raise a clear error naming the op,
the user's line and the limit (never a SyntaxError or RecursionError from generated code)."""

import sys

import numpy as np
import pytest
from autostage.runtime.backends.cpu import limits
from autostage.runtime.backends.cpu.codegen import LoweringError
from autostage.runtime.passes import inline

import autostage

TARGETS = ["interpreter", "cpu"]


def _affine(x):
    return x * 2 + 1


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rank", [8, 32])
def test_high_rank_arrays(target, rank):
    x = np.arange(2.0).reshape((2,) + (1,) * (rank - 1))
    f = autostage.convert(target=target)(_affine)
    if target == "cpu" and rank > limits.MAX_BLOCKS:
        with pytest.raises(LoweringError) as info:
            f(x)
        message = str(info.value)
        assert "test_cpu_limits.py:" in message and f"rank-{rank} array" in message
        assert "at most 20 nested blocks" in message and "target='interpreter'" in message
    else:
        assert np.array_equal(f(x), _affine(x)) and f(x).shape == x.shape


def _countdown(x, n):
    if n == 0:
        return x
    return _countdown(x + 1, n - 1)


@pytest.mark.parametrize("target", TARGETS)
def test_recursion_unrolled_on_a_python_int_40_deep(target):
    before = sys.getrecursionlimit()
    f = autostage.convert(target=target)(_countdown)
    assert f(np.arange(3.0), 40).tolist() == _countdown(np.arange(3.0), 40).tolist()
    assert sys.getrecursionlimit() == before  # raised for the compilation only


def test_a_call_chain_deeper_than_the_bound_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(limits, "MAX_CALL_DEPTH", 5)
    # Inlined, the chain is one function: it compiles.
    inlined = autostage.convert(target="cpu")(_countdown)
    assert inlined(np.arange(3.0), 6).tolist() == [6.0, 7.0, 8.0]
    monkeypatch.setattr(inline, "MAX_OPS", -1)  # calls that stay calls are bounded
    f = autostage.convert(target="cpu")(_countdown)
    with pytest.raises(LoweringError) as info:
        f(np.arange(3.0), 6)
    message = str(info.value)
    # (the last call, n == 0, returns its argument itself: the caller's array, no call left)
    assert "nested at most 5 deep" in message and "_countdown calls functions 6 levels deep" \
        in message and "np.int64(n)" in message
    assert autostage.convert(target="interpreter")(_countdown)(
        np.arange(3.0), 6).tolist() == [6.0, 7.0, 8.0]


def test_call_depth_counts_nested_calls_once_per_level():
    f = autostage.convert(target="cpu")(_countdown)
    module = f.get_concrete_function(np.arange(3.0), 3).module
    assert limits.call_depth(module) == 4
