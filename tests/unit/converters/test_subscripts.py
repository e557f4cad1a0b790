"""Tests for autostage.converters.subscripts: generated source, and behaviour equal to Python's."""

import pytest
from converter_testing import assert_same_behaviour, convert_with, dedent

from autostage.converters import subscripts


def convert(fn):
    return convert_with(fn, subscripts)


def reads(x, i, j, d: dict[str, int]) -> list[int]:
    a = x[i]
    b = x[i, j]
    c = x[i:j] + x[1:2] + x[:, 0] + x[-1] + x[...]
    y: list[int] = x[i][j]
    x[i] = d[x[j]]
    return a, b, c, y


def test_reads_with_computed_keys_become_getitem():
    assert convert(reads).source == dedent("""
        def reads(x, i, j, d: dict[str, int]) -> list[int]:
            a = ag__.getitem(x, i)
            b = ag__.getitem(x, (i, j))
            c = ag__.getitem(x, slice(i, j)) + x[1:2] + x[:, 0] + x[-1] + x[...]
            y: list[int] = ag__.getitem(ag__.getitem(x, i), j)
            x[i] = ag__.getitem(d, ag__.getitem(x, j))
            return (a, b, c, y)
    """)


def test_slices_left_as_written_when_slice_is_rebound():
    def shadowed(x, i):
        slice = 3
        return x[i:slice], x[i]

    assert convert(shadowed).source == dedent("""
        def shadowed(x, i):
            slice = 3
            return (x[i:slice], ag__.getitem(x, i))
    """)


class Logged:
    """Records every access, to compare evaluation orders and results."""

    def __init__(self, log):
        self.log = log

    def __getitem__(self, key):
        self.log.append(key)
        if key == "missing":
            raise KeyError(key)
        return ("item", key)


def containers(kind, i):
    log = []
    values = {"list": [1, 2.5, 3], "tuple": (1, 2), "str": "abc", "dict": {0: "a", 1: "b"},
              "logged": Logged(log), "range": range(5)}[kind]
    return values[i], values[i:i + 1] if kind != "dict" else values[i], log


@pytest.mark.parametrize("kind", ["list", "tuple", "str", "dict", "logged", "range"])
def test_python_containers_behave_as_in_python(kind):
    inputs = [(kind, 0), (kind, 1), (kind, -1), (kind, 7), (kind, "missing"), (kind, 1.5)]
    assert_same_behaviour(containers, inputs, subscripts)


def test_result_types_are_pythons():
    def first(x, i):
        return x[i]

    converted = convert(first).function
    assert type(converted([1, 2.5], 0)) is int
    assert type(converted([1, 2.5], 1)) is float
    assert converted({"a": [1]}, "a") == [1]
