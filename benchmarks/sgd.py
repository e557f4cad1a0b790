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
* numpy: ``sgd`` itself, eager.

Every variant must match NumPy eager within rtol=1e-3, atol=1e-5 (float32 products summed in a
different order, over 1000 steps); autostage must return float32 arrays of the same shapes.
Exit status 1 on a mismatch.

    .venv/bin/python benchmarks/sgd.py [--smoke] [--repeats R] [--target cpu|interpreter]
"""

from __future__ import annotations

import sys

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
    expected = sgd(*inputs)
    failures = []
    for label, fn in variants.items():  # also the warm-up: traces and compiles
        why = harness.mismatch(fn(*inputs), expected, RTOL, ATOL, check_dtype=label == "autostage")
        if why:
            failures.append(f"sgd {label}: {why}")
    seconds = harness.median_seconds({k: (lambda f=f: f(*inputs)) for k, f in variants.items()},
                                     args.repeats, args.smoke)
    harness.print_variant_table(
        f"sgd: softmax regression {features}->{CLASSES}, batch {BATCH}, {steps} steps in one "
        f"call, target={args.label}, median of {args.repeats}", seconds, rate=("steps/s", steps))
    return harness.Report([harness.ratio_row(f"sgd {features}->10 x{steps} steps", seconds,
                                             args.label)], failures)


def main(argv=None) -> int:
    args = harness.parse_args(__doc__.partition("\n")[0], argv, repeats=REPEATS)
    harness.note_optional_frameworks()
    return harness.finish(run(args))


if __name__ == "__main__":
    sys.exit(main())
