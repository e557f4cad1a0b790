"""CPU lowerings of reductions against the NumPy reference: dtypes, axes, keepdims, NaNs.

Float sums/means/vars are compared with rtol 1e-6 (f64) / 2e-6 (f32) where the loops add in
order and NumPy pairwise; sums and means over trailing axes add pairwise as NumPy does and must
give its bits. Everything else must be exact."""

from __future__ import annotations

import numpy as np
import pytest
from test_cpu_ops_harness import run_cpu

import autostage

RNG = np.random.default_rng(0)
F64 = RNG.standard_normal((3, 4, 5))
F32 = RNG.standard_normal((4, 6)).astype(np.float32)
I8 = RNG.integers(-100, 100, (4, 5)).astype(np.int8)
B = RNG.random((3, 4)) > 0.5
NAN = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -1.0], [np.nan, 0.0, 2.0]])
EXACT = ("max", "min", "argmax", "argmin", "any", "all")


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "max", "min", "any", "all", "std",
                                  "var"])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (1, True), ((0, 2), False),
                                           ((1, 2), True), (None, True)])
def test_reductions_over_axes(name, axis, keepdims):
    tol = 0 if name in EXACT else 1e-12

    def fn(x):
        return getattr(np, name)(x, axis=axis, keepdims=keepdims)

    run_cpu(fn, F64, rtol=tol)


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "max", "min", "argmax", "argmin",
                                  "any", "all", "std", "var"])
@pytest.mark.parametrize("x", [F32, I8, B], ids=["f32", "i8", "bool"])
def test_reduction_dtypes(name, x):
    if name in ("std", "var", "mean") and x.dtype == np.bool_:
        x = x.astype(np.int8)
    tol = 0 if name in EXACT or x.dtype != np.float32 else 2e-6
    run_cpu(lambda a: getattr(np, name)(a, axis=1), x, rtol=tol)
    run_cpu(lambda a: getattr(np, name)(a), x, rtol=tol)


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin", "sum"])
def test_nan_semantics(name):
    for axis in (None, 0, 1):
        run_cpu(lambda a, axis=axis: getattr(np, name)(a, axis=axis), NAN)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_arg_reductions_keepdims_and_ties(axis):
    x = np.array([[3, 1, 3], [0, 7, 7]], dtype=np.int32)
    run_cpu(lambda a: np.argmax(a, axis=axis, keepdims=True), x)
    run_cpu(lambda a: np.argmin(a, axis=axis), x)


def test_dtype_and_ddof_attrs():
    run_cpu(lambda a: np.sum(a, axis=0, dtype=np.int8), I8)
    run_cpu(lambda a: np.mean(a, dtype=np.float32), I8, rtol=1e-6)
    run_cpu(lambda a: np.var(a, axis=1, ddof=1), F32, rtol=2e-6)
    run_cpu(lambda a: np.std(a, ddof=2.5), F64, rtol=1e-12)


def test_complex_sum_mean_var():
    z = (RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))).astype(np.complex64)
    for name in ("sum", "mean", "var", "std"):
        run_cpu(lambda a, name=name: getattr(np, name)(a, axis=0), z, rtol=2e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.complex64, np.bool_])
@pytest.mark.parametrize("shape,axis", [((300, 257), 0), ((3, 40, 50), (0, 1)),
                                        ((3, 40, 50), 0), ((0, 5), 0), ((6, 0), 0)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_sums_over_leading_axes_add_along_memory_in_numpys_order(dtype, shape, axis, keepdims):
    """A sum over the leading axes runs with the kept axes innermost (one running sum per result
    element, along memory) and adds each column in order, as NumPy does: its bits."""
    x = (RNG.standard_normal(shape) * 100).astype(dtype)
    source = run_cpu(lambda a: np.sum(a, axis=axis, keepdims=keepdims), x)
    assert "cpu_new.zeros(" in source and "] += " in source  # the running sums, not one per loop


def test_sum_of_complex_values_in_a_real_dtype_keeps_the_real_part():
    z = (RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))).astype(np.complex64)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        for axis in (0, 1, None):
            # cast values add in order (NumPy: pairwise in its cast buffers): a few ulps of
            # the values apart (relative to a sum that cancels, more: 2 in 40 runs failed
            # rtol=2e-6 alone)
            run_cpu(lambda a, axis=axis: np.sum(a, axis=axis, dtype=np.float32), z, rtol=2e-6,
                    atol=2e-6)
            run_cpu(lambda a, axis=axis: np.mean(a, axis=axis, dtype=np.float64), z,
                    rtol=1e-12)


