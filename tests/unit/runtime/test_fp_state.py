"""NumPy's floating-point error state and staged code (runtime/fp_state.py): staged code computes
with errors ignored on both targets (no FloatingPointError, no RuntimeWarning); an error state
that would raise, call, print or log is a clear FloatingPointModeError, while tracing (set
outside, or by np.errstate inside the function) and on later calls of a cached trace."""

import inspect
import warnings

import numpy as np
import pytest
from autostage.runtime.fp_state import FloatingPointModeError

import autostage

TARGETS = ["interpreter", "cpu"]


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    offset = next(i for i, line in enumerate(lines) if text in line)
    return f"{inspect.getsourcefile(fn)}:{start + offset}"


def divide(x):
    return x / 0.0, x[0] * np.float64(1e308) * 10.0, np.int8(100) * np.int8(x.shape[0])


def raising_inside(x):
    with np.errstate(divide="raise"):
        y = x / 0.0
    return y


def ignoring_inside(x):
    with np.errstate(all="ignore"):
        y = x / 0.0
    return y


@pytest.mark.parametrize("target", TARGETS)
def test_staged_code_emits_no_numpy_warnings(target):
    f = autostage.convert(target=target)(divide)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        y, big, small = f(np.ones(2))
    assert got == []
    assert np.all(np.isinf(y)) and np.isinf(big) and small == np.int8(-56)
    g = autostage.convert(target=target)(ignoring_inside)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        assert np.all(np.isinf(g(np.ones(2))))
    assert got == []


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("mode", ["raise", "call", "print", "log"])
def test_a_raising_error_state_when_called_is_an_error(mode, target):
    f = autostage.convert(target=target)(divide)
    f(np.ones(2))  # traced under the default state
    for traced in (True, False):
        with np.errstate(divide=mode), pytest.raises(FloatingPointModeError) as info:
            (f if traced else autostage.convert(target=target)(divide))(np.ones(2))
        assert f"divide={mode!r}" in str(info.value)
        assert "staged code does not check floating-point errors" in str(info.value)
        assert "when divide is called" in str(info.value)
    assert np.all(np.isinf(f(np.ones(2))[0]))  # the default state again: fine


@pytest.mark.parametrize("target", TARGETS)
def test_a_global_seterr_is_checked_on_the_cached_path(target):
    f = autostage.convert(target=target)(divide)
    f(np.ones(2))
    old = np.seterr(all="raise")
    try:
        with pytest.raises(FloatingPointModeError, match="invalid='raise'"):
            f(np.ones(2))
    finally:
        np.seterr(**old)
    np.seterr(**old)
    assert np.all(np.isinf(f(np.ones(2))[0]))


@pytest.mark.parametrize("target", TARGETS)
def test_np_errstate_raise_inside_the_function_is_an_error(target):
    before = np.geterr()
    with pytest.raises(FloatingPointModeError) as info:
        autostage.convert(target=target)(raising_inside)(np.ones(2))
    assert line_of(raising_inside, "with np.errstate") in str(info.value)
    assert "while the staged function is traced" in str(info.value)
    assert np.geterr() == before  # the errstate was exited


def test_converted_code_still_raises_under_to_graph():
    g = autostage.to_graph(raising_inside)
    with pytest.raises(FloatingPointError):
        g(np.ones(2))
