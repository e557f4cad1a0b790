"""The in-place marking of setitem (runtime/passes/inplace.py) and the writes it enables.

Soundness: programs whose IR still reads the old value of a written array (CSE twins, initial
values used after a loop, values yielded by branches, overlapping self-assignment, writes into
arrays captured by loops) give plain Python's results on both targets. Effect: the DP, sieve and
trajectory patterns are marked in place and their cpu code has no copy of the table.
"""

import numpy as np
import pytest
from autostage.runtime import op_registry
from autostage.runtime.backends.cpu import compile as cpu_compile
from autostage.runtime.function import optimized
from autostage.runtime.passes import inplace

import autostage

TARGETS = ("interpreter", "cpu")


def check(fn, *args, target):
    expected = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    got = autostage.convert(fn, target=target)(*args)
    if isinstance(expected, tuple):
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_array_equal(g, e)
    else:
        np.testing.assert_array_equal(got, expected)
    return got


def marks(fn, *args):
    """The (in_place, copy_value) of each setitem, in program order, after the cpu passes."""
    module = optimized(autostage.convert(fn, target="cpu").get_concrete_function(*args).module)
    return [(bool(op.attrs.get("in_place")), bool(op.attrs.get("copy_value")))
            for op in module.main.body.walk() if op.name == "setitem"]


def cpu_source(fn, *args):
    module = autostage.convert(fn, target="cpu").get_concrete_function(*args).module
    return cpu_compile.generate(optimized(module)).source


# -- the old value is still read (after CSE merged two equal arrays): the write must copy ------
# (Twins of an element-wise op: CSE keeps new arrays, np.zeros and the like, apart.)

def cse_twins(n):
    z = np.zeros(n)
    a = z + 0.0
    b = z + 0.0
    a[0] = 1.0
    return a, b


def cse_twins_in_loop(n):
    z = np.zeros(n)
    a = z + 0.0
    b = z + 0.0
    for i in range(n):
        a[i] = i
    return a, b


def twin_after_loop(n):
    z = np.zeros(n)
    x = z + 0.0
    base = z + 0.0
    i = 0
    while i < n:
        x[i] = x[i - 1] + 1.0
        i += 1
    return x + base


def twin_in_branch(n, c):
    o = np.ones(n)
    a = o + 0.0
    b = o + 0.0
    if c > 0:
        a[1] = 5.0
    return a - b


def twin_read_in_later_branch(n, c):
    o = np.ones(n)
    a = o + 0.0
    b = o + 0.0
    a[0] = 3.0
    if c > 0:
        b = b * 2.0
    return a, b


def twin_yielded_by_cond(n, c):
    z = np.zeros(n)
    o = np.ones(n)
    a = z + 0.0
    b = z + 0.0
    y = a if c > 0 else o + 0.0
    y[0] = 7.0
    return y, b


def twin_carried_swap(n):
    z = np.zeros(n)
    a = z + 0.0
    b = z + 0.0
    c = z + 0.0
    for i in range(n):
        a[i] = i + 1.0
        a, b = b, a
    return a, b, c


def twin_captured_by_loop(n):
    z = np.zeros(n)
    a = z + 0.0
    total = 0.0
    for i in range(n):
        b = z + 0.0  # CSE may make it the captured `a`
        b[i] = i + 1.0
        total += b.sum() + a[i]
    return a, total


def twin_captured_by_nested_loops(n):
    zz = np.zeros((n, n))
    a = zz + 0.0
    total = 0.0
    for i in range(n):
        for j in range(n):
            b = zz + 0.0
            b[i, j] = 1.0 + i
            if b[i, j] > 1.0:
                b[j, i] = 2.0
            total += b.sum()
    return a, total


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, args", [
    (cse_twins, (np.int64(4),)),
    (cse_twins_in_loop, (np.int64(4),)),
    (twin_after_loop, (np.int64(5),)),
    (twin_in_branch, (np.int64(3), np.int64(1))),
    (twin_in_branch, (np.int64(3), np.int64(0))),
    (twin_read_in_later_branch, (np.int64(3), np.int64(1))),
    (twin_yielded_by_cond, (np.int64(3), np.int64(1))),
    (twin_yielded_by_cond, (np.int64(3), np.int64(0))),
    (twin_carried_swap, (np.int64(5),)),
    (twin_captured_by_loop, (np.int64(4),)),
    (twin_captured_by_nested_loops, (np.int64(3),)),
], ids=lambda v: getattr(v, "__name__", None))
def test_old_value_still_read_gives_pythons_result(fn, args, target):
    check(fn, *args, target=target)


