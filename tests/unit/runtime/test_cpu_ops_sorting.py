"""CPU lowerings of sort/argsort/take_along_axis/cumsum/cumprod and diag/triu/tril/norm against
the NumPy reference: exact, except norms (rtol 1e-12 f64 / 2e-6 f32: other summation order)."""

from __future__ import annotations

import numpy as np
import pytest
from test_cpu_ops_harness import run_cpu

import autostage

RNG = np.random.default_rng(2)
X = RNG.standard_normal((3, 4, 5))
NAN = np.array([[3.0, np.nan, 1.0, -2.0], [np.nan, 0.5, 0.5, 9.0]])
TIES = np.array([[3, 1, 3, 1, 2], [0, 0, 0, 5, 5]], dtype=np.int16)


@pytest.mark.parametrize("x", [X, NAN, TIES], ids=["f64", "nan", "ties"])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_sort_and_argsort(x, axis):
    run_cpu(lambda a: np.sort(a, axis=axis), x)
    run_cpu(lambda a: np.argsort(a, axis=axis, kind="stable"), x)


def test_take_along_axis():
    run_cpu(lambda a: np.take_along_axis(a, np.argsort(a, axis=1), axis=1), X)
    run_cpu(lambda a, i: np.take_along_axis(a, i, axis=0), X[:, :, 0], np.array([[2, -1, 0, 1]]))
    run_cpu(lambda a, i: np.take_along_axis(a, i, axis=None), X, np.array([59, -3, 7]))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1, 2])
def test_scans(name, axis):
    run_cpu(lambda a: getattr(np, name)(a, axis=axis), X)
    run_cpu(lambda a: getattr(np, name)(a, axis=min(axis or 0, 1)), TIES)
    run_cpu(lambda a: getattr(np, name)(a > 0, axis=axis), X)
    run_cpu(lambda a: getattr(np, name)(a, axis=axis, dtype=np.float32), X)


@pytest.mark.parametrize("fn", [
    np.diag, lambda x: np.diag(x, 1), lambda x: np.diag(x, -2), lambda x: np.diag(x, 7),
    lambda x: np.diag(x[0]), lambda x: np.diag(x[0], -1), np.triu, np.tril,
    lambda x: np.triu(x, 1), lambda x: np.tril(x, -1), lambda x: np.tril(x[1], 2),
])
def test_matrix_helpers(fn):
    run_cpu(fn, X[0])
    run_cpu(fn, TIES)


def test_triangles_of_stacks():
    run_cpu(lambda a: np.triu(a, -1), X)


@pytest.mark.parametrize("ord_,axis", [
    (None, None), (None, (1,)), (2, (0,)), (1, (2,)), (0, (1,)), (np.inf, (1,)),
    (-np.inf, (0,)), (3, (2,)), (0.5, (1,)), ("fro", (0, 1)), (1, (1, 2)), (-1, (2, 0)),
    (np.inf, (0, 2)), (-np.inf, (1, 0)),
])
def test_norm(ord_, axis):
    """NumPy's value bit for bit (its BLAS dot, its pairwise sums; p norms: NumPy's call)."""
    run_cpu(lambda a: np.linalg.norm(a, ord=ord_, axis=axis), X)
    run_cpu(lambda a: np.linalg.norm(a, ord=ord_, axis=axis, keepdims=True),
            X.astype(np.float32))


LONG = np.random.default_rng(4).standard_normal((300, 40))


@pytest.mark.parametrize("ord_,axis", [
    (None, None), (None, (0,)), (1, (0,)), ("fro", None), (1, None), (np.inf, None),
    (-1, (1, 0)), (None, (0, 1))])
def test_norm_of_long_axes_is_numpys_bit_for_bit(ord_, axis):
    """A sum of squares in one loop was ~1 ulp from NumPy's dot or pairwise sum (numpy-ml's
    squared error)."""
    run_cpu(lambda a: np.linalg.norm(a, ord=ord_, axis=axis), LONG)
    run_cpu(lambda a: np.linalg.norm(a, ord=ord_, axis=axis), LONG.astype(np.float32))
    if ord_ != "fro" and (axis is None or len(axis) == 1):  # (of a vector)
        run_cpu(lambda a: np.linalg.norm(a[:, 3], ord=ord_), LONG)


