"""Tests for autostage.converters.slices: generated source, and behaviour equal to Python's."""

import numpy as np
import pytest
from converter_testing import convert_with, dedent

from autostage.converters import slices

TABLE = {}


def convert(fn):
    return convert_with(fn, slices)


def stores(x, i, j, v):
    x[i] = v
    x[i, j] = v
    x[1:2, ::3] = v
    x[:] = v
    x[i:] = v
    x[:j] = v
    return x


def test_item_and_slice_assignments():
    assert convert(stores).source == dedent("""
        def stores(x, i, j, v):
            x = ag__.setitem(x, i, v)
            x = ag__.setitem(x, (i, j), v)
            x = ag__.setitem(x, (slice(1, 2), slice(None, None, 3)), v)
            x = ag__.setitem(x, slice(None), v)
            x = ag__.setitem(x, slice(i, None), v)
            x = ag__.setitem(x, slice(None, j), v)
            return x
    """)


def updates(x, i, f, v):
    x[i] += v
    x[f(i)] *= v
    x[i:i + 1] -= v
    x[i] = f(v)
    x[f(i)] = f(v)
    return x


def test_augmented_and_ordered_assignments():
    assert convert(updates).source == dedent("""
        def updates(x, i, f, v):
            x = ag__.setitem(x, i, ag__.iadd(x[i], v))
            index = f(i)
            x = ag__.setitem(x, index, ag__.imul(x[index], v))
            index_1 = slice(i, i + 1)
            x = ag__.setitem(x, index_1, ag__.isub(x[index_1], v))
            x = ag__.setitem(x, i, f(v))
            value = f(v)
            x = ag__.setitem(x, f(i), value)
            return x
    """)


class Logged:
    """A container that records every access, to compare evaluation orders."""

    def __init__(self, log):
        self.log, self.data = log, {}

    def __getitem__(self, key):
        self.log.append(("get", key))
        return self.data.get(key, 0)

    def __setitem__(self, key, value):
        self.log.append(("set", key, value))
        self.data[key] = value


def logged_stores(x, log):
    def at(name, value):
        log.append(name)
        return value

    x[at("index", 1)] = at("value", 10)
    x[at("index", 1)] += at("value", 5)
    x[at("index", 2)] = 3
    x[2] = at("value", 4)
    return x.data


def test_evaluation_order_is_pythons():
    expected_log, got_log = [], []
    expected = logged_stores(Logged(expected_log), expected_log)
    got = convert(logged_stores).function(Logged(got_log), got_log)
    assert got == expected == {1: 15, 2: 4}
    assert got_log == expected_log
    assert expected_log[:3] == ["value", "index", ("set", 1, 10)]  # value first for `=`
    assert expected_log[3:7] == ["index", ("get", 1), "value", ("set", 1, 15)]


def chained(x, y, log):
    def at(name, value):
        log.append(name)
        return value

    x[at("x index", 0)] = z = y[at("y index", 1)] = at("value", 7)
    return z


def test_chained_assignments_store_one_value_left_to_right():
    """``a[0] = b[0] = v`` was left as it was: a staged value stored into a NumPy array made
    while tracing raised NumPy's "setting an array element with a sequence" (found by a helper
    writing realistic programs)."""
    converted = convert(chained)
    assert converted.source == dedent("""
        def chained(x, y, log):

            def at(name, value):
                log.append(name)
                return value
            value_1 = at('value', 7)
            x = ag__.setitem(x, at('x index', 0), value_1)
            z = value_1
            y = ag__.setitem(y, at('y index', 1), value_1)
            return z
    """)
    expected_log, got_log = [], []
    expected = chained(Logged(expected_log), Logged(expected_log), expected_log)
    got = converted.function(Logged(got_log), Logged(got_log), got_log)
    assert got == expected == 7
    assert got_log == expected_log == ["value", "x index", ("set", 0, 7), "y index",
                                       ("set", 1, 7)]


def fill_two(p):
    a, b = np.zeros(3), np.zeros(3)
    a[0] = b[1] = p[0]
    return a, b


def test_chained_item_assignments_stage():
    import autostage

    for target in ("interpreter", "cpu"):
        got = autostage.convert(fill_two, target=target)(np.array([2.5, 1.0]))
        for g, e in zip(got, fill_two(np.array([2.5, 1.0])), strict=True):
            np.testing.assert_array_equal(g, e)


def nested_lists(x, i):
    inner = x[i]
    x[i] += [1]
    return inner


