"""Products with few known columns (``backends/cpu/skinny_products``): ``x @ w`` and ``x.T @ g``
for every layout of ``x``, against NumPy, and which kernel the cpu code calls. A trace uses the
kernels when BLAS runs on one thread as it compiles (the fixture sets NumPy's OpenBLAS to one
for every test here)."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from autostage.runtime.backends.cpu import blas

import autostage


def _set_blas_threads():
    """NumPy's OpenBLAS's thread setter, or None where that is not the BLAS."""
    from numpy._core import _multiarray_umath
    library = ctypes.CDLL(_multiarray_umath.__file__)
    for name in ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_"):
        if hasattr(library, name):
            return getattr(library, name)
    return None


SET_THREADS = _set_blas_threads()


@pytest.fixture(autouse=True)
def one_blas_thread():
    if SET_THREADS is None:
        yield
        return
    before = blas.threads()
    SET_THREADS(1)
    yield
    SET_THREADS(before)

RTOL = {np.float32: 2e-5, np.float64: 1e-12}


def product(a, b):
    return a @ b


def transposed_product(x, g):
    return x.T @ g


def strided_product(x, w):
    return x[:, ::2] @ w


def dot_product(a, b):
    return np.dot(a, b)


def _inputs(n, k, m, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, k)).astype(dtype), rng.standard_normal((k, m)).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m", [1, 3, 10, 16])
def test_rows_kernel(dtype, m):
    f = autostage.convert(product, target="cpu")
    x, w = _inputs(37, 300, m, dtype)
    got = f(x, w)
    assert got.dtype == dtype and got.shape == (37, m)
    np.testing.assert_allclose(got, x @ w, rtol=RTOL[dtype], atol=RTOL[dtype] * 30)
    assert "h_skinny_rows_" in f.backend_source(x, w)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m", [1, 10, 16])
def test_columns_kernel(dtype, m):
    f = autostage.convert(transposed_product, target="cpu")
    x, _ = _inputs(200, 61, 1, dtype)
    g = np.random.default_rng(1).standard_normal((200, m)).astype(dtype)
    got = f(x, g)
    assert got.dtype == dtype and got.shape == (61, m) and got.flags.c_contiguous
    np.testing.assert_allclose(got, x.T @ g, rtol=RTOL[dtype], atol=RTOL[dtype] * 30)
    assert "h_skinny_columns_" in f.backend_source(x, g)


def test_strided_operands_take_the_general_product():
    f = autostage.convert(strided_product, target="cpu")
    x, w = _inputs(20, 60, 10, np.float64)
    np.testing.assert_allclose(f(x, w[:30]), x[:, ::2] @ w[:30], rtol=1e-12)


def test_dot_of_matrices_uses_it_too():
    f = autostage.convert(dot_product, target="cpu")
    x, w = _inputs(50, 70, 4, np.float64)
    np.testing.assert_allclose(f(x, w), np.dot(x, w), rtol=1e-12)
    assert "h_skinny_rows_" in f.backend_source(x, w)


def test_more_columns_or_other_dtypes_do_not():
    f = autostage.convert(product, target="cpu")
    x, w = _inputs(50, 70, 17, np.float64)
    np.testing.assert_allclose(f(x, w), x @ w, rtol=1e-12)
    assert "skinny" not in f.backend_source(x, w)
    ints = np.arange(12).reshape(3, 4), np.arange(8).reshape(4, 2)
    g = autostage.convert(product, target="cpu")
    np.testing.assert_array_equal(g(*ints), ints[0] @ ints[1])
    assert "skinny" not in g.backend_source(*ints)


@pytest.mark.parametrize("function", [product, transposed_product])
def test_empty_operands(function):
    f = autostage.convert(function, target="cpu")
    for n, k in ((0, 30), (30, 0), (0, 0)):
        a = np.ones((n, k)) if function is product else np.ones((k, n))
        b = np.ones((k, 5))
        got = f(a, b)
        expected = function(a, b)
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("function", [product, transposed_product])
def test_nan_and_inf_propagate_as_in_numpy(function):
    f = autostage.convert(function, target="cpu")
    a = np.ones((30, 40)) if function is product else np.ones((40, 30))
    a[3, 5] = np.nan
    a[7, 2] = np.inf
    b = np.ones((40, 6))
    b[2, 1] = 0.0  # inf * 0 is nan
    np.testing.assert_array_equal(f(a, b), function(a, b))


@pytest.mark.skipif(SET_THREADS is None or not blas.AVAILABLE, reason="not NumPy's OpenBLAS")
def test_threaded_blas_takes_the_product_over():
    """A trace compiled while BLAS runs on more threads calls BLAS, which sums in its own
    order: NumPy's result, bit for bit; on one thread, the kernel."""
    x, w = _inputs(400, 300, 10, np.float64)
    SET_THREADS(2)
    assert blas.threads() == 2
    threaded = autostage.convert(product, target="cpu")
    assert "skinny" not in threaded.backend_source(x, w)
    np.testing.assert_array_equal(threaded(x, w), x @ w)
    SET_THREADS(1)
    assert blas.threads() == 1
    alone = autostage.convert(product, target="cpu")
    assert "h_skinny_rows_" in alone.backend_source(x, w)
    np.testing.assert_allclose(alone(x, w), x @ w, rtol=1e-12, atol=1e-10)
