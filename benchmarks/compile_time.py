"""Compile time of realistic programs: the first run of each, cold and from the disk cache.

The programs are the realistic scenarios of the reference suite (tests/reference/realistic:
models, training loops, decoders, solvers, statistics), each a small application that converts
one or more functions and calls them. Each measurement runs one scenario in a fresh Python
subprocess of this script (``--child``), which imports NumPy, Numba and autostage's API first
(autostage imports both lazily: until the ninth session of issue 14 they were imported inside
the timed run, ~0.3 s more in every figure, where the hand-written reference's were not), then
times the scenario as plain Python (its own work) and under ``convert`` on the target; the
difference is what autostage added (conversion, tracing, passes, code generation, Numba).
Children run with Python's bytecode cache on (``PYTHONDONTWRITEBYTECODE`` removed), as on a
user's machine and as first_call.py's: without it (the setting of the machines this project runs
on until the thirtieth session), each process compiled autostage's lazily imported modules from
source, ~0.17 s in every figure, where Numba's were byte-compiled by pip:

* empty cache: the scenario alone, with an empty ``AUTOSTAGE_CACHE_DIR`` and ``NUMBA_CACHE_DIR``:
  nothing compiled before on this machine, the helpers every program shares (products, sums,
  error reporters: ``backends/cpu/shared_helpers.py``) and the compiled functions of the modules
  autostage ships (checks, new arrays, list operations, sorts, vector math) included (until the
  ninth session of issue 14 Numba cached the latter next to their source, shared by all runs);
* new program: the scenario with a cache that the scenarios run before it (in list order)
  filled: its own functions are new, the shared helpers are mostly compiled already — what a
  user meets with each new program on a machine that has run autostage before;
* precompiled (cpu): the scenario alone, with a cache that holds only what
  ``autostage --precompile`` compiled (the shared code of a corpus of small functions, run
  once at the start and timed): what a user meets with the first program on a machine where
  autostage was precompiled (``--smoke``: a corpus of one function);
* cached: the scenario again in a new process: everything loads from the disk cache.

Reported per scenario (ms) and as a distribution (min / median / max), with the goal of issue 14
(each cold compile <= 1.5 s). The scenario's results are checked by the reference suite, not here.

The best peer's own cost, for scale: the cold compile of the hand-written ``@numba.njit``
functions of the other benchmarks (``NUMBA_REFERENCES``: the RNN, SGD, matmul_many, Collatz),
each in a fresh process with an empty Numba cache, timed around its first call, as autostage's
are (Numba's own start-up in the process included); and the same code under Numba: each
scenario whose functions ``@numba.njit`` compiles unchanged (``NUMBA_SAME_CODE``: 21 of 47; the
others use what Numba refuses, such as objects, ``np.einsum``, reductions along an axis, lists of
arrays), run with ``wrap=numba.njit`` in a fresh process with an empty Numba cache and timed as
autostage's runs are. Numba's compile there is not the same work: its sums are not NumPy's
pairwise sums, its errors not NumPy's, and it has no cache shared between programs.

    .venv/bin/python benchmarks/compile_time.py [--smoke] [--target cpu|interpreter]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
REALISTIC = os.path.join(HERE, os.pardir, "tests", "reference", "realistic")
REPEATS = 1  # each program once per kind of run (run_all asks every script)
GOAL_S = 1.5
MARKER = "COMPILE_TIME_RESULT "
SMOKE_SCENARIOS = 2


# Hand-written Numba functions of the other benchmarks: (module, function, arguments to make).
NUMBA_REFERENCES = {
    "rnn (numba, fast tanh)": ("dynamic_rnn", "rnn_numba_fast_tanh",
                               "f=np.float32; args=(np.ones((8,4,3),f), np.zeros((4,5),f), "
                               "np.ones((3,5),f), np.ones((5,5),f), np.ones(5,f))"),
    "sgd (numba)": ("sgd", "sgd_numba",
                    "f=np.float32; args=(np.ones((400,6),f), np.ones((400,3),f), "
                    "np.zeros((6,3),f), np.zeros(3,f), 2, f(0.1))"),
    "matmul_many (numba)": ("matmul_many", "matmul_many_numba",
                            "args=(np.ones((2,2),np.float32),)"),
    "collatz (numba)": ("collatz", "collatz_total_numba", "args=(np.int64(10),)"),
}


# Scenarios whose converted functions plain ``@numba.njit`` compiles and runs unchanged (found by
# running every scenario so, 2026-12-03: the others fail to type or wrap).
NUMBA_SAME_CODE = (
    "training_loop", "greedy_decoder", "early_return_decoder", "beam", "random_walk",
    "global_random", "timing_wrapper", "newton_nested_array", "logistic_item", "power_iteration",
    "conjugate_gradient", "gauss_seidel", "adaptive_ode", "edit_distance", "kalman",
    "histogram_equalization", "global_table_lookup", "running_stats", "backtest",
    "resize_bilinear", "knn")


def numba_child(name: str) -> None:
    """Times the first call (Numba's compile) of a hand-written reference; prints JSON."""
    import numpy as np

    module, function, make = NUMBA_REFERENCES[name]
    scope = {"np": np}
    exec(make, scope)  # noqa: S102 - the table above, not input
    fn = getattr(__import__(module), function)
    start = time.perf_counter()
    fn(*scope["args"])
    print(MARKER + json.dumps({"compile_s": time.perf_counter() - start}))


def run_numba_child(name: str, cache: str) -> float:
    env = {**_env(cache), "NUMBA_CACHE_DIR": cache}
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--numba-child", name],
                          capture_output=True, text=True, env=env, timeout=900)
    lines = [line for line in proc.stdout.splitlines() if line.startswith(MARKER)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"compile_time numba child {name} failed:\n{proc.stdout}{proc.stderr}")
    return json.loads(lines[-1][len(MARKER):])["compile_s"]