def test_a_twin_read_after_the_write_keeps_the_copy():
    assert marks(cse_twins, np.int64(4)) == [(False, False)]
    assert (False, False) in marks(twin_after_loop, np.int64(5))


# -- overlap: the value reads the written array ------------------------------------------------

def shift_right(n):
    x = np.arange(n) * 1.0
    x[1:] = x[:-1]
    return x


def shift_left(n):
    x = np.arange(n) * 1.0
    x[:-1] = x[1:]
    return x


def reverse_into_itself(n):
    x = np.arange(n) * 1.0
    x[::-1] = x
    return x


def row_from_row(n):
    a = np.arange(n * 3).reshape(n, 3) * 1.0
    a = a + 0.0
    for i in range(1, n):
        a[i] = a[i - 1]
    return a


def column_from_column(n):
    a = np.arange(n * 3).reshape(n, 3) + 0
    a[:, 0] = a[:, 2]
    return a


def fancy_overlap(n):
    x = np.arange(n) * 2.0
    idx = np.arange(n)[::-1]
    x[idx] = x
    return x


def mask_write(n):
    x = np.arange(n) - 3
    x[x > 0] = 0
    x[x < -1] = x[x < -1] * 10
    return x


def repeated_fancy_index(n):
    x = np.zeros(n)
    x[np.array([0, 0, 1])] = np.array([1.0, 2.0, 3.0])
    return x


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [shift_right, shift_left, reverse_into_itself, row_from_row,
                                column_from_column, fancy_overlap, mask_write,
                                repeated_fancy_index],
                         ids=lambda f: f.__name__)
def test_overlapping_writes_keep_numpys_semantics(fn, target):
    check(fn, np.int64(6), target=target)


def test_a_value_viewing_the_target_is_copied_not_the_target():
    assert marks(shift_right, np.int64(6)) == [(True, True)]
    assert (True, True) in marks(row_from_row, np.int64(4))
    source = cpu_source(shift_right, np.int64(6))
    body = source[source.index("def f_shift_right"):]
    # the target is written in place; the write's helper reads an overlapping value whole first
    # (backends/cpu/array_writes.py), so nothing is copied unless the two overlap
    assert "cpu_new.copy(" not in body and "h_assign_1_1(view" in body


# -- the patterns that must write in place ---------------------------------------------------

def edit_distance(a, b):
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


def sieve(n):
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


def accumulate(n, v):
    x = np.zeros((n, 2))
    for i in range(n):
        for j in range(2):
            x[i, j] += v[i] * (j + 1)
    return x


def trajectory(y0, n):
    y = y0.copy()
    ys = []
    for _ in range(n):
        y[0] += 0.5 * y[1]
        y[1] -= 0.1 * y[0]
        ys.append(y.copy())
    return np.stack(ys)


def block_write(n):
    x = np.zeros(n)
    for i in range(0, n, 2):
        x[i:i + 2] = np.ones(2) * i
    return x


@pytest.mark.parametrize("target", TARGETS)
def test_in_place_patterns_give_pythons_result(target):
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 3, 9), rng.integers(0, 3, 7)
    assert check(edit_distance, a, b, target=target) == edit_distance(a, b)
    check(sieve, np.int64(50), target=target)
    check(accumulate, np.int64(4), np.arange(4.0), target=target)
    check(trajectory, np.array([1.0, 0.5]), np.int64(5), target=target)
    check(block_write, np.int64(6), target=target)


@pytest.mark.parametrize("fn, args", [
    (edit_distance, (np.arange(3), np.arange(4))),
    (sieve, (np.int64(10),)),
    (accumulate, (np.int64(3), np.arange(3.0))),
    (trajectory, (np.ones(2), np.int64(3))),
    (block_write, (np.int64(4),)),
], ids=lambda v: getattr(v, "__name__", None))
def test_dead_targets_are_written_in_place(fn, args):
    assert marks(fn, *args) and all(m == (True, False) for m in marks(fn, *args))


