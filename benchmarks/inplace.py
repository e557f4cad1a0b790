"""In-place updates: edit distance, an ODE trajectory, a sieve, a heapsort — O(1) per write.

Four programs whose cost is all element writes into a dead array or appends to a list inside
staged loops (the in-place marking of passes/inplace.py and the tensor lists updated by their
only reader). Each runs three ways, timed alternately in this process (median per call):

* autostage: the plain function staged with ``autostage.convert(fn, target=--target)``, warm
  (its first call, which traces and compiles, is timed once and reported apart as "first call");
* numba: the same algorithm under ``@numba.njit`` as an expert writes it (typed scalar loops,
  preallocated arrays, doubling growth for the trajectory);
* numpy: the function itself, undecorated (plain Python on NumPy values).

Workloads: edit distance of two int64 arrays of length 1000 (a (n+1)^2 DP table, one write per
cell); Dormand-Prince RK45 with step-size control on the Van der Pol oscillator (mu=5) over
t in [0, 60], appending t and y at each accepted step, stacked at the end; a sieve of
Eratosthenes up to 2 million writing into a boolean array; a heapsort of 200,000 floats whose
helper writes into the heap it is given (``_sift(p, i, n)``). Every variant must give NumPy
eager's result (the ODE within 1e-9 relative); exit status 1 otherwise. The goal: autostage at
most 1.2x hand-written Numba.

    .venv/bin/python benchmarks/inplace.py [--smoke] [--repeats R] [--target cpu|interpreter]
"""

from __future__ import annotations

import sys
import time

import harness
import numba
import numpy as np

REPEATS = 5
EDIT_N, SMOKE_EDIT_N = 1000, 12
ODE_T, SMOKE_ODE_T = 60.0, 1.0
SIEVE_N, SMOKE_SIEVE_N = 2_000_000, 100
HEAP_N, SMOKE_HEAP_N = 200_000, 50


# -- edit distance --------------------------------------------------------------------------------

def edit_distance(a, b):
    """The user's code: Levenshtein distance by the (n+1) x (m+1) DP table."""
    n, m = a.shape[0], b.shape[0]
    d = np.zeros((n + 1, m + 1), dtype=np.int64)
    for i in range(n + 1):
        d[i, 0] = i
    for j in range(m + 1):
        d[0, j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i, j] = min(d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + cost)
    return d[n, m]


@numba.njit
def edit_distance_numba(a, b):
    n, m = a.shape[0], b.shape[0]
    d = np.empty((n + 1, m + 1), dtype=np.int64)
    for i in range(n + 1):
        d[i, 0] = i
    for j in range(m + 1):
        d[0, j] = j
    for i in range(1, n + 1):
        ai = a[i - 1]
        for j in range(1, m + 1):
            cost = 0 if ai == b[j - 1] else 1
            d[i, j] = min(d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + cost)
    return d[n, m]


# -- adaptive ODE (Dormand-Prince 5(4)) -----------------------------------------------------------

MU = 5.0


def _vdp(y):
    dy = np.empty_like(y)
    dy[0] = y[1]
    dy[1] = MU * (1.0 - y[0] * y[0]) * y[1] - y[0]
    return dy


def dopri(y0, t_end, rtol):
    """The user's code: adaptive RK45 with a trajectory of accepted steps."""
    t = 0.0
    h = 1e-3
    y = y0.copy()
    ts = [t]
    ys = [y]
    while t < t_end:
        if t + h > t_end:
            h = t_end - t
        k1 = _vdp(y)
        k2 = _vdp(y + h * (1 / 5 * k1))
        k3 = _vdp(y + h * (3 / 40 * k1 + 9 / 40 * k2))
        k4 = _vdp(y + h * (44 / 45 * k1 - 56 / 15 * k2 + 32 / 9 * k3))
        k5 = _vdp(y + h * (19372 / 6561 * k1 - 25360 / 2187 * k2 + 64448 / 6561 * k3
                           - 212 / 729 * k4))
        k6 = _vdp(y + h * (9017 / 3168 * k1 - 355 / 33 * k2 + 46732 / 5247 * k3
                           + 49 / 176 * k4 - 5103 / 18656 * k5))
        y5 = y + h * (35 / 384 * k1 + 500 / 1113 * k3 + 125 / 192 * k4 - 2187 / 6784 * k5
                      + 11 / 84 * k6)
        k7 = _vdp(y5)
        y4 = y + h * (5179 / 57600 * k1 + 7571 / 16695 * k3 + 393 / 640 * k4
                      - 92097 / 339200 * k5 + 187 / 2100 * k6 + 1 / 40 * k7)
        scale = rtol * (1.0 + np.maximum(np.abs(y), np.abs(y5)))
        err = np.sqrt(np.mean(((y5 - y4) / scale) ** 2))
        if err <= 1.0:
            t = t + h
            y = y5
            ts.append(t)
            ys.append(y)
        factor = 0.9 * (1.0 / np.maximum(err, 1e-10)) ** 0.2
        h = h * np.minimum(5.0, np.maximum(0.2, factor))
    return np.array(ts), np.stack(ys)


