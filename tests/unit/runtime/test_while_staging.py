"""A ``while`` whose test is true as Python at first, inside a trace (``while t < t_end`` from
``t = 0.0``), is staged whole when its state holds a staged value (or the loop uses one from
outside it) and one iteration run as Python would make its test staged: one loop body in the
program instead of a first iteration plus the loop. A test driven by Python counters only
(``while n < 4``) still runs as Python (unrolled). Each program is compared with
plain Python (values, dtypes, Python result types, stdout); the IR says how the loop was staged.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_staging_support import assert_same_outcome

import autostage

TARGETS = ["interpreter", "cpu"]


def until_time(x, t_end):
    """An adaptive-step loop: ``t`` starts as a Python float, the body makes it staged."""
    t = 0.0
    steps = 0
    while t < t_end:
        x = x * 0.5 + 1.0
        t = t + np.sqrt(x.sum()) * 0.1
        steps += 1
    return x, t, steps


def until_converged(x):
    """Newton on a vector: the tolerance test starts as Python ``inf > tol``."""
    err = np.inf
    it = 0
    while err > 1e-10 and it < 50:
        x = 0.5 * (x + 2.0 / x)
        err = np.abs(x * x - 2.0).max()
        it += 1
    return x, it


def assigned_in_the_loop(x, t_end):
    """``y`` is unbound before the loop, which runs at least once (its test was true)."""
    t = 0.0
    while t < t_end:
        y = x * t
        x = x + 0.5
        t = t + np.abs(x).max()
    return y, t


def printing(x, t_end):
    t = 0.0
    k = 0
    while t < t_end:
        print("step", k, t)
        t = t + x.max()
        k += 1
    return t


def python_counter(x):
    """The test stays Python after an iteration: unrolled, ``n`` a Python int after it."""
    n = 0
    while n < 4:
        x = x * 2.0
        n += 1
    return np.zeros(n) + x.sum(), n


def appended(x, t_end):
    t = 0.0
    sums = []
    while t < t_end:
        sums.append(x.sum())
        x = x + 1.0
        t = t + x.max()
    return np.array(sums), len(sums)


def fit_from_python_start(t, y, a0, tol):
    """No staged value in the state before the loop (a NumPy array of Python floats, Python
    numbers): the body updates it from the arguments."""
    params = np.array([a0, 0.0])
    err = np.inf
    it = 0
    while err > tol and it < 100:
        r = y - params[0] - params[1] * t
        step = np.array([r.mean(), (r * t).mean() / (t * t).mean()])
        params = params + 0.5 * step
        err = np.abs(step).max()
        it += 1
    return params, it


def python_array_doubling(x):
    """Python values only in the loop (a NumPy array made while tracing): unrolled as Python."""
    v = np.array([1.0])
    while v[0] < 8.0:
        v = v * 2.0
    return x + v


PROGRAMS = [
    (until_time, (np.ones(3), 2.0)), (until_converged, (np.array([1.0, 3.0, 0.5]),)),
    (assigned_in_the_loop, (np.arange(1.0, 4.0), 10.0)), (printing, (np.ones(2), 3.5)),
    (python_counter, (np.ones(2),)), (appended, (np.ones(2), 20.0)),
    (fit_from_python_start, (np.linspace(0.0, 1.0, 9), np.linspace(1.0, 3.0, 9), 0.5, 1e-9)),
    (python_array_doubling, (np.ones(2),)),
]



@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn,args", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_same_as_python(fn, args, target, capsys):
    want = fn(*args)
    printed = capsys.readouterr().out
    assert_same_outcome(want, autostage.convert(fn, target=target)(*args), 1e-12)
    assert capsys.readouterr().out == printed


def _ir(fn, *args) -> str:
    return autostage.convert(fn, target="interpreter").ir(*args)


@pytest.mark.parametrize("fn,args", [PROGRAMS[0], PROGRAMS[1], PROGRAMS[2], PROGRAMS[6]],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_a_test_the_body_makes_staged_is_one_loop_body(fn, args):
    text = _ir(fn, *args)
    assert text.count(" = while ") == 1
    # the body's operations appear once (before: once for the first iteration, once in the
    # loop)
    body_op = {until_time: "sqrt", until_converged: "true_divide",
               assigned_in_the_loop: "absolute", fit_from_python_start: "absolute"}[fn]
    assert text.count(f" = {body_op} ") == 1, text


def test_a_python_counter_still_unrolls():
    text = _ir(python_counter, np.ones(2))
    assert " = while " not in text and text.count(" = multiply ") == 4, text
    text = _ir(python_array_doubling, np.ones(2))
    assert " = while " not in text and " = multiply " not in text, text
