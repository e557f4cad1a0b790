"""Tests for autostage.operators.data_structures: list_append and list_pop keep Python's effects."""

import collections

import pytest

from autostage.operators.data_structures import list_append, list_pop


def test_list_append_mutates_and_returns_the_same_list():
    lst = [1]
    alias = lst
    assert list_append(lst, 2) is lst
    assert alias == [1, 2]


def test_list_append_calls_the_objects_own_append():
    dq = collections.deque([1])
    assert list_append(dq, 2) is dq
    assert dq == collections.deque([1, 2])
    with pytest.raises(AttributeError) as python_error:
        (1,).append(2)
    with pytest.raises(AttributeError) as operator_error:
        list_append((1,), 2)
    assert str(operator_error.value) == str(python_error.value)


@pytest.mark.parametrize("args, expected_item, expected_rest", [
    ((), 3, [1, 2]), ((0,), 1, [2, 3]), ((-2,), 2, [1, 3])])
def test_list_pop_returns_the_list_and_the_item(args, expected_item, expected_rest):
    lst = [1, 2, 3]
    result = list_pop(lst, *args)
    assert result == (expected_rest, expected_item)
    assert result[0] is lst


def test_list_pop_passes_dict_pop_arguments_through():
    d = {"a": 1, None: 2}
    assert list_pop(d, "a") == ({None: 2}, 1)
    assert list_pop(d, "missing", 0) == ({None: 2}, 0)
    assert list_pop(d, None) == ({}, 2)


@pytest.mark.parametrize("lst, args", [([], ()), ([1], (5,)), ([1], (None,)), ([1], ("0",))])
def test_list_pop_raises_like_list_pop(lst, args):
    with pytest.raises(Exception) as python_error:
        list(lst).pop(*args)
    with pytest.raises(Exception) as operator_error:
        list_pop(list(lst), *args)
    assert type(operator_error.value) is type(python_error.value)
    assert str(operator_error.value) == str(python_error.value)
