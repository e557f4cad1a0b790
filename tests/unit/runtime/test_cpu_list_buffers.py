"""Lists of arrays or scalars kept as one growing buffer on the cpu target
(backends/cpu/list_buffers.py).

Which lists qualify (only appended, measured and stacked), and that every program, qualifying or
not, gives Python's values and errors: trajectories appended under a branch, a list read after a
loop by len and np.stack, items of different shapes (NumPy's error at np.stack, len exact), an
empty list, copies where an older value of the list is still read.
"""

import numpy as np
import pytest
from autostage.runtime import ir
from autostage.runtime.backends.cpu import compile as cpu_compile
from autostage.runtime.backends.cpu import list_buffers
from autostage.runtime.function import optimized

import autostage

TARGETS = ("interpreter", "cpu")


def module_of(fn, *args) -> ir.Module:
    return optimized(autostage.convert(fn, target="cpu").get_concrete_function(*args).module)


def buffered_ops(fn, *args) -> list[str]:
    """The names of the ops whose list result is kept as a buffer, in program order."""
    main = module_of(fn, *args).main
    found = list_buffers.find(main)
    return [op.name for op in main.body.walk() if any(v in found for v in op.results)]


def run_both(fn, *args, target):
    try:
        expected = fn(*args)
    except (ValueError, IndexError) as error:  # of an empty list: the same error staged
        with pytest.raises(type(error)) as got:
            autostage.convert(fn, target=target)(*args)
        assert str(got.value) == str(error)
        return
    got = autostage.convert(fn, target=target)(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)
        assert np.asarray(g).dtype == np.asarray(e).dtype


def trajectory(y, n):
    ys = [y]
    for i in range(n):
        y = y * 0.5 + i
        if i % 3 != 1:
            ys.append(y)
    return np.stack(ys), len(ys)


def grown_from_empty(x, n):
    rows = []
    i = 0
    while i < n:
        rows.append(x + i)
        i += 1
    return np.stack(rows)


def mixed_shapes_stacked(x, n):
    rows = []
    for i in range(n):
        rows.append(x[:i + 1])
    return np.stack(rows)


def fused_mixed_shapes(x, n):
    """Items computed into their row while they fit (lower_lists.place_row)."""
    rows = []
    for i in range(n):
        rows.append(x[:i % 2 + 1] * 2.0)
    return np.stack(rows)


def mixed_shapes_counted(x, n):
    rows = []
    for i in range(n):
        rows.append(x[:i + 1])
    return len(rows)


def empty_stacked(x, n):
    rows = []
    for _ in range(n):
        rows.append(x)
    return np.stack(rows)


def older_value_read(x, n):
    rows = [x]
    for i in range(n):
        before = len(rows)
        rows.append(x * i)
        if before > 2:
            rows.append(x)
    return np.stack(rows), len(rows)


def indexed(x, n):
    rows = []
    for i in range(n):
        rows.append(x * i)
    return rows[-1] + np.stack(rows).sum(0)


def returned(x, n):
    """Returned as a list of rows: staged code returns the stacked rows (a buffer's stack)."""
    rows = []
    for i in range(n):
        rows.append(x * i)
    return rows


def matrices(x, n):
    """Items of rank 2, strided (a transpose): each is written into its row element by element."""
    m = np.outer(x, x + 1.0)
    rows = [m.T]
    for i in range(n):
        m = m * 0.5 + i
        rows.append(m.T)
    return np.stack(rows), len(rows)


def times(x, n):
    """A trajectory of scalars (accepted step times), as np.array after the loop."""
    t = x[0]
    ts = [t]
    for i in range(n):
        t = t + x[1] * i
        if i % 2 == 0:
            ts.append(t)
    return np.array(ts), len(ts)


def counts(x, n):
    sizes = []
    for i in range(n):
        sizes.append(i * 3)
    return np.array(sizes, dtype=np.int64), len(sizes)


def scalar_read_back(x, n):
    ts = []
    for i in range(n):
        ts.append(x[0] * i)
    return ts[-1] + np.array(ts).sum()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [trajectory, grown_from_empty, older_value_read, indexed,
                                returned, mixed_shapes_counted, matrices, times, counts,
                                scalar_read_back],
                         ids=lambda f: f.__name__)
def test_values_are_pythons(fn, target):
    for n in (0, 1, 7, 40):
        run_both(fn, np.arange(3.0), np.int64(n), target=target)


def test_appended_and_stacked_lists_are_buffers():
    assert "list_append" in buffered_ops(trajectory, np.arange(3.0), np.int64(4))
    assert "list_new" in buffered_ops(grown_from_empty, np.arange(3.0), np.int64(4))
    source = cpu_compile.generate(module_of(trajectory, np.arange(3.0), np.int64(4))).source
    assert "h_buffer_grow" in source and "cpu_list.new(" not in source


