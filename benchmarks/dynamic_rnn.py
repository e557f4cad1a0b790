"""Dynamic RNN: a tanh cell unrolled over time in a Python loop, outputs appended and stacked.

``rnn(xs, h0, w, u, b)`` runs ``h = tanh(xs[t] @ w + h @ u + b)`` for t in range(len(xs)),
appends every ``h`` to a list and returns ``np.stack`` of it: input 64, hidden 256, float32, for
batch 32/128 and sequence length 64/128 (the sequence length is only known at run time: the loop is
staged, the list becomes a staged tensor list). Variants, timed alternately in this process
(median time per call; throughput = batch / time, in sequences per second):

* autostage: ``autostage.convert(rnn, target=--target)``;
* numba: hand-written ``@numba.njit`` as an expert writes it: ``np.dot`` (BLAS) into two
  preallocated buffers, then one loop applying ``np.tanh`` (scalar libm) and writing straight
  into the preallocated output — no list, no stack, no temporaries. This is the ratio's baseline;
* numba fast tanh: the same with a float32 rational approximation of tanh (the kind XLA/Eigen
  use, max abs error ~1e-6) that LLVM vectorises: without Intel SVML, libm ``tanhf`` dominates
  (TOOLCHAIN.md), so this row shows what a backend could gain from such a lowering;
* numpy: ``rnn`` itself, eager;
* jax jit (when jax imports): the cell in ``jax.lax.scan`` under ``jax.jit``, float32, on the
  CPU with XLA's default threads, as an expert writes it; inputs put on the device once, the
  timing waits for the result (``block_until_ready``).

Every variant must match NumPy eager within rtol=1e-4, atol=1e-5; autostage must return float32
of the same shape. Issue 14's goal: autostage at most 0.75x NumPy eager; the best peer is the
fastest of numpy, numba fast tanh (the best hand-written tanh) and jax. Exit status 1 on a
mismatch.

    .venv/bin/python benchmarks/dynamic_rnn.py [--smoke] [--repeats R] [--target cpu|interpreter]
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import harness
import numba
import numpy as np

REPEATS = 7  # timings per variant (--repeats)
RTOL, ATOL = 1e-4, 1e-5
INPUT, HIDDEN = 64, 256
SHAPES = [(32, 64), (32, 128), (128, 64), (128, 128)]  # (batch, sequence)
SMOKE_INPUT, SMOKE_HIDDEN, SMOKE_SHAPES = 8, 16, [(4, 3)]


def rnn(xs, h0, w, u, b):
    """The user's code: xs is (time, batch, input); returns (time, batch, hidden)."""
    h = h0
    outputs = []
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ w + h @ u + b)
        outputs.append(h)
    return np.stack(outputs)


@numba.njit
def rnn_numba(xs, h0, w, u, b):
    """Hand-written: BLAS products into reused buffers, tanh written into the output."""
    steps, batch = xs.shape[0], xs.shape[1]
    hidden = h0.shape[1]
    out = np.empty((steps, batch, hidden), dtype=np.float32)
    xw = np.empty((batch, hidden), dtype=np.float32)
    hu = np.empty((batch, hidden), dtype=np.float32)
    h = h0
    for t in range(steps):
        np.dot(xs[t], w, xw)
        np.dot(h, u, hu)
        h = out[t]
        for i in range(batch):
            for j in range(hidden):
                h[i, j] = np.tanh(xw[i, j] + hu[i, j] + b[j])
    return out


@numba.njit(inline="always")
def fast_tanh(x):
    """float32 tanh as a rational function on [-7.9, 7.9] (Eigen's coefficients)."""
    x = min(max(x, np.float32(-7.90531110763549805)), np.float32(7.90531110763549805))
    x2 = x * x
    p = x2 * np.float32(-2.76076847742355e-16) + np.float32(2.00018790482477e-13)
    p = p * x2 + np.float32(-8.60467152213735e-11)
    p = p * x2 + np.float32(5.12229709037114e-08)
    p = p * x2 + np.float32(1.48572235717979e-05)
    p = p * x2 + np.float32(6.37261928875436e-04)
    p = p * x2 + np.float32(4.89352455891786e-03)
    q = x2 * np.float32(1.19825839466702e-06) + np.float32(1.18534705686654e-04)
    q = q * x2 + np.float32(2.26843463243900e-03)
    q = q * x2 + np.float32(4.89352518554385e-03)
    return x * p / q


