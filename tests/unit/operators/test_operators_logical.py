"""Tests for autostage.operators.logical: laziness, order and values match Python's."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autostage.operators.logical import and_, compare_chain, if_exp, not_, or_

OPS = ["<", "<=", ">", ">=", "==", "!=", "in", "not in", "is", "is not"]
PLAIN_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text("ab", max_size=2),
                         st.lists(st.integers(-1, 1), max_size=2), st.floats(allow_nan=True))


class Logged:
    """A value that records bool() and comparisons; comparisons return Logged values too."""

    def __init__(self, value, log):
        self.value, self.log = value, log

    def __bool__(self):
        self.log.append(("bool", self.value))
        return bool(self.value)

    def __repr__(self):
        return f"Logged({self.value!r})"

    def _compare(name):
        def compare(self, other):
            self.log.append((name, self.value, other.value))
            return Logged(getattr(self.value, name)(other.value), self.log)
        return compare

    __lt__, __le__ = _compare("__lt__"), _compare("__le__")
    __gt__, __ge__ = _compare("__gt__"), _compare("__ge__")
    __eq__, __ne__ = _compare("__eq__"), _compare("__ne__")
    __hash__ = None


def outcome(fn):
    """What running fn gives: ("value", v) or ("raises", type, message)."""
    try:
        value = fn()
    except Exception as error:  # noqa: BLE001 - the exception itself is the outcome compared
        return ("raises", type(error), str(error))
    return ("value", value.value if isinstance(value, Logged) else value)


def producer(values, log):
    def produce(i):
        log.append(("eval", i))
        return values[i]
    return produce


# --- and_ / or_ / not_ / if_exp -------------------------------------------------------------


PYTHON_AND_OR = [(lambda a, b_fn: a and b_fn(), and_), (lambda a, b_fn: a or b_fn(), or_)]


@pytest.mark.parametrize("python_op, operator_fn", PYTHON_AND_OR, ids=["and", "or"])
@given(a=PLAIN_VALUES, b=PLAIN_VALUES)
def test_and_or_match_python_values_and_laziness(python_op, operator_fn, a, b):
    python_log, operator_log = [], []
    expected = python_op(a, lambda: python_log.append("b") or b)
    result = operator_fn(a, lambda: operator_log.append("b") or b)
    assert result is expected
    assert operator_log == python_log


@pytest.mark.parametrize("python_op, operator_fn", PYTHON_AND_OR, ids=["and", "or"])
@given(a=st.booleans(), b=st.booleans())
def test_and_or_take_bool_of_the_left_operand_once_and_return_operands(python_op, operator_fn,
                                                                       a, b):
    python_log, operator_log = [], []
    left, right = Logged(a, python_log), Logged(b, python_log)
    expected = python_op(left, lambda: right)
    op_left, op_right = Logged(a, operator_log), Logged(b, operator_log)
    result = operator_fn(op_left, lambda: op_right)
    assert result is (op_left if expected is left else op_right)
    assert operator_log == python_log


def test_and_or_propagate_exceptions_of_the_right_operand():
    def boom():
        raise RuntimeError("right operand")

    with pytest.raises(RuntimeError, match="right operand"):
        and_(1, boom)
    with pytest.raises(RuntimeError, match="right operand"):
        or_(0, boom)
    assert and_(0, boom) == 0
    assert or_("x", boom) == "x"


@given(PLAIN_VALUES)
def test_not_matches_python(a):
    assert not_(a) is (not a)


def test_not_takes_bool_once_and_propagates_its_error():
    log = []
    assert not_(Logged(0, log)) is True
    assert log == [("bool", 0)]

    class NoBool:
        def __bool__(self):
            raise TypeError("no truth value")

    with pytest.raises(TypeError, match="no truth value"):
        not_(NoBool())


@given(PLAIN_VALUES)
def test_if_exp_evaluates_only_the_chosen_branch(cond):
    calls = []
    result = if_exp(cond, lambda: calls.append("t") or "t", lambda: calls.append("f") or "f")
    expected = "t" if cond else "f"
    assert result == expected
    assert calls == [expected]


# --- compare_chain --------------------------------------------------------------------------


@given(st.lists(PLAIN_VALUES, min_size=3, max_size=5), st.data())
def test_compare_chain_matches_python_on_plain_values(values, data):
    ops = data.draw(st.lists(st.sampled_from(OPS), min_size=len(values) - 1,
                             max_size=len(values) - 1))
    python_log, operator_log = [], []
    python = producer(values, python_log)
    source = " ".join(f"{op} v({i + 1})" for i, op in enumerate(ops))
    expected = outcome(lambda: eval(f"v(0) {source}", {"v": python}))

    operate = producer(values, operator_log)
    args = [arg for i, op in enumerate(ops) for arg in (op, lambda i=i: operate(i + 1))]
    assert outcome(lambda: compare_chain(operate(0), *args)) == expected
    assert operator_log == python_log


@given(st.lists(st.integers(-2, 2), min_size=3, max_size=5), st.data())
def test_compare_chain_bools_intermediate_results_once_like_python(values, data):
    ops = data.draw(st.lists(st.sampled_from(OPS[:6]), min_size=len(values) - 1,
                             max_size=len(values) - 1))
    python_log, operator_log = [], []
    python_values = [Logged(v, python_log) for v in values]
    source = " ".join(f"{op} v[{i + 1}]" for i, op in enumerate(ops))
    expected = eval(f"v[0] {source}", {"v": python_values})

    operator_values = [Logged(v, operator_log) for v in values]
    args = [arg for i, op in enumerate(ops)
            for arg in (op, lambda i=i: operator_values[i + 1])]
    result = compare_chain(operator_values[0], *args)
    assert (result.value, operator_log) == (expected.value, python_log)


def test_compare_chain_stops_at_the_first_false_comparison():
    log = []
    produce = producer([3, 1, 2, 0], log)
    assert compare_chain(produce(0), "<", lambda: produce(1), "<", lambda: produce(2)) is False
    assert log == [("eval", 0), ("eval", 1)]


def test_compare_chain_returns_the_last_comparison_value_unbooled():
    class Odd:
        def __gt__(self, other):  # reached as the reflection of `2 < Odd()`
            return "truthy result"

    assert compare_chain(1, "<", lambda: 2, "<", Odd) == "truthy result"
    assert compare_chain(1, "<", lambda: 2, "<", Odd) == (1 < 2 < Odd())


def test_compare_chain_without_pairs_is_a_type_error():
    with pytest.raises(TypeError, match="at least one"):
        compare_chain(1)