def test_matrix_lists_are_buffers_written_in_line():
    assert buffered_ops(matrices, np.arange(3.0), np.int64(4)).count("list_append") == 2
    source = cpu_compile.generate(module_of(matrices, np.arange(3.0), np.int64(4))).source
    assert "h_buffer_grow" in source and "h_assign" not in source


def test_lists_of_scalars_are_buffers():
    assert "list_append" in buffered_ops(times, np.arange(3.0), np.int64(4))
    assert "list_append" in buffered_ops(counts, np.arange(3.0), np.int64(4))
    source = cpu_compile.generate(module_of(times, np.arange(3.0), np.int64(4))).source
    assert "h_buffer_grow" in source and "cpu_list.new(" not in source


def test_lists_read_otherwise_stay_typed_lists():
    assert buffered_ops(indexed, np.arange(3.0), np.int64(4)) == []
    assert buffered_ops(scalar_read_back, np.arange(3.0), np.int64(4)) == []
    assert "list_append" in buffered_ops(returned, np.arange(3.0), np.int64(4))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [mixed_shapes_stacked, fused_mixed_shapes],
                         ids=lambda f: f.__name__)
def test_items_of_another_shape_raise_numpys_error_when_stacked(fn, target):
    with pytest.raises(ValueError) as expected:
        fn(np.arange(5.0), 3)
    staged = autostage.convert(fn, target=target)
    with pytest.raises(ValueError) as got:
        staged(np.arange(5.0), np.int64(3))
    assert str(got.value) == str(expected.value)
    np.testing.assert_array_equal(staged(np.arange(5.0), np.int64(1)), [[0.0]])


@pytest.mark.parametrize("target", TARGETS)
def test_an_empty_list_raises_numpys_error_when_stacked(target):
    with pytest.raises(ValueError) as expected:
        empty_stacked(np.arange(2.0), 0)
    with pytest.raises(ValueError) as got:
        autostage.convert(empty_stacked, target=target)(np.arange(2.0), np.int64(0))
    assert str(got.value) == str(expected.value)


# -- items written into their row by their loop, lists made with room for every row ------------

def rnn_states(xs, h, w):
    hs = []
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] * w + h)
        hs.append(h)
    return np.stack(hs), h


def fused_mixed_counted(x, n):
    rows = []
    for i in range(n):
        rows.append(x[:i % 2 + 1] * 2.0)
    return len(rows)


def appended_twice(x, n):
    a, b = [], []
    for i in range(n):
        y = x * i + 1.0
        a.append(y)
        b.append(y)
    return np.stack(a), np.stack(b)


def early_exit(x, n):
    rows = []
    for i in range(n):
        if i * 2 > n:
            break
        rows.append(x + i)
    return np.stack(rows)


def source_of(fn, *args) -> str:
    return cpu_compile.generate(module_of(fn, *args)).source


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [fused_mixed_counted, appended_twice, early_exit],
                         ids=lambda f: f.__name__)
def test_rows_in_place_values_are_pythons(fn, target):
    for n in (0, 1, 7, 40):
        run_both(fn, np.arange(3.0), np.int64(n), target=target)


@pytest.mark.parametrize("target", TARGETS)
def test_a_carried_row_returned_shares_no_memory_with_the_stack(target):
    xs, h, w = np.linspace(-1, 1, 24).reshape(8, 3), np.zeros(3), np.array([0.5, -1.0, 2.0])
    expected_stack, expected_h = rnn_states(xs, h, w)
    stack, last = autostage.convert(rnn_states, target=target)(xs, h, w)
    np.testing.assert_allclose(stack, expected_stack, rtol=1e-14)  # tanh: a few ulp
    np.testing.assert_allclose(last, expected_h, rtol=1e-14)
    assert not np.shares_memory(stack, last)
    stack[-1] = 7.0  # the caller's arrays are independent, as NumPy's
    np.testing.assert_allclose(last, expected_h, rtol=1e-14)
    if target == "cpu":
        source = source_of(rnn_states, xs, h, w)
        assert "placed" in source and "cpu_new.copy(" in source


def test_an_item_appended_to_two_lists_is_not_placed():
    stacked = autostage.convert(appended_twice, target="cpu")(np.arange(3.0), np.int64(5))
    assert not np.shares_memory(*stacked)
    assert "placed" not in source_of(appended_twice, np.arange(3.0), np.int64(5))


def test_counted_loops_reserve_every_row():
    reserved = " else 0), np.int64(0),), np.float64), "  # a loop's list made with its rows
    # (the bound's rows, at least 0; not the grow helper)
    source = source_of(grown_from_empty, np.arange(3.0), np.int64(4))
    assert reserved in source
    assert "(np.int64(0), np.int64(0),), np.float64)" not in source  # no unused empty list
    assert reserved not in source_of(early_exit, np.arange(3.0), np.int64(4))
    assert reserved not in source_of(trajectory, np.arange(3.0), np.int64(4))