@numba.njit
def rnn_numba_fast_tanh(xs, h0, w, u, b):
    """rnn_numba with fast_tanh instead of libm tanhf."""
    steps, batch = xs.shape[0], xs.shape[1]
    hidden = h0.shape[1]
    out = np.empty((steps, batch, hidden), dtype=np.float32)
    xw = np.empty((batch, hidden), dtype=np.float32)
    hu = np.empty((batch, hidden), dtype=np.float32)
    h = h0
    for t in range(steps):
        np.dot(xs[t], w, xw)
        np.dot(h, u, hu)
        h = out[t]
        for i in range(batch):
            for j in range(hidden):
                h[i, j] = fast_tanh(xw[i, j] + hu[i, j] + b[j])
    return out


def rnn_jax() -> Callable | None:
    """``rnn`` in JAX: ``lax.scan`` of the cell under ``jax.jit`` (None without jax)."""
    jax = harness.cpu_jax()
    if jax is None:
        return None
    import jax.numpy as jnp

    @jax.jit
    def run(xs, h0, w, u, b):
        def cell(h, x):
            h = jnp.tanh(x @ w + h @ u + b)
            return h, h

        return jax.lax.scan(cell, h0, xs)[1]

    return lambda *inputs: jax.block_until_ready(run(*inputs))


def make_inputs(batch: int, steps: int, n_in: int, hidden: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((steps, batch, n_in), dtype=np.float32)
    h0 = np.zeros((batch, hidden), dtype=np.float32)
    w = (rng.standard_normal((n_in, hidden)) / np.sqrt(n_in)).astype(np.float32)
    u = (rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32)
    b = (0.1 * rng.standard_normal(hidden)).astype(np.float32)
    return xs, h0, w, u, b


def run(args) -> harness.Report:
    n_in, hidden, shapes = ((SMOKE_INPUT, SMOKE_HIDDEN, SMOKE_SHAPES) if args.smoke
                            else (INPUT, HIDDEN, SHAPES))
    variants = {
        "autostage": harness.staged(rnn, args.target),
        "numba": rnn_numba,
        "numba fast tanh": rnn_numba_fast_tanh,
        "numpy": rnn,
    }
    jax_fn = rnn_jax()
    if jax_fn is not None:
        variants["jax jit"] = jax_fn
    rows, failures = [], []
    for batch, steps in shapes:
        inputs = make_inputs(batch, steps, n_in, hidden)
        expected = rnn(*inputs)
        calls = harness.bind(variants, inputs)
        for label, call in calls.items():  # also the warm-up: traces and compiles
            why = harness.mismatch(call(), expected, RTOL, ATOL,
                                   check_dtype=not label.startswith("numba"))
            if why:
                failures.append(f"rnn batch {batch} sequence {steps}, {label}: {why}")
        seconds = harness.median_seconds(calls, args.repeats, args.smoke)
        harness.print_variant_table(
            f"dynamic_rnn: tanh cell {n_in}->{hidden}, batch {batch}, sequence {steps}, "
            f"target={args.label}, median of {args.repeats}",
            seconds, rate=("sequences/s", batch))
        rows.append(harness.goal_row(f"rnn b{batch} t{steps}", seconds, args.label,
                                     harness.Goal(0.75, "numpy"), numba="numba fast tanh"))
    return harness.Report(rows, failures)


def main(argv=None) -> int:
    args = harness.parse_args(__doc__.partition("\n")[0], argv, repeats=REPEATS)
    harness.note_optional_frameworks()
    return harness.finish(run(args))


if __name__ == "__main__":
    sys.exit(main())
