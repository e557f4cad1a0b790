"""VJPs against JAX's: the same function differentiated by ``autostage.grad`` and ``jax.grad``.

JAX (the ``reference`` extra, installed by CI) is the reference where its conventions are
NumPy's; each case is a scalar function of one float64 array written once against a module
``xp`` (NumPy for autostage, ``jax.numpy`` for JAX). Skipped when JAX is not installed.
"""

from __future__ import annotations

import numpy as np
import pytest

import autostage

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)

W = np.random.default_rng(3).standard_normal((3, 4))

CASES = {
    "tanh": lambda xp, x: xp.sum(xp.tanh(x) * W),
    "exp_log": lambda xp, x: xp.sum(xp.log(xp.exp(x) + 1.0) * W),
    "sqrt_abs": lambda xp, x: xp.sum(xp.sqrt(xp.abs(x) + 0.5) * W),
    "trig": lambda xp, x: xp.sum(xp.sin(x) * xp.cos(2.0 * x) + xp.arctan(x) * W),
    "power": lambda xp, x: xp.sum((xp.abs(x) + 0.1) ** 2.5 * W),
    "maximum": lambda xp, x: xp.sum(xp.maximum(x, 0.1) * W),
    "where": lambda xp, x: xp.sum(xp.where(x > 0, x * x, -x) * W),
    "softmax": lambda xp, x: xp.sum(xp.exp(x) / xp.sum(xp.exp(x), axis=1, keepdims=True) * W),
    "logsumexp": lambda xp, x: xp.sum(xp.log(xp.sum(xp.exp(x - xp.max(x)), axis=0)) * W[0]),
    "mean_var": lambda xp, x: xp.sum(xp.mean(x, axis=0) * xp.var(x, axis=0)),
    "std": lambda xp, x: xp.sum(xp.std(x, axis=1) * W[:, 0]),
    "prod": lambda xp, x: xp.sum(xp.prod(x + 2.0, axis=1)),
    "matmul": lambda xp, x: xp.sum((x @ W.T) @ x),
    "transpose_reshape": lambda xp, x: xp.sum(xp.reshape(x.T, (2, 6)) ** 2 * xp.arange(12.0)
                                              .reshape(2, 6)),
    "indexing": lambda xp, x: xp.sum(x[1:, ::2] * W[1:, ::2]) + x[0, 3] * 2.0,
    "concatenate": lambda xp, x: xp.sum(xp.concatenate([x, x * x], axis=0) ** 2),
    "cumsum": lambda xp, x: xp.sum(xp.cumsum(x, axis=1) * W),
    "sort": lambda xp, x: xp.sum(xp.sort(x, axis=1) * W),
    "clip": lambda xp, x: xp.sum(xp.clip(x, -0.5, 0.5) * W),
    "norm": lambda xp, x: xp.linalg.norm(x),
    "einsum": lambda xp, x: xp.einsum("ij,kj->", x, x * W),
    "inv_det": lambda xp, x: xp.sum(xp.linalg.inv(x[:, :3] + 3.0 * xp.eye(3))) + xp.linalg.det(
        x[:, 1:] + 2.0 * xp.eye(3)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_equals_jax(name):
    f = CASES[name]
    x = np.random.default_rng(11).standard_normal((3, 4))

    def ours(x):
        return f(np, x)

    expected = np.asarray(jax.grad(lambda x: f(jnp, x))(jnp.asarray(x)))
    got = autostage.grad(autostage.convert(ours, target="interpreter"))(x)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
