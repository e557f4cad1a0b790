"""Tests for autostage.operators.py_builtins: each overload is the builtin on Python values."""

import builtins
import inspect
import io

import pytest

from autostage.operators import py_builtins

OVERLOADED = ["print", "len", "list", "range", "enumerate", "zip", "map", "filter", "int", "float",
              "bool", "complex", "abs", "min", "max", "sum", "isinstance", "any", "all", "callable",
              "sorted", "reversed", "type", "str", "repr", "format"]


def overload_of(name):
    return getattr(py_builtins, name + "_")


def outcome(fn):
    try:
        value = fn()
        if hasattr(value, "__next__"):  # a lazy result: compare its type and what it yields
            value = (type(value), list(value))
    except Exception as error:  # noqa: BLE001 - the exception itself is the outcome compared
        return ("raises", type(error), str(error))
    return ("value", value)


def test_builtins_table_maps_each_builtin_to_its_overload():
    python_entries = {b: o for b, o in py_builtins.BUILTINS.items()
                      if getattr(b, "__module__", "") == "builtins"}
    assert python_entries == {getattr(builtins, name): overload_of(name) for name in OVERLOADED}
    for name in OVERLOADED:
        assert overload_of(name).__name__ == name + "_"


@pytest.mark.parametrize("name", OVERLOADED)
def test_overload_shows_the_builtins_signature(name):
    try:
        expected = inspect.signature(getattr(builtins, name))
    except ValueError:
        return  # e.g. range: no signature to show, and none is invented
    assert inspect.signature(overload_of(name)) == expected


CALLS = [
    ("len", ([1, 2],), {}), ("len", (5,), {}), ("len", (), {}), ("len", (), {"obj": [1]}),
    ("len", ([1], [2]), {}),
    ("range", (3,), {}), ("range", (1, 7, 2), {}), ("range", ("a",), {}), ("range", (), {}),
    ("range", (1, 2, 0), {}),
    ("enumerate", ("ab",), {"start": 3}), ("enumerate", (1,), {}),
    ("zip", ([1, 2], "ab"), {}), ("zip", ([1], [2, 3]), {"strict": True}), ("zip", (1,), {}),
    ("map", (abs, [-1, 2]), {}), ("map", (abs,), {}), ("map", (abs, 3), {}),
    ("filter", (None, [0, 1, 2]), {}), ("filter", (1,), {}),
    ("int", ("12",), {}), ("int", ("101",), {"base": 2}), ("int", ("x",), {}), ("int", ([],), {}),
    ("float", ("1.5",), {}), ("float", ("x",), {}), ("float", (), {}),
    ("bool", ([],), {}), ("bool", (1, 2), {}), ("bool", (), {"x": 1}),
    ("abs", (-3,), {}), ("abs", ("a",), {}),
    ("min", ([3, 1, 2],), {}), ("min", (3, 1), {"key": lambda v: -v}), ("min", ([],), {}),
    ("min", ([],), {"default": 9}), ("min", (), {}), ("min", (1,), {}),
    ("max", ([1, "a"],), {}), ("max", (1, 2), {"default": 0}),
    ("sum", ([1, 2], 10), {}), ("sum", ([[1]],), {"start": []}), ("sum", (["a"], ""), {}),
    ("sum", (1,), {}),
    ("isinstance", (1, int), {}), ("isinstance", (1, 2), {}), ("isinstance", (1,), {}),
    ("any", ([0, 1],), {}), ("any", (1,), {}), ("all", ([1, 0],), {}), ("all", (), {}),
    ("sorted", ([3, 1],), {"reverse": True}), ("sorted", ([1, "a"],), {}),
    ("sorted", ([1], lambda v: v), {}),
    ("reversed", ([1, 2],), {}), ("reversed", (5,), {}),
    ("type", (1,), {}), ("type", ([],), {}), ("type", (), {}), ("type", (1, 2), {}),
    ("type", ("T", 1, {}), {}), ("type", (1,), {"x": 2}),
]


@pytest.mark.parametrize("name, args, kwargs", CALLS)
def test_overload_gives_the_builtins_result_or_exact_error(name, args, kwargs):
    expected = outcome(lambda: getattr(builtins, name)(*args, **kwargs))
    assert outcome(lambda: overload_of(name)(*args, **kwargs)) == expected


@pytest.mark.parametrize("args, kwargs", [
    ((1, "a", None), {}), ((), {}), ((1, 2), {"sep": "-", "end": "!\n"}),
    (("x",), {"sep": None, "end": None}), ((1,), {"flush": True})])
def test_print_writes_what_print_writes(capsys, args, kwargs):
    print(*args, **kwargs)
    expected = capsys.readouterr()
    py_builtins.print_(*args, **kwargs)
    assert capsys.readouterr() == expected
    assert expected.out


def test_print_to_a_file_and_in_program_order(capsys):
    buffer = io.StringIO()
    py_builtins.print_("to file", file=buffer)
    print("first")
    py_builtins.print_("second")
    assert buffer.getvalue() == "to file\n"
    assert capsys.readouterr().out == "first\nsecond\n"


@pytest.mark.parametrize("kwargs", [{"sep": 1}, {"end": 2}, {"foo": 1}, {"file": 3}])
def test_print_rejects_bad_arguments_like_print(kwargs):
    assert outcome(lambda: py_builtins.print_("x", **kwargs)) == outcome(
        lambda: print("x", **kwargs))
    assert outcome(lambda: print("x", **kwargs))[0] == "raises"


def test_overloads_consume_iterators_like_the_builtins():
    items = iter([1, 2, 3, 4])
    assert py_builtins.any_(v > 1 for v in items) is True
    assert list(items) == [3, 4]
    lazy = py_builtins.map_(lambda v: 1 / v, [1, 0])
    assert next(lazy) == 1.0
    with pytest.raises(ZeroDivisionError):
        next(lazy)


def test_type_builds_classes_like_the_builtin():
    made = py_builtins.type_("Made", (int,), {"a": 1})
    assert (made.__name__, made.__bases__, made.a, type(made)) == ("Made", (int,), 1, type)
