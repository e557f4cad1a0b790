"""Int indexes a loop keeps within an array's size lose their bounds test (and an index never
negative its wrap); every index that may be out of range keeps its test, and raises NumPy's
IndexError (passes/int_facts.py, backends/cpu/lower_indexing.py)."""

import numpy as np
import pytest
from autostage.runtime import ir
from autostage.runtime.passes.int_facts import COUNTER_LIMIT, IntFacts
from autostage.runtime.passes.shape_facts import ShapeFacts
from autostage.runtime.targets import optimized
from test_passes_support import staged

import autostage


def _tested(fn, *args) -> int:
    """How many bounds tests (failing sites) the generated code of ``fn`` has."""
    return autostage.convert(fn).backend_source(*args).count("raise IndexError('unreachable')")


def _same(fn, *args):
    np.testing.assert_array_equal(autostage.convert(fn)(*args), fn(*args))


def forward(x):
    total = 0.0
    for t in range(1, x.shape[0]):
        total += x[t] - x[t - 1]
    return total


def rows(w):
    total = 0.0
    for r in w:
        total += r[0] * r[-1]
    return total


def zipped(x, y):
    total = 0.0
    for i, (a, b) in enumerate(zip(x, y, strict=False)):
        total += a * b * i + x[i] * y[i]
    return total


def backwards(x):
    total = 0.0
    for t in range(x.shape[0] - 1, 0, -1):
        total += x[t] * t
    return total


def static_rows(lp):
    best = np.zeros(lp.shape[1])
    for t in range(4):
        best = np.maximum(best, lp[t])
    return best


def row_sums_in_place(a):
    out = np.zeros(a.shape[0])
    for i in range(len(a)):
        out[i] = a[i].sum()
    return out


