"""Staged helpers that write into their array arguments (``staged_calls._write_back``).

In Python a helper's ``p[i] = v`` changes the caller's array. A staged callee returns the
argument's final state as one more result of its ``call`` op, and the caller's tensor (the
object its names hold) takes it; staged ifs and loops around the call carry the change. Each case
is compared with Python on the arguments, the results and their identity.
"""

from __future__ import annotations

import numpy as np
import pytest
from autostage.runtime import tracing

import autostage

TARGETS = ["interpreter", "cpu"]


def _sift(p, i, n):
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


def heapsort(p):  # the helper is called in two loops, with the array and a staged index
    n = len(p)
    for s in range(n // 2 - 1, -1, -1):
        _sift(p, s, n)
    for e in range(n - 1, 0, -1):
        t = p[0]
        p[0] = p[e]
        p[e] = t
        _sift(p, 0, e)
    return p


def _swap(v, i, j):
    t = v[i]
    v[i] = v[j]
    v[j] = t


def _partition(v, lo, hi):
    pivot = v[hi]
    i = lo
    for j in range(lo, hi):
        if v[j] < pivot:
            _swap(v, i, j)
            i += 1
    _swap(v, i, hi)
    return i


def _quicksort(v, lo, hi):  # staged recursion writing into its argument
    if lo < hi:
        k = _partition(v, lo, hi)
        _quicksort(v, lo, k - 1)
        _quicksort(v, k + 1, hi)


def quicksort(x):
    v = x * 1.0  # a new array, written by the helpers
    _quicksort(v, 0, v.shape[0] - 1)
    return v


def _scale(v, k):
    v *= k
    return v


def scale_returned(x, out):  # `out = f(out)`: the helper's result is the argument itself
    out[0] = x[0]
    out = _scale(out, 2.0)
    out[1] = 5.0
    return out


def _fill_from(v, x):
    for i in range(v.shape[0]):
        v[i] = x[i] + 1.0


def fill_in_branch(x, out):  # the write happens on one path of a staged if
    if x.sum() > 0:
        _fill_from(out, x)
    return out.sum()


def same_object(x):  # `old` is the same array as `v`: it sees the helper's write
    v = x + 1.0
    old = v
    _swap(v, 0, 1)
    return old[0] + v[1]


CASES = {
    "heapsort": (heapsort, lambda: (np.random.default_rng(1).standard_normal(33),)),
    "heapsort_ints": (heapsort, lambda: (np.array([3, 1, 2, 3, 0, -5, 7], np.int64),)),
    "quicksort": (quicksort, lambda: (np.random.default_rng(2).standard_normal(20),)),
    "scale_returned": (scale_returned, lambda: (np.arange(1.0, 4.0), np.ones(3))),
    "fill_then": (fill_in_branch, lambda: (np.arange(3.0), np.zeros(3))),
    "fill_else": (fill_in_branch, lambda: (-np.arange(3.0), np.zeros(3))),
    "same_object": (same_object, lambda: (np.arange(3.0),)),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", CASES)
def test_a_helper_writing_into_its_argument_is_pythons(case, target):
    fn, make = CASES[case]
    staged = autostage.convert(fn, target=target)
    for _ in range(2):  # the second call takes the cached trace
        plain_args, staged_args = make(), make()
        expected = fn(*plain_args)
        got = staged(*staged_args)
        assert type(got) is type(expected) and np.array_equal(got, expected), (got, expected)
        for p, s in zip(plain_args, staged_args, strict=True):
            assert p.dtype == s.dtype and np.array_equal(s, p), (s, p)
        assert [got is a for a in staged_args] == [expected is a for a in plain_args]


def test_the_helper_writes_into_the_callers_buffer():
    """The call hands the helper the array it writes (``in_place_args``), no copy per call."""
    staged = autostage.convert(heapsort, target="cpu")
    x = np.random.default_rng(3).standard_normal(50)
    module = staged.get_concrete_function(x).module
    assert "call" in {op.name for op in module.main.body.walk()}
    compiled = autostage.runtime.targets.TARGETS["cpu"].optimize(
        autostage.runtime.ir.copy_module(module))
    calls = [op for op in compiled.main.body.walk() if op.name == "call"]
    assert calls and all(op.attrs.get("in_place_args") == (0,) for op in calls)


def _identity(a):
    return a


def _tail(a):
    return a[1:]


def read_returned_after_write(x):  # Python: q is p, so q[0] is 100
    p = x * 2.0
    q = _identity(p)
    p[0] = 100.0
    return q[0]


def read_view_after_write(x):  # Python: q views p, so q[0] is 100
    p = x * 2.0
    q = _tail(p)
    p[1] = 100.0
    return q[0]


def write_into_returned_view(x):  # Python writes into the caller's x
    q = _tail(x)
    q[0] = 7.0
    return x


def pass_twice(x):
    v = x + 0.0
    _swap_pair(v, v)
    return v


def _swap_pair(a, b):
    a[0] = b[1]


def write_through_view(x):
    v = x + 0.0
    _swap(v[1:], 0, 1)
    return v


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn,message", [
    # these gave the array's old contents before (the call's result was a new array)
    (read_returned_after_write, r"`p` was changed in place at .*test_callee_writes.py:\d+, but "
                                r"an older reference to the same array \(`q`\)"),
    (read_view_after_write, r"`p` was changed in place at .*, but an older reference"),
    (write_into_returned_view, r"changes the argument `x` through a view of it"),
    (pass_twice, r"test_callee_writes.py:\d+: `_swap_pair` writes into its parameter `a`, and "
                 r"this call passes it an array that another of its arguments is too"),
    (write_through_view, r"test_callee_writes.py:\d+: this call of `_swap` \(which writes into "
                         r"its parameter `v`\) writes through a view of another array"),
])
def test_what_a_helper_cannot_write_back_is_a_clear_error(fn, message, target):
    x = np.arange(4.0)
    with pytest.raises(tracing.StagingError, match=message):
        autostage.convert(fn, target=target)(x)
    assert np.array_equal(x, np.arange(4.0))


