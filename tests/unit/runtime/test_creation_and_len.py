"""Creation calls and ``len`` of staged values as NumPy and Python behave, found running other
people's code (astropy.stats, array_api_compat's wrappers in SciPy): ``np.zeros(n, dtype=None)``
is float64, ``np.array``'s NumPy 2 copy modes, and ``len()`` of a 0-d value is Python's
TypeError, which a user's ``except TypeError`` catches."""

import numpy as np
import pytest

import autostage

TARGETS = ["interpreter", "cpu"]


def _made_with_dtype_none(n):
    # (``np.empty``'s contents are whatever memory held, inf and NaN included: only its dtype
    # and shape are compared, through ``zeros_like``)
    return (np.zeros(n, dtype=None), np.ones(n, dtype=None), np.zeros_like(np.empty(n, dtype=None)),
            np.full(n, 2.0, dtype=None), np.full(n, 2, dtype=None), np.eye(n, dtype=None))


@pytest.mark.parametrize("target", TARGETS)
def test_dtype_none_is_numpys_default(target):
    """A staged size with ``dtype=None`` gave int64 (the fill value's dtype)."""
    got = autostage.convert(_made_with_dtype_none, target=target)(np.int64(3))
    for g, want in zip(got, _made_with_dtype_none(3), strict=True):
        assert g.dtype == want.dtype and np.array_equal(g, want)


def _copy_modes(x):
    return (np.array(x, copy=np._CopyMode.IF_NEEDED) + np.array(x, copy=None)
            + np.array(x, copy=np._CopyMode.ALWAYS) + np.asarray(x, copy=None))


@pytest.mark.parametrize("target", TARGETS)
def test_copy_modes_of_numpy_2(target):
    """A ``_CopyMode`` was tested as a bool: NumPy's ValueError ("neither True nor False")."""
    x = np.arange(3.0)
    np.testing.assert_array_equal(autostage.convert(_copy_modes, target=target)(x),
                                  _copy_modes(x))


def _length_or_one(d):  # (astropy.stats.bootstrap with bootfunc=np.mean)
    try:
        k = len(np.mean(d))
    except TypeError:
        k = 1
    return np.zeros(k) + d.sum()


def _messages(d):
    out = []
    for v in (np.mean(d), d.sum() > 0, np.asarray(d.sum())):
        try:
            len(v)
        except TypeError as e:
            out.append(str(e))
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_len_of_a_0d_value_is_pythons_type_error(target):
    d = np.arange(4.0)
    np.testing.assert_array_equal(autostage.convert(_length_or_one, target=target)(d), [6.0])
    assert autostage.convert(_messages, target=target)(d) == _messages(d) == [
        "object of type 'numpy.float64' has no len()", "object of type 'numpy.bool' has no len()",
        "len() of unsized object"]


def _numpy_array_with_staged_sizes(data, m):  # (astropy's circstats: broadcast_to(ones, shape))
    return (np.broadcast_to(np.ones((1,)), data.shape) * data, np.tile(np.ones(2), m),
            np.repeat(np.arange(2), m), np.reshape(np.arange(6.0), (2, m)))


@pytest.mark.parametrize("target", TARGETS)
def test_a_numpy_array_with_staged_sizes_or_counts(target):
    """NumPy dispatches on the array argument only: the staged shape was used as a Python bool
    (refused)."""
    data, m = np.arange(5.0), np.int64(3)
    got = autostage.convert(_numpy_array_with_staged_sizes, target=target)(data, m)
    for g, want in zip(got, _numpy_array_with_staged_sizes(data, 3), strict=True):
        assert g.dtype == want.dtype and np.array_equal(g, want)


def _reductions_of_lists(x):  # (numpy-ml's hmm: np.max([...]) of staged scalars)
    a, b, c = x[0] * 2, x[1] + 1, x.sum()
    return (np.max([a, b, c]), np.argmax([a, b]), np.sum([a, b]), np.mean((a, c)),
            np.min([a, 0.5]), np.median([a, b, c, 1]), np.sum([x, x], axis=0))


@pytest.mark.parametrize("target", TARGETS)
def test_numpy_reductions_of_lists_holding_staged_values(target):
    """NumPy makes the array itself, which a staged value cannot join: refused."""
    x = np.array([0.3, 0.9, 0.1])
    got = autostage.convert(_reductions_of_lists, target=target)(x)
    for g, want in zip(got, _reductions_of_lists(x), strict=True):
        assert type(g) is type(want) and np.array_equal(g, want), (g, want)


def _arange_numpy_step(x, step):
    return np.arange(0, 5, step) + x.sum()


def _arange_int_step(x, step):
    return np.arange(0, 5, int(step)) + x.sum()


def _arange_float_step(x, step):
    return np.arange(0.0, 5.0, float(step)) + x.sum()


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
@pytest.mark.parametrize("fn", [_arange_numpy_step, _arange_int_step, _arange_float_step])
def test_a_zero_arange_step_raises_numpys_error_for_its_types(fn, target):
    # NumPy: ValueError "Maximum allowed size exceeded" for a NumPy step, Python's
    # ZeroDivisionError for Python numbers (the cpu target raised ZeroDivisionError for both)
    staged = autostage.convert(fn, target=target)
    np.testing.assert_array_equal(staged(np.ones(1), np.int64(2)), fn(np.ones(1), np.int64(2)))
    with np.errstate(all="ignore"), pytest.raises((ValueError, ZeroDivisionError)) as want:
        fn(np.ones(1), np.int64(0))
    with pytest.raises(want.type, match=str(want.value)):
        staged(np.ones(1), np.int64(0))
