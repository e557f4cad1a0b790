"""CPU lowerings of getitem/setitem against the NumPy reference (exact): basic indices, integer
arrays, boolean masks (n-d too), mixed and non-adjacent advanced indices, errors."""

from __future__ import annotations

import numpy as np
import pytest
from autostage.runtime import array_shapes
from test_cpu_ops_harness import run_cpu

X = np.arange(60.0).reshape(3, 4, 5)
IDX = np.array([2, -1, 0, 2])
IDX2 = np.array([[0, 1], [3, -4]])


@pytest.mark.parametrize("fn", [
    lambda x, i, j: x[1], lambda x, i, j: x[-1, 2], lambda x, i, j: x[1, 2, 3],
    lambda x, i, j: x[:, 1:3], lambda x, i, j: x[::-1, :, ::2], lambda x, i, j: x[..., 1],
    lambda x, i, j: x[None, :, None, 2], lambda x, i, j: x[1:, ..., None],
    lambda x, i, j: x[x.shape[0] - 1, 1:x.shape[1] - 1],
])
def test_basic_getitem(fn):
    run_cpu(fn, X, IDX, IDX2)
    run_cpu(fn, X, IDX, IDX2, known=True)


@pytest.mark.parametrize("fn", [
    lambda x, i, j: x[i], lambda x, i, j: x[:, j], lambda x, i, j: x[i[:2], 1:3, j[0]],
    lambda x, i, j: x[1, :, j], lambda x, i, j: x[i[:2], :, i[1:3]],
    lambda x, i, j: x[:, 2, j], lambda x, i, j: x[:, None, j],
    lambda x, i, j: x[x > 30.0], lambda x, i, j: x[x[:, :, 0] > 20.0],
    lambda x, i, j: x[1, x[1, :, 0] > 26.0, 1:], lambda x, i, j: x[:, :, x[0, 0] > 2.0],
    lambda x, i, j: x[i[:3], x[0, :, 0] < 11.0],
])
def test_advanced_getitem(fn):
    run_cpu(fn, X, IDX, IDX2)


def _set(key, value):
    def fn(x, i, j):  # what converted code stages for `x[key] = value`
        return array_shapes.setitem(x, key(x, i, j), value(x, i, j))
    return fn


@pytest.mark.parametrize("fn", [
    _set(lambda x, i, j: 1, lambda x, i, j: -1.0),
    _set(lambda x, i, j: (slice(None), 2), lambda x, i, j: x[0, 0]),
    _set(lambda x, i, j: (Ellipsis, 0), lambda x, i, j: x[0, :, 1] * 2.0),
    _set(lambda x, i, j: i, lambda x, i, j: x[0] + 0.5),
    _set(lambda x, i, j: (slice(None), j), lambda x, i, j: -x[0, 0]),
    _set(lambda x, i, j: x > 30.0, lambda x, i, j: 0.0),
    _set(lambda x, i, j: (1, i[:2], j[0]), lambda x, i, j: x[2, 0, :2]),
    _set(lambda x, i, j: x[:, :, 0] > 20.0, lambda x, i, j: x[0, 0]),
])
def test_setitem(fn):
    run_cpu(fn, X, IDX, IDX2)


def test_one_index_array_needs_no_broadcast_test():
    """``x[order]`` (with ints beside it too) loops over the index array's own shape; two index
    arrays broadcast, tested at run time, with NumPy's error."""
    for fn in (lambda x, i, j: x[i], lambda x, i, j: x[1, :, j], lambda x, i, j: x[:, j]):
        source = run_cpu(fn, X, IDX, IDX2)
        assert "could not be broadcast" not in source and "min(" not in source
    source = run_cpu(lambda x, i, j: x[i[:2], :, i[1:3]], X, IDX, IDX2)
    assert "could not be broadcast" in source
    with pytest.raises(IndexError, match="shape mismatch: indexing arrays could not be"):
        run_cpu(lambda x, i, j: x[i, :, j], X, IDX, IDX2)


def test_mask_positions_need_no_bounds_test():
    """A mask's positions are below its size, which is compared with the axis's once: no test
    per element (reads and writes); an index array beside it keeps its own."""
    for fn in (lambda x, i, j: x[x > 30.0], lambda x, i, j: x[:, x.sum(axis=(0, 2)) > 400.0],
               _set(lambda x, i, j: x > 30.0, lambda x, i, j: x.sum())):
        body = _function(run_cpu(fn, X, IDX, IDX2))
        assert "h_nonzero_" in body and "fail_site" not in body and "unreachable" not in body
    body = _function(run_cpu(lambda x, i, j: x[i[:1], x.sum(axis=(0, 2)) > 0.0], X, IDX, IDX2))
    assert body.count("fail_site") == 1  # the index array's


def _function(source: str) -> str:
    """The staged function's own code in a generated module (not the helpers')."""
    return source[source.index("def f_"):]


def test_index_errors():
    with pytest.raises(IndexError):
        run_cpu(lambda x, i: x[i], X, np.array([3]))
    with pytest.raises(IndexError):
        run_cpu(lambda x, i: x[i[0]], X, np.array([-4]))
    with pytest.raises(IndexError):
        run_cpu(lambda x, m: x[m], X, np.array([True, False]))


def test_index_error_text_is_numpys():
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 0 with size 0"):
        run_cpu(lambda x: x[0], np.zeros(0))
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis 1 with size 4"):
        run_cpu(lambda x, i: x[:, i], X, np.array([-5]))