def test_a_function_whose_helpers_write_is_saved_and_loaded(tmp_path):
    """The helpers' writes are results of their calls: the saved module has them."""
    staged = autostage.convert(quicksort, target="cpu")
    x = np.random.default_rng(4).standard_normal(25)
    assert np.array_equal(staged(x), quicksort(x))
    autostage.save(staged, tmp_path / "quicksort.zip")
    loaded = autostage.load(tmp_path / "quicksort.zip")
    y = np.random.default_rng(5).standard_normal(25)
    assert np.array_equal(loaded(y), np.sort(y))


def _mark(t, c):
    t[c] = 1


def marks_with_a_numpy_scalar(table):  # (pynndescent-style: a NumPy scalar constant argument)
    _mark(table, np.int32(1))
    return table.sum()


@pytest.mark.parametrize("target", TARGETS)
def test_a_numpy_scalar_argument_is_staged_into_the_call(target):
    """It ran the helper inline, whose write then left the caller's array stale (refused)."""
    plain, staged = np.zeros(3, np.uint8), np.zeros(3, np.uint8)
    assert autostage.convert(marks_with_a_numpy_scalar, target=target)(staged) == \
        marks_with_a_numpy_scalar(plain)
    assert staged.tolist() == plain.tolist() == [0, 1, 0]


def _accumulate(total, x):
    total += x
    return total


def zero_d_in_a_loop(total, xs):  # Python changes the caller's 0-d array
    for i in range(xs.shape[0]):
        total += xs[i]
    return xs.sum()


def zero_d_through_a_helper(total, xs):
    for i in range(xs.shape[0]):
        total = _accumulate(total, xs[i])
    return total


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [zero_d_in_a_loop, zero_d_through_a_helper])
def test_a_0d_array_argument_changed_in_a_loop_is_a_clear_error(fn, target):
    """(The caller's 0-d array silently kept its value: the loop took `+=` for a rebinding.)"""
    total = np.array(0.0)
    with pytest.raises(tracing.StagingError, match=r"test_callee_writes.py:\d+: this in-place "
                                                   r"operator changes"):
        autostage.convert(fn, target=target)(total, np.arange(4.0))
    assert total == 0.0
