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

Two more rows time calls with arrays: ``x + 1`` on one float32 array of 3 elements, and the sum
of ten float64 arrays of 3 elements (numba: the same functions under ``@numba.njit``; numpy:
eager).

A row times a kernel writing into an array argument (``out[i] = x[i] * 2.0 + 1.0`` over 10
elements, written back into the caller's ``out``: runtime/argument_writes.py; numba: the same
function under ``@numba.njit``; numpy: ``np.multiply(x, 2.0, out=out); out += 1.0``); its goal,
2 us, is the ten-array one (a call with two arrays that also tests their aliasing).

A last row times a model object holding 10 weight attributes (0-d float32 arrays read through
``self`` at each call, runtime/captures.py) called as ``model(x)``: its extra cost over the first
row is what reading and checking the weights costs per call (numba: the same sum with the weights
passed as arguments; numpy: the model itself).

Every variant must return NumPy eager's result (autostage: of the same dtype); exit status 1
otherwise. Issue 14's goals per cache-hit autostage call: at most 1 us with one argument (the 0-d
float32 and the array), at most 2 us with ten arrays and with the model.

    .venv/bin/python benchmarks/call_overhead.py [--smoke] [--repeats R] [--target cpu|interpreter]
"""

from __future__ import annotations

import sys

import harness
import numba
import numpy as np

REPEATS = 15  # timings per variant (--repeats)
ONE_ARGUMENT_GOAL = harness.Goal(1e-6)
TEN_ARGUMENTS_GOAL = harness.Goal(2e-6)


def add_one(x):
    """The user's code."""
    return x + 1


@numba.njit
def add_one_numba(x):
    return x + np.float32(1)


class TenWeights:
    """A model whose weights are attributes (they may change between calls)."""

    def __init__(self):
        for i in range(10):
            setattr(self, f"w{i}", np.array(np.float32(0.1 * i)))

    def __call__(self, x):
        return (x + self.w0 + self.w1 + self.w2 + self.w3 + self.w4 + self.w5 + self.w6
                + self.w7 + self.w8 + self.w9)


@numba.njit
def ten_weights_numba(x, w0, w1, w2, w3, w4, w5, w6, w7, w8, w9):
    return x + w0 + w1 + w2 + w3 + w4 + w5 + w6 + w7 + w8 + w9


@numba.njit
def add_one_array_numba(x):
    return x + np.float32(1)


def add_ten(a, b, c, d, e, f, g, h, i, j):
    """The user's code: ten arrays in."""
    return a + b + c + d + e + f + g + h + i + j


add_ten_numba = numba.njit(add_ten)


def scale_into(x, out):
    """The user's code: a Numba-style kernel writing into the array it is given."""
    for i in range(x.shape[0]):
        out[i] = x[i] * 2.0 + 1.0


scale_into_numba = numba.njit(scale_into)


def scale_into_numpy(x, out):
    np.multiply(x, 2.0, out=out)
    out += 1.0


def run_write_back(args) -> tuple[harness.Row, list[str]]:
    name, x = "call_overhead write-back kernel", np.arange(10.0)
    expected = np.zeros(10)
    scale_into(x, expected)
    variants = {"autostage": harness.staged(scale_into, args.target),
                "numba": scale_into_numba, "numpy": scale_into_numpy}
    failures = []
    for label, fn in variants.items():  # also the warm-up: traces and compiles
        out = np.zeros(10)
        fn(x, out)
        if why := harness.mismatch(out, expected):
            failures.append(f"{name} {label}: {why}")
    out = np.zeros(10)
    seconds = harness.median_seconds({k: (lambda f=f: f(x, out)) for k, f in variants.items()},
                                     args.repeats, args.smoke)
    harness.print_variant_table(f"{name}, target={args.label}, median of {args.repeats}",
                                seconds, unit="us")
    return harness.goal_row(name, seconds, args.label, TEN_ARGUMENTS_GOAL), failures


def run_arrays(args) -> tuple[list[harness.Row], list[str]]:
    rows, failures = [], []
    one, ten = [np.ones(3, np.float32)], [np.full(3, float(i)) for i in range(10)]
    for name, fn, numba_fn, inputs, goal in (
            ("call_overhead x+1 (one array)", add_one, add_one_array_numba, one,
             ONE_ARGUMENT_GOAL),
            ("call_overhead ten arrays", add_ten, add_ten_numba, ten, TEN_ARGUMENTS_GOAL)):
        variants = {"autostage": harness.staged(fn, args.target), "numba": numba_fn,
                    "numpy": fn}
        expected = fn(*inputs)
        failures += [f"{name} {label}: {why}" for label, f in variants.items()
                     if (why := harness.mismatch(f(*inputs), expected))]
        seconds = harness.median_seconds(
            {k: (lambda f=f, xs=inputs: f(*xs)) for k, f in variants.items()}, args.repeats,
            args.smoke)
        harness.print_variant_table(f"{name}, target={args.label}, median of {args.repeats}",
                                    seconds, unit="us")
        rows.append(harness.goal_row(name, seconds, args.label, goal))
    return rows, failures


def run_model(args) -> tuple[harness.Row, list[str]]:
    x, model = np.float32(1.5), TenWeights()
    weights = [getattr(model, f"w{i}") for i in range(10)]
    variants = {
        "autostage": harness.staged(model, args.target),
        "numba": lambda x: ten_weights_numba(x, *weights),
        "numpy": model,
    }
    expected = model(x)
    failures = [f"call_overhead 10 weights {label}: {why}" for label, fn in variants.items()
                if (why := harness.mismatch(fn(x), expected, check_dtype=label == "autostage"))]
    seconds = harness.median_seconds({k: (lambda f=f: f(x)) for k, f in variants.items()},
                                     args.repeats, args.smoke)
    harness.print_variant_table(
        f"call_overhead: a model with 10 weight attributes, target={args.label}, median of "
        f"{args.repeats}", seconds, unit="us")
    row = harness.goal_row("call_overhead model, 10 weight attrs", seconds, args.label,
                           TEN_ARGUMENTS_GOAL)
    return row, failures


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
    row = harness.goal_row("call_overhead x+1 (0-d f32)", seconds, args.label, ONE_ARGUMENT_GOAL)
    array_rows, array_failures = run_arrays(args)
    write_row, write_failures = run_write_back(args)
    model_row, model_failures = run_model(args)
    return harness.Report([row, *array_rows, write_row, model_row],
                          failures + array_failures + write_failures + model_failures)


def main(argv=None) -> int:
    args = harness.parse_args(__doc__.partition("\n")[0], argv, repeats=REPEATS)
    harness.note_optional_frameworks()
    return harness.finish(run(args))


if __name__ == "__main__":
    sys.exit(main())
