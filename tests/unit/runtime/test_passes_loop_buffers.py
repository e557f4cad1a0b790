"""Buffer reuse of loop temporaries (runtime/passes/loop_buffers.py) and its cpu lowering.

Soundness: a temporary that outlives its iteration (carried, appended to a list, a view of it
appended, returned through a call or a branch, returned by the function) is never marked, and
every program gives plain Python's result on both targets. Effect: the temporaries of an ODE
step are marked and live in buffers made at the function's start.
"""

import numpy as np
import pytest
from autostage.runtime.backends.cpu import compile as cpu_compile
from autostage.runtime.function import optimized
from autostage.runtime.passes import loop_buffers

import autostage
from autostage import config

TARGETS = ("interpreter", "cpu")


def reused(fn, *args):
    """For each allocating op, in program order: (op name, marked for reuse); sizes unknown
    (with known ones, a small ``zeros_like`` is a constant: nothing to allocate)."""
    with config.STATIC_SIZES.override(0):
        module = autostage.convert(fn, target="cpu").get_concrete_function(*args).module
    module = optimized(module)
    return [(op.name, bool(op.attrs.get(loop_buffers.MARK)))
            for op in module.main.body.walk() if op.name in loop_buffers.ALLOCATING]


def check(fn, *args, target):
    expected = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    got = autostage.convert(fn, target=target)(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)


# -- temporaries of one iteration: marked --------------------------------------------------------

def iteration_temporaries(x, n):
    total = 0.0
    for i in range(n):
        t = x * i + 1.0
        z = np.zeros_like(x)
        z[0] = t[0]
        total += np.sum(t) + np.sum(z)
    return total


def growing_temporaries(n):
    total = 0.0
    for i in range(n):
        t = np.ones(i + 1) * i  # a new shape every iteration: the buffer is made again
        total += np.sum(t * t)
    return total


# -- temporaries that outlive the iteration: never marked ----------------------------------------

def carried(x, n):
    for _ in range(n):
        x = x * 2.0 + 1.0
    return x


def appended(x, n):
    out = []
    for i in range(n):
        out.append(x + i)
    return np.stack(out)


def view_appended(x, n):
    out = []
    for i in range(n):
        t = x + i
        out.append(t[1:])
    return np.stack(out)


def kept_by_branch(x, n):
    keep = x.copy()
    for i in range(n):
        t = x * i
        if i % 2 == 0:
            keep = t
    return keep


def appended_in_branch(x, n):
    out = [x]
    for i in range(n):
        t = x - i
        if i > 1:
            out.append(t)
    return np.stack(out)


def last_temp_after_loop(x, n):
    t = x
    i = 0
    while i < n:
        t = np.full(x.shape, 1.0 * i)
        i += 1
    return t


def _pass_through(v):
    return v


def returned_by_call(x, n):
    out = []
    for i in range(n):
        out.append(_pass_through(x + i))
    return np.stack(out)


SOUND = [
    (carried, [("fused", False)]),
    (appended, [("fused", False)]),
    (view_appended, [("fused", False)]),
    (kept_by_branch, [("fused", False)]),
    (appended_in_branch, [("fused", False)]),
    (last_temp_after_loop, [("full", False)]),
    (returned_by_call, [("fused", False)]),
]


@pytest.mark.parametrize("fn,expected", SOUND, ids=[f.__name__ for f, _ in SOUND])
def test_values_that_outlive_the_iteration_are_not_marked(fn, expected):
    args = (np.arange(4.0), np.int64(5))
    assert reused(fn, *args) == expected


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [f for f, _ in SOUND] + [iteration_temporaries],
                         ids=lambda f: f.__name__)
def test_results_are_pythons(fn, target):
    check(fn, np.arange(4.0), np.int64(5), target=target)


@pytest.mark.parametrize("target", TARGETS)
def test_a_buffer_whose_shape_changes_is_made_again(target):
    check(growing_temporaries, np.int64(6), target=target)
    # np.ones(i + 1) reuses its buffer; `* i`, read twice by `t * t`, fuses into the sum, which
    # allocates nothing
    assert reused(growing_temporaries, np.int64(6)) == [("full", True), ("fused", False)]


def test_temporaries_of_an_iteration_are_marked():
    marks = reused(iteration_temporaries, np.arange(4.0), np.int64(5))
    assert ("fused", True) in marks and ("full_like", True) in marks, marks
    assert all(mark for _name, mark in marks), marks


def test_allocations_outside_loops_are_not_marked():
    def once(x):
        t = x * 2.0 + 1.0
        return np.sum(t)

    assert reused(once, np.arange(3.0)) == [("fused", False)]


def test_cpu_code_makes_the_buffer_once_and_again_only_on_a_new_shape():
    fn = autostage.convert(iteration_temporaries, target="cpu")
    module = optimized(fn.get_concrete_function(np.arange(4.0), np.int64(5)).module)
    source = cpu_compile.generate(module).source
    body = source[source.index("def f_iteration_temporaries"):]
    prologue = body.splitlines()[1]
    assert "= np.empty((0,), np.float64)" in prologue
    assert ".shape[0] != " in body


def test_the_pass_clears_a_stale_mark():
    module = optimized(autostage.convert(carried, target="cpu").get_concrete_function(
        np.arange(3.0), np.int64(2)).module)
    fused = next(op for op in module.main.body.walk() if op.name == "fused")
    fused.attrs[loop_buffers.MARK] = True
    assert loop_buffers.run(module) is True
    assert loop_buffers.MARK not in fused.attrs
    assert loop_buffers.run(module) is False
