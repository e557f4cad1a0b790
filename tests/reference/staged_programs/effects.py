"""print, assert and Variable updates in staged code: they run at run time, on every call, in
program order (each Variable program starts by resetting its state, so every call agrees)."""

import numpy as np

import autostage

TOTAL = autostage.Variable(np.zeros(3), name="total")
STEPS = autostage.Variable(np.int64(0), name="steps")


def print_each_step(x):
    total = x.dtype.type(0)
    for i in range(x.shape[0]):
        total = total + x[i]
        print("i =", i, "total =", total)
    return total


def print_in_branches(x):
    for v in x:
        if v > 0:
            print("positive", v)
        elif v < 0:
            print("negative", v)
        else:
            print("zero")
    print("done")
    return np.sum(x > 0)


def print_while_progress(n):
    steps = 0
    while n > 1:
        n = n // 2
        steps += 1
        print(n, end=" ")
    print()
    return steps


def print_sep_end(a, b):
    print(a, b, sep=" | ", end=" <\n")
    if a > b:
        print("a wins", a - b, sep=":")
    else:
        print("b wins", b - a, sep=":")
    return a + b


def print_array_values(x):
    for i in range(x.shape[0]):
        if i % 2 == 0:
            print(x[i] * 2)
    print(x)
    return x.shape[0]


def print_float32_values(x):
    y = x * np.float32(0.5)
    print("half:", y)
    s = np.sum(y)
    if s > 1.0:
        print("large", s)
    return s


def assert_positive(x):
    assert np.all(x > 0), "all entries must be positive"
    return np.log(x)


def assert_in_loop(x):
    total = x.dtype.type(0)
    for v in x:
        assert v >= 0, "negative entry"
        total = total + v
    return total


def assert_without_message(x, limit):
    y = x * 2
    assert np.max(y) < limit
    return y


def assert_converged(a, tol, max_iter):
    x = a
    it = 0
    while it < max_iter and np.abs(x * x - a) > tol:
        x = 0.5 * (x + a / x)
        it += 1
    assert np.abs(x * x - a) <= tol, "did not converge"
    return x


def print_then_assert(x):
    # The print before the failing assert must appear in stdout.
    for i in range(x.shape[0]):
        print("checking", x[i])
        assert x[i] != 0, "zero found"
    return x


def assert_probability(p):
    total = np.sum(p)
    assert np.abs(total - 1.0) < 1e-9, "probabilities must sum to one"
    assert np.all(p >= 0), "probabilities must be non-negative"
    return np.cumsum(p)


def print_in_helper(x):
    return _report("value", x) + _report("square", x * x)


def _report(name, v):
    if v > 10:
        print(name, "is large:", v)
    else:
        print(name, "is small:", v)
    return v


def print_bool_and_int(x):
    flag = x > 0
    count = np.sum(x > 0)
    print(flag, count, np.any(flag))
    return count


def accumulate_in_variables(x):
    TOTAL.assign(np.zeros(3))
    STEPS.assign(0)
    for i in range(x.shape[0]):
        if x[i] > 0:
            _add_row(x[i] * np.ones(3))
    return TOTAL.read(), STEPS.read()


def _add_row(row):
    TOTAL.assign_add(row)
    STEPS.assign_add(1)
    print("steps:", STEPS.read())


CASES = [
    (print_each_step, (np.array([1.0, 2.5, -0.5]),)),
    (print_each_step, (np.array([3, 4], dtype=np.int32),)),
    (print_in_branches, (np.array([1.5, -2.0, 0.0, 3.0]),)),
    (print_in_branches, (np.array([0], dtype=np.int64),)),
    (print_while_progress, (np.int64(37),)),
    (print_while_progress, (np.int64(1),)),
    (print_sep_end, (np.float64(2.5), np.float64(1.0))),
    (print_sep_end, (np.int64(2), np.int64(7))),
    (print_array_values, (np.array([1.0, 2.0, 3.0]),)),
    (print_array_values, (np.array([[1, 2], [3, 4]], dtype=np.int16),)),
    (print_float32_values, (np.array([0.1, 3.3], dtype=np.float32),)),
    (print_float32_values, (np.array([0.1], dtype=np.float32),)),
    (assert_positive, (np.array([1.0, np.e]),)),
    (assert_positive, (np.array([1.0, 0.0]),)),
    (assert_in_loop, (np.array([1.0, 2.0]),)),
    (assert_in_loop, (np.array([1, -2, 3], dtype=np.int32),)),
    (assert_without_message, (np.array([1.0, 2.0]), np.float64(5.0))),
    (assert_without_message, (np.array([1.0, 3.0]), np.float64(5.0))),
    (assert_converged, (np.float64(2.0), 1e-12, 50)),
    (assert_converged, (np.float64(2.0), 1e-12, 2)),
    (print_then_assert, (np.array([1.0, 2.0, 0.0, 4.0]),)),
    (print_then_assert, (np.array([5, 6], dtype=np.int64),)),
    (assert_probability, (np.array([0.25, 0.25, 0.5]),)),
    (assert_probability, (np.array([0.5, 0.6]),)),
    (assert_probability, (np.array([1.5, -0.5]),)),
    (print_in_helper, (np.float64(2.0),)),
    (print_in_helper, (np.float64(5.0),)),
    (print_in_helper, (np.float64(12.0),)),
    (print_bool_and_int, (np.array([1.0, -1.0, 2.0]),)),
    (accumulate_in_variables, (np.array([1.5, -2.0, 3.0]),)),
    (accumulate_in_variables, (np.array([-1, 4], dtype=np.int32),)),
]
