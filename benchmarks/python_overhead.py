"""The overhead of converted code run with Python values, against the original function.

Converted code runs every ``if``/``while``/``for`` through an operator (``ag__.if_stmt``...) with
its branches and loop bodies as nested functions, and calls user functions through
``ag__.converted(f)``; with Python values it must give the same results, and this measures what
that costs. For each workload below, the original function and ``autostage.to_graph`` of it are
timed in this process, alternately, ``--repeats`` times each (one call per timing, after a
warm-up call that also converts any callees); the table shows the medians and their ratio
(converted / original; 1.0 = no overhead).

Workloads: a scalar loop with a branch (Collatz steps for n in a range), nested loops with a
break, a loop calling small user functions (converted calls), list building with append, and a
NumPy loop on small arrays. Every run checks that converted results equal the original ones and
exits non-zero otherwise. ``--smoke`` (tiny sizes, one repetition) is what CI runs.

    .venv/bin/python benchmarks/python_overhead.py [--smoke] [--repeats R] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time

import numpy as np

import autostage

# -- workloads (plain Python, as a user would write them) -------------------------------------


def collatz_total(limit):
    """Total Collatz steps for every n below ``limit``: a scalar while loop with a branch."""
    total = 0
    for start in range(1, limit):
        n = start
        while n != 1:
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            total += 1
    return total


def first_factor_pairs(limit):
    """For each i, the first j with i * j % 7 == 3: nested loops with a break."""
    found = 0
    checked = 0
    for i in range(1, limit):
        for j in range(1, limit):
            checked += 1
            if i * j % 7 == 3:
                found += j
                break
        else:
            found -= 1
    return found, checked


def clamp(x, low, high):
    if x < low:
        return low
    if x > high:
        return high
    return x


def smooth(previous, x):
    return 0.75 * previous + 0.25 * x


def filtered_signal(n):
    """A loop calling small user functions (converted calls through ag__.converted)."""
    level = 0.0
    for i in range(n):
        x = clamp((i * 37) % 101 - 50, -30, 30)
        level = smooth(level, x)
    return level


def build_lists(n):
    """List building with append, a branch and a subscript assignment."""
    evens = []
    odds = []
    for i in range(n):
        if i % 2 == 0:
            evens.append(i * i)
        else:
            odds.append(i + 1)
    if odds:
        odds[0] = len(evens)
    return evens, odds


def numpy_relaxation(x, w, steps):
    """A NumPy loop on small arrays: update, reduce, branch on the result, write an element."""
    x = x.copy()
    for step in range(steps):
        x = 0.5 * x + w
        if x.sum() > 4.0:
            x = x / 2
        x[step % x.shape[0]] = 0.0
    return x


def workloads(smoke: bool) -> list[tuple[str, object, tuple]]:
    """(label, function, arguments); the default sizes keep each row under ~2 s."""
    rng = np.random.default_rng(0)
    x, w = rng.random(8), rng.random(8)
    if smoke:
        return [("collatz steps, n < 50", collatz_total, (50,)),
                ("nested loops + break, 20x20", first_factor_pairs, (20,)),
                ("user calls in a loop, 100 iters", filtered_signal, (100,)),
                ("list append, 100 iters", build_lists, (100,)),
                ("numpy loop on 8 floats, 50 steps", numpy_relaxation, (x, w, 50))]
    return [("collatz steps, n < 5000", collatz_total, (5_000,)),
            ("nested loops + break, 1500x1500", first_factor_pairs, (1_500,)),
            ("user calls in a loop, 50k iters", filtered_signal, (50_000,)),
            ("list append, 100k iters", build_lists, (100_000,)),
            ("numpy loop on 8 floats, 20k steps", numpy_relaxation, (x, w, 20_000))]


# -- measurement --------------------------------------------------------------------------------


def same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
                and np.array_equal(a, b))
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    return type(a) is type(b) and a == b


def median_times(original, converted, args: tuple, repeats: int) -> tuple[float, float]:
    """Median seconds of one call of each, timed alternately so drift hits both alike."""
    times_original, times_converted = [], []
    for _ in range(repeats):
        for fn, times in ((original, times_original), (converted, times_converted)):
            start = time.perf_counter()
            fn(*args)
            times.append(time.perf_counter() - start)
    return statistics.median(times_original), statistics.median(times_converted)


def profile(label: str, converted, args: tuple) -> None:
    profiler = cProfile.Profile()
    profiler.runcall(converted, *args)
    print(f"\n--- cProfile of converted {label} (internal time) ---")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one repetition")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--profile", action="store_true",
                        help="cProfile the converted version of each workload")
    args = parser.parse_args(argv)
    repeats = 1 if args.smoke else args.repeats

    print(f"Python-value overhead of converted code: median of {repeats} call(s), ms")
    print(f"{'workload':<36} {'original':>10} {'converted':>10} {'ratio':>7}")
    failures = []
    for label, fn, fn_args in workloads(args.smoke):
        converted = autostage.to_graph(fn)
        expected, got = fn(*fn_args), converted(*fn_args)  # warm-up; converts the callees
        if not same(expected, got):
            failures.append(f"{label}: original {expected!r}, converted {got!r}")
        original_s, converted_s = median_times(fn, converted, fn_args, repeats)
        print(f"{label:<36} {original_s * 1e3:>10.2f} {converted_s * 1e3:>10.2f} "
              f"{converted_s / original_s:>7.2f}")
        if args.profile:
            profile(label, converted, fn_args)
    if failures:
        print("\nFAILED: converted results differ from the original:", file=sys.stderr)
        for failure in failures:
            print("  " + failure, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