@numba.njit
def _vdp_numba(y, out):
    out[0] = y[1]
    out[1] = MU * (1.0 - y[0] * y[0]) * y[1] - y[0]


@numba.njit
def dopri_numba(y0, t_end, rtol):
    n = y0.shape[0]
    cap = 1024
    ts = np.empty(cap)
    ys = np.empty((cap, n))
    count = 1
    t, h = 0.0, 1e-3
    y = y0.copy()
    ts[0] = t
    ys[0] = y
    k = np.empty((7, n))
    tmp = np.empty(n)
    y5 = np.empty(n)
    y4 = np.empty(n)
    while t < t_end:
        if t + h > t_end:
            h = t_end - t
        _vdp_numba(y, k[0])
        for i in range(n):
            tmp[i] = y[i] + h * (1 / 5 * k[0, i])
        _vdp_numba(tmp, k[1])
        for i in range(n):
            tmp[i] = y[i] + h * (3 / 40 * k[0, i] + 9 / 40 * k[1, i])
        _vdp_numba(tmp, k[2])
        for i in range(n):
            tmp[i] = y[i] + h * (44 / 45 * k[0, i] - 56 / 15 * k[1, i] + 32 / 9 * k[2, i])
        _vdp_numba(tmp, k[3])
        for i in range(n):
            tmp[i] = y[i] + h * (19372 / 6561 * k[0, i] - 25360 / 2187 * k[1, i]
                                 + 64448 / 6561 * k[2, i] - 212 / 729 * k[3, i])
        _vdp_numba(tmp, k[4])
        for i in range(n):
            tmp[i] = y[i] + h * (9017 / 3168 * k[0, i] - 355 / 33 * k[1, i]
                                 + 46732 / 5247 * k[2, i] + 49 / 176 * k[3, i]
                                 - 5103 / 18656 * k[4, i])
        _vdp_numba(tmp, k[5])
        for i in range(n):
            y5[i] = y[i] + h * (35 / 384 * k[0, i] + 500 / 1113 * k[2, i]
                                + 125 / 192 * k[3, i] - 2187 / 6784 * k[4, i]
                                + 11 / 84 * k[5, i])
        _vdp_numba(y5, k[6])
        acc = 0.0
        for i in range(n):
            y4[i] = y[i] + h * (5179 / 57600 * k[0, i] + 7571 / 16695 * k[2, i]
                                + 393 / 640 * k[3, i] - 92097 / 339200 * k[4, i]
                                + 187 / 2100 * k[5, i] + 1 / 40 * k[6, i])
            scale = rtol * (1.0 + max(abs(y[i]), abs(y5[i])))
            e = (y5[i] - y4[i]) / scale
            acc += e * e
        err = np.sqrt(acc / n)
        if err <= 1.0:
            t = t + h
            y[:] = y5
            if count == cap:
                cap *= 2
                ts2, ys2 = np.empty(cap), np.empty((cap, n))
                ts2[:count] = ts[:count]
                ys2[:count] = ys[:count]
                ts, ys = ts2, ys2
            ts[count] = t
            ys[count] = y
            count += 1
        factor = 0.9 * (1.0 / max(err, 1e-10)) ** 0.2
        h = h * min(5.0, max(0.2, factor))
    return ts[:count].copy(), ys[:count].copy()


# -- sieve ----------------------------------------------------------------------------------------

def sieve(n):
    """The user's code: the primes up to n as a boolean array."""
    is_prime = np.ones(n + 1, dtype=np.bool_)
    is_prime[0] = False
    is_prime[1] = False
    i = 2
    while i * i <= n:
        if is_prime[i]:
            j = i * i
            while j <= n:
                is_prime[j] = False
                j += i
        i += 1
    return is_prime