@pytest.mark.parametrize("layout", ["c", "strided", "rows"])
def test_row_sums_are_numpys_whatever_the_layout(layout):
    """A row's pairwise sum reads the operand's C-ordered elements (itself, or one copy when it
    is not C-contiguous): NumPy's bits; no layout test in the code."""
    x = RNG.standard_normal((7, 300)).astype(np.float32)
    x = {"c": x, "strided": x[:, ::2], "rows": x[::2]}[layout]
    source = run_cpu(lambda a: a.sum(axis=1), x)
    run_cpu(lambda a: (a * 2.0).sum(axis=-1, keepdims=True), x)
    assert "c_contiguous" not in source and "cpu_new.contiguous(a1)" in source


def test_empty_max_raises():
    with pytest.raises(ValueError, match="zero-size array"):
        run_cpu(lambda a: np.max(a, axis=1), np.zeros((2, 0)))


def test_zero_d_input():
    run_cpu(lambda a: np.sum(a), np.float32(2.5))
    run_cpu(lambda a: np.argmax(a), np.float32(2.5))


def _summed(dtype, shape, layout):
    x = (RNG.standard_normal(shape) * 10.0 ** RNG.uniform(-3, 3, shape)).astype(dtype)
    return {"C": x, "F": np.asfortranarray(x), "strided": x[..., ::2]}[layout]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
@pytest.mark.parametrize("shape", [(7,), (129,), (5, 300), (3, 40, 50), (2, 70000)],
                         ids=lambda s: "x".join(map(str, s)))
def test_float_sums_are_numpys_pairwise_sums(dtype, layout, shape):
    """Bit for bit where NumPy adds pairwise: a C-contiguous block, an F-contiguous array's
    memory when every axis is reduced, each row of a strided last axis. Elsewhere NumPy adds
    in an order of its iterator's choosing: within 1e-6 (f32) of the sum of magnitudes."""
    x = _summed(dtype, shape, layout)
    if layout == "F" and x.ndim == 1:
        pytest.skip("a 1-d array is C-contiguous")
    near = {"atol": float(np.sum(np.abs(x), dtype=np.float64)) * (
        1e-6 if dtype == np.float32 else 1e-14), "rtol": 1e-300}
    whole = {} if layout != "strided" or x.ndim == 1 else near
    rows = {} if layout != "F" else near
    run_cpu(lambda x: np.sum(x), x, **whole)
    run_cpu(lambda x: np.mean(x), x, **whole)
    run_cpu(lambda x: np.sum(x, axis=-1), x, **rows)
    if x.ndim == 3:
        run_cpu(lambda x: np.sum(x, axis=(1, 2)), x, **(rows or whole))


# -- sums of computed values: fused reductions and variances add pairwise, as NumPy adds the array
# those values would form (added in order, 4e6 float32 values of 0.2 summed to 769,050 instead of
# 800,000; a float32 variance was 0.7% off).

def fused_sum(x):
    return np.sum(x * 2)


def fused_row_sums(x):
    return np.sum(x * 2, axis=-1, keepdims=True)


def fused_mean_of_squares(x):
    return np.mean(x * x)


