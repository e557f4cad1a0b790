"""Tests for autostage.converters.comprehensions: generated source, Python behaviour unchanged,
and the forms left as written."""

from converter_testing import assert_same_behaviour, convert_with, dedent

from autostage.converters import comprehensions


def convert(fn):
    return convert_with(fn, comprehensions)


def squares(xs, t):
    a = [x * x for x in xs if x > t if x != 3]
    b = [i + v for i, v in enumerate(xs)]
    return a, b


def test_single_for_comprehensions_become_list_comp_calls():
    assert convert(squares).source == dedent("""
        def squares(xs, t):
            a = ag__.list_comp(xs, lambda it_: [x * x for x in it_ if x > t if x != 3], lambda x: x * x, lambda x: x > t and x != 3, 1)
            b = ag__.list_comp(enumerate(xs), lambda it_: [i + v for i, v in it_], lambda i, v: i + v, None, 2)
            return (a, b)
    """)  # noqa: E501


def scoping_and_errors(xs, pairs):
    x = "outer"
    a = [x for x in xs]
    b = [p + q for p, q in pairs]
    return a, b, x


def test_python_behaviour_is_the_comprehension_as_written():
    assert_same_behaviour(squares, [([1, 3, 5], 0), ([], 0), ([1, "a"], 0)], comprehensions)
    inputs = [([1, 2], [(1, 2)]), ([], [(1,)]), ([], [1]), ([], [(1, 2, 3)])]
    assert_same_behaviour(scoping_and_errors, inputs, comprehensions)  # the same errors too


def left_alone(xs, ys):
    a = [x + y for x in xs for y in ys]
    b = [i for i, (u, v) in enumerate(zip(xs, ys, strict=False))]
    c = [(n := x) for x in xs]
    d = [v for (v,) in ys]
    e = {x for x in xs}
    return a, b, c, d, e, n


def test_other_forms_are_left_as_written():
    assert "ag__" not in convert(left_alone).source
