"""The fast path of a staged call (``staged_function._fast_path``): a repeated call with plain
arrays or NumPy scalars of the same types, dtypes and ranks skips flattening, keying and the
cache lookup. Whatever it skips must not change a result, an error or the trace cache."""

from __future__ import annotations

import numpy as np
import pytest
from autostage.runtime.fp_state import FloatingPointModeError

import autostage
from autostage import config

TARGETS = ["interpreter", "cpu"]


def add_one(x):
    return x + 1


def pick(x, i):
    return x[i]


@pytest.mark.parametrize("target", TARGETS)
def test_other_dtypes_ranks_and_types_take_their_own_trace(target):
    f = autostage.convert(add_one, target=target)
    a32, a64, m = np.ones(3, np.float32), np.ones((2, 2)), np.ones(2, np.int64)
    for _ in range(3):
        for x in (a32, a64, m, np.float32(2.0), a32):
            got = f(x)
            assert got.dtype == (x + 1).dtype and np.array_equal(got, x + 1)
    assert f.trace_count == 4
    assert f._fast  # the fast path is in use
    with pytest.raises(TypeError, match="matrix"):  # a subclass is still refused
        f(np.matrix([[1.0, 2.0]]))
    assert type(f(a32)) is np.ndarray


@pytest.mark.parametrize("target", TARGETS)
def test_a_dropped_trace_is_not_run(target):
    f = autostage.convert(add_one, target=target)
    with config.MAX_TRACES.override(1):
        a32, a64 = np.ones(3, np.float32), np.ones(3)
        for x in (a32, a32, a64, a32, a32):
            assert np.array_equal(f(x), x + 1) and f(x).dtype == x.dtype
        assert len(f.concrete_functions) == 1
    assert f.trace_count == 3


@pytest.mark.parametrize("target", TARGETS)
def test_run_time_errors_still_name_the_line(target):
    f = autostage.convert(pick, target=target)
    x = np.arange(3.0)
    assert f(x, np.int64(1)) == 1.0
    assert f(x, np.int64(2)) == 2.0
    with pytest.raises(IndexError, match="out of bounds") as info:
        f(x, np.int64(7))
    assert any("test_call_fast_path.py" in note for note in info.value.__notes__)


def test_floating_point_settings_are_still_checked():
    f = autostage.convert(_divide)
    x = np.ones(2)
    with np.errstate(divide="ignore"):
        f(x)
        f(x)
    with np.errstate(divide="raise"), pytest.raises(FloatingPointModeError, match="_divide"):
        f(x)


def _divide(x):
    return x / 0.0