def scenarios() -> list:
    sys.path[:0] = [REALISTIC, os.path.join(REALISTIC, os.pardir)]
    import realistic_models
    import realistic_numerics
    return realistic_models.SCENARIOS + realistic_numerics.SCENARIOS


def child(index: str, target: str) -> None:
    """Runs scenario ``index`` plain, then staged (``target`` "numba": under ``numba.njit``);
    prints both times as JSON."""
    import warnings

    import numba  # imported before the timer, as the hand-written reference's

    import autostage

    autostage.convert  # noqa: B018 - autostage's API is imported on first use: not timed
    scenario = scenarios()[int(index)]
    start = time.perf_counter()
    scenario(lambda f: f)
    plain_s = time.perf_counter() - start
    wrap = numba.njit if target == "numba" else lambda f: autostage.convert(f, target=target)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scenario(wrap)
    staged_s = time.perf_counter() - start
    print(MARKER + json.dumps({"plain_s": plain_s, "staged_s": staged_s}))


def precompile_child(smoke: str) -> None:
    """Runs ``autostage.precompile`` (``smoke``: its first corpus function only); prints the
    seconds."""
    from autostage import precompiling

    start = time.perf_counter()
    if smoke == "smoke":
        precompiling.compile_cases(list(precompiling.cases())[:1])
    else:
        precompiling.precompile()
    print(MARKER + json.dumps({"precompile_s": time.perf_counter() - start}))


def _env(cache: str) -> dict[str, str]:
    """A child's environment: its caches, and Python's bytecode cache on, as first_call.py's."""
    env = {**os.environ, "AUTOSTAGE_CACHE_DIR": cache,
           "NUMBA_CACHE_DIR": os.path.join(cache, "numba")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_precompile(cache: str, smoke: bool) -> float:
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--precompile-child",
                           "smoke" if smoke else "all"], capture_output=True, text=True,
                          env=_env(cache), timeout=1800)
    lines = [line for line in proc.stdout.splitlines() if line.startswith(MARKER)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"compile_time precompile failed:\n{proc.stdout}{proc.stderr}")
    return json.loads(lines[-1][len(MARKER):])["precompile_s"]


def restored(saved: str, cache: str) -> str:
    """``cache`` made a copy of ``saved`` again (at the same path: Numba's cache of generated
    modules is keyed by their path; file times kept: and by their time stamps)."""
    shutil.rmtree(cache, ignore_errors=True)
    shutil.copytree(saved, cache, symlinks=True)
    return cache


def run_child(index: int, target: str, cache: str) -> float:
    """Seconds autostage added to scenario ``index`` in a fresh process with cache ``cache``
    (autostage's, and Numba's for the modules autostage ships: their compiled functions are
    shared by every program, so they belong to the cache the run starts from)."""
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", str(index),
                           target], capture_output=True, text=True, env=_env(cache),
                          timeout=900)
    lines = [line for line in proc.stdout.splitlines() if line.startswith(MARKER)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"compile_time child {index} failed:\n{proc.stdout}{proc.stderr}")
    report = json.loads(lines[-1][len(MARKER):])
    return max(report["staged_s"] - report["plain_s"], 0.0)


