"""Sorting and scan ops (sort, argsort, take_along_axis, cumsum, cumprod): types and values
against NumPy, static shapes, and NumPy's errors at trace time."""

from __future__ import annotations

import numpy as np
import pytest
from autostage.runtime.tensor import StagingTypeError
from autostage.runtime.types import TensorType
from ops_harness import check_against_numpy, stage

# ties on purpose: a stable sort and NumPy's default quicksort may order them differently
F = np.array([[3.0, -1.0, 3.0, 0.5], [2.0, 2.0, -7.0, 2.0], [0.0, 1.0, 0.0, -1.0]])
I8 = np.array([5, -3, 5, 0, 127, -128, 0], dtype=np.int8)
BOOLS = np.array([True, False, True, True])


@pytest.mark.parametrize("fn", [
    np.sort, np.argsort, lambda x: np.sort(x, axis=0), lambda x: np.argsort(x, axis=0),
    lambda x: np.sort(x, axis=None), lambda x: np.argsort(x, axis=None),
    lambda x: np.argsort(-x, kind="stable"), lambda x: np.argsort(x, stable=True),
    lambda x: np.sort(x, kind="mergesort"), lambda x: np.argsort(x, kind="heapsort"),
    lambda x: x.argsort(), lambda x: x.argsort(axis=0, kind="stable"),
])
@pytest.mark.parametrize("known", [True, False])
def test_sort_and_argsort_match_numpy(fn, known):
    check_against_numpy(fn, F, known=known)
    check_against_numpy(fn, I8, known=known)


def test_argsort_result_is_int64_and_keeps_the_shape():
    (t,), _ = stage(lambda x: np.argsort(x, axis=1), F, known=True)
    assert t == TensorType(np.int64, (3, 4))
    (t,), _ = stage(lambda x: np.argsort(x, axis=None), F)
    assert t == TensorType(np.int64, (None,))
    (t,), _ = stage(lambda x: np.sort(x, axis=None), F, known=True)
    assert t == TensorType(np.float64, (12,))


@pytest.mark.parametrize("fn", [
    lambda x, i: np.take_along_axis(x, i, axis=1),
    lambda x, i: np.take_along_axis(x, i[:, :2], axis=1),
    lambda x, i: np.take_along_axis(x, i[:1] % 3, axis=0),
    lambda x, i: np.take_along_axis(x, i[:, :1], axis=-1),
    lambda x, i: np.take_along_axis(x.reshape(-1), i.reshape(-1)[:5], axis=0),
    lambda x, i: np.take_along_axis(x, i.reshape(-1), axis=None),
])
@pytest.mark.parametrize("known", [True, False])
def test_take_along_axis_matches_numpy(fn, known):
    check_against_numpy(fn, F, np.argsort(F, axis=1), known=known)


def test_take_along_axis_of_argsort_is_sort():
    def fn(x):
        return np.take_along_axis(x, np.argsort(x, axis=1), axis=1)
    check_against_numpy(fn, F)


def test_take_along_axis_errors():
    def fn(x):
        with pytest.raises(ValueError, match="same number of dimensions"):
            np.take_along_axis(x, np.zeros(3, np.int64), axis=0)
        with pytest.raises(IndexError, match="integer"):
            np.take_along_axis(x, x, axis=0)
        with pytest.raises(ValueError, match="single dimension"):
            np.take_along_axis(x, np.zeros((1, 1), np.int64), axis=None)
        return x
    stage(fn, F)


@pytest.mark.parametrize("fn", [
    np.cumsum, np.cumprod, lambda x: np.cumsum(x, axis=0), lambda x: np.cumprod(x, axis=-1),
    lambda x: np.cumsum(x, dtype=np.float32), lambda x: x.cumsum(), lambda x: x.cumprod(0),
    lambda x: x.cumsum(axis=1, dtype=np.int64),
])
@pytest.mark.parametrize("array", [F, I8.reshape(1, -1), BOOLS.reshape(2, 2)],
                         ids=["f64", "i8", "bool"])
@pytest.mark.parametrize("known", [True, False])
def test_cumsum_and_cumprod_match_numpy(fn, array, known):
    check_against_numpy(fn, array, known=known)


def test_scan_types():
    (t,), _ = stage(np.cumsum, I8, known=True)
    assert t == TensorType(np.int64, (7,))  # NumPy accumulates small integers in int64
    (t,), _ = stage(lambda x: np.cumsum(x, axis=1), F)
    assert t == TensorType(np.float64, (None, None))
    (t,), _ = stage(np.cumprod, F, known=True)
    assert t == TensorType(np.float64, (12,))
    (t,), _ = stage(np.cumsum, F)
    assert t == TensorType(np.float64, (None,))


def test_unsupported_arguments_are_clear_errors():
    def fn(x):
        with pytest.raises(np.exceptions.AxisError):
            np.cumsum(x, axis=2)
        with pytest.raises(np.exceptions.AxisError):
            np.sort(x, axis=3)
        with pytest.raises(TypeError, match="out="):
            np.cumsum(x, out=np.zeros(12))
        with pytest.raises(ValueError):
            np.sort(x, kind="bogus")
        with pytest.raises(ValueError, match="both"):
            np.argsort(x, kind="stable", stable=True)
        with pytest.raises(StagingTypeError, match=r"np\.sort\(x\)"):
            x.sort()
        return x
    stage(fn, F)


def test_a_nan_quantile_keeps_the_calls_dtype_on_the_interpreter():
    """NumPy gives a 0-d quantile of float32 values holding NaN as a float32 NaN, the same call
    without NaN float64: the reference keeps the type rule's dtype (README, "Not guaranteed")."""
    import autostage

    def q70(x, q):
        return np.quantile(x, q)
    x = np.arange(20, dtype=np.float32)
    x[3] = np.nan
    for target in ("interpreter", "cpu"):
        got = autostage.convert(q70, target=target)(x, np.float64(0.7))
        assert np.asarray(got).dtype == np.float64 and np.isnan(got)
        assert autostage.convert(q70, target=target)(x[4:], np.float64(0.7)) == q70(
            x[4:], np.float64(0.7))
