"""Matrix ops and helpers (diag, triu, tril, outer, np.linalg.norm, empty_like): types and values
against NumPy (bit for bit), static shapes, views and errors."""

from __future__ import annotations

import numpy as np
import pytest
from autostage.runtime import array_shapes as S
from autostage.runtime import tracing
from autostage.runtime.tensor import StagingTypeError
from autostage.runtime.types import TensorType
from ops_harness import check_against_numpy, stage

import autostage

M = np.array([[4.0, -1.0, 0.5], [2.0, 5.0, -3.0], [1.0, 1.0, 7.0], [0.25, 9.0, 2.0]])
V = np.array([3, -1, 4, 1, 5], dtype=np.int16)
F32 = np.array([0.1, 0.2, 0.3, 1e-3, 7.0], dtype=np.float32)


@pytest.mark.parametrize("fn", [
    np.diag, lambda x: np.diag(x, 1), lambda x: np.diag(x, -2), lambda x: np.diag(x, 5),
    lambda x: np.diag(np.diag(x)), lambda x: x[:3] - np.diag(np.diag(x[:3])),
    np.triu, np.tril, lambda x: np.triu(x, 1), lambda x: np.tril(x, -1),
    lambda x: np.tril(x, 2), lambda x: np.triu(x[0]), lambda x: np.tril(x[:, 0], -1),
])
@pytest.mark.parametrize("known", [True, False])
def test_matrix_ops_match_numpy(fn, known):
    check_against_numpy(fn, M, known=known)


@pytest.mark.parametrize("fn", [np.diag, lambda v: np.diag(v, -1), np.triu, np.tril])
def test_matrix_ops_of_vectors_match_numpy(fn):
    check_against_numpy(fn, V)
    check_against_numpy(fn, V, known=True)


def test_matrix_op_shapes():
    (a, b, c, d), _ = stage(lambda m, v: (np.diag(v, 2), np.diag(m, 1), np.diag(m, -3),
                                          np.tril(v)), M, V, known=True)
    assert a == TensorType(np.int16, (7, 7))
    assert b == TensorType(np.float64, (2,))
    assert c == TensorType(np.float64, (1,))
    assert d == TensorType(np.int16, (5, 5))
    (a, b), _ = stage(lambda m, v: (np.diag(v), np.diag(m)), M, V)
    assert a == TensorType(np.int16, (None, None))
    assert b == TensorType(np.float64, (None,))


def test_diag_of_a_matrix_is_a_read_only_view():
    def fn(m):
        d = np.diag(m)
        with pytest.raises(tracing.StagingError, match="view"):
            S.setitem(d, 0, 1.0)
        return d
    stage(fn, M)


def test_diag_rejects_other_ranks():
    def fn(m):
        with pytest.raises(ValueError, match="1- or 2-d"):
            np.diag(m[None])
        return m
    stage(fn, M)


@pytest.mark.parametrize("fn", [
    np.outer, lambda a, b: np.outer(b, a), lambda a, b: np.outer(a[:2], a),
    lambda a, b: np.outer(a, 2.5), lambda a, b: np.outer(a.reshape(5, 1), b[:3]),
])
@pytest.mark.parametrize("known", [True, False])
def test_outer_matches_numpy(fn, known):
    check_against_numpy(fn, F32, V, known=known)


def test_outer_shape():
    (t,), _ = stage(np.outer, M, V, known=True)
    assert t == TensorType(np.float64, (12, 5))


@pytest.mark.parametrize("fn", [
    np.linalg.norm, lambda x: np.linalg.norm(x, axis=0), lambda x: np.linalg.norm(x, axis=-1),
    lambda x: np.linalg.norm(x, keepdims=True), lambda x: np.linalg.norm(x, axis=1, keepdims=True),
    lambda x: np.linalg.norm(x, ord=1, axis=0), lambda x: np.linalg.norm(x, ord=np.inf, axis=1),
    lambda x: np.linalg.norm(x, "fro"), lambda x: np.linalg.norm(x, ord=1),
    lambda x: np.linalg.norm(x, axis=(1, 0)), lambda x: np.linalg.norm(x, ord=-np.inf, axis=(0, 1)),
    lambda x: np.linalg.norm(x[0]), lambda x: np.linalg.norm(x[0], 3),
    lambda x: np.linalg.norm(x[0] - x[1]) / np.linalg.norm(x),
])
@pytest.mark.parametrize("array", [M, M.astype(np.float32), M.astype(np.int32),
                                   M.astype(np.complex64) * 1j],
                         ids=["f64", "f32", "i32", "c64"])
@pytest.mark.parametrize("known", [True, False])
def test_norm_matches_numpy_bit_for_bit(fn, array, known):
    check_against_numpy(fn, array, known=known)


def test_norm_types():
    (a, b, c), _ = stage(lambda x: (np.linalg.norm(x), np.linalg.norm(x, axis=1),
                                    np.linalg.norm(x, axis=0, keepdims=True)), M, known=True)
    assert a == TensorType(np.float64, ())
    assert b == TensorType(np.float64, (4,))
    assert c == TensorType(np.float64, (1, 3))
    (t,), _ = stage(np.linalg.norm, V)
    assert t == TensorType(np.float64, ())  # integers are normed in float64, as NumPy does
    (t,), _ = stage(np.linalg.norm, F32)
    assert t == TensorType(np.float32, ())


def test_norm_errors_are_numpys():
    def fn(x):
        with pytest.raises(ValueError, match="Duplicate axes"):
            np.linalg.norm(x, axis=(0, 0))
        with pytest.raises(ValueError, match="Improper number of dimensions"):
            np.linalg.norm(x[None], ord=1)
        with pytest.raises(np.exceptions.AxisError):
            np.linalg.norm(x, axis=2)
        with pytest.raises(ValueError):
            np.linalg.norm(x, ord="bogus", axis=(0, 1))
        return x
    stage(fn, M)


def test_a_staged_ord_is_refused_naming_the_line():
    """The refusal's TypeError quoted the staged ord (``<staged Tensor i64[]>``), and was then
    reported as an exception "holding a staged value itself (`raise ValueError(n)`)"."""
    def fn(v, k):
        return np.linalg.norm(v, ord=k)

    line = fn.__code__.co_firstlineno + 1
    with pytest.raises(StagingTypeError, match=rf"np\.linalg\.norm at .*test_ops_matrices.py:"
                                               rf"{line}: a staged ord is not supported"):
        autostage.convert(fn)(np.arange(3.0), np.int64(1))

@pytest.mark.parametrize("fn", [np.empty_like, lambda x: np.empty_like(x, dtype=np.int8)])
def test_empty_like_is_staged_as_zeros(fn):
    # the contents of np.empty_like are unspecified: staged, they are zeros (deterministic)
    (t,), (value,) = stage(fn, M, known=True)
    expected = fn(M)
    assert t == TensorType(expected.dtype, expected.shape)
    np.testing.assert_array_equal(value, np.zeros_like(expected))
    assert value.dtype == expected.dtype
