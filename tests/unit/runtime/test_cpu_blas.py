"""Real float products through NumPy's own BLAS (``backends/cpu/blas``): every layout an operand
can have (rows or columns contiguous, slices, reversed and strided axes, size-1 axes with odd
strides, empty axes), against NumPy, directly and from staged code; and ``np.dot`` where the
library is not there."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from autostage.runtime.backends.cpu import blas
from hypothesis import given, settings
from hypothesis import strategies as st

import autostage

pytestmark = pytest.mark.skipif(not blas.AVAILABLE, reason="NumPy's BLAS has no ILP64 CBLAS here")

RTOL = {np.float32: 1e-4, np.float64: 1e-12}
# The products have no CPython wrapper (compiled code calls them): called as generated code does.
gemm = numba.njit(lambda a, b: blas.gemm(blas.any_layout(a), blas.any_layout(b)))
gemv = numba.njit(lambda a, x, transpose: blas.gemv(blas.any_layout(a), blas.any_layout(x),
                                                   transpose))


def _layouts(x: np.ndarray) -> list[np.ndarray]:
    """``x``'s values in several memory layouts."""
    reversed_rows = np.ascontiguousarray(x[::-1])[::-1]
    padded = np.zeros((x.shape[0], x.shape[1] + 3), x.dtype)
    padded[:, 1:1 + x.shape[1]] = x
    strided = np.zeros((2 * x.shape[0], 2 * x.shape[1]), x.dtype)
    strided[::2, ::2] = x
    return [x, np.asfortranarray(x), reversed_rows, padded[:, 1:1 + x.shape[1]],
            strided[::2, ::2], np.asfortranarray(padded)[:, 1:1 + x.shape[1]]]


def _check(got, expected, dtype):
    assert got.dtype == dtype and got.shape == expected.shape and got.flags.c_contiguous
    np.testing.assert_allclose(got, expected, rtol=RTOL[dtype], atol=RTOL[dtype] * 10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7, 5, 3), (1, 5, 3), (7, 1, 3), (7, 5, 1), (1, 1, 1),
                                   (0, 5, 3), (7, 0, 3), (7, 5, 0), (40, 33, 29)])
def test_gemm_every_layout(dtype, shape):
    m, k, n = shape
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    for x in _layouts(a):
        for y in _layouts(b):
            _check(gemm(x, y), a @ b, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7, 5), (1, 5), (7, 1), (0, 4), (4, 0), (31, 45)])
def test_gemv_both_sides_every_layout(dtype, shape):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape).astype(dtype)
    right = rng.standard_normal(shape[1]).astype(dtype)
    left = rng.standard_normal(shape[0]).astype(dtype)
    for x in _layouts(a):
        for v in (right, right[::-1].copy()[::-1], np.repeat(right, 2)[::2]):
            _check(gemv(x, v, False), a @ v, dtype)
        for v in (left, left[::-1].copy()[::-1], np.repeat(left, 3)[::3]):
            _check(gemv(x, v, True), v @ a, dtype)


def test_broadcast_vector_is_read_as_its_values():
    a = np.arange(12.0).reshape(3, 4)
    v = np.broadcast_to(np.float64(2.0), (4,))  # stride 0
    _check(gemv(a, v, False), a @ v, np.float64)


def test_nan_and_inf_propagate_as_in_numpy():
    a = np.ones((30, 40))
    a[3, 5], a[7, 2] = np.nan, np.inf
    b = np.ones((40, 20))
    b[2, 1] = 0.0  # inf * 0 is nan
    np.testing.assert_array_equal(gemm(a, b), a @ b)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 12), st.integers(0, 12), st.integers(0, 12), st.booleans(), st.booleans(),
       st.integers(1, 3), st.sampled_from([np.float32, np.float64]))
def test_staged_products_match_numpy(m, k, n, transpose_a, transpose_b, step, dtype):
    """``a @ b`` of staged code on transposed and strided views, sizes from 0 (hypothesis)."""
    rng = np.random.default_rng(m * 169 + k * 13 + n)
    a = rng.standard_normal((k, m * step) if transpose_a else (m, k * step)).astype(dtype)
    b = rng.standard_normal((n, k) if transpose_b else (k, n)).astype(dtype)

    def product(a, b):
        x = a.T[::step] if transpose_a else a[:, ::step]
        return x @ (b.T if transpose_b else b)

    f = autostage.convert(product, target="cpu")
    with autostage.config.STATIC_SIZES.override(0):  # the BLAS path for every size
        got = f(a, b)
    expected = product(a, b)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=RTOL[dtype], atol=RTOL[dtype] * 10)


def matrix_vector(w, x, y):
    return w @ x, y @ w, np.dot(w, x)


def test_staged_code_calls_numpy_blas():
    f = autostage.convert(matrix_vector, target="cpu")
    rng = np.random.default_rng(2)
    w, x, y = rng.standard_normal((50, 40)), rng.standard_normal(40), rng.standard_normal(50)
    for got, expected in zip(f(w, x, y), matrix_vector(w, x, y), strict=True):
        _check(got, expected, np.float64)
    source = f.backend_source(w, x, y)
    assert "cpu_blas.gemv(" in source and "np.dot(" not in source


def test_without_numpy_blas_products_take_np_dot(monkeypatch):
    monkeypatch.setattr(blas, "AVAILABLE", False)

    def product(a, b):
        return a.T @ b + 1.0

    f = autostage.convert(product, target="cpu")
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((60, 30)), rng.standard_normal((60, 20))
    _check(f(a, b), product(a, b), np.float64)
    source = f.backend_source(a, b)
    assert "np.dot(" in source and "cpu_blas" not in source


