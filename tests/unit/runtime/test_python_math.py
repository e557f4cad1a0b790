"""math.* of staged values (runtime/python_math.py), .item()/complex()/bool() and sum() of a
tensor list: Python's values, types and errors on both targets, clear refusals."""

import math

import numpy as np
import pytest
from autostage.runtime.tensor import StagingTypeError

import autostage

TARGETS = ("interpreter", "cpu")


def _staged(fn, target):
    return autostage.convert(fn, target=target)


@pytest.mark.parametrize("target", TARGETS)
def test_math_domain_and_range_errors_at_run_time(target):
    def f(x, y):
        return math.sqrt(x) + math.exp(y)

    staged = _staged(f, target)
    assert staged(np.float64(4.0), np.float64(0.0)) == 3.0
    assert type(staged(np.float64(4.0), np.float64(0.0))) is float
    with pytest.raises(ValueError, match="math domain error"):
        staged(np.float64(-1.0), np.float64(0.0))
    with pytest.raises(OverflowError, match="math range error"):
        staged(np.float64(1.0), np.float64(1000.0))


@pytest.mark.parametrize("target", TARGETS)
def test_math_floor_is_a_python_int_with_pythons_errors(target):
    def f(x):
        return math.floor(x)

    staged = _staged(f, target)
    assert staged(np.float32(-2.5)) == -3 and type(staged(np.float32(-2.5))) is int
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        staged(np.float64(np.nan))
    with pytest.raises(OverflowError, match="int64"):
        staged(np.float64(1e19))  # Python's exact int: refused, never wrapped


@pytest.mark.parametrize("target", TARGETS)
def test_math_result_is_weak_float(target):
    def f(x):
        return np.ones(2, np.float32) * math.sqrt(x)

    assert _staged(f, target)(np.float64(4.0)).dtype == np.float32


def test_math_of_array_is_numpys_type_error():
    def f(x):
        return math.exp(x)

    with pytest.raises(TypeError, match="only 0-dimensional arrays"):
        _staged(f, "interpreter")(np.ones(1))


def test_math_unsupported_function_names_it_and_the_line():
    def f(x):
        return math.factorial(x)

    with pytest.raises(StagingTypeError, match=r"math.factorial of a staged value at .*"
                                               r"test_python_math.py:\d+ is not supported"):
        _staged(f, "interpreter")(np.int64(3))


def test_math_of_numpy_complex_is_refused_clearly():
    def f(z):
        return math.exp(z)

    with pytest.raises(StagingTypeError, match=r"math.exp of a staged complex complex128 .* "
                                               "ComplexWarning"):
        _staged(f, "interpreter")(np.complex128(1.0))


@pytest.mark.parametrize("target", TARGETS)
def test_item_of_size_one_and_error_for_other_sizes(target):
    def f(x):
        return x.item()

    staged = _staged(f, target)
    assert staged(np.array([[2.5]], np.float32)) == 2.5
    assert type(staged(np.array([7], np.int32))) is int
    with pytest.raises(ValueError, match="can only convert an array of size 1"):
        staged(np.zeros(3))


@pytest.mark.parametrize("target", TARGETS)
def test_bool_and_complex_are_python_values(target):
    def f(x):
        return bool(x), complex(x)

    b, z = _staged(f, target)(np.float32(2.0))
    assert (type(b), b, type(z), z) == (bool, True, complex, 2 + 0j)


@pytest.mark.parametrize("target", TARGETS)
def test_sum_of_a_list_of_python_floats_adds_left_to_right(target):
    def f(x):
        return sum([float(v) for v in x])

    x = np.array([0.1] * 20 + [1e16, -1e16, 0.3])
    got = _staged(f, target)(x)
    assert type(got) is float and got == f(x)


def test_sum_of_an_empty_list_is_a_clear_error():
    def f(x):
        return sum([v * 2 for v in x])

    with pytest.raises(ValueError, match="sum\\(\\) of an empty list built in staged code"):
        _staged(f, "interpreter")(np.zeros((0, 2)))


def _gammas(x):
    return math.gamma(x), math.lgamma(x)


@pytest.mark.parametrize("target", TARGETS)
def test_gamma_and_lgamma_are_cpythons_own_bit_for_bit(target):
    """CPython's Lanczos approximation, not libm's (Numba's differed in most points, lgamma(-2.5)
    by ~50 ulp), with its errors."""
    staged = _staged(_gammas, target)
    rng = np.random.default_rng(5)
    points = np.concatenate([rng.uniform(0.1, 30.0, 60), rng.uniform(-30.0, 0.0, 60),
                             [-2.5, 1e-25, -1e-25, 0.5, 3.0, 171.5, -200.5, np.nan]])
    for x in points:
        want, got = _gammas(float(x)), staged(np.float64(x))
        assert repr(got) == repr(want) and all(type(v) is float for v in got), x
    for x, error, message in [(0.0, ValueError, "math domain error"),
                              (-3.0, ValueError, "math domain error"),
                              (200.0, OverflowError, "math range error")]:
        with pytest.raises(error, match=message):
            staged(np.float64(x))