def fused_row_means(x):
    return np.mean(x * x, axis=-1, keepdims=True)


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 127, 128, 129, 1023, 1024, 1025, 2047, 2048, 5000,
                               100_003])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_sums_give_numpys_bits_across_tile_sizes(n, dtype):
    x = (np.random.default_rng(n).random(n) * 10).astype(dtype)
    f = autostage.convert(fused_sum, target="cpu")
    g = autostage.convert(fused_mean_of_squares, target="cpu")
    with autostage.config.STATIC_SIZES.override(0), np.errstate(invalid="ignore"):
        got, mean = f(x), g(x)  # one trace for every size
        expected = fused_mean_of_squares(x)  # (nan for n = 0)
    assert got.dtype == dtype and got == fused_sum(x)
    assert mean.dtype == dtype and (mean == expected or n == 0 and np.isnan(mean))
    assert "pairwise_sum_tiles" in f.backend_source(x)
    assert "pairwise_sum_tiles" in g.backend_source(x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_long_fused_sums_of_float32_are_not_sequential(dtype):
    x = np.full(4_000_000, 0.1, dtype)
    got = autostage.convert(fused_sum, target="cpu")(x)
    assert got == fused_sum(x)  # NumPy's bits; in order, float32 gave 769049.56
    rows = np.full((3, 1_500_000), 0.1, dtype)
    np.testing.assert_array_equal(autostage.convert(fused_row_sums, target="cpu")(rows),
                                  fused_row_sums(rows))
    y = np.random.default_rng(1).random(3_000_001).astype(dtype)
    assert autostage.convert(fused_mean_of_squares, target="cpu")(y) == fused_mean_of_squares(y)
    np.testing.assert_array_equal(autostage.convert(fused_row_means, target="cpu")(rows * 3),
                                  fused_row_means(rows * 3))


def variance(x):
    return np.var(x), np.std(x, axis=-1), np.var(x, axis=(0, 1), ddof=1)


def test_long_variances_give_numpys_bits():
    x = (np.random.default_rng(2).random((2, 3, 700_001)) + 100).astype(np.float32)
    f = autostage.convert(variance, target="cpu")
    for got, expected in zip(f(x), variance(x), strict=True):
        np.testing.assert_array_equal(got, expected)  # in order: 0.08270668 for 0.08332185


def complex_sums(z):
    return np.sum(z), np.mean(z), np.sum(z * 2, axis=-1), np.var(z)


def test_long_complex_sums_add_pairwise():
    z = np.full((2, 2_000_000), 0.1 + 0.3j, np.complex64)
    got = autostage.convert(complex_sums, target="cpu")(z)
    for g, e in zip(got, complex_sums(z), strict=True):
        # NumPy pairs complex values in its own blocks: a few ulps (in order: 4% off)
        np.testing.assert_allclose(g, e, rtol=2e-6)


def test_known_counts_add_without_tiles():
    """NumPy adds fewer than 8 values in order; with the sizes known to the trace the fused loop
    does so too, with no tile buffers to allocate at each step of a small ODE's loop; up to 128
    known values (one block of NumPy's) go into one buffer summed as one block."""
    for n in (1, 2, 7):  # (a new function each: a second size stops a function's specialising)
        f = autostage.convert(fused_mean_of_squares, target="cpu")
        x = np.random.default_rng(n).random(n) * 3
        assert f(x) == fused_mean_of_squares(x)
        assert "_tiles(np.int64(" not in f.backend_source(x)
    for n in (8, 10, 16):  # one block of NumPy's: one buffer of that size, no tiles
        f = autostage.convert(fused_mean_of_squares, target="cpu")
        x = np.random.default_rng(n).random(n) * 3
        source = f.backend_source(x)
        assert f(x) == fused_mean_of_squares(x) and "_tiles(np.int64(" not in source
        assert f"cpu_new.empty((np.int64({n}),), np.float64)" in source and "_block(buf" in source
    f = autostage.convert(fused_mean_of_squares, target="cpu")
    x = np.random.default_rng(17).random(17) * 3  # 17: a size the trace does not know
    assert f(x) == fused_mean_of_squares(x) and "_tiles(np.int64(" in f.backend_source(x)


@pytest.mark.parametrize("dtype,requested", [(np.int32, np.int32), (np.int8, np.int8),
                                             (np.int16, np.int16), (np.uint8, np.uint8),
                                             (np.uint32, np.uint32), (np.int64, np.int32)])
@pytest.mark.parametrize("name", ["sum", "prod"])
def test_sums_in_a_narrow_integer_dtype_wrap_as_numpys(dtype, requested, name):
    # Numba adds int32 values in int64: an accumulator that was not cast back at each step
    # held 3 * 2**30 where NumPy's int32 sum is -2**30 (a staged `s < 0` was then False)
    big = np.iinfo(requested).max // 2 + 1
    x = np.full((3, 4), min(big, np.iinfo(dtype).max), dtype=dtype)
    run_cpu(lambda a: getattr(np, name)(a, dtype=requested), x)
    run_cpu(lambda a: getattr(np, name)(a, axis=1, dtype=requested), x)
    run_cpu(lambda a: getattr(np, name)(a, dtype=requested) < 0, x)


def test_narrow_integer_sum_compared_in_staged_code():
    @autostage.convert
    def negative(x):
        return x.sum(dtype=np.int32) < 0, x.sum(dtype=np.int32) // 2

    for n in (3, 30):
        x = np.full(n, 2**30, dtype=np.int32)
        assert negative(x) == (x.sum(dtype=np.int32) < 0, x.sum(dtype=np.int32) // 2)
        assert type(negative(x)[1]) is np.int32


@pytest.mark.parametrize("fn", [
    lambda a, b: np.dot(a, b) < 0, lambda a, b: a @ b < 0, lambda a, b: (a @ b) // 3,
    lambda a, b: np.einsum("i,i->", a, b) < 0, lambda a, b: np.trace(np.outer(a, b)) < 0,
    lambda a, b: (a * b).sum(dtype=np.int32) < 0, lambda a, b: np.sum(a * b, dtype=np.int32),
    lambda a, b: np.dot(a.astype(np.int8), b.astype(np.int8)) < 0,
    lambda a, b: np.dot(a.astype(np.uint32), b.astype(np.uint32)) // 3,
], ids=["dot", "matmul", "matmul_div", "einsum", "trace", "fused_sum", "fused_sum_value",
        "dot_int8", "dot_uint32"])
def test_narrow_integer_products_and_sums_wrap_as_numpys(fn):
    f = autostage.convert(fn)
    for n in (3, 30):  # (sizes known to the trace, then not)
        a = b = np.full(n, 50000, dtype=np.int32)
        want = fn(a, b)
        got = f(a, b)
        assert type(got) is type(want) and got == want, (n, got, want)
