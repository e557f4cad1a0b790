"""Traces know the small sizes of array arguments (``runtime/static_sizes``): they are part of the
trace key and of the parameter types, until a call varies them; then one trace without sizes
serves every later call. Whatever is known must never change a value, an error or a print."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

import autostage
from autostage import config

TARGETS = ["interpreter", "cpu"]


def last_size(x):
    """Reads a size the trace may know: a trace that ran for another size would be wrong."""
    return x.sum() + x.shape[1]


def project(x, w):
    return np.tanh(x @ w).sum(axis=1)


def first_trace(f) -> str:
    return f.concrete_functions[0].text()


@pytest.mark.parametrize("target", TARGETS)
def test_small_sizes_are_known_and_large_ones_are_not(target):
    f = autostage.convert(project, target=target)
    x, w = np.ones((40, 30)), np.full((30, 10), 0.01)
    np.testing.assert_allclose(f(x, w), project(x, w), rtol=1e-12)
    assert "(%0:f64[?,?], %1:f64[?,10])" in first_trace(f)


@pytest.mark.parametrize("target", TARGETS)
def test_other_small_sizes_trace_once_more_without_sizes(target):
    f = autostage.convert(last_size, target=target)
    shapes = [(3, 4), (3, 4), (3, 5), (3, 6), (2, 4), (300, 400), (3, 4)]
    for shape in shapes:
        x = np.ones(shape)
        assert f(x) == last_size(x), shape
    assert f.trace_count == 2
    assert "f64[3,4]" in first_trace(f)
    assert "(%0:f64[?,?])" in f.concrete_functions[1].text()


@pytest.mark.parametrize("target", TARGETS)
def test_the_fast_path_checks_known_sizes(target):
    """Repeated calls take the fast path; one with another size must not run the sized trace
    (which has the size 4 as a constant)."""
    f = autostage.convert(last_size, target=target)
    small, other = np.ones((3, 4)), np.ones((3, 5))
    for _ in range(3):
        assert f(small) == 16.0
    assert f._fast
    assert f(other) == 20.0
    assert f(small) == 16.0


@pytest.mark.parametrize("target", TARGETS)
def test_large_sizes_share_one_trace(target):
    f = autostage.convert(last_size, target=target)
    for n in (17, 100, 1000):
        x = np.ones((n, n + 1))
        assert f(x) == last_size(x)
    assert f.trace_count == 1


@pytest.mark.parametrize("target", TARGETS)
def test_a_trace_that_left_a_size_unknown_serves_smaller_calls(target):
    """40 rows then 3 (a long sequence, then a short one): the first trace, f64[?,5], admits
    the second call; a size it knows (5 columns) varied still traces once more."""
    f = autostage.convert(last_size, target=target)
    for rows in (40, 3, 7, 3, 40):
        x = np.arange(rows * 5.0).reshape(rows, 5)
        assert f(x) == last_size(x), rows
    assert f.trace_count == 1
    assert "(%0:f64[?,5])" in first_trace(f)
    x = np.ones((3, 6))
    assert f(x) == last_size(x)
    assert f.trace_count == 2
    assert "(%0:f64[?,?])" in f.concrete_functions[1].text()


@pytest.mark.parametrize("target", TARGETS)
def test_a_trace_without_sizes_serves_small_calls(target):
    f = autostage.convert(last_size, target=target)
    for shape in ((40, 30), (3, 4), (2, 2), (40, 30)):
        x = np.arange(float(np.prod(shape))).reshape(shape)
        assert f(x) == last_size(x), shape
    assert f.trace_count == 1


def test_zero_turns_it_off():
    f = autostage.convert(last_size, target="cpu")
    with config.STATIC_SIZES.override(0):
        assert f(np.ones((3, 4))) == 16.0
    assert "(%0:f64[?,?])" in first_trace(f)
    assert f(np.ones((3, 5))) == 20.0  # read at the first call: still off
    assert f.trace_count == 1


def test_an_input_signature_decides_what_is_known():
    f = autostage.convert(last_size, target="cpu",
                          input_signature=[autostage.TensorSpec((None, None))])
    assert f(np.ones((3, 4))) == 16.0 and f(np.ones((2, 2))) == 6.0
    assert f.trace_count == 1 and "(%0:f64[?,?])" in first_trace(f)


@pytest.mark.parametrize("target", TARGETS)
def test_empty_arrays(target):
    def extremes(x):
        return x.sum(), np.max(x)

    f = autostage.convert(extremes, target=target)
    assert f(np.ones((4, 3)))[0] == 12.0
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        f(np.ones((0, 3)))


@pytest.mark.parametrize("target", TARGETS)
def test_a_size_mismatch_known_while_tracing_is_raised_where_python_raises_it(target, capsys):
    def mismatch(a, b, flag):
        print("before")
        if flag > 0:
            return a + b
        return a

    f = autostage.convert(mismatch, target=target)
    a, b = np.ones(3), np.ones(4)
    np.testing.assert_array_equal(f(a, b, np.int64(0)), a)
    with pytest.raises(ValueError, match=r"could not be broadcast together with shapes \(3,\) "
                                         r"\(4,\)"):
        f(a, b, np.int64(1))
    assert capsys.readouterr().out == "before\nbefore\n"




def _reference_program(name):
    """A program of the staged reference suite (tests/reference/staged_programs/recursion.py)."""
    path = pathlib.Path(__file__).parents[2] / "reference" / "staged_programs" / "recursion.py"
    spec = importlib.util.spec_from_file_location("recursion_programs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


merge_sort = _reference_program("merge_sort")

@pytest.mark.parametrize("target", TARGETS)
def test_a_refusal_that_only_the_sizes_make_traces_without_them(target):
    """With x of size 0 known, both branches of the inner ``if`` write out of range, an ``if``
    that always raises, which staging refuses; the call never runs it (n <= 1), so the
    function traces without sizes instead."""
    f = autostage.convert(merge_sort, target=target)
    assert f(np.array([])).shape == (0,)
    assert f.trace_count == 1 and "(%0:f64[?])" in first_trace(f)
    np.testing.assert_array_equal(f(np.array([3.0, 1.0, 2.0])), [1.0, 2.0, 3.0])


WEIGHTS = np.array([1.0, 2.0, 3.0])


def scaled_by_global_size(x):
    """An f-string needs a Python int: the size of an array read from the environment (a
    global) was always known, and stays an int in a trace that knows argument sizes."""
    return x * float(f"{WEIGHTS.shape[0]}") + np.sum(WEIGHTS)


@pytest.mark.parametrize("target", TARGETS)
def test_sizes_of_arrays_from_the_environment_stay_ints(target):
    f = autostage.convert(scaled_by_global_size, target=target)
    x = np.ones(4)
    np.testing.assert_array_equal(f(x), scaled_by_global_size(x))
    assert "f64[4]" in first_trace(f)


def _interval(x, n):
    means = np.empty(n)
    for i in range(n):
        means[i] = x[i % x.shape[0]] * 2
    lo, hi = np.percentile(means, [2.5, 97.5])
    return lo, hi


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_quantile_of_all_elements_has_the_length_of_q(target):
    """``lo, hi = np.percentile(x, [2.5, 97.5])`` of an array whose size only the run knows:
    the result's two elements come from ``q``, not from ``x``'s sizes (it was refused as
    unpacking a tensor whose first dimension is known only at run time)."""
    f = autostage.convert(_interval, target=target)
    for n in (5, 7):
        assert f(np.arange(4.0), n) == _interval(np.arange(4.0), n)
