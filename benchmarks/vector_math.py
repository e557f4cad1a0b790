"""Vectorised exp, log and tanh: the cpu kernels against NumPy and libm, time and ulp distance.

A converted function applying one of ``np.exp``, ``np.log``, ``np.tanh`` to a 128x256 array
(float64 and float32), timed alternately in this process against NumPy's own loop and the same
function compiled under ``AUTOSTAGE_EXACT_MATH`` (libm, one scalar call per element, as Numba
does). Reported: milliseconds per 128 calls (an RNN's sequence) and the largest ulp distance of
the kernel to NumPy on this run's inputs (a random sample over each function's varying range;
the tests check the whole range: ``tests/unit/runtime/test_cpu_vector_math.py``). The contract
(DESIGN.md) is 4 ulp; a larger distance is an exit status 1.

    .venv/bin/python benchmarks/vector_math.py [--smoke] [--repeats R]
"""

from __future__ import annotations

import sys

import harness
import numpy as np

import autostage
from autostage import config

REPEATS = 7
CALLS = 128
SHAPE, SMOKE_SHAPE = (128, 256), (8, 16)
CONTRACT_ULPS = 4


def exp(x):
    return np.exp(x)


def log(x):
    return np.log(x)


def tanh(x):
    return np.tanh(x)


FUNCTIONS = {"exp": (exp, (-20.0, 20.0)), "log": (log, (1e-3, 1e3)), "tanh": (tanh, (-6.0, 6.0))}


def ulps(got: np.ndarray, want: np.ndarray) -> float:
    """The largest distance in units of the last place of ``want`` (finite values)."""
    spacing = np.spacing(np.abs(want).astype(want.dtype))
    return float(np.max(np.abs(got.astype(np.float64) - want) / spacing))


def run(args) -> harness.Report:
    shape = SMOKE_SHAPE if args.smoke else SHAPE
    rng = np.random.default_rng(0)
    failures, distances = [], {}
    print(f"\nms per {CALLS} calls on a {shape[0]}x{shape[1]} array, median of {args.repeats}")
    print(f"{'function':<16} {'kernel':>8} {'numpy':>8} {'libm':>8} {'vs numpy':>9} "
          f"{'ulp to numpy':>13}")
    for dtype in (np.float64, np.float32):
        for name, (fn, (low, high)) in FUNCTIONS.items():
            x = rng.uniform(low, high, shape).astype(dtype)
            kernel = autostage.convert(fn)
            with config.EXACT_MATH.override(True):
                libm = autostage.convert(fn)
                libm(x)  # compiled now, with libm
            got, want = kernel(x), fn(x)
            distances[name, dtype] = ulps(got, want)
            if got.dtype != want.dtype or distances[name, dtype] > CONTRACT_ULPS:
                failures.append(f"{name} {np.dtype(dtype)}: {got.dtype}, "
                                f"{distances[name, dtype]:g} ulp from NumPy")
            variants = {"kernel": kernel, "numpy": fn, "libm": libm}
            calls = {k: (lambda f=f, x=x: f(x)) for k, f in variants.items()}
            seconds = harness.median_seconds(calls, args.repeats, args.smoke)
            ms = {k: v * CALLS * 1e3 for k, v in seconds.items()}
            print(f"{np.dtype(dtype).name + ' ' + name:<16} {ms['kernel']:>8.2f} "
                  f"{ms['numpy']:>8.2f} {ms['libm']:>8.2f} {ms['kernel'] / ms['numpy']:>8.2f}x "
                  f"{distances[name, dtype]:>13.2f}")
    return harness.Report([], failures)


def main(argv=None) -> int:
    args = harness.parse_args(__doc__.partition("\n")[0], argv, repeats=REPEATS)
    return harness.finish(run(args))


if __name__ == "__main__":
    sys.exit(main())
