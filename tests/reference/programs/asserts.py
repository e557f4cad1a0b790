"""assert statements that pass and fail, with and without messages."""

import numpy as np


def checked_divide(a, b):
    assert b != 0, "division by zero"
    return a / b


def double_positive(x):
    assert x > 0
    return x * 2


def unpack_triple(values):
    assert len(values) == 3, f"expected 3 values, got {len(values)}"
    a, b, c = values
    return a * b + c


def all_non_negative(values):
    total = 0
    for v in values:
        assert v >= 0, ("negative value", v)
        total += v
    return total


def lazy_message(x):
    log = []

    def build_message():
        log.append("message built")
        return f"bad value {x}"

    try:
        assert x, build_message()
    except AssertionError as e:
        return "failed", str(e), log
    return "passed", log


def condition_evaluated_once(values):
    calls = []

    def nonempty():
        calls.append(len(values))
        return len(values) > 0

    assert nonempty(), "empty input"
    return calls


def safe_log(x):
    assert np.all(x > 0), "log of non-positive values"
    return np.log(x)


def mean_of(values):
    assert isinstance(values, list), type(values).__name__
    assert values, "mean of empty list"
    return sum(values) / len(values)


def sorted_check(values):
    for i in range(1, len(values)):
        assert values[i - 1] <= values[i], f"unsorted at index {i}"
    return values[0], values[-1]


def probability_vector(p):
    total = np.sum(p)
    assert abs(total - 1.0) < 1e-9, f"sums to {total:.3f}"
    assert (p >= 0).all(), "negative probability"
    return np.cumsum(p)


def assert_in_helper(n):
    def require(cond, what):
        assert cond, what
        return True

    require(n > 0, "n must be positive")
    require(n % 2 == 0, "n must be even")
    return n // 2


CASES = [
    (checked_divide, (7, 2)),
    (checked_divide, (7, 0)),
    (double_positive, (3,)),
    (double_positive, (-3,)),
    (unpack_triple, ([2, 3, 4],)),
    (unpack_triple, ([2, 3],)),
    (all_non_negative, ([1, 2, 3],)),
    (all_non_negative, ([1, -2, 3],)),
    (lazy_message, (1,)),
    (lazy_message, (0,)),
    (condition_evaluated_once, ([1, 2],)),
    (condition_evaluated_once, ([],)),
    (safe_log, (np.array([1.0, np.e]),)),
    (safe_log, (np.array([1.0, 0.0]),)),
    (mean_of, ([1, 2, 4],)),
    (mean_of, ((1, 2),)),
    (mean_of, ([],)),
    (sorted_check, ([1, 2, 2, 5],)),
    (sorted_check, ([1, 3, 2],)),
    (probability_vector, (np.array([0.25, 0.25, 0.5]),)),
    (probability_vector, (np.array([0.5, 0.6]),)),
    (probability_vector, (np.array([1.5, -0.5]),)),
    (assert_in_helper, (4,)),
    (assert_in_helper, (0,)),
    (assert_in_helper, (3,)),
]
