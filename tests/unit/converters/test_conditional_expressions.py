"""Tests for autostage.converters.conditional_expressions: source, and Python behaviour."""

import numpy as np
import pytest
from autostage.runtime.tensor import StagingTypeError
from converter_testing import convert_with, dedent

import autostage
from autostage.converters import conditional_expressions


def convert(fn):
    return convert_with(fn, conditional_expressions)


def ternaries(x, y, log):
    def at(name, value):
        log.append(name)
        return value

    a = at("a", x) if at("c", y) else at("b", -x)
    b = (x if y else 0) if (x if not y else y) else (1 if x else 2)
    c = [v if v > 1 else -v for v in range(x)]
    return a, b, c


def test_ternaries_become_if_exp_with_lazy_branches():
    assert convert(ternaries).source == dedent("""
        def ternaries(x, y, log):

            def at(name, value):
                log.append(name)
                return value
            a = ag__.if_exp_branch(at('c', y), lambda: at('a', x), lambda: at('b', -x))()
            b = ag__.if_exp_branch(ag__.if_exp_branch(not y, lambda: x, lambda: y)(), lambda: ag__.if_exp_branch(y, lambda: x, lambda: 0)(), lambda: ag__.if_exp_branch(x, lambda: 1, lambda: 2)())()
            c = [ag__.if_exp_branch(v > 1, lambda: v, lambda: -v)() for v in range(x)]
            return (a, b, c)
    """)  # noqa: E501


@pytest.mark.parametrize("x, y", [(0, 0), (3, 0), (0, 5), (4, 2), (2, [])])
def test_values_and_evaluation_order_are_pythons(x, y):
    expected_log, got_log = [], []
    assert convert(ternaries).function(x, y, got_log) == ternaries(x, y, expected_log)
    assert got_log == expected_log


def raises(x):
    return 1 / x if x else [][x]


def test_only_the_chosen_branch_runs_and_raises():
    fn = convert(raises).function
    assert fn(4) == raises(4) == 0.25
    with pytest.raises(IndexError):
        fn(0)


def generator_of_ternaries(xs, flag):
    return list(v if flag else -v for v in xs)


def test_comprehension_variables_are_seen_by_the_lambdas():
    fn = convert(generator_of_ternaries).function
    assert fn([1, 2], True) == generator_of_ternaries([1, 2], True) == [1, 2]
    assert fn([1, 2], False) == [-1, -2]


def unsafe(x, y):
    a = (n := x) if y else 0
    b = x if y else globals()["__name__"]
    c = x if (m := y) else n + m
    return a, b, c


def test_branches_that_would_change_inside_a_lambda_are_left_alone():
    """Left as written, the test told apart: Python's value as it is, a staged one an error."""
    assert convert(unsafe).source == dedent("""
        def unsafe(x, y):
            a = (n := x) if ag__.python_operand(y, 'a conditional expression') else 0
            b = x if ag__.python_operand(y, 'a conditional expression') else globals()['__name__']
            c = ag__.if_exp_branch((m := y), lambda: x, lambda: n + m)()
            return (a, b, c)
    """)
    for args in ((1, 1), (2, 3), (0, 4)):
        assert convert(unsafe).function(*args) == unsafe(*args)


def first_positive_index(x):
    i, n = 0, x.shape[0]
    while i < n and (v := x[i]) > 0:
        i += 1
    return i, v


def test_a_staged_test_next_to_an_assignment_expression_is_a_clear_error():
    with pytest.raises(StagingTypeError, match=r"tested by `and` at .*test_conditional_expres"
                                               r"sions.py:\d+ whose other operand assigns"):
        autostage.convert(first_positive_index)(np.array([1.0, -1.0]))
    assert autostage.to_graph(first_positive_index)(np.array([1.0, -1.0])) == (1, -1.0)


def in_class(flag):
    class C:
        scale = 10
        value = scale if flag else -scale
        items = [flag if flag else 0 for _ in range(1)]

        def method(self, k=scale if flag else 0):
            return k if flag else -k

    return C.value, C.items, C().method()


def test_class_bodies_keep_their_expressions_and_methods_are_converted():
    assert convert(in_class).source == dedent("""
        def in_class(flag):

            class C:
                scale = 10
                value = scale if flag else -scale
                items = [flag if flag else 0 for _ in range(1)]

                def method(self, k=scale if flag else 0):
                    return ag__.if_exp_branch(flag, lambda: k, lambda: -k)()
            return (C.value, C.items, C().method())
    """)
    for flag in (True, False):
        assert convert(in_class).function(flag) == in_class(flag)
