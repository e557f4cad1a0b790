"""Tests for autostage.operators.slices: subscripts and in-place operators behave like Python."""

import numpy as np
import pytest

from autostage.operators import slices

IN_PLACE = {"iadd": "+=", "isub": "-=", "imul": "*=", "imatmul": "@=", "itruediv": "/=",
            "ifloordiv": "//=", "imod": "%=", "ipow": "**=", "ilshift": "<<=", "irshift": ">>=",
            "iand": "&=", "ixor": "^=", "ior": "|="}


def python_augmented(symbol, a, b):
    namespace = {"a": a, "b": b}
    exec(f"a {symbol} b", namespace)
    return namespace["a"]


def outcome(fn):
    try:
        return ("value", fn())
    except Exception as error:  # noqa: BLE001 - the exception itself is the outcome compared
        return ("raises", type(error), str(error))


@pytest.mark.parametrize("target, key", [([1, 2, 3], 1), ([1, 2, 3], slice(0, 2)),
                                         ({"a": 1}, "a"), ("text", -1), ([1], 4), ({}, "k"),
                                         (5, 0), ([1], "0")])
def test_getitem_matches_subscript(target, key):
    assert outcome(lambda: slices.getitem(target, key)) == outcome(lambda: target[key])


def test_setitem_mutates_and_returns_the_same_target():
    lst = [1, 2, 3]
    assert slices.setitem(lst, slice(0, 2), ["a"]) is lst
    assert lst == ["a", 3]
    base = np.zeros(4)
    view = base[1:3]
    assert slices.setitem(view, 0, 7.0) is view
    assert base.tolist() == [0.0, 7.0, 0.0, 0.0]


@pytest.mark.parametrize("target, key", [([1], 3), ((1, 2), 0), ("s", 0), ({}, [])])
def test_setitem_raises_like_subscript_assignment(target, key):
    def python():
        target[key] = 0

    assert outcome(lambda: slices.setitem(target, key, 0)) == outcome(python)


@pytest.mark.parametrize("name", sorted(IN_PLACE))
@pytest.mark.parametrize("a, b", [(7, 3), (6, 0), (2.5, 2), (True, 1), ("s", 2), (None, 1)])
def test_in_place_operators_match_augmented_assignment(name, a, b):
    operator_fn = getattr(slices, name)
    assert operator_fn.__name__ == name
    assert outcome(lambda: operator_fn(a, b)) == outcome(
        lambda: python_augmented(IN_PLACE[name], a, b))


def test_in_place_operators_update_mutables_in_place():
    lst = [1]
    assert slices.iadd(lst, [2]) is lst
    assert lst == [1, 2]
    arr = np.array([1, 2])
    assert slices.imul(arr, 3) is arr
    assert arr.tolist() == [3, 6]
    flags = {1}
    assert slices.ior(flags, {2}) is flags


def test_in_place_operator_falls_back_to_the_binary_operator():
    class Vec:
        def __init__(self, v):
            self.v = v

        def __add__(self, other):
            return Vec(self.v + other)

    vec = Vec(1)
    result = slices.iadd(vec, 2)
    assert result is not vec
    assert result.v == 3


def test_augmented_subscript_assignment_as_converted():
    x, python_x = [[1], [2]], [[1], [2]]
    python_x[0] += [5]
    x = slices.setitem(x, 0, slices.iadd(x[0], [5]))
    assert x == python_x == [[1, 5], [2]]
    counts = {"a": 1}
    counts = slices.setitem(counts, "a", slices.isub(slices.getitem(counts, "a"), 3))
    assert counts == {"a": -2}
