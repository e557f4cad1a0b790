"""Compiles the code programs share before a program needs it (``autostage --precompile``).

A program's first compile on a machine includes the shared code it is the first to use: the
functions of the modules autostage ships (BLAS products, vector math, checks, new arrays, sorts,
list operations), the shared generated helpers (broadcasts, pairwise sums, list buffers, slice
writes) and the Numba library code they link, 20-300 ms per signature, several seconds for the
first realistic programs on a machine (``benchmarks/compile_time.py``: "empty cache"). Each is
compiled once per signature and loaded from the disk cache after, so this runs a corpus of small
functions, written as users write model and solver code, through the CPU backend for the common
dtypes, layouts and ranks: their shared code lands in the cache, and a later program compiles
only what is its own. Julia precompiles a package's code at installation for the same reason.

Array sizes are above ``config.STATIC_SIZES``: code for unknown sizes, which every program of
those dtypes and ranks shares (code specialised to small known sizes is each program's own).
The cache is keyed by autostage's, Python's and Numba's versions: run this again after an
upgrade. It changes nothing else: results never depend on it, only the first compile's time.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
from numba import types

from autostage import api
from autostage.runtime.backends.cpu import checks, run_errors

# Sizes: rows, columns, steps, all above the static-size limit (16).
_N, _M, _T = 20, 24, 18


def _activations(x, v):
    gate = 1.0 / (1.0 + np.exp(-x))
    y = gate * np.tanh(x * v) + np.log(np.abs(x) + 1.0) + np.sqrt(x * x)
    return np.maximum(y, 0.0), np.where(x > 0, x, 0.5 * x), np.clip(y, -1.0, 1.0)


def _reductions(x):
    shifted = x - x.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    p = e / e.sum(axis=1, keepdims=True)
    return (p, x.sum(), x.mean(), x.sum(axis=0), x.mean(axis=0), x.max(), x.min(),
            x.argmax(axis=1), x.std(), np.abs(x).max(axis=0), (x * x).sum(axis=1))


def _products(a, b, v, u):
    return (a @ b, a @ a.T, a.T @ a, a @ v, u @ a, a.T @ u, np.dot(v, v),
            a[:, 1:] @ b[1:], a[:, 1:] @ v[1:], u[1:] @ a[1:])


def _gates(z, n, h, c, bias):
    """An element-wise update of many operands (the shape checks of wide expressions)."""
    return (1.0 - z) * np.tanh(n + bias) + z * h * c, np.maximum(z + bias, h - c)


def _recurrence(xs, w, u, h):
    states = []
    for t in range(len(xs)):
        h = np.tanh(xs[t] @ w + h @ u)
        states.append(h)
    return np.stack(states), h


def _running_values(x):
    totals = []
    total = 0.0
    for i in range(x.shape[0]):
        total += float(x[i].sum())
        totals.append(total)
    return np.array(totals), total, len(totals)


def _window(xs, width):
    """A sliding window of recent rows and their norms: list append, pop(0), reads by index."""
    rows, norms, steps = [], [], []
    acc = xs[0] * 0.0
    for t in range(xs.shape[0]):
        rows.append(xs[t] * 2.0)
        norms.append(float(np.sqrt(xs[t] @ xs[t])))
        steps.append(t)
        if len(rows) > width:
            rows.pop(0)
            norms.pop(0)
        for i in range(len(rows) - 1, -1, -1):
            acc = acc + norms[i] * rows[i]
    return acc, norms[-1], len(norms), steps[-1] - steps[0]


def _history(xs, keep):
    """Bookkeeping over steps as optimisers and decoders keep it (histories of vectors and
    scores with the oldest dropped, back-pointers, a path read backwards): typed lists of
    vectors, floats and ints, item writes, copies and stacks."""
    vectors, scores, best, pointers = [], [], [], []
    for t in range(xs.shape[0]):
        vectors.append(xs[t] - xs[0])
        scores.append(float(xs[t].sum()))
        best.append(int(np.argmax(xs[t])))
        pointers.append(np.argmax(xs[: t + 1], axis=0))
        if len(vectors) > keep:
            vectors.pop(0)
            scores.pop(0)
        scores[-1] = scores[-1] * 0.5
        best[0] = best[-1]
    d = xs[0] * 0.0
    for i in range(len(vectors) - 1, -1, -1):
        d = d + scores[i] * vectors[i]
    path = [best[-1]]
    for t in range(len(pointers) - 1, 0, -1):
        path.append(int(pointers[t][path[-1] % xs.shape[1]]))
    return (d, np.stack(vectors), np.array(best), np.array(scores), np.array(path),
            np.stack(pointers))


def _trajectory(xs, w, v):
    """A state and a number per step appended to lists and stacked, the states after the first
    read back (a list slice), the last one multiplied: growing buffers, list copies and items
    read as views."""
    h = xs[0] * 0.0
    states, norms, steps = [h], [], []
    for t in range(xs.shape[0]):
        h = np.tanh(states[-1] @ w + xs[t])
        states.append(h)
        norms.append(float(h @ h))
        steps.append(t)
    later = states[1:]
    return (np.stack(later), np.array(norms), np.array(steps), states[-1] @ w, xs[:, 0].sum(),
            np.median(v), np.median(xs, axis=0))


def _int_steps(x, n):
    """Python-int arithmetic on sizes and counts: true and floor division, remainders, bounds;
    int rows shifted; an int list stacked."""
    h = x.shape[0]
    scale = (h - 1) / max(n - 1, 1)
    shifted = x[0].copy()
    shifted[1:] = x[0][:-1]
    picks = []
    for i in range(h):
        if x[i, 0] % 2 == 0:
            picks.append(i)
    return scale, h // n, h % n, min(h, n), shifted, np.array(picks)


def _row_writes(x):
    out = np.zeros((x.shape[0], x.shape[1]))
    for i in range(x.shape[0]):
        out[i] = x[i] * 2.0
        out[i, :] += 1.0
    out[:, 0] = x[:, 1]
    out[1:] = out[:-1] * 0.5
    return out


def _sorting(v):
    order = np.argsort(v)
    return np.sort(v), order, v[order[:3]]


def _new_arrays(x):
    n, m = x.shape
    return (np.zeros(n), np.zeros((n, m)), np.ones((n, m)), np.full(n, 2.0),
            np.zeros((2, n, m)), np.zeros_like(x), np.arange(n))


def _solver(a, v):
    """Linear algebra as solvers write it: a norm, solves, an inverse, symmetric eigenvectors."""
    s = a @ a.T + np.eye(a.shape[0])
    step = np.linalg.solve(s, v)
    vals, vecs = np.linalg.eigh(s)
    return step, np.linalg.norm(step), np.linalg.inv(s), vals, vecs


def _sampling(rng, w, labels, levels):
    """Draws and counts as simulations write them: normal draws, a weighted choice, counts."""
    p = np.abs(w) / np.abs(w).sum()
    picks = rng.choice(w.shape[0], size=w.shape[0], p=p)
    noise = rng.normal() + rng.normal(size=w.shape[0])
    return picks, noise, np.bincount(labels), np.bincount(labels, minlength=levels)


def _collected(xs):
    """Rows and ints collected in lists: the rows stacked while the list lives on, the ints
    made an array."""
    rows, picks = [], []
    for t in range(xs.shape[0]):
        rows.append(xs[t] * 2.0)
        picks.append(int(np.argmax(xs[t])))
    stacked = np.stack(rows)
    rows.append(xs[0])
    return stacked, len(rows), np.array(picks)


def _float_cases(dtype: type) -> Iterator[tuple[Callable, tuple]]:
    rng = np.random.default_rng(0)

    def arr(*shape):
        return rng.normal(size=shape).astype(dtype)
    x, v = arr(_N, _M), arr(_M)
    yield _activations, (x, v)
    yield _reductions, (x,)
    yield _products, (x, arr(_M, _N), v, arr(_N))
    yield _recurrence, (arr(_T, _N, _M), arr(_M, _M), arr(_M, _M), arr(_N, _M))
    yield _gates, (x, arr(_N, _M), arr(_N, _M), arr(_N, _M), v)
    yield _running_values, (x,)
    yield _window, (x, 3)
    yield _history, (x, 3)
    yield _trajectory, (arr(_T, _M), arr(_M, _M), v)
    yield _row_writes, (x,)
    yield _sorting, (arr(_M),)
    yield _new_arrays, (x,)
    yield _collected, (x,)
    if dtype == np.float64:
        yield _solver, (x, arr(_N))
        labels = np.arange(_N, dtype=np.int64) % 5
        yield _sampling, (np.random.default_rng(0), v, labels, 8)


def _int_cases() -> Iterator[tuple[Callable, tuple]]:
    x = np.arange(_N * _M, dtype=np.int64).reshape(_N, _M) % 7
    yield _running_values, (x,)
    yield _history, (x, 3)
    yield _int_steps, (x, _N - 3)
    yield _sorting, (x[0].copy(),)


def cases() -> Iterator[tuple[Callable, tuple]]:
    """The corpus: (function, arguments) for float64, float32 and int64."""
    yield from _float_cases(np.float64)
    yield from _float_cases(np.float32)
    yield from _int_cases()


def precompile(report: Callable[[str], Any] | None = None) -> int:
    """Compiles the code programs share into autostage's disk cache (``AUTOSTAGE_CACHE_DIR``),
    for the CPU backend: once per machine, ~35 s on a 2-core machine. ``report`` (e.g. ``print``)
    gets a line per compiled function. Returns how many were compiled.

    Example: ``python -c "import autostage; autostage.precompile(print)"``, or
    ``autostage --precompile``."""
    return compile_cases(cases(), report) + compile_signatures(report)


def compile_signatures(report: Callable[[str], Any] | None = None) -> int:
    """Compiles the signatures of shipped functions that programs call with shapes of their
    own (``run_errors.BROADCAST_SIGNATURES``) but the corpus may not; returns how many."""
    start = time.perf_counter()
    for lengths in run_errors.BROADCAST_SIGNATURES:
        function = getattr(checks, f"broadcast_shape_{len(lengths)}")
        function.compile((types.int64, *[types.UniTuple(types.int64, n) for n in lengths]))
    if report is not None:
        report(f"broadcast checks ({len(run_errors.BROADCAST_SIGNATURES)} signatures): "
               f"{time.perf_counter() - start:.2f} s")
    return len(run_errors.BROADCAST_SIGNATURES)


def compile_cases(corpus: Iterable[tuple[Callable, tuple]],
                  report: Callable[[str], Any] | None = None) -> int:
    """Converts and compiles each (function, arguments) of ``corpus``; returns how many."""
    count = 0
    for fn, args in corpus:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the corpus' own (e.g. float32 promotions)
            api.convert(fn, target="cpu").compile(*args)
        count += 1
        if report is not None:
            report(f"{fn.__name__[1:]} ({', '.join(_describe(a) for a in args)}): "
                   f"{time.perf_counter() - start:.2f} s")
    return count


def _describe(value: object) -> str:
    return f"{value.dtype}{list(value.shape)}" if isinstance(value, np.ndarray) else repr(value)
