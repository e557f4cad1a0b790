"""CPU lowerings of shape and creation ops against the NumPy reference (exact)."""

from __future__ import annotations

import numpy as np
import pytest
from autostage.runtime import array_shapes as A
from test_cpu_ops_harness import run_cpu

X = np.arange(24.0).reshape(2, 3, 4)
INTS = np.arange(6, dtype=np.int32).reshape(2, 3)


@pytest.mark.parametrize("fn", [
    lambda x: x.reshape(6, 4), lambda x: x.reshape(-1), lambda x: x.reshape(x.shape[0], -1),
    lambda x: x.transpose(2, 0, 1).reshape(4, 6), lambda x: x.T, lambda x: x[:, :, :1].reshape(6),
    lambda x: np.expand_dims(x, (0, 2)), lambda x: np.squeeze(x[:, :1, :], 1),
    lambda x: np.squeeze(x[:1, :1, :1], (0, 1, 2)), lambda x: np.concatenate([x, x[:, :1]], axis=1),
    lambda x: np.stack([x[0], x[1], x[0]], axis=2), lambda x: np.stack([x[0, 0, 0], x[1, 1, 1]]),
    lambda x: np.broadcast_to(x[:, :1, :], (2, 3, 4)), lambda x: np.broadcast_to(x[0, 0], (5, 4)),
    lambda x: x.copy(), lambda x: x[1, 2, 3].reshape(1, 1), lambda x: x[1, 2, 3].reshape(-1),
    lambda x: x[1, 2, 3].reshape(1, -1), lambda x: x[1, 2, 3].ravel(),
    lambda x: x[1, 2, 3].flatten(),
])
def test_shape_ops(fn):
    run_cpu(fn, X)
    run_cpu(fn, X, known=True)


def test_a_reshape_any_size_divides_has_no_test():
    """``reshape(-1)`` and ``reshape(1, -1)`` cannot fail; ``reshape(2, -1)`` is tested (and
    raises NumPy's error for an odd size)."""
    for fn in (lambda x: x.reshape(-1), lambda x: x.reshape(1, -1)):
        assert "cpu_chk.check(" not in run_cpu(fn, X)
    assert "cpu_chk.check(" in run_cpu(lambda x: x.reshape(2, -1), X)
    with pytest.raises(ValueError, match="cannot reshape array of size 15 into shape"):
        run_cpu(lambda x: x.reshape(2, -1), np.arange(15.0))


def test_mixed_dtype_concatenate_and_stack():
    run_cpu(lambda a, b: np.concatenate([a, b], axis=0), INTS, X[0, :2, :3])
    run_cpu(lambda a, b: np.stack([a, b], axis=1), INTS, X[0, :2, :3].astype(np.float32))


@pytest.mark.parametrize("fn", [  # array_shapes: what converted code stages for np.zeros...
    lambda x: A.zeros((2, x.shape[0]), np.float32), lambda x: A.ones(x.shape[0], np.int8),
    lambda x: A.full((x.shape[1], 2), x[0, 0]), lambda x: np.zeros_like(x, dtype=np.bool_),
    lambda x: np.full_like(x, 7), lambda x: A.eye(3, x.shape[1] + 1, k=1, dtype=np.int32),
    lambda x: A.eye(x.shape[0], k=-1), lambda x: A.arange(x.shape[1]),
    lambda x: A.arange(x[0, 1], x[1, 2], 0.3), lambda x: A.arange(x[0, 0], x.shape[1], 2),
    lambda x: A.arange(x[1, 2] * 0.1, -1.0, -0.37, dtype=np.float32),
    lambda x: A.full((), x[1, 1], np.float32),
])
def test_creation_ops(fn):
    run_cpu(fn, INTS)


@pytest.mark.parametrize("n", [5, 0, -3])
def test_arange_of_positions(n):
    """``np.arange(n)`` of integers writes the positions; a float stop keeps NumPy's length."""
    run_cpu(lambda x: A.arange(x[0]), np.array([n, 1]))
    run_cpu(lambda x: A.arange(0, x[0], 1, dtype=np.int32), np.array([n, 1]))
    run_cpu(lambda x: A.arange(0, x[0] + 0.5, 1, dtype=np.int64), np.array([n, 1]))
    run_cpu(lambda x: A.arange(x[0], dtype=np.uint8), np.array([n, 1]))


def test_arange_float_values_match_numpy_bitwise():
    def fn(x):
        return A.arange(x[0], x[1], x[2])
    run_cpu(fn, np.array([0.1, 10.0, 0.1]))
    run_cpu(fn, np.array([1.0, -3.0, -0.7]))
