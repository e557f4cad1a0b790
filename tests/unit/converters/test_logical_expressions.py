"""Tests for autostage.converters.logical_expressions: source, and behaviour equal to Python's."""

import numpy as np
import pytest
from converter_testing import convert_with, dedent

from autostage.converters import logical_expressions


def convert(fn):
    return convert_with(fn, logical_expressions)


def logic(a, b, c, log):
    def at(name, value):
        log.append(name)
        return value

    x = at("a", a) and at("b", b) and at("c", c)
    y = at("a", a) or at("b", b) and not at("c", c)
    z = at("a", a) < at("b", b) <= at("c", c)
    w = at("a", a) < at("b", b)
    return x, y, z, w, not a


def test_boolean_operators_and_chains_become_operators():
    assert convert(logic).source == dedent("""
        def logic(a, b, c, log):

            def at(name, value):
                log.append(name)
                return value
            x = ag__.and_(at('a', a), lambda: ag__.and_(at('b', b), lambda: at('c', c)))
            y = ag__.or_(at('a', a), lambda: ag__.and_(at('b', b), lambda: ag__.not_(at('c', c))))
            z = ag__.compare_chain(at('a', a), '<', lambda: at('b', b), '<=', lambda: at('c', c))
            w = at('a', a) < at('b', b)
            return (x, y, z, w, ag__.not_(a))
    """)


@pytest.mark.parametrize("args", [
    (0, 1, 2), (1, 0, 2), (1, 2, 0), (1, 2, 3), (3, 2, 1), (2, 2, 2), ("", "x", "y"),
    ([], [0], None),
])
def test_values_and_short_circuits_are_pythons(args):
    expected_log, got_log = [], []
    try:
        expected = logic(*args, expected_log)
    except TypeError as e:
        with pytest.raises(TypeError, match=str(e)):
            convert(logic).function(*args, got_log)
    else:
        got = convert(logic).function(*args, got_log)
        assert got == expected
        assert [type(v) for v in got] == [type(v) for v in expected]  # operands, not bools
    assert got_log == expected_log


def membership(x, xs, obj):
    return x in xs not in obj, x is not None is not xs, 0 != x == 1 > -1 >= -2


def test_every_comparison_operator():
    assert convert(membership).source == dedent("""
        def membership(x, xs, obj):
            return (ag__.compare_chain(x, 'in', lambda: xs, 'not in', lambda: obj), ag__.compare_chain(x, 'is not', lambda: None, 'is not', lambda: xs), ag__.compare_chain(0, '!=', lambda: x, '==', lambda: 1, '>', lambda: -1, '>=', lambda: -2))
    """)  # noqa: E501
    for args in ((1, [1], [[2]]), (1, [1], [[1]]), (None, [], [])):
        assert convert(membership).function(*args) == membership(*args)


def arrays(a, b):
    return a < b < 5, (a and b) if a.size == 1 else None


def test_numpy_values_keep_python_behaviour():
    fn = convert(arrays).function
    with pytest.raises(ValueError, match="ambiguous"):
        fn(np.arange(3), np.arange(3) + 1)
    got, expected = fn(np.array([1]), np.array([2])), arrays(np.array([1]), np.array([2]))
    assert got[0] == expected[0] and got[1] is not None and got[1] == expected[1]


def shapes(x, y, names):
    return (x.shape == y.shape[:-1], (3,) != x.shape, x.shape in [(3,), (4,)],
            x.shape[0] not in (1, 2), names == ["a"], x.size == y.size, "a" in names,
            "b" in {"a": 1}, "a" in "abc")


def test_comparisons_of_shapes_and_displays_become_operators():
    """They may compare tuples of staged sizes (runtime/staging/sequences.py), and ``in`` of a
    name may ask a range with a staged bound; others stay (``in`` of a dict, set or string
    display)."""
    assert convert(shapes).source == dedent("""
        def shapes(x, y, names):
            return (ag__.eq(x.shape, y.shape[:-1]), ag__.ne((3,), x.shape), ag__.in_(x.shape, [(3,), (4,)]), ag__.not_in(x.shape[0], (1, 2)), ag__.eq(names, ['a']), x.size == y.size, ag__.in_('a', names), 'b' in {'a': 1}, 'a' in 'abc')
    """)  # noqa: E501
    for args in ((np.zeros(3), np.zeros((3, 2)), ["a"]), (np.zeros(2), np.zeros((3, 2)), [])):
        assert convert(shapes).function(*args) == shapes(*args)


def unsafe(x, y):
    a = x and (n := y)
    b = x < (m := y) < 3
    c = (k := x) and y
    return a, b, c, n, m, k


def test_walrus_operands_are_left_alone():
    assert convert(unsafe).source == dedent("""
        def unsafe(x, y):
            a = ag__.python_operand(x, '`and`') and (n := y)
            b = x < (m := y) < 3
            c = ag__.and_((k := x), lambda: y)
            return (a, b, c, n, m, k)
    """)
    assert convert(unsafe).function(1, 2) == unsafe(1, 2)


def in_class(a, b):
    class C:
        both = a and b
        flipped = not a

        def method(self):
            return a or b

    return C.both, C.flipped, C().method()


def test_class_bodies_are_left_alone():
    assert convert(in_class).source == dedent("""
        def in_class(a, b):

            class C:
                both = a and b
                flipped = not a

                def method(self):
                    return ag__.or_(a, lambda: b)
            return (C.both, C.flipped, C().method())
    """)
    for args in ((0, 1), (2, 3)):
        assert convert(in_class).function(*args) == in_class(*args)


class Truthy:
    """Records each truth test, to compare how often and in which order Python takes them."""

    def __init__(self, name, value, log):
        self.name, self.value, self.log = name, value, log

    def __bool__(self):
        self.log.append(self.name)
        return self.value


def truth_tests(a, b, c):
    out = []
    if a and (b or not c):
        out.append(1)
    x = 2 if a or b else 3
    while a and b:
        break
    return out, x, a and b


def test_a_tests_and_or_give_its_truth_as_python_takes_it():
    """In an if, while or ternary test only the truth of ``a and b`` matters: ``and_test`` /
    ``or_test`` give it (a bool), taking each operand's truth once, in Python's order; the
    value of ``a and b`` elsewhere stays an operand."""
    from autostage import conversion

    converted = convert_with(truth_tests, *conversion.converters())
    source = converted.source
    assert "ag__.and_test(a, lambda: ag__.or_test(b, lambda: ag__.not_(c)))" in source
    assert "ag__.or_test(a, lambda: b)" in source
    assert "ag__.and_test(a, lambda: b)" in source  # the while test
    assert "return (out, x, ag__.and_(a, lambda: b))" in source
    for values in [(True, False, False), (True, False, True), (False, True, True),
                   (True, True, False)]:
        logs = [], []
        results = [fn(*(Truthy(n, v, log) for n, v in zip("abc", values, strict=True)))
                   for fn, log in zip((truth_tests, converted.function), logs, strict=True)]
        assert results[0][:2] == results[1][:2]
        assert results[0][2].name == results[1][2].name
        assert logs[0] == logs[1], values