@pytest.mark.parametrize("n", range(4))
def test_static_indices_are_tested_against_the_size_they_need(n):
    x = np.arange(float(n))
    for fn, index in [(lambda v: v[-1], -1), (lambda v: v[2], 2), (lambda v: v[-3], -3)]:
        if -n <= index < n:
            run_cpu(fn, x, known=False)
        else:
            with pytest.raises(IndexError, match=f"index {index} is out of bounds for axis 0 "
                                                 f"with size {n}"):
                run_cpu(fn, x, known=False)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint64])
def test_staged_scalar_index_of_every_int_dtype(dtype):
    """A staged int index is wrapped and checked once (then used as an unsigned position):
    negative, last, first and out-of-bounds positions of each width, as NumPy reads them."""
    def fn(x, i):
        y = array_shapes.setitem(x, (i, 1), -1.0)
        return y[i] + y[1, i]
    for position in (0, 2, -1, -3, 3, -4, 100):
        if position < 0 and np.dtype(dtype).kind == "u":
            continue
        index = np.asarray(position, dtype=dtype)
        if position in (3, -4, 100):
            with pytest.raises(IndexError, match=f"index {position} is out of bounds"):
                run_cpu(fn, X, index)
        else:
            run_cpu(fn, X, index)


def _bool_reads(x):
    flag = x.sum() > 0
    return (x[flag], x[~flag], x[True], x[np.False_], x[1, flag], x[..., flag, 0],
            x[flag, ..., 1:], x[x.shape[0] - 1, True, :], x[np.array(True)])


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
@pytest.mark.parametrize("x", [np.arange(6.0).reshape(2, 3), -np.arange(6.0).reshape(2, 3)],
                         ids=["true", "false"])
def test_boolean_scalar_indices_add_an_axis_of_length_one_or_zero(target, x):
    """NumPy reads ``x[flag]`` of a boolean scalar (a Python or NumPy bool, a 0-d bool array,
    staged or not) as a new axis there, of length 1 or 0: a copy."""
    import autostage

    got, want = autostage.convert(_bool_reads, target=target)(x), _bool_reads(x)
    for g, w in zip(got, want, strict=True):
        assert type(g) is type(w) and g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    assert not np.shares_memory(got[2], x)


def _bool_write(x):
    x = x.copy()
    x[x.sum() > 0] = 1.0
    return x


def _bool_and_array(x):
    return x[[0, 1], True]


def _index_a_scalar(x):
    return x.sum()[0]


def _index_a_python_number(x):
    return x.shape[0][0]


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_boolean_scalars_elsewhere_are_refused_and_scalars_are_not_indexed(target):
    from autostage.runtime.tracing import StagingError

    import autostage

    x = np.ones((2, 3))
    for fn in (_bool_write, _bool_and_array):
        with pytest.raises(StagingError, match=r"test_cpu_ops_indexing.py:\d+: autostage "
                                               r"stages a boolean scalar index"):
            autostage.convert(fn, target=target)(x)
    with pytest.raises(IndexError, match=r"^invalid index to scalar variable\.$"):
        _index_a_scalar(x)
    with pytest.raises(IndexError, match=r"^invalid index to scalar variable\.\n"):
        autostage.convert(_index_a_scalar, target=target)(x)  # (then the user's line)
    with pytest.raises(TypeError, match=r"^'int' object is not subscriptable\n"):
        autostage.convert(_index_a_python_number, target=target)(x)


def _assign_mask(x, v):
    x = x.copy()
    x[x > 0] = v
    return x


def _assign_rows(x, v):
    x = x.copy()
    x[x[:, 0] > 0] = v
    return x


def _assign_pairs(x, v):
    x = x.copy()
    x[[0, 1], [0, 1]] = v
    return x


def _assign_columns(x, v):
    x = x.copy()
    x[:, [0, 2]] = v
    return x


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
@pytest.mark.parametrize("fn, x, values", [
    (_assign_mask, np.array([[0.0, 0.0, 1.0]]), [np.ones(0), np.ones(2), np.ones(1), 2.0]),
    (_assign_rows, np.arange(6.0).reshape(2, 3) - 3, [np.ones(2), np.ones(0), np.ones(3),
                                                       np.ones((1, 3))]),
    (_assign_pairs, np.zeros((2, 3)), [np.ones(3), np.ones((2, 2)), np.ones(0), np.ones(2)]),
    (_assign_columns, np.zeros((2, 3)), [np.ones((3, 2)), np.ones(3), np.ones((2, 1))]),
], ids=["mask", "rows", "pairs", "columns"])
def test_advanced_assignment_of_a_value_that_does_not_fit_raises_numpys_error(
        target, fn, x, values):
    """The CPU loop over an advanced index read the value at each position unchecked: a value
    of another size was read past its end (``x[mask] = v[v > 1]`` with fewer values than true
    positions returned garbage); NumPy's error, with its words, names the sizes."""
    import autostage

    staged = autostage.convert(fn, target=target)
    for v in values:
        try:
            want = fn(x, v)
        except ValueError as e:
            with pytest.raises(ValueError) as info:
                staged(x, v)
            assert str(info.value).splitlines()[0] == str(e)
            continue
        np.testing.assert_array_equal(staged(x, v), want)
