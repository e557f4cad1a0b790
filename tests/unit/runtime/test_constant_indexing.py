"""NumPy constants and Python number lists indexed by staged keys (runtime/constant_indexing.py)."""

import numpy as np
import pytest
from autostage.runtime.tensor import StagingTypeError
from autostage.runtime.tracing import StagingError

import autostage

TARGETS = ("interpreter", "cpu")
GLOBAL_TABLE = np.arange(10) ** 2


def _run(fn, target, *args):
    return autostage.convert(fn, target=target)(*args)


def _same(actual, expected):
    assert type(actual) is type(expected)
    if isinstance(expected, tuple):
        for a, e in zip(actual, expected, strict=True):
            _same(a, e)
    elif isinstance(expected, np.ndarray):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        np.testing.assert_array_equal(actual, expected)
    else:
        assert actual == expected


def onehot(y, k):
    return np.eye(k)[y]


def tables(x):
    i = np.argmax(x)
    table = np.arange(10) ** 2
    w = np.arange(12.0).reshape(3, 4)
    return table[i], w[i], w[i, 1:], w[:, i], table[i:i + 3], GLOBAL_TABLE[i + 1], w[i:]


def python_lists(x):
    i = np.argmax(x)
    floats, ints, flags = [1.0, 2.5, 4.0], (3, 5, 7), [True, False, True]
    return floats[i], ints[i] * 2, flags[i] + flags[i], floats[-1 - i] / 4


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("y", [np.array([0, 2, 1, 2]), np.array(1), np.array([[0], [1]])])
def test_eye_indexed_by_staged_labels(target, y):
    _same(_run(onehot, target, y, 3), onehot(y, 3))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("x", [np.array([0.0, 2.0, 1.0]), np.array([3.0, 1.0])])
def test_numpy_constants_indexed_by_staged_values(target, x):
    _same(_run(tables, target, x), tables(x))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("x", [np.array([0.0, 2.0, 1.0]), np.array([3.0, 1.0])])
def test_python_number_lists_give_python_numbers(target, x):
    _same(_run(python_lists, target, x), python_lists(x))


@pytest.mark.parametrize("target", TARGETS)
def test_out_of_range_raises_index_error(target):
    def f(x):
        return [1.0, 2.0][np.argmax(x) + 2], 0

    with pytest.raises(IndexError):
        f(np.array([1.0]))
    with pytest.raises(IndexError):
        _run(f, target, np.array([1.0]))


REFUSED = {"dict": {0: 1.0, 1: 2.0}, "str": "abc", "mixed": [1, 2.5]}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kind,what", [
    ("dict", r"cannot index a dict with a staged key"),
    ("str", r"cannot index a str with a staged key"),
    ("mixed", r"cannot index a list .*not numbers of one type"),
    ("slice", r"cannot index a list .*only a staged integer index"),
])
def test_refused_containers_are_clear_errors(target, kind, what):
    def f(x):
        i = np.argmax(x)
        if kind == "slice":
            return [1.0, 2.0, 3.0][0:i]
        return REFUSED[kind][i]

    with pytest.raises(StagingTypeError, match=what + r".*np\.asarray") as info:
        _run(f, target, np.array([0.0, 1.0]))
    assert "test_constant_indexing.py:" in str(info.value)


GLOBAL_FLOATS = [0.5, 1.5, 2.5]


@pytest.mark.parametrize("target", TARGETS)
def test_global_list_of_floats(target):
    def f(x):
        return GLOBAL_FLOATS[np.argmax(x)] * 2

    _same(_run(f, target, np.array([0.0, 1.0])), 3.0)


def _list_of_staged_indices(r):  # (TheAlgorithms linear_algebra qr_decomposition: r[k:, [k]])
    out = []
    for k in range(r.shape[1]):
        out.append(r[k:, [k]].sum() + r[[k, 0], k].sum())
    return out


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_list_holding_staged_indices_is_an_index_array(target):
    r = np.arange(12.0).reshape(4, 3)
    got = autostage.convert(_list_of_staged_indices, target=target)(r)
    assert got == _list_of_staged_indices(r)
    assert [type(g) for g in got] == [np.float64] * 3


# --- lists and tuples holding staged values, indexed by a staged int (twenty-ninth session) ----
# Python numbers in them came back as NumPy scalars (`t[i] / 0.0` was inf, not Python's
# ZeroDivisionError; `[x.shape[0], 5][i] * 2**62` wrapped), array items as copies, and an index
# out of range raised NumPy's message.


def float_item_over_zero(x):
    t = (float(x[0]), float(x[1]))
    return t[int(x[2]) % 2] / 0.0


def bool_items_added(x):
    t = (bool(x[0] > 0), bool(x[1] > 0))
    v = t[int(x[2]) % 2]
    return v + v


def item_out_of_range(x):
    return [1, 2][int(x[2])], (float(x[0]), 2.0)[int(x[2])]


def mixed_item(x):
    return (float(x[0]), int(x[1]))[int(x[2]) % 2]


def array_item_written(x):
    a, b = x * 0, x + 1
    c = [a, b][int(x[2]) % 2]
    c[0] = 7.0
    return a


def argument_item_returned(x):
    return [x, x][int(x[2]) % 2]


def array_item_read(x):
    return [x * 2, x * 3][int(x[2]) % 2].sum()


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_an_item_chosen_by_a_staged_index_is_pythons(target):
    def outcome(fn, x):
        try:
            return fn(x)
        except Exception as e:  # noqa: BLE001 - compared with Python's
            return type(e), str(e)

    for fn in (float_item_over_zero, bool_items_added, item_out_of_range, array_item_read):
        for x in (np.array([1.0, 2.0, 1.0]), np.array([3.0, 0.0, 5.0])):
            got, want = outcome(autostage.convert(fn, target=target), x), outcome(fn, x)
            assert got == want and type(got) is type(want), (fn.__name__, got, want)
    x = np.array([1.0, 2.0, 1.0])
    with pytest.raises(StagingTypeError, match="Python numbers of different types"):
        autostage.convert(mixed_item, target=target)(x)
    with pytest.raises(StagingError, match="an array of a Python list read by a staged index"):
        autostage.convert(array_item_written, target=target)(x)
    with pytest.raises(StagingError, match="argument_item_returned returns an array of a Python"):
        autostage.convert(argument_item_returned, target=target)(x)


def _sum_of_picked(arrs, idx):
    s = 0.0
    for k in idx:
        s += arrs[k].sum()
    return s


def test_a_list_of_arrays_of_different_shapes_read_by_a_staged_index_is_refused_clearly():
    # (NumPy's ValueError of stacking them came out at run time before)
    with pytest.raises(autostage.StagingError, match=r"test_constant_indexing.py:\d+: cannot "
                       r"index a list with a staged key: its items have different shapes "
                       r"\(\(2,\), \(3,\)\)"):
        autostage.convert(_sum_of_picked)([np.ones(2), np.arange(3.0)], np.array([1, 0]))
    arrs = [np.ones(3), np.arange(3.0)]
    assert autostage.convert(_sum_of_picked)(arrs, np.array([1, 0])) == \
        _sum_of_picked(arrs, np.array([1, 0]))
