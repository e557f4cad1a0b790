"""VJP rules of the shape, rearrangement, matrix and product ops (ops/shapes.py, rearrange.py,
matrices.py, linalg.py, numpy_linalg_vjp.py): ``autostage.grad`` against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from autostage.runtime.autodiff import GradientError
from gradient_check import check_gradient, weights
from hypothesis import given, settings
from hypothesis import strategies as st

import autostage
from autostage import GradientTape

X = np.random.default_rng(1).normal(size=(2, 3, 4))

# name: (f(x, w), shape of w); each f is np.sum(op(x) * w) or close to it
SHAPE_CASES = {
    "reshape": (lambda x, w: np.sum(x.reshape(6, 4) * w), (6, 4)),
    "reshape_staged": (lambda x, w: np.sum(x.reshape(x.shape[0], -1) * w), (2, 12)),
    "ravel": (lambda x, w: np.sum(x.ravel() * w), (24,)),
    "transpose": (lambda x, w: np.sum(np.transpose(x, (2, 0, 1)) * w), (4, 2, 3)),
    "T": (lambda x, w: np.sum(x.T * w), (4, 3, 2)),
    "moveaxis": (lambda x, w: np.sum(np.moveaxis(x, 0, -1) * w), (3, 4, 2)),
    "expand_dims": (lambda x, w: np.sum(np.expand_dims(x, (0, -1)) * w), (1, 2, 3, 4, 1)),
    "squeeze": (lambda x, w: np.sum(np.squeeze(x[:1], 0) * w), (3, 4)),
    "concatenate": (lambda x, w: np.sum(np.concatenate([x, x[:, :2] * 2.0], axis=1) * w),
                    (2, 5, 4)),
    "concatenate_flat": (lambda x, w: np.sum(np.concatenate([x, x], axis=None) * w), (48,)),
    "hstack": (lambda x, w: np.sum(np.hstack([x, x * x]) * w), (2, 6, 4)),
    "stack": (lambda x, w: np.sum(np.stack([x, x * 2.0], axis=-1) * w), (2, 3, 4, 2)),
    "broadcast_to": (lambda x, w: np.sum(np.broadcast_to(x[:, :1], (2, 3, 4)) * w), (2, 3, 4)),
    "copy": (lambda x, w: np.sum(np.copy(x) * w), (2, 3, 4)),
    "tile": (lambda x, w: np.sum(np.tile(x, (1, 2, 1)) * w), (2, 6, 4)),
    "repeat_int": (lambda x, w: np.sum(np.repeat(x, 2, axis=1) * w), (2, 6, 4)),
    "repeat_counts": (lambda x, w: np.sum(np.repeat(x, np.array([1, 0, 3]), axis=1) * w),
                      (2, 4, 4)),
    "split": (lambda x, w: np.sum(np.split(x, 2, axis=2)[1] * w), (2, 3, 2)),
    "pad": (lambda x, w: np.sum(np.pad(x, 1) * w), (4, 5, 6)),
    "diag_of_vector": (lambda x, w: np.sum(np.diag(x[0, 0], 1) * w), (5, 5)),
    "diag_below": (lambda x, w: np.sum(np.diag(x[0], -1) * w), (2,)),
    "diag_above": (lambda x, w: np.sum(np.diag(x[0], 2) * w), (2,)),
    "diagonal": (lambda x, w: np.sum(np.diagonal(x[0]) * w), (3,)),
    "triu": (lambda x, w: np.sum(np.triu(x[0], 1) * w), (3, 4)),
    "tril_batched": (lambda x, w: np.sum(np.tril(x, -1) * w), (2, 3, 4)),
    "triu_of_vector": (lambda x, w: np.sum(np.triu(x[0, 0]) * w), (4, 4)),
    "norm": (lambda x, w: np.linalg.norm(x) * w, ()),
    "norm_axis": (lambda x, w: np.sum(np.linalg.norm(x, axis=1) * w), (2, 4)),
    "norm_keepdims": (lambda x, w: np.sum(np.linalg.norm(x, axis=(0, 2), keepdims=True) * w),
                      (1, 3, 1)),
    "norm_1": (lambda x, w: np.sum(np.linalg.norm(x, ord=1, axis=2) * w), (2, 3)),
    "norm_fro": (lambda x, w: np.linalg.norm(x[0], ord="fro") * w, ()),
    "kron": (lambda x, w: np.sum(np.kron(x[0], x[1]) * w), (9, 16)),
    "outer": (lambda x, w: np.sum(np.outer(x[0, 0], x[1, 1]) * w), (4, 4)),
    "einsum_matmul": (lambda x, w: np.sum(np.einsum("ij,jk->ik", x[0], x[1].T) * w), (3, 3)),
    "einsum_summed": (lambda x, w: np.sum(np.einsum("bij,jk->i", x, x[0].T) * w), (3,)),
    "einsum_total": (lambda x, w: np.einsum("bij->", x) * w, ()),
    "einsum_three": (lambda x, w: np.sum(np.einsum("ij,kj,k->i", x[0], x[1], x[0, 0, :3]) * w),
                     (3,)),
    "dot_2d": (lambda x, w: np.sum(np.dot(x[0], x[1].T) * w), (3, 3)),
    "dot_vectors": (lambda x, w: np.dot(x[0, 0], x[1, 1]) * w, ()),
    "dot_nd": (lambda x, w: np.sum(np.dot(x, x[0].T) * w), (2, 3, 3)),
    "dot_scalar": (lambda x, w: np.sum(np.dot(x[0, 0, 0], x) * w), (2, 3, 4)),
}


@pytest.mark.parametrize("name", SHAPE_CASES)
def test_shape_op_gradients_match_finite_differences(name):
    f, shape = SHAPE_CASES[name]
    check_gradient(f, X, weights(shape))


@pytest.mark.parametrize("name", ["reshape", "concatenate", "stack", "repeat_counts",
                                  "diag_of_vector", "diag_below", "triu_of_vector",
                                  "einsum_summed", "dot_nd"])
def test_static_shapes_take_the_same_rules(name):
    f, shape = SHAPE_CASES[name]
    check_gradient(f, X, weights(shape), static=True)


S = np.random.default_rng(2).normal(size=(3, 3)) + 3 * np.eye(3)
A = np.random.default_rng(3).normal(size=(3, 4))
LINALG_CASES = {
    "inv": (lambda a, w: np.sum(np.linalg.inv(a) * w), S, (3, 3)),
    "inv_batched": (lambda a, w: np.sum(np.linalg.inv(np.stack([a, a.T])) * w), S, (2, 3, 3)),
    "solve_vector": (lambda a, w: np.sum(np.linalg.solve(a, w[0]) * w[1]), S, (3, 3)),
    "solve_matrix": (lambda a, w: np.sum(np.linalg.solve(a, w[:, :2]) * w[:, 1:]), S, (3, 3)),
    "det": (lambda a, w: np.linalg.det(a) * w, S, ()),
    "slogdet": (lambda a, w: np.linalg.slogdet(a)[1] * w, S, ()),
    "eigvalsh_lower": (lambda a, w: np.sum(np.linalg.eigvalsh(a) * w), S, (3,)),
    "eigvalsh_upper": (lambda a, w: np.sum(np.linalg.eigvalsh(a, UPLO="U") * w), S, (3,)),
    "eigh": (lambda a, w: np.sum(np.linalg.eigh(a)[0] * w[0])
             + np.sum(np.linalg.eigh(a)[1] * np.linalg.eigh(a)[1] * w), S, (3, 3)),
    "cholesky": (lambda a, w: np.sum(np.linalg.cholesky(a @ a.T + np.triu(a, 1)) * w), S,
                 (3, 3)),
    "svdvals": (lambda a, w: np.sum(np.linalg.svd(a, compute_uv=False) * w), A, (3,)),
    "svd_values": (lambda a, w: np.sum(np.linalg.svd(a)[1] * w), A, (3,)),
    "pinv": (lambda a, w: np.sum(np.linalg.pinv(a) * w), A, (4, 3)),
    "matrix_power": (lambda a, w: np.sum(np.linalg.matrix_power(a, 3) * w), S, (3, 3)),
    "multi_dot": (lambda a, w: np.sum(np.linalg.multi_dot([a, a.T, a, w[0]]) * w[1, :3]), A,
                  (2, 4)),
    "multi_dot_rows": (lambda a, w: np.sum(np.linalg.multi_dot([w[0, :3], a, a.T]) * w[1, :3]),
                       A, (2, 4)),
    "inner": (lambda a, w: np.sum(np.inner(a, a * 2.0) * w), A, (3, 3)),
    "vdot": (lambda a, w: np.vdot(a, a.T.copy() * w) * 1.0, A, (4, 3)),
    "tensordot": (lambda a, w: np.sum(np.tensordot(a, a.T, axes=([1], [0])) * w), A, (3, 3)),
    "tensordot_int": (lambda a, w: np.tensordot(a, a * w, 2) * 1.0, A, (3, 4)),
}


@pytest.mark.parametrize("name", LINALG_CASES)
def test_numpy_linalg_gradients_match_finite_differences(name):
    f, a, shape = LINALG_CASES[name]
    check_gradient(f, a, weights(shape))


@pytest.mark.parametrize("f, message", [
    (lambda x: np.linalg.norm(x, ord=np.inf), "ord=inf"),
    (lambda x: np.sum(np.linalg.qr(x)[1]), "np.linalg.qr"),
    (lambda x: np.sum(np.linalg.lstsq(x, x[:, 0])[0]), "depend on the rank"),
    (lambda x: np.einsum("ii->", x), "repeats a label"),
    (lambda x: np.sum(np.linalg.matrix_power(x, -2)), "negative power"),
])
def test_what_has_no_gradient_says_so(f, message):
    with pytest.raises(GradientError, match=message):
        autostage.grad(autostage.convert(f, target="interpreter"))(S)


def test_shape_queries_have_no_gradient():
    def f(x):
        return np.sum(x) * x.shape[0] + x.size * 1.0
    np.testing.assert_allclose(
        autostage.grad(autostage.convert(f, target="interpreter"))(X), np.full(X.shape, 2.0))


def nested_tapes(x):
    with GradientTape() as outer:
        outer.watch(x)
        with GradientTape() as inner:
            inner.watch(x)
            y = np.sum(x * x * x)
        dy = inner.gradient(y, x)  # 3x², through expand_dims (sum's VJP) and its own VJP
        z = np.sum(dy)
    return outer.gradient(z, x)


def test_a_tape_inside_a_tape_gives_the_second_derivative():
    f = autostage.convert(nested_tapes, target="interpreter")
    np.testing.assert_allclose(f(np.array([1.0, 2.0])), [6.0, 12.0])


@settings(max_examples=12, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), st.randoms(use_true_random=False))
def test_transpose_and_reshape_of_any_shape(shape, random):
    x = np.random.default_rng(len(shape)).normal(size=shape)
    axes = list(range(len(shape)))
    random.shuffle(axes)
    axes = tuple(axes)
    flat = int(np.prod(shape))

    def f(x, w):
        return np.sum(np.transpose(x, axes).reshape(flat, 1) * w)
    check_gradient(f, x, weights((flat, 1)))


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2), st.lists(st.integers(0, 3), min_size=1, max_size=3))
def test_concatenate_and_stack_along_any_axis(axis, lengths):
    pieces = [np.random.default_rng(n).normal(size=[2, 2, 2][:axis] + [n] + [2, 2][axis:])
              for n in lengths]
    x = np.concatenate(pieces, axis=axis)
    starts = [int(s) for s in np.cumsum([0, *lengths])]
    bounds = list(zip(starts[:-1], starts[1:], strict=True))

    def f(x, w):
        parts = [x[(slice(None),) * axis + (slice(a, b),)] for a, b in bounds]
        joined = np.concatenate([p * float(k + 1) for k, p in enumerate(parts)], axis=axis)
        return np.sum(joined * w) + np.sum(np.stack([joined, joined], axis=axis) * 0.5)
    check_gradient(f, x, weights(x.shape))


def _linear_pipeline(x, w):
    y = np.concatenate([x.reshape(4, 6), np.transpose(x, (1, 0, 2)).reshape(4, 6)[:2]], axis=0)
    z = np.stack([y, y * 2.0], axis=1)
    e = np.einsum("ij,jk->ik", y, x.reshape(6, 4)) + np.dot(y, x.reshape(6, 4))
    r = np.repeat(x, np.array([1, 0, 3]), axis=1)
    d = np.sum(np.diag(x[0, :, :3], 1) * 2.0) + np.triu(x[1, :, :3], -1)
    b = np.broadcast_to(np.expand_dims(np.squeeze(x[:1], 0), 0), (2, 3, 4))
    s = x[0, :, :3] @ x[0, :, :3].T + 4.0 * np.eye(3)
    solved = (np.sum(np.linalg.inv(s) * w[0, :, :3]) + np.linalg.slogdet(s)[1]
              + np.sum(np.linalg.eigvalsh(s) * w[1, 0, :3]) + np.linalg.norm(x))
    return (np.sum(z * w[0, 0, 0]) + np.sum(e * w[1, 0, 0]) + np.sum(r * r) + np.sum(d * d)
            + np.sum(b * w) + solved + np.einsum("ij->", y))


def test_cpu_target_smoke():
    w = weights(X.shape)
    found = check_gradient(_linear_pipeline, X, w, target="cpu")
    interpreted = autostage.grad(autostage.convert(_linear_pipeline, target="interpreter"))(X, w)
    np.testing.assert_allclose(found, interpreted, rtol=1e-9, atol=1e-12)
