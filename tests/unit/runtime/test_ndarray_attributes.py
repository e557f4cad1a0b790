"""Tests for runtime/ndarray_attributes.py (issue 9, item 10): ndarray attributes on staged
tensors work, or name the NumPy attribute and the user's line (never the internal class)."""

import numpy as np
import pytest
from autostage.runtime.ndarray_attributes import UnsupportedAttributeError

import autostage

TARGETS = ["interpreter", "cpu"]


def _trivial(x):
    return x.itemsize, x.nbytes, x.conj(), x.conjugate(), x.ndim, x.size


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.complex128, np.bool_])
def test_trivial_attributes_match_numpy(target, dtype):
    x = (np.arange(6).reshape(2, 3) - 2j * (dtype is np.complex128)).astype(dtype)
    if dtype is np.bool_:
        x = x[:, :1]
        got, expected = autostage.convert(target=target)(
            lambda x: (x.itemsize, x.nbytes))(x), (x.itemsize, x.nbytes)
    else:
        got, expected = autostage.convert(target=target)(_trivial)(x), _trivial(x)
    assert got[0] == expected[0] and type(got[0]) is int  # known at trace time
    assert got[1] == expected[1]
    for g, e in zip(got[2:4], expected[2:4], strict=False):
        assert g.dtype == e.dtype and np.array_equal(g, e)


def _hasattr(x):
    return hasattr(x, "argpartition"), hasattr(x, "no_such_attribute"), callable(x.argpartition)


@pytest.mark.parametrize("target", TARGETS)
def test_hasattr_answers_as_on_an_ndarray(target):
    x = np.ones(3)
    assert autostage.convert(target=target)(_hasattr)(x) == _hasattr(x) == (True, False, True)


def _argpartition(x):
    return x.argpartition(1)


def _strides(x):
    return x.strides


def _missing(x):
    return x.no_such_attribute


def _fill(x):
    y = x + 1
    y.fill(0)
    return y


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, words", [
    (_argpartition, "ndarray method 'argpartition' is not supported on staged arrays"),
    (_strides, "ndarray attribute 'strides' is not supported on staged arrays"),
    (_fill, "ndarray method 'fill' is not supported on staged arrays"),
])
def test_unsupported_attributes_name_the_attribute_and_line(target, fn, words):
    with pytest.raises(UnsupportedAttributeError) as info:
        autostage.convert(target=target)(fn)(np.ones(3))
    message = str(info.value)
    assert words in message and "test_ndarray_attributes.py:" in message
    assert "Tensor" not in message
    assert not isinstance(info.value, AttributeError)  # hasattr must not answer False


@pytest.mark.parametrize("target", TARGETS)
def test_a_missing_attribute_is_pythons_attribute_error(target):
    with pytest.raises(AttributeError) as info:
        autostage.convert(target=target)(_missing)(np.ones(3))
    with pytest.raises(AttributeError) as python:
        _missing(np.ones(3))
    assert str(info.value) == str(python.value)
    assert "Tensor" not in str(info.value)


def _mean_by_the_statistics_module(x):
    import statistics

    return statistics.mean([x[0], x[1]])


def test_an_error_met_in_the_standard_library_names_the_users_line():
    """A staged value reaching the standard library (``statistics.mean`` asks a float for
    ``as_integer_ratio``) was refused "at .../statistics.py:318"; its frames are not the
    user's: the refusal names the user's line that called it."""
    import inspect

    with pytest.raises(UnsupportedAttributeError) as e:
        autostage.convert(_mean_by_the_statistics_module)(np.array([1.5, 2.0]))
    lines, first = inspect.getsourcelines(_mean_by_the_statistics_module)
    line = first + next(i for i, t in enumerate(lines) if "statistics.mean(" in t)
    assert f"(at {inspect.getsourcefile(_mean_by_the_statistics_module)}:{line})" in str(e.value)