def test_norm_of_ints_complex_and_matrices():
    run_cpu(lambda a: np.linalg.norm(a), TIES)
    run_cpu(lambda a: np.linalg.norm(a, 1), TIES)
    z = (X[0] + 1j * X[1]).astype(np.complex64)
    run_cpu(lambda a: np.linalg.norm(a), z)
    run_cpu(lambda a: np.linalg.norm(a, axis=1), z)


# NumPy's default (unstable) sorts order ties as they happen to (on AVX-512 machines in SIMD
# code), from 16 elements on not in index order: compiled sorts give NumPy's result, ties and
# signs of zeros included (backends/cpu/sorts.py).
def _bits(x):
    x = np.ascontiguousarray(x)
    return x.dtype, x.shape, x.view(np.uint8).tobytes()


def _sort_default(x):
    return np.sort(x), np.argsort(x), np.argsort(x, kind="heapsort"), np.sort(x, kind="stable")


def _sort_rows(x):
    return np.sort(x, axis=1), np.argsort(x, axis=1), np.argsort(x, axis=0)


TIED = [
    (np.arange(24) % 7).astype(np.int64),
    (np.arange(30) % 4).astype(np.float32),
    np.array([0.0, -0.0] * 20),
    np.array([-0.0, 0.0, 1.0] * 7),
    np.array([np.nan, -np.nan, 1.0, 0.0, -0.0] * 5),
    np.array([3.0, 1.0, 2.0] * 2),  # short: NumPy's insertion sort, stable
    np.random.default_rng(0).integers(0, 3, 100).astype(np.float64),
]


@pytest.mark.parametrize("x", TIED, ids=lambda x: f"{x.dtype}{x.shape}")
def test_default_sorts_order_ties_as_numpy(x):
    got = autostage.convert(_sort_default)(x)
    for g, w in zip(got, _sort_default(x), strict=True):
        assert _bits(g) == _bits(w)
    rows = np.stack([x, x[::-1]])
    for g, w in zip(autostage.convert(_sort_rows)(rows), _sort_rows(rows), strict=True):
        assert _bits(g) == _bits(w)


def _middles(x):
    return (np.median(x), np.quantile(x, 0.5), np.percentile(x, [25.0, 50.0]),
            np.nanmedian(x), np.quantile(x, 0), np.median(np.stack([x, x]), axis=1),
            np.nanmedian(np.stack([x, x]), axis=1))


@pytest.mark.parametrize("x", [
    np.array([0.0, -0.0, -0.0, 0.0, 0.0] * 5 + [1.0]), np.array([-0.0, 0.0, 1.0] * 7),
    np.array([0.0] * 10 + [-0.0] * 11), np.array([-0.0] * 3, dtype=np.float32)],
    ids=["even", "odd", "halves", "f32"])
def test_zero_medians_and_quantiles_have_numpys_sign(x):
    """NumPy's median sums its middles from 0.0 (never -0.0); its quantile of zeros of both
    signs depends on which zeros its selection puts in the middle."""
    for g, w in zip(autostage.convert(_middles)(x), _middles(x), strict=True):
        assert _bits(g) == _bits(w)


def _orders_and_middles(x, q):
    return (np.sort(x), np.argsort(x), np.median(x), np.quantile(x, q), np.nanquantile(x, q),
            np.nanmedian(x), np.percentile(x, 30.0), np.sort(x, kind="stable"),
            np.argsort(x, kind="stable"))


def _same_with_any_nan(got, want):
    """Bit for bit, but for NaNs' signs and payloads (README: not guaranteed)."""
    got, want = np.asarray(got), np.asarray(want)
    nan_got, nan_want = got != got, want != want
    return (got.dtype == want.dtype and np.array_equal(nan_got, nan_want)
            and np.where(nan_got, 0, got).tobytes() == np.where(nan_want, 0, want).tobytes())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_random_lanes_of_ties_zeros_and_nans_sort_as_numpy(dtype):
    f = autostage.convert(_orders_and_middles)
    rng = np.random.default_rng(7)
    values = np.array([-0.0, 0.0, 1.0, -1.0, np.nan, -np.nan], dtype)
    for _ in range(40):
        x = rng.choice(values[:rng.integers(2, 7)], rng.integers(17, 60))
        q = float(rng.choice([0.0, 0.25, 0.5, 0.7, 1.0]))  # (weak: NumPy's float32 results)
        for got, want in zip(f(x, q), _orders_and_middles(x, q), strict=True):
            assert _same_with_any_nan(got, want), (x, q, got, want)


