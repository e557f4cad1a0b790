"""First-call latency: convert + trace + compile + first call, cold and from the disk cache.

For ``matmul_many`` (matmul_many.py), ``collatz_total`` (collatz.py, limit 30) and ``rnn``
(dynamic_rnn.py: batch 4, sequence 8, input 8, hidden 16) — small sizes: the work of the call
itself is negligible, the latency is the point — each measurement runs in a fresh Python
subprocess of this script (``--child``), which imports NumPy, Numba, autostage and the workload
module first (reported apart as "imports"), then times:

* autostage: ``autostage.convert(fn, target=--target)`` and the first call — conversion,
  tracing and the run; with the tiered start (``AUTOSTAGE_TIERED=1``, the default) the passes,
  code generation and Numba compilation run in a background thread meanwhile, and the first call
  runs the converted Python code. "compiled" is the time until compiled code is ready
  (``f.compile(*args)`` after the first call: conversion, tracing, passes, code generation,
  Numba), which the next call would use;
* numba: ``numba.njit(cache=True)`` of the hand-written function (for the RNN: the fast tanh
  one) and its first call;
* numpy: the first eager call.

"cold" uses a fresh temporary ``AUTOSTAGE_CACHE_DIR`` and ``NUMBA_CACHE_DIR``; "cached" is a second
fresh subprocess with the same two directories, so it measures loading from the disk cache. The
table shows medians over ``--repeats`` rounds (each round: new directories) in milliseconds, and
the wall time of the whole cold subprocess (interpreter start-up and imports included). Children
run with Python's bytecode cache on (``PYTHONDONTWRITEBYTECODE`` removed), as on a user's machine:
without it, each process compiles autostage's lazily imported modules from source. Issue 14's
goals for autostage: at most 100 ms for a function seen for the first time (cold) and 150 ms in a
new process with a warm cache. Every child's result is checked against NumPy eager (exit status 1
on a mismatch).

    .venv/bin/python benchmarks/first_call.py [--smoke] [--repeats R] [--target cpu|interpreter]
"""

from __future__ import annotations

import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import harness
import numpy as np

REPEATS = 3  # timings per variant (--repeats)
COLD_GOAL, CACHED_GOAL = harness.Goal(0.1), harness.Goal(0.15)
WORKLOADS = ("matmul_many", "collatz", "rnn")
RNN_SIZES = (4, 8, 8, 16)  # batch, sequence, input, hidden
MARKER = "FIRST_CALL_RESULT "


def workload(name: str):
    """(module, user function, hand-written njit function, arguments, rtol, atol) of a workload."""
    if name == "matmul_many":
        module = importlib.import_module("matmul_many")
        return (module, module.matmul_many, module.matmul_many_numba, (module.make_input(),),
                module.RTOL, module.ATOL)
    if name == "rnn":
        module = importlib.import_module("dynamic_rnn")
        return (module, module.rnn, module.rnn_numba_fast_tanh, module.make_inputs(*RNN_SIZES),
                module.RTOL, module.ATOL)
    module = importlib.import_module("collatz")
    return module, module.collatz_total, module.collatz_total_numba, (np.int64(30),), 0.0, 0.0


# -- the child: one fresh process, one variant -----------------------------------------------


def child(name: str, variant: str, target: str) -> None:
    """Times imports, then the first call of one variant; prints the result as JSON."""
    start = time.perf_counter()
    import numba

    import autostage

    autostage.convert  # noqa: B018 - loads the API module (autostage imports it lazily)
    module, fn, numba_fn, fn_args, _, _ = workload(name)
    imports_s = time.perf_counter() - start

    start = time.perf_counter()
    if variant == "autostage":
        staged = harness.staged(fn, target)
        result = staged(*fn_args)
    elif variant == "numba":
        result = numba.njit(cache=True)(numba_fn.py_func)(*fn_args)
    else:
        result = fn(*fn_args)
    first_call_s = compiled_s = time.perf_counter() - start
    if variant == "autostage":  # until compiled code is ready (and in the disk cache)
        staged.compile(*fn_args)
        compiled_s = time.perf_counter() - start
    value = np.asarray(result)
    print(MARKER + json.dumps({"imports_s": imports_s, "first_call_s": first_call_s,
                               "compiled_s": compiled_s, "value": value.tolist(),
                               "dtype": str(value.dtype)}))


