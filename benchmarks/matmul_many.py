"""100 chained matmuls of a 2x2 float32 matrix: per-op cost on tiny arrays.

``matmul_many(a)`` multiplies ``x = x @ a`` a hundred times in a ``for`` over ``range(100)``. A
Python ``range`` longer than ``UNROLL_LIMIT`` is staged (its first iteration, then one loop of 99
``matmul`` ops on 2x2 arrays; it was unrolled into 100 ops before): what it measures is the
per-op cost of the backend (allocation, a BLAS call or a loop), not arithmetic. Variants, timed
alternately in this process (median time per call):

* autostage: ``autostage.convert(matmul_many, target=--target)``;
* numba: hand-written ``@numba.njit``, what an expert writes for tiny matrices (TOOLCHAIN.md):
  explicit loops into two preallocated buffers that are swapped, no BLAS call, no allocation;
* numpy: ``matmul_many`` itself, eager;
* jax jit (when jax imports): the 100 products in a ``jax.lax.fori_loop`` under ``jax.jit``
  on the CPU (faster here than the Python loop unrolled under ``jit``), the matrix put on the
  device once, the timing waiting for the result.

The matrix is random with spectral radius 1, so the product stays of order 1; every variant must
match NumPy eager within rtol=1e-4, atol=1e-5 (float32 rounding over 100 products), and autostage
and jax must return float32 of shape (2, 2). Issue 14's goal: autostage at most 1.2x
hand-written Numba. Exit status 1 on a mismatch.

    .venv/bin/python benchmarks/matmul_many.py [--smoke] [--repeats R] [--target cpu|interpreter]
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import harness
import numba
import numpy as np

REPEATS = 7  # timings per variant (--repeats)
RTOL, ATOL = 1e-4, 1e-5


def matmul_many(a):
    """The user's code: plain NumPy with a Python loop."""
    x = a
    for _ in range(100):
        x = x @ a
    return x


@numba.njit
def matmul_many_numba(a):
    """Hand-written: loops into two reused buffers (x @ a written into y, then swapped)."""
    n = a.shape[0]
    x = a.copy()
    y = np.empty_like(a)
    for _ in range(100):
        for i in range(n):
            for j in range(n):
                acc = np.float32(0.0)
                for k in range(n):
                    acc += x[i, k] * a[k, j]
                y[i, j] = acc
        x, y = y, x
    return x


def matmul_many_jax() -> Callable | None:
    """``matmul_many`` in JAX: a ``lax.fori_loop`` under ``jax.jit`` (None without jax)."""
    jax = harness.cpu_jax()
    if jax is None:
        return None

    @jax.jit
    def run(a):
        return jax.lax.fori_loop(0, 100, lambda _, x: x @ a, a)

    return lambda a: jax.block_until_ready(run(a))


def make_input() -> np.ndarray:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 2)).astype(np.float32)
    return (a / np.max(np.abs(np.linalg.eigvals(a)))).astype(np.float32)


def run(args) -> harness.Report:
    a = make_input()
    variants = {
        "autostage": harness.staged(matmul_many, args.target),
        "numba": matmul_many_numba,
        "numpy": matmul_many,
    }
    jax_fn = matmul_many_jax()
    if jax_fn is not None:
        variants["jax jit"] = jax_fn
    expected = matmul_many(a)
    calls = harness.bind(variants, (a,))
    failures = []
    for label, call in calls.items():  # also the warm-up: traces and compiles
        why = harness.mismatch(call(), expected, RTOL, ATOL, check_dtype=label != "numba")
        if why:
            failures.append(f"matmul_many {label}: {why}")
    seconds = harness.median_seconds(calls, args.repeats, args.smoke)
    harness.print_variant_table(
        f"matmul_many: 100 chained 2x2 float32 matmuls, target={args.label}, median of "
        f"{args.repeats}", seconds)
    row = harness.goal_row("matmul_many 2x2 x100", seconds, args.label,
                           harness.Goal(1.2, "numba"))
    return harness.Report([row], failures)


def main(argv=None) -> int:
    args = harness.parse_args(__doc__.partition("\n")[0], argv, repeats=REPEATS)
    harness.note_optional_frameworks()
    return harness.finish(run(args))


if __name__ == "__main__":
    sys.exit(main())
