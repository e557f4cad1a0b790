"""Collatz: total steps for n in 1..20000 — a data-dependent while inside a for, with an if/else.

``collatz_total(limit)`` sums the Collatz stopping times of 1..limit (2.2 million inner
iterations for limit=20000). The limit is passed as ``np.int64``, so autostage stages the
``for`` over ``range`` as a loop (a Python int would be a compile-time constant and the loop would
run while tracing); the whole computation is scalar int64 control flow. Variants, timed
alternately in this process (median time per call):

* autostage: ``autostage.convert(collatz_total, target=--target)``;
* numba: the same loops under ``@numba.njit`` (int64 scalars), as an expert writes them;
* numpy: ``collatz_total`` itself, eager (range yields Python ints: this is plain CPython).

Every variant must return exactly NumPy eager's total; exit status 1 otherwise. Issue 14's goal:
autostage at most 1.05x hand-written Numba.

    .venv/bin/python benchmarks/collatz.py [--smoke] [--repeats R] [--target cpu|interpreter]
"""

from __future__ import annotations

import sys

import harness
import numba
import numpy as np

REPEATS = 7  # timings per variant (--repeats)
LIMIT, SMOKE_LIMIT = 20_000, 30


def collatz_total(limit):
    """The user's code: total Collatz steps for every n in 1..limit."""
    total = 0
    for start in range(1, limit + 1):
        n = start
        while n != 1:
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            total += 1
    return total


@numba.njit
def collatz_total_numba(limit):
    """Hand-written: the same loops on int64 scalars."""
    total = 0
    for start in range(1, limit + 1):
        n = start
        while n != 1:
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            total += 1
    return total


def run(args) -> harness.Report:
    limit = np.int64(SMOKE_LIMIT if args.smoke else LIMIT)
    variants = {
        "autostage": harness.staged(collatz_total, args.target),
        "numba": collatz_total_numba,
        "numpy": collatz_total,
    }
    expected = collatz_total(limit)
    failures = []
    for label, fn in variants.items():  # also the warm-up: traces and compiles
        why = harness.mismatch(fn(limit), expected, check_dtype=False)
        if why:
            failures.append(f"collatz {label}: {why}")
    seconds = harness.median_seconds({k: (lambda f=f: f(limit)) for k, f in variants.items()},
                                     args.repeats, args.smoke)
    harness.print_variant_table(
        f"collatz: total steps for n in 1..{limit} ({expected} inner iterations), "
        f"target={args.label}, median of {args.repeats}", seconds)
    row = harness.goal_row(f"collatz 1..{limit}", seconds, args.label,
                           harness.Goal(1.05, "numba"))
    return harness.Report([row], failures)


def main(argv=None) -> int:
    args = harness.parse_args(__doc__.partition("\n")[0], argv, repeats=REPEATS)
    harness.note_optional_frameworks()
    return harness.finish(run(args))


if __name__ == "__main__":
    sys.exit(main())