@numba.njit
def sieve_numba(n):
    is_prime = np.ones(n + 1, dtype=np.bool_)
    is_prime[0] = False
    is_prime[1] = False
    i = 2
    while i * i <= n:
        if is_prime[i]:
            for j in range(i * i, n + 1, i):
                is_prime[j] = False
        i += 1
    return is_prime


# -- heapsort -------------------------------------------------------------------------------------

def _sift(p, i, n):
    """The user's helper: writes into the heap it is given (the caller's array changes)."""
    x = p[i]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and p[c + 1] > p[c]:
            c += 1
        if p[c] > x:
            j = c
        else:
            break
        p[i] = p[j]
        i = j
    p[i] = x


def heapsort(x):
    """The user's code: a sorted copy of x, by a heap built and drained with ``_sift``."""
    p = x.copy()
    n = p.shape[0]
    for s in range(n // 2 - 1, -1, -1):
        _sift(p, s, n)
    for e in range(n - 1, 0, -1):
        t = p[0]
        p[0] = p[e]
        p[e] = t
        _sift(p, 0, e)
    return p


@numba.njit
def _sift_numba(p, i, n):
    x = p[i]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and p[c + 1] > p[c]:
            c += 1
        if p[c] <= x:
            break
        p[i] = p[c]
        i = c
    p[i] = x


@numba.njit
def heapsort_numba(x):
    p = x.copy()
    n = p.shape[0]
    for s in range(n // 2 - 1, -1, -1):
        _sift_numba(p, s, n)
    for e in range(n - 1, 0, -1):
        p[0], p[e] = p[e], p[0]
        _sift_numba(p, 0, e)
    return p


# -- running --------------------------------------------------------------------------------------

def _workload(name: str, title: str, fns: tuple, args: tuple, options, rows, failures,
              rtol: float = 0.0) -> None:
    user, numba_fn = fns
    staged = harness.staged(user, options.target)
    start = time.perf_counter()
    first = staged(*args)  # traces and compiles (or loads the disk cache)
    first_call = time.perf_counter() - start
    expected = user(*args)
    variants = {"autostage": staged, "numba": numba_fn, "numpy": user}
    for label, fn in variants.items():
        got = first if label == "autostage" else fn(*args)
        why = harness.mismatch(got, expected, rtol=rtol, check_dtype=label != "numba")
        if why:
            failures.append(f"{name} {label}: {why}")
    seconds = harness.median_seconds({k: (lambda f=f: f(*args)) for k, f in variants.items()},
                                     options.repeats, options.smoke)
    harness.print_variant_table(f"{title}, target={options.label}, median of "
                                f"{options.repeats}; autostage first call "
                                f"{first_call * 1e3:.0f} ms", seconds)
    rows.append(harness.goal_row(name, seconds, options.label, harness.Goal(1.2, "numba")))


def run(options) -> harness.Report:
    smoke = options.smoke
    rows: list = []
    failures: list[str] = []
    rng = np.random.default_rng(0)
    n = SMOKE_EDIT_N if smoke else EDIT_N
    a, b = rng.integers(0, 4, n), rng.integers(0, 4, n)
    _workload(f"edit distance n={n}", f"edit distance of two int64[{n}]",
              (edit_distance, edit_distance_numba), (a, b), options, rows, failures)
    t_end = SMOKE_ODE_T if smoke else ODE_T
    ode_args = (np.array([2.0, 0.0]), np.float64(t_end), np.float64(1e-6))
    _workload(f"dopri trajectory t={t_end:g}", f"Dormand-Prince RK45, Van der Pol mu={MU}, "
              f"t in [0, {t_end:g}], trajectory appended per step",
              (dopri, dopri_numba), ode_args, options, rows, failures, rtol=1e-9)
    m = SMOKE_SIEVE_N if smoke else SIEVE_N
    _workload(f"sieve n={m}", f"sieve of Eratosthenes up to {m}",
              (sieve, sieve_numba), (np.int64(m),), options, rows, failures)
    k = SMOKE_HEAP_N if smoke else HEAP_N
    _workload(f"heapsort n={k}", f"heapsort of float64[{k}] by a helper writing into the heap",
              (heapsort, heapsort_numba), (rng.standard_normal(k),), options, rows, failures)
    return harness.Report(rows, failures)


def main(argv=None) -> int:
    args = harness.parse_args(__doc__.partition("\n")[0], argv, repeats=REPEATS)
    harness.note_optional_frameworks()
    return harness.finish(run(args))


if __name__ == "__main__":
    sys.exit(main())
