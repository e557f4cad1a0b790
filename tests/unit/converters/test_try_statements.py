"""Tests for autostage.converters.try_statements: generated source, and behaviour equal to
Python's on Python values (handlers, else, finally, with and context managers that swallow)."""

import contextlib

import pytest
from converter_testing import assert_same_behaviour, convert_with, dedent

import autostage
from autostage.converters import try_statements


def convert(fn):
    return convert_with(fn, try_statements)


def handled(d, k, log):
    try:
        v = d[k]
    except (KeyError, TypeError):
        v = -1
    except Exception:
        v = -2
    else:
        log.append("else")
    finally:
        log.append("finally")
    return v


def test_try_bodies_and_finally_clauses_are_watched():
    assert convert(handled).source == dedent("""
        def handled(d, k, log):
            try_ = ag__.try_region(lambda: ((KeyError, TypeError), Exception))
            try:
                with try_:
                    v = d[k]
            except ag__.AUTOSTAGE_ERRORS:
                raise
            except (KeyError, TypeError):
                v = -1
            except Exception:
                v = -2
            else:
                log.append('else')
            finally:
                with try_.final():
                    log.append('finally')
            return v
    """)


def test_try_behaves_like_python():
    inputs = [({"a": 1}, "a", []), ({"a": 1}, "b", []), ({"a": 1}, ["x"], []), (None, 1, [])]
    assert_same_behaviour(handled, inputs, try_statements)


def bare_and_finally_only(x):
    try:
        try:
            return 1 / x
        except:  # noqa: E722
            return None
    finally:
        x = 0


def test_bare_except_and_finally_only():
    source = convert(bare_and_finally_only).source
    assert "ag__.try_region(lambda: (None,))" in source  # a bare except
    assert "ag__.try_region(None)" in source  # finally only: no handlers
    assert_same_behaviour(bare_and_finally_only, [(2,), (0,)], try_statements)


class Swallow:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")
        return "value"

    def __exit__(self, kind, exc, tb):
        self.log.append(kind.__name__ if kind else "exit")
        return True


def managed(x, log):
    with Swallow(log) as v, contextlib.suppress(ArithmeticError):
        log.append(v)
        log.append(1 / x)
        raise KeyError("swallowed")
    return log


def test_with_context_managers_are_wrapped_and_keep_their_semantics():
    assert convert(managed).source == dedent("""
        def managed(x, log):
            with ag__.with_region(Swallow(log)) as v, ag__.with_region(contextlib.suppress(ArithmeticError)):
                log.append(v)
                log.append(1 / x)
                raise KeyError('swallowed')
            return log
    """)  # noqa: E501
    fn = convert(managed).function
    for x in (0, 2):
        assert fn(x, []) == managed(x, [])


@pytest.mark.parametrize("manager, message", [
    (1, "'int' object does not support the context manager protocol"),
    (type("Half", (), {"__enter__": lambda self: self})(),
     "'Half' object does not support the context manager protocol (missed __exit__ method)"),
])
def test_a_non_context_manager_raises_as_python_does(manager, message):
    def use(m):
        with m:
            return 1

    with pytest.raises(TypeError) as python:
        use(manager)
    assert str(python.value) == message
    with pytest.raises(TypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        convert(use).function(manager)


def suppressed_raise_then_loop(xs):
    with contextlib.suppress(ValueError):
        raise ValueError("suppressed")
    for j in range(len(xs)):
        if xs[j] > 1:
            return j
    return -1


def test_code_after_a_suppressed_raise_keeps_its_state():
    # The raise made the rest of the function look unreachable: the loop's return flag was
    # passed in unbound (UnboundLocalError: 'do_return') by the whole conversion.
    fn = autostage.to_graph(suppressed_raise_then_loop)
    assert [fn(xs) for xs in ([0, 2, 3], [0, 1])] == [1, -1]
    assert [suppressed_raise_then_loop(xs) for xs in ([0, 2, 3], [0, 1])] == [1, -1]
