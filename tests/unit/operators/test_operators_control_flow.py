"""Tests for autostage.operators.control_flow: Python-path equivalence with if/while/for."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from autostage.operators.control_flow import for_stmt, if_branch, if_stmt, while_stmt


class Truthy:
    """A condition that records every bool() taken of it."""

    def __init__(self, value, log):
        self.value, self.log = value, log

    def __bool__(self):
        self.log.append(("bool", self.value))
        return self.value


def logged_generator(items, log):
    for item in items:
        log.append(("yield", item))
        yield item
    log.append("exhausted")


# --- if_stmt -------------------------------------------------------------------------------


@pytest.mark.parametrize("cond, expected", [(True, ("body", 2)), (False, ("orelse", 0)),
                                            (0, ("orelse", 0)), ([1], ("body", 2)),
                                            ("", ("orelse", 0))])
def test_if_stmt_runs_only_the_chosen_branch_on_the_state(cond, expected):
    calls = []

    def body(x):
        calls.append("body")
        return ("body", x + 1)

    def orelse(x):
        calls.append("orelse")
        return ("orelse", x - 1)

    assert if_stmt(cond, body, orelse, (1,)) == expected
    assert calls == [expected[0]]


def test_if_stmt_takes_bool_of_the_condition_once_and_defaults_to_empty_state():
    log = []
    assert if_stmt(Truthy(True, log), lambda: ("yes",), lambda: ("no",)) == ("yes",)
    assert log == [("bool", True)]


def test_if_stmt_propagates_body_exceptions_and_bool_errors_unchanged():
    def body():
        raise KeyError("inside")

    with pytest.raises(KeyError, match="inside"):
        if_stmt(True, body, lambda: ())
    with pytest.raises(ValueError) as python_error:
        if np.array([1, 2]):
            pass
    with pytest.raises(ValueError) as operator_error:
        if_stmt(np.array([1, 2]), lambda: (), lambda: ())
    assert str(operator_error.value) == str(python_error.value)


@pytest.mark.parametrize("cond", [True, False, 0, 2, [1], "", None, np.True_, np.float64(0.0)])
def test_if_branch_gives_the_branch_if_stmt_would_run(cond):
    def body(x):
        return ("body", x + 1)

    def orelse(x):
        return ("orelse", x - 1)

    assert if_branch(cond, body, orelse)(1) == if_stmt(cond, body, orelse, (1,))
    assert if_branch(cond, body, None)(5) == if_stmt(cond, body, None, (5,))
    assert if_branch(cond, lambda: None, None)() in (None, ())  # a statement without state


def test_if_branch_takes_bool_of_the_condition_once_and_raises_like_python():
    log = []
    assert if_branch(Truthy(False, log), lambda: ("yes",), lambda: ("no",))() == ("no",)
    assert log == [("bool", False)]
    with pytest.raises(ValueError, match="truth value of an array"):
        if_branch(np.array([1, 2]), lambda: (), lambda: ())


# --- while_stmt ----------------------------------------------------------------------------


def test_while_stmt_matches_a_python_while_in_results_and_call_order():
    python_log, operator_log = [], []
    i, total = 0, 0
    while Truthy(i < 3, python_log):
        python_log.append(("body", i))
        i, total = i + 1, total + i

    def test(i, total):
        return Truthy(i < 3, operator_log)

    def body(i, total):
        operator_log.append(("body", i))
        return i + 1, total + i

    assert while_stmt(test, body, (0, 0)) == (i, total) == (3, 3)
    assert operator_log == python_log


def test_while_stmt_with_a_false_first_test_never_runs_the_body():
    calls = []
    state = while_stmt(lambda x: False, lambda x: calls.append(x) or (x,), ("s",), opts={})
    assert state == ("s",)
    assert calls == []


def test_while_stmt_propagates_an_exception_from_the_body():
    def body(i):
        if i == 2:
            raise ZeroDivisionError("at two")
        return (i + 1,)

    with pytest.raises(ZeroDivisionError, match="at two"):
        while_stmt(lambda i: True, body, (0,))


# --- for_stmt ------------------------------------------------------------------------------


@pytest.mark.parametrize("iterable", [[1, 2, 3], (), range(4), "ab", {"k": 1, "j": 2}])
def test_for_stmt_matches_a_python_for(iterable):
    seen = []
    for item in iterable:
        seen.append(item)
    assert for_stmt(iterable, None, lambda item, acc: (acc + [item],), ([],)) == (seen,)


def test_for_stmt_over_an_empty_generator_keeps_the_state():
    log = []
    assert for_stmt(logged_generator([], log), None, lambda item, x: (x + 1,), (7,)) == (7,)
    assert log == ["exhausted"]


def test_for_stmt_stops_on_extra_test_without_advancing_the_generator():
    log = []
    gen = logged_generator([1, 2, 3, 4], log)

    def extra_test(brk, total):
        log.append(("test", brk))
        return not brk

    def body(item, brk, total):
        log.append(("body", item))
        return item == 2, total + item

    assert for_stmt(gen, extra_test, body, (False, 0)) == (True, 3)
    assert log == [("test", False), ("yield", 1), ("body", 1),
                   ("test", False), ("yield", 2), ("body", 2), ("test", True)]
    assert next(gen) == 3  # the generator is where a Python `for ... break` leaves it


def test_for_stmt_with_extra_test_runs_to_exhaustion_like_python():
    log = []
    state = for_stmt(logged_generator([5, 6], log), lambda n: True, lambda item, n: (n + item,),
                     (0,))
    assert state == (11,)
    assert log == [("yield", 5), ("yield", 6), "exhausted"]


@pytest.mark.parametrize("extra_test", [None, lambda: True])
def test_for_stmt_calls_iter_exactly_once(extra_test):
    calls = []

    class Iterable:
        def __iter__(self):
            calls.append("iter")
            return Iterator()

    class Iterator:
        def __init__(self):
            self.left = 2

        def __iter__(self):
            calls.append("iter of iterator")
            return self

        def __next__(self):
            if not self.left:
                raise StopIteration
            self.left -= 1
            return self.left

    assert for_stmt(Iterable(), extra_test, lambda item: (), ()) == ()
    assert calls == ["iter"]


@pytest.mark.parametrize("extra_test", [None, lambda: True])
def test_for_stmt_does_not_swallow_stop_iteration_from_the_body(extra_test):
    def body(item):
        raise StopIteration("from the body")

    with pytest.raises(StopIteration, match="from the body"):
        for_stmt([1, 2], extra_test, body, ())


@pytest.mark.parametrize("extra_test", [None, lambda: True])
def test_for_stmt_over_a_non_iterable_raises_like_python(extra_test):
    with pytest.raises(TypeError) as python_error:
        for _ in 5:
            pass
    with pytest.raises(TypeError) as operator_error:
        for_stmt(5, extra_test, lambda item: (), ())
    assert str(operator_error.value) == str(python_error.value) == "'int' object is not iterable"


@given(st.lists(st.integers(-5, 5), max_size=8), st.integers(-5, 5))
def test_for_stmt_with_break_lowering_matches_python_break(items, stop_at):
    python_seen = []
    for item in items:
        python_seen.append(item)
        if item == stop_at:
            break

    def body(item, brk, seen):
        return item == stop_at, seen + [item]

    brk, seen = for_stmt(iter(items), lambda brk, seen: not brk, body, (False, []))
    assert seen == python_seen
    assert brk == (stop_at in items)
