"""CPU lowerings of matmul/dot/einsum against the NumPy reference: exact for integers and bools,
rtol 1e-12 (f64) / 1e-5 (f32) for floats (BLAS and loop sums add in other orders)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from autostage.runtime.backends.cpu import blas
from ops_harness import param_type, trace
from test_cpu_ops_harness import compile_function, run_cpu

RNG = np.random.default_rng(1)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4, 5))
V = RNG.standard_normal(4)
T = RNG.standard_normal((2, 3, 4))
IA = RNG.integers(-9, 9, (3, 4)).astype(np.int32)
IB = RNG.integers(-9, 9, (4, 5)).astype(np.int64)


@pytest.mark.parametrize("a,b", [(A, B), (A, V), (V, B), (V, V), (T, B), (T, V), (V, T[0].T),
                                 (T, T.transpose(0, 2, 1)), (T[:1], T.transpose(0, 2, 1))])
@pytest.mark.parametrize("known", [False, True])
def test_matmul_float(a, b, known):
    run_cpu(lambda x, y: x @ y, a, b, known=known, rtol=1e-12)


BIG = RNG.standard_normal((12, 9))
BIGC = BIG + 1j * RNG.standard_normal((12, 9))


@pytest.mark.parametrize("fn", [lambda x, y: x.T @ y, lambda x, y: x @ y.T,
                                lambda x, y: (2 * x).T @ (y @ x.T).T,
                                lambda x, y: x[::2].T @ y[::2],
                                lambda x, y: x.T @ y[:, 0], lambda x, y: y[:, 1] @ x])
@pytest.mark.parametrize("a,b", [(BIG, BIG + 1), (BIGC, BIG), (BIG.astype(np.float32), BIG),
                                 (np.asfortranarray(BIG), BIG.astype(np.float32))])
def test_blas_matmul_of_transposed_and_strided_operands(fn, a, b):
    # Fortran-ordered operands go to BLAS without a copy, others are made contiguous
    run_cpu(fn, a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("a,b", [(IA, IB), (IA[0], IB), (IA, IB[:, 0]), (IA > 0, IB > 0),
                                 (IA, B), (A.astype(np.float32), IB.astype(np.int8))])
def test_matmul_mixed_and_integer(a, b):
    exact = a.dtype.kind in "biu" and b.dtype.kind in "biu"
    # f32: another summation order, with cancellation: absolute tolerance too
    run_cpu(lambda x, y: x @ y, a, b, rtol=0 if exact else 1e-5, atol=0 if exact else 1e-5)


def test_tiny_static_matmul_is_loops_and_float32():
    m = RNG.standard_normal((2, 2)).astype(np.float32)
    source = run_cpu(lambda x, y: x @ (y @ x), m, m, known=True, rtol=1e-6)
    assert "np.dot" not in source and "cpu_blas" not in source
    source = run_cpu(lambda x, y: x @ y, A, B, rtol=1e-12)
    assert ("cpu_blas.gemm(" if blas.AVAILABLE else "np.dot(") in source


def _in_order(a, b):
    """a @ b for 2-d operands, each sum in index order in the result dtype (the loops' bits)."""
    out = np.empty((a.shape[0], b.shape[1]), np.result_type(a, b))
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            acc = out.dtype.type(0)
            for k in range(a.shape[1]):
                acc += out.dtype.type(a[i, k]) * out.dtype.type(b[k, j])
            out[i, j] = acc
    return out


@pytest.mark.parametrize("a,b", [(A[:2, :2].astype(np.float32), B[:2, :2].astype(np.float32)),
                                 (A[:3, :3], B[:3, :3]), (IA[:2, :3], IB[:3, :2]),
                                 (A[:2, :3].astype(np.float32), IB[:3, :4].astype(np.int8))])
def test_tiny_static_products_are_loops_summing_in_order(a, b):
    # no BLAS: a loop nest in a helper shared by every product of these types, writing into
    # the result the function makes (a buffer a loop may reuse), each sum in index order
    source = run_cpu(lambda x, y: x @ y, a, b, known=True, rtol=1e-6, atol=1e-6)
    body = source[source.index("def f_"):]
    helper = source[source.index("def h_matmul_into_"):source.index("def f_")]
    assert "cpu_blas" not in source and "for k" in helper and "for k" not in body, source
    assert "cpu_new.empty((" in body and "h_matmul_into_" in body, source
    compiled, _ = compile_function(trace(lambda x, y: x @ y, [param_type(a, True),
                                                              param_type(b, True)]))
    np.testing.assert_array_equal(compiled(a, b)[0], _in_order(a, b))


def test_products_of_unknown_or_bigger_sizes_keep_the_helper():
    m = RNG.standard_normal((2, 2)).astype(np.float32)
    assert "h_matmul" in run_cpu(lambda x, y: x @ y, m, m, known=False, rtol=1e-6)
    ints = RNG.integers(-9, 9, (5, 5))
    assert "h_matmul" in run_cpu(lambda x, y: x @ y, ints, ints, known=True)  # 125 > TINY


@pytest.mark.parametrize("a,b", [(BIG, BIG.T), (BIG, BIG[0]), (BIG[:, 0], BIG),
                                 (BIG.astype(np.int64), BIG.T.astype(np.int32))])
def test_products_of_static_sizes_share_the_helper_of_unknown_ones(a, b):
    """Static sizes too large for loops are not compiled into the product's helper: programs
    with other sizes share it (a compile each, per new size, before)."""
    source = run_cpu(lambda x, y: x @ y, a, b, known=True, rtol=1e-12)
    helpers = set(re.findall(r"h_matmul_(\w+)\(", source))
    assert helpers, source
    for name in helpers:  # dtypes and ranks only: f64nxn_f64n_f64n, no size
        assert all(re.fullmatch(r"[a-z]+\d*(nx)*n?", part) for part in name.split("_")), name


def test_a_product_of_one_array_with_itself_at_static_sizes():
    m = RNG.standard_normal((9, 9))
    run_cpu(lambda x: x @ x, m, known=True, rtol=1e-12)
    run_cpu(lambda x: x @ x.T, m[:, :7], known=True, rtol=1e-12)


def test_a_static_core_size_mismatch_keeps_numpys_error():
    with pytest.raises(ValueError, match="matmul: Input operand 1 has a mismatch"):
        run_cpu(lambda x, y: x @ y, A, A, known=True)


@pytest.mark.parametrize("a,b", [(A, B), (T, B), (T, V), (A, T.transpose(1, 2, 0)), (IA, IB),
                                 (IA[0, 0], IB), (A, np.float32(2.5)), (V, V)])
def test_dot(a, b):
    exact = a.dtype.kind in "biu" and b.dtype.kind in "biu"
    run_cpu(lambda x, y: np.dot(x, y), a, b, rtol=0 if exact else 1e-12)


@pytest.mark.parametrize("spec,args", [
    ("ij,jk->ik", (A, B)), ("ij->ji", (A,)), ("ii->i", (A[:, :3],)), ("ij->", (A,)),
    ("bij,jk->bik", (T, B)), ("i,j->ij", (V, V)), ("ij,ij->i", (IA, IA)),
    ("ijk,ikj->", (T, T.transpose(0, 2, 1))), ("ij,jk,kl->il", (A, B, B.T)),
])
def test_einsum(spec, args):
    exact = all(a.dtype.kind in "biu" for a in args)
    run_cpu(lambda *xs: np.einsum(spec, *xs), *args, rtol=0 if exact else 1e-12)
