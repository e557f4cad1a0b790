"""Errors of the staged statistics functions (runtime/numpy_statistics.py) on both targets."""

import warnings

import numpy as np
import pytest
from autostage.runtime.tensor import StagingTypeError

import autostage

TARGETS = ("interpreter", "cpu")


def _run(fn, target, *args):
    return autostage.convert(fn, target=target)(*args)


@pytest.mark.parametrize("target", TARGETS)
def test_nanargmax_all_nan_slice_raises_value_error(target):
    def f(x):
        return np.nanargmax(x, axis=1)
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        _run(f, target, np.array([[1.0, np.nan], [np.nan, np.nan]]))
    assert _run(f, target, np.array([[1.0, np.nan], [np.nan, 2.0]])).tolist() == [0, 1]


@pytest.mark.parametrize("target", TARGETS)
def test_bincount_negative_input_raises_like_numpy(target):
    def f(x):
        return np.bincount(x)
    with pytest.raises(ValueError, match="'list' argument must have no negative elements"):
        _run(f, target, np.array([2, -1]))
    assert _run(f, target, np.array([2, 0, 2])).tolist() == [1, 0, 2]


@pytest.mark.parametrize("target", TARGETS)
def test_weighted_bincount_of_an_empty_array_is_a_clear_error(target):
    """NumPy's is int64 (numpy-100 #65 with no indices); the staged result is float64."""
    def f(x, w):
        return np.bincount(x, w)
    with pytest.raises(ValueError, match="np.bincount of an empty array with weights cannot be "
                                         "staged: NumPy returns int64"):
        _run(f, target, np.zeros(0, np.int64), np.zeros(0))
    assert _run(f, target, np.array([2, 0]), np.array([0.5, 1.5])).tolist() == [1.5, 0.0, 0.5]


@pytest.mark.parametrize("target", TARGETS)
def test_quantile_other_method_is_a_clear_error(target):
    def f(x):
        return np.quantile(x, 0.5, method="nearest")
    with pytest.raises(StagingTypeError, match=r"np\.quantile: the argument method='nearest'.*"
                                               r"test_numpy_statistics\.py:\d+"):
        _run(f, target, np.arange(4.0))


@pytest.mark.parametrize("target", TARGETS)
def test_staged_quantile_out_of_range_raises_at_run_time(target):
    def f(x, q):
        return np.percentile(x, q)
    with pytest.raises(ValueError, match=r"Percentiles must be in the range \[0, 100\]"):
        _run(f, target, np.arange(4.0), np.array([50.0, 101.0]))
    assert _run(f, target, np.arange(5.0), np.array([50.0])).tolist() == [2.0]


@pytest.mark.parametrize("target", TARGETS)
def test_unique_with_axis_is_refused(target):
    def f(x):
        return np.unique(x, axis=0)
    with pytest.raises(StagingTypeError, match=r"np\.unique: the argument axis=0 .*axis=None"):
        _run(f, target, np.ones((2, 2)))


@pytest.mark.parametrize("target", TARGETS)
def test_digitize_staged_bins_not_monotonic(target):
    def f(x, bins):
        return np.digitize(x, bins)
    with pytest.raises(ValueError, match="bins must be monotonically increasing or decreasing"):
        _run(f, target, np.array([1.0]), np.array([0.0, 2.0, 1.0]))


@pytest.mark.parametrize("target", TARGETS)
def test_allclose_returns_a_python_bool(target):
    def f(a, b):
        return np.allclose(a, b)
    assert _run(f, target, np.ones(3), np.ones(3)) is True
    assert _run(f, target, np.ones(3), np.zeros(3)) is False


@pytest.mark.parametrize("target", TARGETS)
def test_average_zero_weights_raise_zero_division(target):
    def f(x, w):
        return np.average(x, weights=w)
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        _run(f, target, np.ones(2), np.zeros(2))


@pytest.mark.parametrize("target", TARGETS)
def test_round_out_and_staged_decimals_refused(target):
    def f(x):
        return np.round(x, 1, out=x)
    with pytest.raises(StagingTypeError, match=r"np\.round: the argument out="):
        _run(f, target, np.ones(2))


@pytest.mark.parametrize("target", TARGETS)
def test_round_half_to_even_matches_numpy_on_many_values(target):
    def f(x):
        return np.round(x, 3), np.round(x, -1), np.round(x)
    values = np.random.default_rng(3).uniform(-1e4, 1e4, 3000)
    values = np.concatenate([values, np.round(values, 4) + 0.0005, np.arange(-50, 50) + 0.5])
    for got, want in zip(_run(f, target, values), f(values), strict=True):
        assert np.array_equal(got, want)


