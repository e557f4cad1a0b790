"""Runs every workload benchmark and prints one combined table.

The scripts (matmul_many, dynamic_rnn, sgd, collatz, inplace, call_overhead, first_call,
compile_time) run in this process one after the other with the same flags, each printing its own
table; then one table lists every row: workload; autostage, hand-written Numba, NumPy eager and
JAX (``jax.jit`` on the CPU, where the script has a JAX variant and jax imports; else "-")
medians in ms; the best peer (the fastest of those references measured for the row, with its
time); the ratio of autostage to the goal's reference; issue 14's goal and whether it is met:

* RNN (batch 32/128, sequence 64/128): at most 0.75x NumPy eager (its best hand-written Numba is
  the fast-tanh variant);
* matmul_many: at most 1.2x hand-written Numba; SGD and Collatz: at most 1.05x;
* call overhead per cache-hit call: at most 1 us with one argument, 2 us with ten arrays or a
  model whose ten weight attributes are read at each call;
* first call (matmul_many, Collatz, RNN): at most 100 ms cold, 150 ms in a new process with a warm
  disk cache;
* the other rows keep their goals (in-place workloads at most 1.2x Numba, compile_time's).

A script that raises (e.g. an op the target cannot compile yet) is reported and skipped. Exit
status 1 if any script raised or any variant's result differs from NumPy eager.

    .venv/bin/python benchmarks/run_all.py [--smoke] [--target cpu|interpreter] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import importlib
import sys

import harness

SCRIPTS = ("matmul_many", "dynamic_rnn", "sgd", "collatz", "inplace", "call_overhead",
           "first_call", "compile_time")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one repetition")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timings per variant (default: each script's own)")
    parser.add_argument("--target", default="cpu", choices=("cpu", "interpreter"))
    parser.add_argument("--only", nargs="+", choices=SCRIPTS, default=SCRIPTS)
    args = parser.parse_args(argv)
    harness.note_optional_frameworks()

    rows, failures = [], []
    for name in args.only:
        module = importlib.import_module(name)
        script_argv = ["--target", args.target] + (["--smoke"] if args.smoke else [])
        if args.repeats is not None:
            script_argv += ["--repeats", str(args.repeats)]
        try:
            script_args = harness.parse_args(name, script_argv, repeats=module.REPEATS)
            report = module.run(script_args)
        except Exception as error:  # noqa: BLE001 - report it and go on with the other scripts
            print(f"\n{name}: could not run: {type(error).__name__}: {error}")
            failures.append(f"{name}: {type(error).__name__}: {str(error).splitlines()[0]}")
            continue
        rows += report.rows
        failures += report.failures
    print("\n== all workloads ==", end="")
    return harness.finish(harness.Report(rows, failures))


if __name__ == "__main__":
    sys.exit(main())