@pytest.mark.parametrize("fn, args", [
    (forward, (np.linspace(0.0, 1.0, 9) ** 2,)),
    (forward, (np.linspace(0.0, 1.0, 40) ** 2,)),
    (rows, (np.arange(12.0).reshape(4, 3),)),
    (rows, (np.arange(120.0).reshape(40, 3),)),
    (zipped, (np.arange(5.0), np.arange(7.0))),
    (zipped, (np.arange(40.0), np.arange(43.0))),
    (backwards, (np.arange(40.0),)),
    (static_rows, (np.arange(20.0).reshape(4, 5),)),
    (row_sums_in_place, (np.arange(160.0).reshape(40, 4),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_indexes_a_loop_keeps_in_range_have_no_test(fn, args):
    """Sizes known to the trace (small arrays) or not (over 16 elements)."""
    assert _tested(fn, *args) == 0
    _same(fn, *args)


N = 40  # over 16 elements: the trace leaves the sizes unknown (static sizes decide it alone)


def other_array(x, y):
    total = 0.0
    for i in range(len(x)):
        total += x[i] * y[i]  # y may be shorter: its test stays
    return total


def past_the_end(x):
    total = 0.0
    for i in range(len(x) + 1):
        total += x[i]
    return total


def stepped_first(x):
    i = 0
    total = 0.0
    while i < len(x):
        i += 1
        total += x[i]  # i is len(x) at the last step
    return total


def shrinking(x):
    i = 0
    total = 0.0
    while i < len(x):
        x = x[1:]
        total += x[i]  # a new, shorter array: tested
        i += 1
    return total


def counting_down(x):
    i = len(x) - 1
    total = 0.0
    while i >= -1:
        total += x[i]  # x[-1]: wraps, as in NumPy
        i -= 1
    return total


def branch_index(x, k):
    total = 0.0
    for i in range(len(x)):
        j = i + k if i % 2 == 0 else i
        total += x[j]
    return total


@pytest.mark.parametrize("fn, args, sites", [
    (other_array, (np.arange(float(N)), np.arange(N + 2.0)), 1),
    (past_the_end, (np.arange(float(N)),), 1),
    (stepped_first, (np.arange(float(N)),), 1),
    (shrinking, (np.arange(N + 0.0),), 1),
    (counting_down, (np.arange(float(N)),), 1),
    (branch_index, (np.arange(float(N)), np.int64(0)), 1),
], ids=lambda v: getattr(v, "__name__", ""))
def test_indexes_that_may_be_out_of_range_keep_their_test(fn, args, sites):
    assert _tested(fn, *args) == sites
    if fn not in (past_the_end, stepped_first):
        _same(fn, *args)


@pytest.mark.parametrize("fn, args", [
    (other_array, (np.arange(N + 2.0), np.arange(float(N)))),
    (past_the_end, (np.arange(float(N)),)),
    (stepped_first, (np.arange(float(N)),)),
    (shrinking, (np.arange(N + 1.0),)),
    (counting_down, (np.arange(0.0),)),
    (branch_index, (np.arange(float(N)), np.int64(3))),
], ids=lambda v: getattr(v, "__name__", ""))
def test_and_raise_as_numpy_does(fn, args):
    with pytest.raises(IndexError) as expected:
        fn(*args)
    with pytest.raises(IndexError) as got:
        autostage.convert(fn)(*args)
    assert str(got.value).splitlines()[0] == str(expected.value)


def table(a, b):
    """Edit distance's DP table: ``i < n + 1`` (the ``+ 1`` past its overflow test) makes
    ``a[i - 1]`` in range, the table's own axes ``d[i - 1, j]`` and ``d[i, j - 1]``."""
    n, m = a.shape[0], b.shape[0]
    d = np.zeros((n + 1, m + 1))
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost = 0.0 if a[i - 1] == b[j - 1] else 1.0
            d[i, j] = min(d[i - 1, j] + 1.0, d[i, j - 1] + 1.0, d[i - 1, j - 1] + cost)
    return d


def one_past(a):
    total = 0.0
    for i in range(1, a.shape[0] + 1):
        total += a[i]  # i reaches n: tested
    return total


def _loop_tests(fn, *args) -> int:
    source = autostage.convert(fn).backend_source(*args)
    return source[source.index("while True:"):].count("raise IndexError('unreachable')")


def test_an_offset_bound_keeps_its_indexes_in_range():
    a, b = np.arange(40.0) % 3, np.arange(45.0) % 4
    assert _loop_tests(table, a, b) == 0
    _same(table, a, b)
    assert _loop_tests(one_past, np.arange(40.0)) == 1
    with pytest.raises(IndexError, match="index 40 is out of bounds for axis 0 with size 40"):
        autostage.convert(one_past)(np.arange(40.0))


def history(x, n):
    hist = []
    for i in range(n):
        hist.append(x * i)
    total = 0.0
    for i in range(len(hist) - 1, -1, -1):  # L-BFGS's backwards pass over its history
        total += hist[i].sum()
    for i in range(len(hist)):
        total += hist[i][0] + hist[-1][1]  # hist[-1]: the list may be empty, tested
    return total


def popping(xs):
    items = [x * 2.0 for x in xs]
    total, i = 0.0, 0
    while i < len(items):
        items.pop()
        total += items[i]  # another list value, shorter: tested
        i += 1
    return total


def other_list(xs, n):
    items = [x for x in xs]
    total = 0.0
    for i in range(n):
        total += items[i]
    return total


@pytest.mark.parametrize("fn, args, tests", [
    (history, (np.arange(40.0), np.int64(5)), 1),
    (popping, (np.arange(4.0),), 1),
    (other_list, (np.arange(5.0), np.int64(3)), 1),
], ids=lambda v: getattr(v, "__name__", ""))
def test_list_reads_a_loop_keeps_in_range_have_no_test(fn, args, tests):
    source = autostage.convert(fn).backend_source(*args)
    assert source.count("list index out of range") == tests
    _same(fn, *args)


@pytest.mark.parametrize("fn, args", [
    (popping, (np.arange(5.0),)),
    (other_list, (np.arange(5.0), np.int64(6))),
], ids=lambda v: getattr(v, "__name__", ""))
def test_list_reads_out_of_range_raise_as_python_does(fn, args):
    with pytest.raises(IndexError, match="list index out of range"):
        fn(*args)
    with pytest.raises(IndexError, match="list index out of range"):
        autostage.convert(fn)(*args)


def _facts(fn, *args):
    function = optimized(ir.copy_module(staged(fn, *args))).main
    (loop,) = [op for op in function.body.ops if op.name == "while"]
    return function, loop, IntFacts(function, ShapeFacts(function))


def test_a_loop_index_counting_up_from_zero_stays_nonnegative_and_below_the_bound():
    function, loop, facts = _facts(forward, np.arange(5.0))
    counter = loop.regions[1].args[0]
    assert facts.interval(counter) == (0, COUNTER_LIMIT)
    assert facts.interval(loop.results[0]) == (0, COUNTER_LIMIT)  # the exit value too
    x = function.body.args[0]
    (t, t_minus_1) = [op.operands[1] for op in loop.regions[1].ops if op.name == "getitem"]
    assert facts.interval(t) == (1, COUNTER_LIMIT)  # 1 + i: a counter too
    assert facts.interval(t_minus_1) == (0, COUNTER_LIMIT - 1)
    assert facts.within(t, x, 0) and facts.within(t_minus_1, x, 0)
    assert not facts.within(counter, x, 0)  # i itself is not tested: i < len(x) - 1


def test_a_static_bound_gives_the_index_its_interval():
    function, loop, facts = _facts(static_rows, np.arange(20.0).reshape(4, 5))
    assert facts.interval(loop.regions[1].args[0]) == (0, 3)
    assert facts.interval(loop.results[0]) == (0, COUNTER_LIMIT)
