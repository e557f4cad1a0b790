"""Tests for autostage.converters.lists: generated source, and behaviour equal to Python's."""

import copy

import pytest
from converter_testing import convert_with, dedent, outcome

from autostage.converters import lists

SHARED = []


def convert(fn):
    return convert_with(fn, lists)


def append_and_pop(x, v, i):
    y = x
    x.append(v)
    top = x.pop()
    x.pop(i)
    return x, y, top


def test_append_and_pop_become_assignments():
    assert convert(append_and_pop).source == dedent("""
        def append_and_pop(x, v, i):
            y = x
            x = ag__.list_append(x, v)
            x, top = ag__.list_pop(x)
            x = ag__.list_pop(x, i)[0]
            return (x, y, top)
    """)


@pytest.mark.parametrize("args", [([1, 2, 3], 4, 0), ([5], 6, -1), ([], 1, 0), ([1], 2, 5)])
def test_append_and_pop_behave_like_python(args):
    fn = convert(append_and_pop).function
    expected_list, got_list = list(args[0]), list(args[0])
    try:
        expected = append_and_pop(expected_list, *args[1:])
    except IndexError as e:
        with pytest.raises(IndexError, match=str(e)):
            fn(got_list, *args[1:])
        assert got_list == expected_list
        return
    got = fn(got_list, *args[1:])
    assert got == expected
    assert got[0] is got_list and got[1] is got_list  # the same object, mutated in place


def alias(x):
    y = x
    x.append(len(y))
    z = x.pop(0)
    return y, z


def test_aliases_see_the_mutation():
    fn = convert(alias).function
    data = [7, 8]
    y, z = fn(data)
    assert y is data and data == [8, 2] and z == 7
    assert alias([7, 8]) == (y, z)


def reverse_and_keep_alias(x, n):
    y = x
    x.reverse()
    x.reverse() if n else None
    return y


def test_reverse_becomes_an_assignment_and_keeps_python_effects():
    converted = convert(reverse_and_keep_alias)
    assert "    x = ag__.list_reverse(x)\n" in converted.source
    assert "x.reverse() if n else None" in converted.source  # not a statement: left as written
    data = [1, 2, 3]
    assert converted.function(data, 0) is data and data == [3, 2, 1]
    assert converted.function(data, 1) == reverse_and_keep_alias([3, 2, 1], 1) == [3, 2, 1]


def order(x, log):
    x.append(log.append("value") or len(log))
    return x


def test_value_is_evaluated_once():
    log = []
    assert convert(order).function([0], log) == order([0], []) == [0, 1]
    assert log == ["value"]


def pop_from_dict(d, k):
    v = d.pop(k)
    return d, v


def test_any_object_with_pop():
    fn = convert(pop_from_dict).function
    assert fn({"a": 1, "b": 2}, "a") == ({"b": 2}, 1)
    with pytest.raises(KeyError):
        fn({}, "a")


class Box:
    def __init__(self):
        self.items = []

    def add(self, v):
        self.items.append(v)
        last = self.items.pop()
        self.items.append(last)
        return self.items


def uses_outer_names(x, items, v):
    SHARED.append(v)  # global: assigning it would make it local
    x.append(v, 1)
    x.append(*items)
    x.append(v=v)
    x.pop(0, None)
    w = (n := x).pop()  # noqa: F841
    x.append((x := []))  # noqa: UP034
    return x.append(v)


def test_other_forms_are_left_alone():
    assert convert(uses_outer_names).source == dedent("""
        def uses_outer_names(x, items, v):
            SHARED.append(v)
            x.append(v, 1)
            x.append(*items)
            x.append(v=v)
            x.pop(0, None)
            w = (n := x).pop()
            x.append((x := []))
            return x.append(v)
    """)
    converted = convert(Box.add).source
    assert "ag__" not in converted  # attribute receivers: a property would see an assignment


def pops_in_expressions(x, y, items):
    s = x.pop() + 10 * y.pop(0) + len(x)
    items.append(x.pop())
    x.append(x.pop() + x[0])
    a, b = x.pop()
    if x.pop() > 1:
        s += 1
    return s, x, y


def test_pops_in_expressions_go_through_a_box():
    assert convert(pops_in_expressions).source == dedent("""
        def pops_in_expressions(x, y, items):
            x_box = ag__.ListBox(x)
            y_box = ag__.ListBox(y)
            s = ag__.box_pop(x_box) + 10 * ag__.box_pop(y_box, 0) + len(x_box.list)
            x = x_box.list
            y = y_box.list
            x_box_1 = ag__.ListBox(x)
            items = ag__.list_append(items, ag__.box_pop(x_box_1))
            x = x_box_1.list
            x_box_2 = ag__.ListBox(x)
            x = ag__.box_append(x_box_2, ag__.box_pop(x_box_2) + x_box_2.list[0])
            x_box_3 = ag__.ListBox(x)
            a, b = ag__.box_pop(x_box_3)
            x = x_box_3.list
            x_box_4 = ag__.ListBox(x)
            test_ = ag__.box_pop(x_box_4) > 1
            x = x_box_4.list
            if test_:
                s += 1
            return (s, x, y)
    """)


@pytest.mark.parametrize("x, raises", [([(1,), 2, 3, (4,), 5, 6], False),
                                       ([(1,), 2, 3, 4, 5, 6], True), ([3, 4], True), ([], True)])
def test_pops_in_expressions_behave_like_python(x, raises):
    fn = convert(pops_in_expressions).function
    data = [(list(x), [3, 4], [])]
    data.append(copy.deepcopy(data[0]))
    expected, got = outcome(pops_in_expressions, *data[0]), outcome(fn, *data[1])
    assert got == expected and data[0] == data[1]  # the same result and the same mutations
    assert (got[0] == "raised") == raises


def lazy_pops(x, c):
    a = c and x.pop()
    b = [x.pop() for _ in range(c)]
    d = x.pop() if c else len(x)
    return a, b, d, x


def test_pops_python_may_not_evaluate_are_left_alone():
    assert "ag__" not in convert(lazy_pops).source


def outer(v):
    acc = []

    def add(w):
        acc.append(w)  # free variable: left alone
        mine = [w]
        mine.append(v)
        return mine

    def rebind():
        nonlocal acc
        acc = [0]

    acc.append(v)
    return add(v), acc, rebind


def test_nested_functions_rewrite_only_their_own_locals():
    assert convert(outer).source == dedent("""
        def outer(v):
            acc = []

            def add(w):
                acc.append(w)
                mine = [w]
                mine = ag__.list_append(mine, v)
                return mine

            def rebind():
                nonlocal acc
                acc = [0]
            acc.append(v)
            return (add(v), acc, rebind)
    """)
    mine, acc, _ = convert(outer).function(3)
    assert (mine, acc) == outer(3)[:2] == ([3, 3], [3, 3])


def class_body(v):
    class C:
        items = []
        items.append(v)

    return C.items


def test_class_bodies_are_left_alone():
    converted = convert(class_body)
    assert "ag__" not in converted.source
    assert converted.function(2) == [2]


def append_to_global(v):
    SHARED.append(v)
    return len(SHARED)


def test_global_receiver_is_left_alone_and_mutated():
    converted = convert(append_to_global)
    assert "ag__" not in converted.source
    SHARED.clear()
    assert converted.function(4) == 1 and SHARED == [4]