def _strided(x):
    return (np.argsort(x[::-1, 1]), np.sort(x[::-2, 0]), np.argsort(x[:, 1]),
            np.quantile(x[::-1, 0], 0.5), np.median(x[::2, 2]))


def test_strided_and_reversed_lanes_sort_as_numpy():
    """NumPy is handed the lane's own strides (negative ones included); a median or quantile
    of a strided 1-d view compiles (it reshaped the view, which Numba refuses)."""
    x = np.array([[0.0, -0.0, 1.0]] * 12 + [[-0.0, 0.0, 0.0]] * 11)
    for got, want in zip(autostage.convert(_strided)(x), _strided(x), strict=True):
        assert _bits(got) == _bits(want)


def _orders(x):
    return (np.sort(x), np.argsort(x), np.sort(x, kind="stable"), np.argsort(x, kind="stable"),
            np.sort(x[::-3]), np.argsort(x[::-3]))


def _lanes_to_sort():
    """Long lanes the introsort and merge sort must order as NumPy does: random, sorted,
    reversed, organ pipe (a median-of-three's bad case), all equal, few values, NaNs."""
    rng = np.random.default_rng(11)
    n = 3000
    floats = rng.standard_normal(n)
    with_nans = floats.copy()
    with_nans[rng.random(n) < 0.1] = np.nan
    pipe = np.r_[np.arange(n // 2), np.arange(n // 2)[::-1]]
    yield from (floats, np.sort(floats), np.sort(floats)[::-1].copy(), with_nans,
                pipe.astype(np.float64), np.zeros(n), rng.integers(0, 5, n),
                rng.integers(-100, 100, n).astype(np.int8), rng.integers(0, 2, n).astype(bool),
                floats.astype(np.float32), rng.integers(0, 9, n).astype(np.uint16))
    complexes = rng.integers(0, 3, 40) + 1j * rng.integers(0, 3, 40)
    complexes[::7] = complex(np.nan, 1.0)
    complexes[::5] = complex(1.0, np.nan)
    yield complexes


@pytest.mark.parametrize("x", list(_lanes_to_sort()), ids=lambda x: f"{x.dtype}")
def test_long_lanes_sort_as_numpy(x):
    got, want = autostage.convert(_orders)(x), _orders(x)
    for g, w in zip(got, want, strict=True):
        assert _same_with_any_nan(g, w), (x, g, w)


def test_heapsort_fallback_sorts():
    """Introsort's fallback past 2 log2(n) quicksort levels, which few inputs reach."""
    import numba
    from autostage.runtime.backends.cpu import sorts

    heapsort = numba.njit(lambda a, lo, hi: sorts._heapsort(a, lo, hi))
    rng = np.random.default_rng(3)
    for n in (1, 2, 3, 16, 17, 100, 1001):
        for values in (rng.standard_normal(n), rng.integers(0, 3, n).astype(np.float64)):
            a = np.r_[9.0, values, -9.0]  # (the range within: the ends stay)
            heapsort(a, np.int64(1), np.int64(n))
            assert np.array_equal(a, np.r_[9.0, np.sort(values), -9.0])


def signed_scans(x):
    return (np.cumsum(x), np.cumsum(x.reshape(2, 3), axis=1), np.cumprod(x),
            np.cumsum(x.astype(np.complex128) * (1 - 1j)))


def test_a_cumsum_starts_from_the_first_element_sign_of_zero_included():
    # (it started from +0.0, so a leading -0.0 came back +0.0)
    x = np.array([-0.0, 0.0, -0.0, -0.0, np.nan, 2.0])
    for got, want in zip(autostage.convert(signed_scans)(x), signed_scans(x), strict=True):
        np.testing.assert_array_equal(got, want, strict=True)
        for part in (np.real, np.imag):
            np.testing.assert_array_equal(np.signbit(part(got)), np.signbit(part(want)))
