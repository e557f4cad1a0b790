"""Conversion time of a large module of functions, and how long the converted code is.

A seeded generator (``program_generator.py``) writes a module of ~200 realistic functions of
10-40 lines (nested if/elif/else, for/while loops with break/continue/else, early returns, list
appends, subscript assignments, and/or/not, ternaries, calls between them) into a temporary
directory, and imports it as a real ``.py`` file. Then, in this process:

* **cold conversion**: ``autostage.to_graph(f)`` for every function, in order, with the conversion
  caches emptied (``conversion._code_cache``, ``conversion._function_cache`` and
  ``calls._decisions``) and ``AUTOSTAGE_CACHE_DIR`` pointing at a fresh temporary directory at the
  start of each repetition, so every function is parsed, analysed, converted, unparsed, written and
  imported. The converter modules themselves are imported (warm) before timing starts. Reported:
  the total (median over repetitions), the median per function, and ms per 100 source lines.
* **cache hit**: ``autostage.to_graph(f)`` on an already converted function (what a user pays per
  call of ``to_graph``), and ``ag__.converted(f)`` (what converted code pays per user call).
* **readability**: converted lines / original lines (non-blank lines of ``to_code`` vs the
  function's own source), median and max.

Every run also checks that each converted function returns what the original returns on a few
inputs, and exits non-zero otherwise. ``--smoke`` (tiny module, one repetition) is what CI runs.

    .venv/bin/python benchmarks/conversion_time.py [--smoke] [--functions N] [--repeats R]
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import statistics
import sys
import tempfile
import time
import timeit
import types

import program_generator

import autostage
from autostage import calls, conversion

CHECK_INPUTS = [(0, []), (3, [1, 2, 3]), (7, [5, 0, 9, 2, 8, 1]), (12, [4, 4, 11, 6, 3])]


def import_generated(source: str, directory: str) -> types.ModuleType:
    """Writes ``source`` to ``directory/generated_funcs.py`` and imports it as a real module."""
    path = os.path.join(directory, "generated_funcs.py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location("generated_funcs", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def reset_caches(cache_dir: str) -> None:
    """Empties every conversion cache and points generated files at an empty directory."""
    conversion._code_cache.clear()
    conversion._function_cache.clear()
    calls._decisions.clear()
    os.environ["AUTOSTAGE_CACHE_DIR"] = cache_dir
    for name in [n for n in sys.modules if n.startswith("autostage_gen_")]:
        del sys.modules[name]


def source_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())


def cold_conversion_times(functions: list, repeats: int, workdir: str) -> list[list[float]]:
    """Seconds to convert each function with empty caches: one list per repetition."""
    runs = []
    for rep in range(repeats):
        reset_caches(tempfile.mkdtemp(prefix=f"cache{rep}_", dir=workdir))
        times = []
        for fn in functions:
            start = time.perf_counter()
            autostage.to_graph(fn)
            times.append(time.perf_counter() - start)
        runs.append(times)
    return runs


def cache_hit_us(fn, call, number: int) -> float:
    """Median µs of ``call(fn)`` once ``fn`` is converted (5 timings of ``number`` calls)."""
    call(fn)
    timings = timeit.repeat(lambda: call(fn), number=number, repeat=5)
    return statistics.median(timings) / number * 1e6


def check_results(functions: list) -> list[str]:
    """Converted result == original result on ``CHECK_INPUTS``; returns the mismatches."""
    failures = []
    for fn in functions:
        converted = autostage.to_graph(fn)
        for n, xs in CHECK_INPUTS:
            try:
                expected = ("ok", fn(n, list(xs)))
            except Exception as e:  # the generator should not produce raising code
                expected = ("raised", type(e).__name__)
            try:
                got = ("ok", converted(n, list(xs)))
            except Exception as e:
                got = ("raised", f"{type(e).__name__}: {e}")
            if got != expected:
                failures.append(f"{fn.__name__}({n}, {xs}): original {expected}, converted {got}")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny module, one repetition")
    parser.add_argument("--functions", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.smoke:
        args.functions, args.repeats = 12, 1

    with tempfile.TemporaryDirectory(prefix="autostage_bench_") as workdir:
        source = program_generator.generate_module(args.functions, args.seed)
        module = import_generated(source, workdir)
        functions = [getattr(module, f"f_{k}") for k in range(args.functions)]
        original_lines = [source_lines(inspect.getsource(fn)) for fn in functions]

        # Warm-up: import the converter modules and gast outside the timed region.
        reset_caches(tempfile.mkdtemp(prefix="warmup_", dir=workdir))
        autostage.to_graph(functions[0])

        runs = cold_conversion_times(functions, args.repeats, workdir)
        totals = [sum(run) for run in runs]
        per_function = [statistics.median(ts) for ts in zip(*runs, strict=True)]
        total = statistics.median(totals)

        converted_lines = [source_lines(autostage.to_code(fn)) for fn in functions]
        ratios = [c / o for c, o in zip(converted_lines, original_lines, strict=True)]
        number = 200 if args.smoke else 20000
        hit_to_graph = cache_hit_us(functions[-1], autostage.to_graph, number)
        hit_converted = cache_hit_us(functions[-1], calls.converted, number)
        failures = check_results(functions)

    print(f"conversion time: {args.functions} generated functions, "
          f"{sum(original_lines)} source lines, {args.repeats} cold repetition(s)")
    print(f"{'measure':<44} {'value':>12}")
    print(f"{'total cold conversion (s)':<44} {total:>12.3f}")
    print(f"{'median per function (ms)':<44} {statistics.median(per_function) * 1e3:>12.2f}")
    print(f"{'max per function (ms)':<44} {max(per_function) * 1e3:>12.2f}")
    print(f"{'per 100 source lines (ms)':<44} {total / sum(original_lines) * 1e5:>12.2f}")
    print(f"{'cache hit: to_graph(f) (us)':<44} {hit_to_graph:>12.2f}")
    print(f"{'cache hit: ag__.converted(f) (us)':<44} {hit_converted:>12.2f}")
    print(f"{'converted / original lines, median':<44} {statistics.median(ratios):>12.2f}")
    print(f"{'converted / original lines, max':<44} {max(ratios):>12.2f}")
    if failures:
        print(f"\nFAILED: {len(failures)} converted results differ from the original:",
              file=sys.stderr)
        for failure in failures[:20]:
            print("  " + failure, file=sys.stderr)
        return 1
    print(f"correctness: {len(functions)} functions x {len(CHECK_INPUTS)} inputs agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
