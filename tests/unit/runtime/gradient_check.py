"""Test helpers for VJP rules: ``autostage.grad`` of a function against central finite
differences of the same function run by NumPy itself (float64)."""

from __future__ import annotations

import numpy as np

import autostage


def numeric_gradient(f, args: tuple, argnum: int, eps: float = 1e-6) -> np.ndarray:
    """Central differences of the scalar ``f(*args)`` with respect to ``args[argnum]``."""
    x = np.array(args[argnum], dtype=np.float64)
    found = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        values = []
        for step in (eps, -eps):
            shifted = x.copy()
            shifted[i] += step
            values.append(f(*args[:argnum], shifted, *args[argnum + 1:]))
        found[i] = (values[0] - values[1]) / (2 * eps)
    return found


def staged_gradient(f, *args, argnums=0, target: str = "interpreter", static: bool = False):
    """``autostage.grad(f)(*args)``; ``static``: instead a ``GradientTape`` in a function
    converted with the exact shapes of the arguments (``input_signature``), for the static-shape
    paths of the rules (``f(x, w)``, differentiated with respect to ``x``)."""
    if not static:
        return autostage.grad(autostage.convert(f, target=target), argnums=argnums)(*args)
    assert argnums == 0 and len(args) == 2

    def with_tape(x, w):
        with autostage.GradientTape() as tape:
            tape.watch(x)
            y = f(x, w)
        return tape.gradient(y, x)

    specs = [autostage.TensorSpec(np.shape(a)) for a in args]
    return autostage.convert(with_tape, input_signature=specs, target=target)(*args)


def check_gradient(f, *args, argnums=0, target: str = "interpreter", static: bool = False,
                   rtol: float = 1e-5, atol: float = 1e-7):
    """Checks the staged gradient of ``f`` (see ``staged_gradient``) against finite differences
    for each argument in ``argnums``; returns the staged gradients."""
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    found = staged_gradient(f, *args, argnums=argnums, target=target, static=static)
    for g, i in zip((found,) if single else found, nums, strict=True):
        expected = numeric_gradient(f, args, i)
        assert np.shape(g) == expected.shape, (np.shape(g), expected.shape)
        np.testing.assert_allclose(g, expected, rtol=rtol, atol=atol)
    return found


def weights(shape, seed: int = 0) -> np.ndarray:
    """A fixed random array of ``shape``, to make ``np.sum(y * w)`` see every element of ``y``."""
    return np.random.default_rng(seed).normal(size=shape)
