"""In-graph SGD: a linear softmax classifier 784->10, batch 200, 1000 steps in one staged call.

``sgd(x, y, w, b, steps, lr)`` trains ``softmax(x @ w + b)`` with a hand-derived cross-entropy
gradient, cycling through the minibatches of a synthetic data set (5 batches of 200 float32
samples with one-hot labels, from a seeded generator): the whole loop of ``steps`` (an ``np.int64``,
so the loop is staged, not unrolled) is inside one call. Per step: a (200,784)@(784,10) product,
a numerically stable softmax (max and sum over axis 1 with keepdims), the gradient
(784,200)@(200,10) and the parameter updates. Variants, timed alternately in this process (median
time per call; throughput in steps per second):

* autostage: ``autostage.convert(sgd, target=--target)``;
* numba: hand-written ``@numba.njit`` as an expert writes it: ``np.dot`` (BLAS) into preallocated
  buffers for the two products, one fused loop per row for bias + softmax + gradient, in-place
  parameter updates — no temporaries inside the loop;
* numpy: ``sgd`` itself, eager;
* jax jit (when jax imports): the same step (the same hand-derived gradient) in a
  ``jax.lax.fori_loop`` under ``jax.jit``, minibatches by ``lax.dynamic_slice_in_dim``, on the CPU
  with XLA's default threads; inputs put on the device once, the timing waits for the result.

Every variant must match NumPy eager within rtol=1e-3, atol=1e-5 (float32 products summed in a
different order, over 1000 steps); autostage and jax must return float32 arrays of the same
shapes. Issue 14's goal: autostage at most 1.05x hand-written Numba. Exit status 1 on a mismatch.

    .venv/bin/python benchmarks/sgd.py [--smoke] [--repeats R] [--target cpu|interpreter]
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import harness
import numba
import numpy as np

REPEATS = 5  # timings per variant (--repeats)
RTOL, ATOL = 1e-3, 1e-5
FEATURES, CLASSES, BATCH, BATCHES, STEPS = 784, 10, 200, 5, 1000
SMOKE_FEATURES, SMOKE_STEPS = 16, 3
LEARNING_RATE = np.float32(0.1)


def sgd(x, y, w, b, steps, lr):
    """The user's code: x is (samples, features), y one-hot (samples, classes)."""
    batch = 200
    n_batches = x.shape[0] // batch
    for step in range(steps):
        start = (step % n_batches) * batch
        xb = x[start:start + batch]
        yb = y[start:start + batch]
        logits = xb @ w + b
        logits = logits - np.max(logits, axis=1, keepdims=True)
        p = np.exp(logits)
        p = p / np.sum(p, axis=1, keepdims=True)
        grad_logits = (p - yb) / batch
        w = w - lr * (xb.T @ grad_logits)
        b = b - lr * np.sum(grad_logits, axis=0)
    return w, b


@numba.njit
def sgd_numba(x, y, w, b, steps, lr):
    """Hand-written: BLAS into reused buffers, one loop per row for softmax and its gradient."""
    batch = 200
    n_batches = x.shape[0] // batch
    classes = w.shape[1]
    w = w.copy()
    b = b.copy()
    logits = np.empty((batch, classes), dtype=np.float32)
    grad_w = np.empty_like(w)
    scale = np.float32(1.0) / np.float32(batch)
    for step in range(steps):
        start = (step % n_batches) * batch
        xb = x[start:start + batch]
        np.dot(xb, w, logits)
        for i in range(batch):
            row_max = np.float32(-np.inf)
            for j in range(classes):
                logits[i, j] += b[j]
                row_max = max(row_max, logits[i, j])
            total = np.float32(0.0)
            for j in range(classes):
                e = np.exp(logits[i, j] - row_max)
                logits[i, j] = e
                total += e
            for j in range(classes):  # logits now holds the gradient of the mean loss
                logits[i, j] = (logits[i, j] / total - y[start + i, j]) * scale
        np.dot(xb.T, logits, grad_w)
        for j in range(classes):
            grad_b = np.float32(0.0)
            for i in range(batch):
                grad_b += logits[i, j]
            b[j] -= lr * grad_b
        for k in range(w.shape[0]):
            for j in range(classes):
                w[k, j] -= lr * grad_w[k, j]
    return w, b


def sgd_jax() -> Callable | None:
    """``sgd`` in JAX: the step in a ``lax.fori_loop`` under ``jax.jit`` (None without jax)."""
    jax = harness.cpu_jax()
    if jax is None:
        return None
    import jax.numpy as jnp

    @jax.jit
    def run(x, y, w, b, steps, lr):
        n_batches = x.shape[0] // BATCH

        def step(i, params):
            w, b = params
            start = (i % n_batches) * BATCH
            xb = jax.lax.dynamic_slice_in_dim(x, start, BATCH)
            yb = jax.lax.dynamic_slice_in_dim(y, start, BATCH)
            logits = xb @ w + b
            p = jnp.exp(logits - jnp.max(logits, axis=1, keepdims=True))
            grad_logits = (p / jnp.sum(p, axis=1, keepdims=True) - yb) / BATCH
            return w - lr * (xb.T @ grad_logits), b - lr * jnp.sum(grad_logits, axis=0)

        return jax.lax.fori_loop(0, steps, step, (w, b))

    return lambda *inputs: jax.block_until_ready(run(*inputs))


def make_inputs(features: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    labels = rng.integers(0, CLASSES, BATCH * BATCHES)
    centers = rng.standard_normal((CLASSES, features)).astype(np.float32)
    x = (centers[labels] + rng.standard_normal((BATCH * BATCHES, features))).astype(np.float32)
    y = np.eye(CLASSES, dtype=np.float32)[labels]
    w = np.zeros((features, CLASSES), dtype=np.float32)
    b = np.zeros(CLASSES, dtype=np.float32)
    return x, y, w, b


def run(args) -> harness.Report:
    features, steps = (SMOKE_FEATURES, SMOKE_STEPS) if args.smoke else (FEATURES, STEPS)
    inputs = (*make_inputs(features), np.int64(steps), LEARNING_RATE)
    variants = {
        "autostage": harness.staged(sgd, args.target),
        "numba": sgd_numba,
        "numpy": sgd,
    }
    jax_fn = sgd_jax()
    if jax_fn is not None:
        variants["jax jit"] = jax_fn
    expected = sgd(*inputs)
    calls = harness.bind(variants, inputs)
    failures = []
    for label, call in calls.items():  # also the warm-up: traces and compiles
        why = harness.mismatch(call(), expected, RTOL, ATOL, check_dtype=label != "numba")
        if why:
            failures.append(f"sgd {label}: {why}")
    seconds = harness.median_seconds(calls, args.repeats, args.smoke)
    harness.print_variant_table(
        f"sgd: softmax regression {features}->{CLASSES}, batch {BATCH}, {steps} steps in one "
        f"call, target={args.label}, median of {args.repeats}", seconds, rate=("steps/s", steps))
    row = harness.goal_row(f"sgd {features}->10 x{steps} steps", seconds, args.label,
                           harness.Goal(1.05, "numba"))
    return harness.Report([row], failures)


def main(argv=None) -> int:
    args = harness.parse_args(__doc__.partition("\n")[0], argv, repeats=REPEATS)
    harness.note_optional_frameworks()
    return harness.finish(run(args))


if __name__ == "__main__":
    sys.exit(main())