def run_child(name: str, variant: str, target: str, cache: str) -> tuple[dict, float]:
    """Runs one child with its caches under ``cache``; (its JSON report, process wall seconds)."""
    env = {**os.environ, "AUTOSTAGE_CACHE_DIR": os.path.join(cache, "autostage"),
           "NUMBA_CACHE_DIR": os.path.join(cache, "numba"), "AUTOSTAGE_TIERED": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name, variant,
                           target], capture_output=True, text=True, env=env, timeout=600)
    wall_s = time.perf_counter() - start
    lines = [line for line in proc.stdout.splitlines() if line.startswith(MARKER)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"first_call child {name} {variant} failed:\n{proc.stdout}{proc.stderr}")
    return json.loads(lines[-1][len(MARKER):]), wall_s


# -- the parent: rounds of children, the table -----------------------------------------------


def measure(name: str, target: str, repeats: int, workdir: str, failures: list[str]) -> dict:
    """{variant: {"imports", "cold", "cached", "cold wall"}: median seconds}."""
    _, fn, _, fn_args, rtol, atol = workload(name)
    expected = fn(*fn_args)
    samples: dict[str, dict[str, list[float]]] = {}
    for _ in range(repeats):
        for variant in ("autostage", "numba", "numpy"):
            cache = tempfile.mkdtemp(prefix=f"{name}_{variant}_", dir=workdir)
            stages = ("cold", "cached") if variant != "numpy" else ("cold",)
            for stage in stages:
                report, wall_s = run_child(name, variant, target, cache)
                got = np.asarray(report["value"], dtype=report["dtype"])
                why = harness.mismatch(got, expected, rtol, atol,
                                       check_dtype=variant == "autostage")
                if why:
                    failures.append(f"first_call {name} {variant} ({stage}): {why}")
                times = samples.setdefault(variant, {})
                times.setdefault(stage, []).append(report["first_call_s"])
                times.setdefault(f"{stage} compiled", []).append(report["compiled_s"])
                if stage == "cold":
                    times.setdefault("imports", []).append(report["imports_s"])
                    times.setdefault("cold wall", []).append(wall_s)
    return {variant: {k: statistics.median(v) for k, v in times.items()}
            for variant, times in samples.items()}


def print_table(name: str, label: str, repeats: int, medians: dict) -> None:
    print(f"\nfirst_call: {name}, fresh process per measurement, target={label}, "
          f"median of {repeats} (ms)")
    print(f"{'variant':<12} {'imports':>9} {'cold':>9} {'compiled':>9} {'from cache':>11} "
          f"{'compiled':>9} {'cold process':>13}")
    for variant, m in medians.items():
        print(f"{variant:<12} {harness.format_ms(m['imports']):>9} "
              f"{harness.format_ms(m['cold']):>9} {harness.format_ms(m['cold compiled']):>9} "
              f"{harness.format_ms(m.get('cached')):>11} "
              f"{harness.format_ms(m.get('cached compiled')):>9} "
              f"{harness.format_ms(m['cold wall']):>13}")


def run(args) -> harness.Report:
    rows, failures = [], []
    with tempfile.TemporaryDirectory(prefix="autostage_first_call_") as workdir:
        for name in WORKLOADS:
            medians = measure(name, args.target, args.repeats, workdir, failures)
            print_table(name, args.label, args.repeats, medians)
            auto, nb, numpy_ = medians["autostage"], medians["numba"], medians["numpy"]
            rows.append(harness.Row(f"first_call {name} cold", auto["cold"], nb["cold"],
                                    numpy_["cold"], args.label, COLD_GOAL))
            rows.append(harness.Row(f"first_call {name} cached", auto["cached"], nb["cached"],
                                    numpy_["cold"], args.label, CACHED_GOAL))
    return harness.Report(rows, failures)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        child(*argv[1:4])
        return 0
    args = harness.parse_args(__doc__.partition("\n")[0], argv, repeats=REPEATS)
    return harness.finish(run(args))


if __name__ == "__main__":
    sys.exit(main())
