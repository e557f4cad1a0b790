"""Tests for autostage.operators.exceptions: assert_stmt behaves like the assert statement."""

import pytest

from autostage.operators.exceptions import assert_stmt

# Compiled from a string so that pytest's assertion rewriting leaves these plain asserts alone.
_PLAIN = """
def python_assert(test, msg=None, with_message=True):
    if with_message:
        assert test, msg
    else:
        assert test
"""
_namespace: dict = {}
exec(compile(_PLAIN, "<plain assert>", "exec"), _namespace)
python_assert = _namespace["python_assert"]


@pytest.mark.parametrize("test", [True, 1, [0], "x"])
def test_a_true_assertion_returns_none_and_never_builds_the_message(test):
    calls = []
    assert assert_stmt(test, lambda: calls.append("msg")) is None
    assert calls == []


@pytest.mark.parametrize("msg", ["went wrong", 42, ("a", "tuple"), None])
def test_a_false_assertion_raises_what_assert_raises(msg):
    with pytest.raises(AssertionError) as python_error:
        python_assert(0, msg)
    with pytest.raises(AssertionError) as operator_error:
        assert_stmt(0, lambda: msg)
    assert operator_error.value.args == python_error.value.args == (msg,)


def test_a_bare_assertion_raises_assertion_error_without_arguments():
    with pytest.raises(AssertionError) as python_error:
        python_assert([], with_message=False)
    with pytest.raises(AssertionError) as operator_error:
        assert_stmt([])
    assert operator_error.value.args == python_error.value.args == ()


def test_an_error_while_building_the_message_propagates():
    def message():
        raise LookupError("bad message")

    with pytest.raises(LookupError, match="bad message"):
        assert_stmt(False, message)


def test_the_test_is_booled_once():
    calls = []

    class Falsy:
        def __bool__(self):
            calls.append("bool")
            return False

    with pytest.raises(AssertionError, match="^m$"):
        assert_stmt(Falsy(), lambda: "m")
    assert calls == ["bool"]