LAYOUTS = """
    import json, numba, numpy as np
    from autostage.runtime.backends.cpu import blas
    layout = blas.any_layout  # (as generated code calls them)
    gemm = numba.njit(lambda a, b: blas.gemm(layout(a), layout(b)))
    gemv = numba.njit(lambda a, x, transpose: blas.gemv(layout(a), layout(x), transpose))
    a = np.arange(6.0).reshape(2, 3)
    same = []
    for x, y in [(a, a.T), (np.asfortranarray(a), a.T), (np.zeros((4, 6))[::2, ::2], a.T),
                 (a.T, a), (a.T.copy(), np.asfortranarray(a))]:
        same.append(bool(np.array_equal(gemm(x, y), x @ y)))
    v = np.arange(3.0)
    for x in (a, a[:, ::-1], np.asfortranarray(a)):
        same.append(bool(np.array_equal(gemv(x, v, False), x @ v)))
        same.append(bool(np.array_equal(gemv(x.T, v, True), v @ x.T)))
    print(json.dumps({"same": same, "signatures": [
        [str(t) for t in sig] for f in (blas.gemm, blas.gemv) for sig in f.signatures]}))
"""


def test_every_layout_shares_one_compiled_product_per_dtype(tmp_path):
    """Each new pair of operand layouts compiled gemm again (0.15-0.25 s, in the program that met
    it first); C and F operands are still read in place (``_layout``: the strides)."""
    from test_cpu_cache_faults import run_python

    out = run_python(LAYOUTS, tmp_path / "cache", NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    assert out["same"] == [True] * 11
    assert out["signatures"] == [
        ["array(float64, 2d, A)", "array(float64, 2d, A)"],
        ["array(float64, 2d, A)", "array(float64, 1d, A)", "bool"]]


def _inner(x, y):
    return x @ y, np.dot(x, y), np.linalg.norm(x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vector_products_and_norms_are_numpys_bit_for_bit(dtype):
    """A product of two vectors calls NumPy's own BLAS dot (``blas.dot``), as NumPy does:
    operands with positive strides in place; a reversed or broadcast one copied first by
    ``np.dot`` and summed in a loop by matmul (NumPy's two rules). Numba's ``np.dot`` compiled
    its SciPy binding again in each process. A norm sums the elements in memory order (NumPy's
    ``ravel("K")``): a transpose's sum is in another order than C's."""
    f = autostage.convert(_inner, target="cpu")
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal(400).astype(dtype), rng.standard_normal(400).astype(dtype)
    cases = [(x[:200], y[:200]), (x[::2], y[1::2]), (x[:200][::-1], y[:200]),
             (np.broadcast_to(x[:1], (200,)), y[:200]), (x[:0], y[:0]), (x[:1], y[:1])]
    for a, b in cases:
        for got, expected in zip(f(a, b), _inner(a, b), strict=True):
            assert got.dtype == expected.dtype and got == expected, (a.strides, got, expected)
    source = f.backend_source(x[::2], y[1::2])
    assert "cpu_blas.dot(" in source and "np.dot" not in source, source


def _norm(x):
    return np.linalg.norm(x)


def test_norms_of_views_sum_in_memory_order():
    f = autostage.convert(_norm, target="cpu")
    rng = np.random.default_rng(5)
    for _ in range(40):
        ndim = int(rng.integers(2, 5))
        x = rng.standard_normal(tuple(int(n) for n in rng.integers(1, 6, size=ndim)))
        x = x.transpose(rng.permutation(ndim))[
            tuple(slice(None, None, int(rng.choice([1, -1, 2]))) for _ in range(ndim))]
        assert f(x) == _norm(x), (x.shape, x.strides)


def _dots(x, y):
    return x @ y, np.dot(x, y), x[:4] @ y[:4]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vector_products_of_every_length_are_numpys(dtype):
    """A vector product of at most 64 elements was a loop in index order (inline where the
    trace knew the length, chosen at run time where not): from 16 elements on, OpenBLAS's
    kernel sums in another order, and 26 of 200 random float64 products (41 float32) differed
    in the last bit (found by a helper's PageRank and Gram-Schmidt)."""
    f = autostage.convert(_dots, target="cpu")
    rng = np.random.default_rng(6)
    for n in [4, 5, 15, 16, 17, 20, 33, 64, 65, 130]:
        x, y = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
        for got, expected in zip(f(x, y), _dots(x, y), strict=True):
            assert got.dtype == expected.dtype and got == expected, (n, got, expected)


COMPILED = """
    import json, numba, numpy as np
    from numba.core import compiler
    from autostage.runtime.backends.cpu import blas, direct
    through_numba = []
    original = compiler.CompilerBase._compile_bytecode

    def recorded(self):
        through_numba.append(self.state.func_id.func_qualname)
        return original(self)

    compiler.CompilerBase._compile_bytecode = recorded
    A2, A1 = numba.typeof(np.zeros((2, 2))[:, ::2]), numba.typeof(np.zeros(3)[::2])
    cases = ((blas.gemm, (A2, A2)), (blas.gemv, (A2, A1, numba.boolean)),
             (blas.dot, (A1, A1, numba.boolean)))
    for fn, sig in cases:
        fn.compile(sig)
    compiled = [bool(fn.overloads[sig].metadata.get(direct.METADATA_KEY)) for fn, sig in cases]
    print(json.dumps({"through_numba": through_numba, "direct": compiled}))
"""


def test_products_compile_without_numbas_pipeline(tmp_path):
    """``gemm``, ``gemv`` and ``dot`` compile directly, their BLAS calls written in line
    (intrinsics): as overload implementations Numba's pipeline compiled each once per dtype."""
    from test_cpu_cache_faults import run_python

    out = run_python(COMPILED, tmp_path / "cache", NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    assert out["direct"] == [True, True, True]
    assert out["through_numba"] == []
