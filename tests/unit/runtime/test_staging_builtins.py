"""Tests for runtime/staging/builtins.py: ``type()`` of staged values (issue 8, item 16).

Each program runs in plain Python and staged on both targets; the results must be the same."""

import numpy as np
import pytest

import autostage

TARGETS = ["interpreter", "cpu"]


def branch_on_type(x):
    if type(x) is np.ndarray:
        return x + 1
    return x - 1


def type_of_scalars(x, v):
    n = x.shape[0]  # a Python int
    s = x[0]  # a NumPy scalar in Python
    total = x.sum()
    return (type(n) is int, type(s) is np.float32, type(total) is np.float32,
            type(v) is np.float64, type(v) is np.ndarray, type(x) is not np.ndarray)


def zero_d_array_argument(a):
    return type(a) is np.ndarray, type(a + 1) is np.float64


def type_of_a_list_and_constants(x, k):
    values = [x, x]
    return type(values) is list, type(k) is int, type(k).__name__, type("T", (), {}).__name__


@pytest.mark.parametrize("target", TARGETS)
def test_type_of_an_array_argument_is_ndarray(target):
    f = autostage.convert(branch_on_type, target=target)
    x = np.zeros(2)
    assert f(x).tolist() == branch_on_type(x).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("target", TARGETS)
def test_type_of_scalars_is_what_python_and_numpy_give(target):
    f = autostage.convert(type_of_scalars, target=target)
    x, v = np.ones(3, np.float32), np.float64(2.0)
    expected = type_of_scalars(x, v)
    assert expected == (True, True, True, True, False, False)
    assert tuple(bool(b) for b in f(x, v)) == expected


@pytest.mark.parametrize("target", TARGETS)
def test_type_of_a_zero_d_array_argument_is_ndarray(target):
    f = autostage.convert(zero_d_array_argument, target=target)
    a = np.array(1.0)
    assert zero_d_array_argument(a) == (True, True)
    assert tuple(bool(b) for b in f(a)) == (True, True)


@pytest.mark.parametrize("target", TARGETS)
def test_type_of_lists_constants_and_the_three_argument_form(target):
    f = autostage.convert(type_of_a_list_and_constants, target=target)
    x = np.ones(2)
    assert f(x, 3) == type_of_a_list_and_constants(x, 3) == (True, True, "int", "T")


def python_max_min(x):
    n = x.shape[0]
    return max(n, 1), min(n - 5, 0, n), max(n * 0.5, 1.0), max(n > 1, n > 5)


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_max_min_of_python_numbers_of_one_kind_are_python_numbers(target):
    import autostage

    got = autostage.convert(python_max_min, target=target)(np.zeros(3))
    assert got == python_max_min(np.zeros(3)) == (3, -2, 1.5, True)
    assert [type(v) for v in got] == [int, int, float, bool]
