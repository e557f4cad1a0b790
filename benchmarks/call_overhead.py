"""Call overhead: ``x + 1`` on a 0-d float32 input, per call after warm-up (microseconds).

The work is one float32 addition, so what is measured is what a call costs: for autostage,
flattening the arguments, looking up the trace for their types, running it on the target and
boxing the result; for Numba, its dispatcher (type the arguments, find the compiled version, unbox
and box). Variants, timed alternately in this process (each timing is a loop of many calls;
median time per call):

* autostage: ``autostage.convert(add_one, target=--target)`` called with ``np.float32(1.5)``;
* numba: ``@numba.njit`` of ``x + np.float32(1)`` (a typed constant: Numba would promote
  ``float32 + 1`` to float64);
* numpy: ``add_one`` itself (one NumPy scalar addition).

Every variant must return 2.5 (autostage: as a float32, like NumPy); exit status 1 otherwise.
The goal is at most 5 us per autostage call on this machine.

    .venv/bin/python benchmarks/call_overhead.py [--smoke] [--repeats R] [--target cpu|interpreter]
"""

from __future__ import annotations

import sys

import harness
import numba
import numpy as np

REPEATS = 15  # timings per variant (--repeats)
GOAL_US = 5.0


def add_one(x):
    """The user's code."""
    return x + 1


@numba.njit
def add_one_numba(x):
    return x + np.float32(1)


def run(args) -> harness.Report:
    x = np.float32(1.5)
    variants = {
        "autostage": harness.staged(add_one, args.target),
        "numba": add_one_numba,
        "numpy": add_one,
    }
    expected = add_one(x)
    failures = []
    for label, fn in variants.items():  # also the warm-up: traces and compiles
        why = harness.mismatch(fn(x), expected, check_dtype=label == "autostage")
        if why:
            failures.append(f"call_overhead {label}: {why}")
    seconds = harness.median_seconds({k: (lambda f=f: f(x)) for k, f in variants.items()},
                                     args.repeats, args.smoke)
    harness.print_variant_table(
        f"call_overhead: x + 1 on a 0-d float32, target={args.label}, median of {args.repeats}",
        seconds, unit="us")
    row = harness.Row("call_overhead x+1 (0-d f32)", seconds["autostage"], seconds["numba"],
                      seconds["numpy"], args.label, f"<={GOAL_US:g} us",
                      seconds["autostage"] <= GOAL_US * 1e-6)
    return harness.Report([row], failures)


def main(argv=None) -> int:
    args = harness.parse_args(__doc__.partition("\n")[0], argv, repeats=REPEATS)
    harness.note_optional_frameworks()
    return harness.finish(run(args))


if __name__ == "__main__":
    sys.exit(main())
