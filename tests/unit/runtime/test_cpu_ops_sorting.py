"""CPU lowerings of sort/argsort/take_along_axis/cumsum/cumprod and diag/triu/tril/norm against
the NumPy reference: exact, except norms (rtol 1e-12 f64 / 2e-6 f32: other summation order)."""

from __future__ import annotations

import numpy as np
import pytest
from test_cpu_ops_harness import run_cpu

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
    run_cpu(lambda a: np.linalg.norm(a, ord=ord_, axis=axis), X, rtol=1e-12)
    run_cpu(lambda a: np.linalg.norm(a, ord=ord_, axis=axis, keepdims=True),
            X.astype(np.float32), rtol=2e-6)


def test_norm_of_ints_complex_and_matrices():
    run_cpu(lambda a: np.linalg.norm(a), TIES, rtol=1e-12)
    run_cpu(lambda a: np.linalg.norm(a, 1), TIES, rtol=1e-12)
    z = (X[0] + 1j * X[1]).astype(np.complex64)
    run_cpu(lambda a: np.linalg.norm(a), z, rtol=2e-6)
    run_cpu(lambda a: np.linalg.norm(a, axis=1), z, rtol=2e-6)