@pytest.mark.parametrize("target", TARGETS)
def test_nanquantile_with_a_q_array_of_another_dtype_along_an_axis_is_refused(target):
    def f(x, q):
        return np.nanquantile(x, q, axis=1)  # NumPy's dtype: the first lane's

    x = np.array([[np.nan, np.nan], [1.0, 2.0]], np.float32)
    line = f.__code__.co_firstlineno + 1
    with pytest.raises(TypeError, match=rf"np.nanquantile: the argument q .*"
                                        rf"test_numpy_statistics.py:{line}.*float32"):
        autostage.convert(f, target=target)(x, np.array([0.5]))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = autostage.convert(f, target=target)(x, np.array([0.5], np.float32))
        want = f(x, np.array([0.5], np.float32))
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_array_equal(got, want)


def test_std_with_a_dtype_is_refused_clearly():
    def f(x):
        return x.std(dtype=np.float32)

    line = f.__code__.co_firstlineno + 1
    with pytest.raises(StagingTypeError, match=rf"np\.std: the argument dtype= is not supported "
                                               rf"on staged tensors at .*statistics.py:{line}"):
        autostage.convert(f)(np.arange(5.0))


@pytest.mark.parametrize("call", [lambda x: np.sum(x, initial=1.0),
                                  lambda x: np.max(x, where=x > 1, initial=0.0)])
def test_reduction_arguments_not_staged_name_the_line(call):
    """``initial=``/``where=`` were refused with a bare TypeError naming no line."""
    line = call.__code__.co_firstlineno
    with pytest.raises(StagingTypeError, match=rf"the argument (initial|where)= is not supported "
                                               rf"on staged tensors at .*statistics.py:{line}"):
        autostage.convert(call)(np.arange(5.0))



@pytest.mark.parametrize("target", TARGETS)
def test_std_and_var_with_a_staged_ddof_are_refused_naming_the_line(target):
    """nolds' ``np.std(seqs, axis=1, ddof=1 if unbiased else 0)`` with a NumPy bool: the staged
    ddof was put in the op as it was, and the cpu target compiled its text (``<staged Tensor
    i64[]>``) into the generated source (a SyntaxError in a cache file)."""
    def std(x, unbiased):
        return np.std(x, axis=0, ddof=1 if unbiased else 0)

    def var(x, ddof):
        return x.var(ddof=ddof)

    x = np.arange(6.0).reshape(3, 2)
    for fn, arg in ((std, np.bool_(True)), (var, np.int64(1))):
        line = fn.__code__.co_firstlineno + 1
        with pytest.raises(StagingTypeError, match=rf"np\.(std|var) at .*"
                                                   rf"test_numpy_statistics.py:{line}: a staged "
                                                   rf"ddof is not supported"):
            _run(fn, target, x, arg)
    np.testing.assert_array_equal(_run(std, target, x, True), std(x, True))  # a Python bool
    np.testing.assert_array_equal(_run(var, target, x, 0.5), var(x, 0.5))  # NumPy's float ddof

@pytest.mark.parametrize("target", TARGETS)
def test_searchsorted_is_numpys_search_on_an_unsorted_array(target):
    """NumPy starts each key's search from the previous key's bounds; on an unsorted ``a``
    (filterpy 2.0.0's residual_resample searches one) that gives other indices than a fresh
    binary search per key (the cpu target's was [4, 4, 2, 2]). A sorter index is checked only
    when the search reads it."""
    def right(a, v):
        return np.searchsorted(a, v, side="right")

    def by_sorter(a, v, s):
        return np.searchsorted(a, v, sorter=s)
    a = np.array([-0.03, -0.06, 0.52, 0.51, 0.77, 1.03, 1.01, 1.0])
    v = np.array([0.55, 0.71, 0.29, 0.51])
    assert _run(right, target, a, v).tolist() == np.searchsorted(a, v, "right").tolist() \
        == [4, 4, 2, 4]
    rng = np.random.default_rng(0)
    for _ in range(20):
        a, v = rng.integers(0, 6, 9).astype(float), rng.integers(-1, 7, 7).astype(float)
        assert _run(right, target, a, v).tolist() == np.searchsorted(a, v, "right").tolist()
    sorter = np.array([0, 1, 2, 3, 4, 5, 6, 99])
    got = _run(by_sorter, target, np.arange(1.0, 9.0), np.array([2.5]), sorter)
    assert got.dtype == np.int64 and got.tolist() == [2]
    with pytest.raises(ValueError, match="Sorter index out of range."):
        _run(by_sorter, target, np.arange(1.0, 9.0), np.array([7.5]), sorter)