def same_code(names: list[str], seconds: dict[str, list[float]], smoke: bool) -> None:
    """Prints Numba's cold compile of the scenarios it compiles unchanged beside autostage's
    (one in ``--smoke``, whose scenarios are the first two only: autostage's columns empty)."""
    chosen = NUMBA_SAME_CODE[:1] if smoke else NUMBA_SAME_CODE
    with tempfile.TemporaryDirectory(prefix="autostage_numba_same_") as workdir:
        numba_s = {name: run_child(names.index(name), "numba", os.path.join(workdir, name))
                   for name in chosen}
    print("\nthe same code under @numba.njit (fresh process, empty cache), beside autostage's "
          "(ms; ratio autostage / numba)")
    print(f"{'program':<28} {'numba':>9} {'empty cache':>12} {'ratio':>6} {'new program':>12} "
          f"{'ratio':>6}")
    ratios: dict[str, list[float]] = {"empty cache": [], "new program": []}
    for name, reference in numba_s.items():
        i = names.index(name)
        cells = []
        for kind in ratios:
            if i < len(seconds[kind]):
                ratios[kind].append(seconds[kind][i] / reference)
                cells.append(f"{harness.format_ms(seconds[kind][i]):>12} "
                             f"{ratios[kind][-1]:>6.2f}")
            else:
                cells.append(f"{'-':>12} {'-':>6}")
        print(f"{name:<28} {harness.format_ms(reference):>9} " + " ".join(cells))
    for kind, values in ratios.items():
        if values:
            print(f"{kind}: autostage / numba median {statistics.median(values):.2f}, "
                  f"faster in {sum(r < 1 for r in values)} of {len(values)}")


def run(args) -> harness.Report:
    names = [s.__name__.removeprefix("scenario_") for s in scenarios()]
    count = SMOKE_SCENARIOS if args.smoke else len(names)
    precompiled = args.target == "cpu"
    kinds = ["empty cache", "precompiled", "new program", "cached"]
    if not precompiled:
        kinds.remove("precompiled")
    seconds: dict[str, list[float]] = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory(prefix="autostage_compile_time_") as workdir:
        shared, alone = os.path.join(workdir, "shared"), os.path.join(workdir, "alone")
        if precompiled:
            saved = os.path.join(workdir, "precompiled")
            os.makedirs(alone, mode=0o700)
            precompile_s = run_precompile(alone, args.smoke)
            shutil.copytree(alone, saved, symlinks=True)
        for i in range(count):
            seconds["empty cache"].append(
                run_child(i, args.target, os.path.join(workdir, f"alone{i}")))
            if precompiled:
                seconds["precompiled"].append(run_child(i, args.target, restored(saved, alone)))
            seconds["new program"].append(run_child(i, args.target, shared))
            seconds["cached"].append(run_child(i, args.target, shared))
    print(f"\ncompile time of realistic programs, target={args.label}: what autostage adds to "
          "the first run (ms)")
    if precompiled:
        print(f"(autostage --precompile{' of one corpus function' if args.smoke else ''}, "
              f"once per machine: {precompile_s:.1f} s)")
    print(f"{'program':<28} " + " ".join(f"{k:>12}" for k in kinds))
    for i in range(count):
        print(f"{names[i]:<28} " + " ".join(
            f"{harness.format_ms(seconds[k][i]):>12}" for k in kinds))
    print("\nmin / median / max (ms), and how many within the goal's 1.5 s")
    for kind in kinds:
        values = seconds[kind]
        spread = " / ".join(harness.format_ms(f(values)) for f in (min, statistics.median, max))
        within = sum(v <= GOAL_S for v in values)
        print(f"{kind:<28} {spread:>28}   {within} of {len(values)}")
    references = {}
    if not args.smoke:
        with tempfile.TemporaryDirectory(prefix="autostage_numba_compile_") as workdir:
            references = {name: run_numba_child(name, os.path.join(workdir, str(i)))
                          for i, name in enumerate(NUMBA_REFERENCES)}
        print("\nthe best peer, for scale: hand-written Numba's cold compile (fresh process, "
              "empty cache; ms)")
        for name, s in references.items():
            print(f"{name:<28} {harness.format_ms(s):>12}")
    same_code(names, seconds, args.smoke)
    rows = []
    for kind in kinds[:-1]:
        worst = max(seconds[kind])
        rows.append(harness.Row(f"compile_time {kind}, worst of {count}", worst, None,
                                None, args.label, harness.Goal(GOAL_S)))
    return harness.Report(rows, [])


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        child(*argv[1:3])
        return 0
    if argv and argv[0] == "--precompile-child":
        precompile_child(argv[1])
        return 0
    if argv and argv[0] == "--numba-child":
        numba_child(argv[1])
        return 0
    args = harness.parse_args(__doc__.partition("\n")[0], argv, repeats=1)
    return harness.finish(run(args))


if __name__ == "__main__":
    sys.exit(main())