def test_in_place_update_mutates_the_item_like_python():
    fn = convert(nested_lists).function
    data = [[0], [5]]
    inner = fn(data, 1)
    assert inner is data[1] and data == [[0], [5, 1]]
    with pytest.raises(IndexError):
        fn(data, 7)
    with pytest.raises(TypeError):
        fn(((1,),), 0)  # tuples do not support item assignment


def every_operator(x, m):
    x[0] += 7
    x[0] -= 2
    x[0] *= 3
    x[0] //= 2
    x[0] %= 5
    x[0] **= 3
    x[0] <<= 2
    x[0] >>= 1
    x[0] &= 6
    x[0] ^= 3
    x[0] |= 8
    x[0] /= 4
    m[0] @= m[1]
    return x, m


def test_every_in_place_operator():
    converted = convert(every_operator)
    for name in ("iadd", "isub", "imul", "ifloordiv", "imod", "ipow", "ilshift", "irshift",
                 "iand", "ixor", "ior", "itruediv", "imatmul"):
        assert f"ag__.{name}(" in converted.source
    m = np.arange(8.0).reshape(2, 2, 2)
    x, got_m = converted.function([1], m.copy())
    assert x == every_operator([1], m.copy())[0]
    np.testing.assert_array_equal(got_m, every_operator([1], m.copy())[1])


def arrays(a, k):
    view = a[0]
    a[1:3] = 0
    a[:, k] += 10
    a[a > 20] = -1
    return view


@pytest.mark.parametrize("k", [0, 1, -1])
def test_numpy_arrays_and_views(k):
    expected_a, got_a = np.arange(12).reshape(3, 4), np.arange(12).reshape(3, 4)
    expected_view = arrays(expected_a, k)
    got_view = convert(arrays).function(got_a, k)
    np.testing.assert_array_equal(got_a, expected_a)
    np.testing.assert_array_equal(got_view, expected_view)
    assert np.shares_memory(got_view, got_a)


def left_alone(x, a, v):
    x[0][1] = v
    a.b[0] = v
    x[0], *x[1:] = (v, v)
    TABLE[v] = v
    TABLE[v] += 1
    x[0] = (x := [v])
    x[v: v + 1] += (n := [1])  # noqa: F841
    x[0]: int = v
    return x


def test_other_targets_are_left_alone_or_assigned_through_setitem_of():
    # A subscript whose container is not a local name assigns through ag__.setitem_of: Python's
    # own assignment, or a clear refusal where it would write a NumPy array with a staged value
    # (NumPy's "setting an array element with a sequence" until the twenty-ninth session).
    assert convert(left_alone).source == dedent("""
        def left_alone(x, a, v):
            ag__.setitem_of(x[0], 1, v)
            ag__.setitem_of(a.b, 0, v)
            x[0], *x[1:] = (v, v)
            ag__.setitem_of(TABLE, v, v)
            TABLE[v] += 1
            x[0] = (x := [v])
            x[v:v + 1] += (n := [1])
            x[0]: int = v
            return x
    """)


def shadows_slice(x, slice):
    x[1:] = slice
    x[0] = slice
    return x


def test_slices_need_the_builtin_slice():
    converted = convert(shadows_slice)
    assert converted.source == dedent("""
        def shadows_slice(x, slice):
            x[1:] = slice
            x = ag__.setitem(x, 0, slice)
            return x
    """)
    assert converted.function([1, 2, 3], [7]) == shadows_slice([1, 2, 3], [7]) == [[7], 7]


def test_global_container_is_mutated_in_place():
    TABLE.clear()
    convert(left_alone).function([[0, 0], [0]], type("A", (), {"b": [0]})(), 3)
    assert TABLE == {3: 4}


def swap_ends(xs):
    xs[0], xs[-1] = xs[-1], xs[0]
    return xs


def test_tuple_targets_unpack_then_update_in_order():
    converted = convert_with(swap_ends, slices)
    assert converted.source == dedent("""
        def swap_ends(xs):
            item, item_1 = (xs[-1], xs[0])
            xs = ag__.setitem(xs, 0, item)
            xs = ag__.setitem(xs, -1, item_1)
            return xs
    """)
    assert converted.function([1, 2, 3]) == swap_ends([1, 2, 3]) == [3, 2, 1]


def unpack_too_many(xs):
    xs[0], xs[1] = (1, 2, 3)
    return xs


def test_tuple_target_unpacking_errors_are_pythons():
    converted = convert_with(unpack_too_many, slices)
    with pytest.raises(ValueError) as expected:
        unpack_too_many([0, 0])
    with pytest.raises(ValueError) as actual:
        converted.function([0, 0])
    assert str(actual.value) == str(expected.value) == "too many values to unpack (expected 2)"