def test_the_dp_table_is_not_copied_in_cpu_code():
    source = cpu_source(edit_distance, np.arange(3), np.arange(4))
    assert "cpu_new.copy(" not in source
    assert "] = " in source  # the writes themselves


def test_sieve_writes_from_a_branch_inside_a_loop_in_place():
    source = cpu_source(sieve, np.int64(10))
    assert "cpu_new.copy(" not in source


# -- what never writes in place ----------------------------------------------------------------

def write_param(x):
    y = x * 1.0
    y[0] = 1.0
    return y


def write_list_item(n):
    rows = []
    for i in range(n):
        rows.append(np.zeros(2) + i)
    r = rows[0]
    r = r.copy()
    r[0] = 9.0
    return r, np.stack(rows)


@pytest.mark.parametrize("target", TARGETS)
def test_list_items_give_pythons_result(target):
    check(write_list_item, np.int64(3), target=target)


def test_only_declared_ops_return_fresh_buffers():
    for name in ("constant", "reshape", "transpose", "broadcast_to", "call", "list_get",
                 "list_append", "var_read", "cond", "while", "diag", "positive"):
        assert not op_registry.lookup(name).fresh_results, name
    assert marks(write_param, np.ones(3)) == [(True, False)]  # x * 1.0 is fresh


def test_stale_marks_are_recomputed():
    module = autostage.convert(cse_twins, target="cpu").get_concrete_function(
        np.int64(3)).module
    module = optimized(module)
    (write,) = [op for op in module.main.body.walk() if op.name == "setitem"]
    write.attrs["in_place"] = True
    assert inplace.run(module) is True
    assert "in_place" not in write.attrs


def test_a_value_captured_by_a_loop_body_is_never_written_in_place():
    module = optimized(autostage.convert(twin_captured_by_loop, target="cpu")
                       .get_concrete_function(np.int64(3)).module)
    (write,) = [op for op in module.main.body.walk() if op.name == "setitem"]
    assert write.operands[0].region is module.main.body  # CSE made `b` the captured `a`
    assert "in_place" not in write.attrs
    module = optimized(autostage.convert(twin_captured_by_nested_loops, target="cpu")
                       .get_concrete_function(np.int64(3)).module)
    first, second = [op for op in module.main.body.walk() if op.name == "setitem"]
    assert first.operands[0].region is module.main.body and "in_place" not in first.attrs
    assert second.attrs.get("in_place") is True  # the copy, written again in a branch


# -- lists: the last use of a list reuses its object (an append in one branch of an `if`) ------

def append_when(xs, limit):
    kept = []
    dropped = []
    for x in xs:
        if x > limit:
            kept.append(x)
        else:
            dropped.append(x * 2.0)
        if len(dropped) > 3:
            dropped.pop(0)
    return np.array(kept), np.array(dropped)


def accepted_steps(y0, n):
    y = y0.copy()
    ts = [0.0]
    ys = [y]
    t = 0.0
    for i in range(n):
        y_new = y * 0.9 + 1.0
        if y_new[0] < 5.0 or i % 2 == 0:
            t = t + 1.0
            y = y_new
            ts.append(t)
            ys.append(y)
    return np.array(ts), np.stack(ys)


@pytest.mark.parametrize("target", TARGETS)
def test_lists_updated_in_branches_give_pythons_result(target):
    check(append_when, np.array([3.0, -1.0, 4.0, 0.5, 9.0, -2.0, 6.0, 0.0]), np.float64(1.0),
          target=target)
    check(accepted_steps, np.array([1.0, 2.0]), np.int64(12), target=target)


def test_lists_appended_in_a_branch_are_not_copied():
    # Before the loop: one empty list copied once (CSE made `kept` and `dropped` one value).
    loop = cpu_source(append_when, np.ones(3), np.float64(1.0)).partition("while True:")[2]
    assert loop and "cpu_new.copy(" not in loop
    loop = cpu_source(accepted_steps, np.ones(2), np.int64(3)).partition("while True:")[2]
    assert loop and "cpu_new.copy(" not in loop
