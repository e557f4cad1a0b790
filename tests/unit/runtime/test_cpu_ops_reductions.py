"""CPU lowerings of reductions against the NumPy reference: dtypes, axes, keepdims, NaNs.

Float sums/means/vars are compared with rtol 1e-6 (f64) / 2e-6 (f32) where the loops add in
order and NumPy pairwise; sums and means over trailing axes add pairwise as NumPy does and must
give its bits. Everything else must be exact."""

from __future__ import annotations

import numpy as np
import pytest
from test_cpu_ops_harness import run_cpu

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
