"""What the workload benchmarks share: flags, the target check, timing, result checks, tables.

Every workload script (matmul_many.py, dynamic_rnn.py, sgd.py, collatz.py, call_overhead.py,
first_call.py) runs one algorithm three or four ways — autostage (the plain NumPy function staged
with ``autostage.convert(fn, target=...)``), hand-written ``@numba.njit`` code, NumPy eager (the
undecorated function) and, where natural and jax imports, ``jax.jit`` on the CPU — and uses this
module to time them alternately in one process (so drift hits all alike), to check every variant's
result against NumPy eager, and to print one table per workload with medians and the ratio to
hand-written Numba. Each script's rows state issue 14's goal (a ``Goal``: a ratio to one reference
variant, or a time) and whether it is met; ``run_all.py`` collects them into one combined table
with the best peer (the fastest reference measured for the row).

Timing: each variant's call is repeated ``number`` times per timing, with ``number`` chosen so that
one timing lasts at least ``MIN_TIMING_S`` (one call in ``--smoke``); a table shows the median over
``--repeats`` timings of the time per call.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib.util
import os
import statistics
import time
import tracemalloc
import warnings
from collections.abc import Callable, Sequence

import numpy as np

# Steady-state timings measure compiled code: without this, a trace's first calls (the warm-up)
# would run as Python while it compiles in the background (the tiered start). first_call.py's
# children set AUTOSTAGE_TIERED themselves.
os.environ.setdefault("AUTOSTAGE_TIERED", "0")

MIN_TIMING_S = 0.05
_cpu_available: bool | None = None
_fallback_noted = False


# -- flags and the target ------------------------------------------------------------------------


def parse_args(description: str, argv: Sequence[str] | None, repeats: int = 7,
               ) -> argparse.Namespace:
    """The flags every workload script takes: --smoke, --repeats, --target."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, one repetition; still checks every result")
    parser.add_argument("--repeats", type=int, default=repeats, help="timings per variant")
    parser.add_argument("--target", default="cpu", choices=("cpu", "interpreter"),
                        help="the autostage target (default: cpu)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.repeats = 1
    args.label = target_label(args.target)  # checks the backend before anything else is staged
    global _fallback_noted
    if args.label.endswith("*") and not _fallback_noted:
        _fallback_noted = True
        print(TARGET_FOOTNOTE.lstrip("* "))
    return args


def cpu_target_available() -> bool:
    """Whether ``target="cpu"`` compiles with Numba in this process (remembered)."""
    global _cpu_available
    if _cpu_available is None:
        import autostage

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                ok = autostage.convert(lambda x: x + 1, target="cpu")(np.float32(1)) == 2
            except Exception:  # noqa: BLE001 - any failure means: not usable for benchmarks
                ok = False
        _cpu_available = ok and not any("interpreter" in str(w.message) for w in caught)
    return _cpu_available


def target_label(target: str) -> str:
    """The target as tables show it: ``cpu*`` when "cpu" still runs on the interpreter."""
    if target == "cpu" and not cpu_target_available():
        return "cpu*"
    return target


TARGET_FOOTNOTE = ("* target='cpu' ran on the NumPy interpreter: the CPU backend is not "
                   "available in this checkout")


def staged(fn: Callable, target: str) -> Callable:
    """``@autostage.convert(target=target)`` applied to ``fn`` (the flag picks the target)."""
    import autostage

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*runs on the NumPy reference interpreter")
        return autostage.convert(fn, target=target)


def installed(module: str) -> bool:
    """Whether an optional framework (jax, tensorflow) could be imported."""
    return importlib.util.find_spec(module) is not None


def cpu_jax():
    """The ``jax`` module set to run on the CPU, or None when ``import jax`` fails.

    XLA keeps its default threads, as the other variants of the workload scripts keep their
    libraries' defaults.
    """
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_platforms", "cpu")
    return jax


def bind(variants: dict[str, Callable], inputs: Sequence) -> dict[str, Callable[[], object]]:
    """Zero-argument calls of each variant on ``inputs``; a variant labelled "jax ..." gets
    them put on its device once (as a JAX user keeps their data), the others the NumPy values."""
    device_inputs = None
    calls = {}
    for label, fn in variants.items():
        args = inputs
        if label.startswith("jax"):
            if device_inputs is None:
                device_inputs = tuple(cpu_jax().device_put(x) for x in inputs)
            args = device_inputs
        calls[label] = functools.partial(fn, *args)
    return calls


def note_optional_frameworks() -> None:
    missing = [name for name in ("jax", "tensorflow") if not installed(name)]
    if missing:
        print(f"({' and '.join(missing)} not installed: those variants are skipped)")


# -- timing ----------------------------------------------------------------------------------------


PAUSE_S = 0.2  # before each timing: lets BLAS worker threads of the previous call go idle


def calls_per_timing(fn: Callable, smoke: bool) -> int:
    """How many calls make one timing last at least MIN_TIMING_S (fn already warmed up)."""
    if smoke:
        return 1
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - start >= MIN_TIMING_S or number >= 1 << 20:
            return number
        number *= 4


def peak_bytes(fn: Callable[[], object]) -> int:
    """The most memory ``fn()`` held at once beyond what was allocated before, as tracemalloc
    sees it: Python objects, NumPy arrays and compiled code's arrays (Numba allocates through
    CPython's raw allocator), not XLA's or PyTorch's own allocators. Call ``fn`` once before
    (compiles and caches are not what this measures)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def median_seconds(variants: dict[str, Callable], repeats: int, smoke: bool
                   ) -> dict[str, float]:
    """Median seconds per call of each zero-argument callable, timed alternately.

    The order of the variants rotates between repeats and each timing starts after a short pause:
    BLAS thread pools left spinning by one variant's call would otherwise slow whichever variant
    always comes next (seen here: +60% on the SGD workload).
    """
    numbers = {label: calls_per_timing(fn, smoke) for label, fn in variants.items()}
    times: dict[str, list[float]] = {label: [] for label in variants}
    labels = list(variants)
    for repeat in range(repeats):
        shift = repeat % len(labels)
        for label in labels[shift:] + labels[:shift]:
            fn, number = variants[label], numbers[label]
            if not smoke:
                time.sleep(PAUSE_S)
            start = time.perf_counter()
            for _ in range(number):
                fn()
            times[label].append((time.perf_counter() - start) / number)
    return {label: statistics.median(ts) for label, ts in times.items()}


# -- checking results ----------------------------------------------------------------------------


def leaves(value) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in leaves(item)]
    return [value]


def mismatch(got, expected, rtol: float = 0.0, atol: float = 0.0, check_dtype: bool = True,
             ) -> str | None:
    """Why ``got`` differs from NumPy eager's ``expected`` (None when it matches).

    Integers must be equal; floats ``np.allclose(got, expected, rtol, atol)``. With
    ``check_dtype`` (autostage promises NumPy 2 dtypes) dtypes and shapes must match exactly;
    hand-written Numba is only held to the values (it boxes float32 scalars as Python floats).
    """
    got_leaves, expected_leaves = leaves(got), leaves(expected)
    if len(got_leaves) != len(expected_leaves):
        return f"{len(got_leaves)} results, expected {len(expected_leaves)}"
    for i, (g, e) in enumerate(zip(got_leaves, expected_leaves, strict=True)):
        g_arr, e_arr = np.asarray(g), np.asarray(e)
        if check_dtype and (g_arr.dtype != e_arr.dtype or g_arr.shape != e_arr.shape):
            return f"result {i}: {g_arr.dtype}{list(g_arr.shape)}, expected " \
                   f"{e_arr.dtype}{list(e_arr.shape)}"
        if g_arr.shape != e_arr.shape:
            return f"result {i}: shape {g_arr.shape}, expected {e_arr.shape}"
        if np.issubdtype(e_arr.dtype, np.inexact):
            if not np.allclose(g_arr, e_arr, rtol=rtol, atol=atol):
                error = np.max(np.abs(g_arr.astype(np.float64) - e_arr))
                return f"result {i}: max abs error {error:.3g} (rtol={rtol}, atol={atol})"
        elif not np.array_equal(g_arr, e_arr):
            return f"result {i}: {g_arr!r}, expected {e_arr!r}"
    return None


# -- tables ----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Goal:
    """Issue 14's goal for a row: autostage at most ``limit`` times the time of the
    ``reference`` variant ("numba", "numpy"), or at most ``limit`` seconds when ``reference`` is
    None."""

    limit: float
    reference: str | None = None

    def __str__(self) -> str:
        if self.reference is not None:
            return f"<={self.limit:g}x {self.reference}"
        for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
            if self.limit >= scale:
                return f"<={self.limit / scale:g} {unit}"
        return f"<={self.limit * 1e9:g} ns"


@dataclasses.dataclass
class Row:
    """One line of run_all's combined table (seconds; None where a variant does not apply).

    ``goal`` is a ``Goal`` (``met`` is then left None and computed) or, for the scripts outside
    issue 14 (gradients.py, treelstm.py), a text with ``met`` given and ``numba_s`` as the
    ratio's reference. ``numba_label`` names what ``numba_s`` timed in the best-peer column
    ("numba fast tanh" for the RNN; "pytorch eager" in treelstm.py).
    """

    workload: str
    autostage_s: float | None
    numba_s: float | None
    numpy_s: float | None
    target: str
    goal: Goal | str
    met: bool | None = None
    jax_s: float | None = None
    numba_label: str = "numba"

    def __post_init__(self) -> None:
        if isinstance(self.goal, Goal) and self.met is None and self.autostage_s is not None:
            if self.goal.reference is None:
                self.met = self.autostage_s <= self.goal.limit
            elif self.ratio is not None:
                self.met = self.ratio <= self.goal.limit

    @property
    def peers(self) -> dict[str, float]:
        """The references measured for this row, by name."""
        named = ((self.numba_label, self.numba_s), ("numpy", self.numpy_s), ("jax", self.jax_s))
        return {name: s for name, s in named if s is not None}

    @property
    def best_peer(self) -> tuple[str, float] | None:
        """(name, seconds) of the fastest reference, None if none was measured."""
        return min(self.peers.items(), key=lambda item: item[1], default=None)

    @property
    def ratio(self) -> float | None:
        """autostage / the goal's reference (Numba for a text goal); None for a time goal."""
        if isinstance(self.goal, Goal):
            reference = {"numba": self.numba_s, "numpy": self.numpy_s,
                         "jax": self.jax_s}.get(self.goal.reference or "")
        else:
            reference = self.numba_s
        if self.autostage_s is None or not reference:
            return None
        return self.autostage_s / reference


@dataclasses.dataclass
class Report:
    """What one script's ``run`` returns: its rows for run_all and any result mismatches."""

    rows: list[Row]
    failures: list[str]


def format_ms(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    ms = seconds * 1e3
    if ms < 0.1:  # three significant digits, never in exponent notation
        return np.format_float_positional(ms, precision=3, fractional=False)
    return f"{ms:.3f}" if ms < 10 else f"{ms:.1f}"


def print_variant_table(title: str, seconds: dict[str, float], baseline: str = "numba",
                        rate: tuple[str, float] | None = None, unit: str = "ms") -> None:
    """One workload's table: median time per call, optional throughput, ratio to ``baseline``.

    ``rate`` = (unit, work items per call), e.g. ("sequences/s", 128); ``unit`` "ms" or "us".
    """
    scale = {"ms": 1e3, "us": 1e6}[unit]
    print(f"\n{title}")
    header = f"{'variant':<22} {'median ' + unit:>11}"
    if rate:
        header += f" {rate[0]:>14}"
    print(header + f" {'vs ' + baseline:>10}")
    for label, s in seconds.items():
        line = f"{label:<22} {format_ms(s * scale / 1e3):>11}"
        if rate:
            line += f" {rate[1] / s:>14,.0f}"
        print(line + f" {s / seconds[baseline]:>9.2f}x")


def print_rows(rows: list[Row]) -> None:
    """The combined table (run_all.py), also printed by each script for its own rows."""
    targets = sorted({row.target for row in rows})
    print(f"\n(autostage target: {', '.join(targets) or '-'}; ratio: autostage / the goal's "
          "reference)")
    print(f"{'workload':<36} {'autostage ms':>12} {'numba ms':>10} {'numpy ms':>10} "
          f"{'jax ms':>9} {'best peer':>24} {'ratio':>7} {'goal':>14} {'met':>4}")
    for row in rows:
        ratio = "-" if row.ratio is None else f"{row.ratio:.2f}x"
        met = "-" if row.met is None else "yes" if row.met else "NO"
        best = row.best_peer
        peer = "-" if best is None else f"{best[0]} {format_ms(best[1])}"
        print(f"{row.workload:<36} {format_ms(row.autostage_s):>12} {format_ms(row.numba_s):>10} "
              f"{format_ms(row.numpy_s):>10} {format_ms(row.jax_s):>9} {peer:>24} {ratio:>7} "
              f"{str(row.goal):>14} {met:>4}")
    if any(target.endswith("*") for target in targets):
        print(TARGET_FOOTNOTE)


def finish(report: Report) -> int:
    """Prints the rows and any mismatches; the exit status (1 on a mismatch)."""
    print_rows(report.rows)
    if report.failures:
        print("\nFAILED: results differ from NumPy eager, or a workload could not run:")
        for failure in report.failures:
            print("  " + failure)
        return 1
    return 0


def goal_row(workload: str, seconds: dict[str, float], target: str, goal: Goal,
             numba: str = "numba", jax: str = "jax jit") -> Row:
    """A Row of a steady-state workload from its variants' medians (``seconds``, by label):
    "autostage", the hand-written ``numba`` label, "numpy" and, when measured, ``jax``."""
    return Row(workload, seconds["autostage"], seconds[numba], seconds["numpy"], target, goal,
               jax_s=seconds.get(jax), numba_label=numba)

