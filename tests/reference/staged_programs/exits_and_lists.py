"""Early exits from nested staged loops, lists popped/sliced/reversed in staged code, variables
assigned on some paths only, loop bodies that raise, and try/except around staged code."""

import contextlib

import numpy as np


def first_above_2d(x, threshold):
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            if x[i, j] > threshold:
                return x[i, j]
    return -1.0


def first_position_2d(x, threshold):
    i = 0
    while i < x.shape[0]:
        for j in range(x.shape[1]):
            if x[i, j] > threshold:
                if x[i, j] > 2 * threshold:
                    return i, j
                break
        i += 1
    return -1, -1


def found_flag_nested(x, threshold):
    found = False
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            if x[i, j] > threshold:
                val = x[i, j]
                found = True
                break
        if found:
            break
    if found:
        return val
    return -2.0


def return_or_else_in_loop(x, a, b):
    for i in range(3):
        if x > i:
            return a
        else:
            y = b
    return y


def pop_in_expression(n):
    stack = [1.0, 2.0, 3.0]
    s = 0.0
    for i in range(n):
        s += stack.pop() * (i + 1)
    return s, stack


def rotate_popped(n):
    items = [5, 6, 7]
    for _i in range(n):
        items.append(items[0] + items.pop(0))
    return items


def reversed_and_slices(n):
    lst = []
    for i in range(n):
        lst.append(i * 1.5)
    s = 0.0
    for v in reversed(lst):
        s = s * 3 + v
    return s, lst[::-1], lst[1:-1], lst[::2], len(lst[1:])


def comprehensions_over_staged(n, x, y, t):
    lst = []
    for i in range(n):
        lst.append(np.float64(i))
    backwards = [v for v in reversed(lst)]
    products = [a * b for a, b in zip(x, y, strict=False)]
    above = [v * 2 for v in x if v > t]
    return backwards, lst[1:], products, above


def last_of_list(n):
    lst = []
    for i in range(n):
        lst.append(i * 0.5)
    return lst[-1], len(lst)


def scalar_casts_appended(n, x):
    lst = []
    for i in range(n):
        lst.append(np.float32(i) * x)
    s = np.float64(0.0)
    for v in reversed(lst):
        s = s * 2 + np.float64(v)
    return np.stack(lst[1:]), s, np.int64(x * 2.7), np.bool_(x)


def zero_trip_raising_body(n, lst):
    for _i in range(n):
        lst[5]
    return 1


def list_only_in_else(x, a, b):
    if x > 0:
        return [a]
    else:
        y = [b, a]
    return y


def tuple_only_in_else_while(x, a, b):
    n = 0
    while n < 3:
        n += 1
        if x > n:
            return (a, n)
        else:
            y = (b, n)
    return y


def handled_trace_time_key_error(x, i, options):
    try:
        scale = options["scale"]
    except KeyError:
        scale = 2.0
    return x[i] * scale


def index_or_default(x, i):
    try:
        return x[i]
    except IndexError:
        return -1.0


def suppressed_index(x, i):
    r = -1.0
    with contextlib.suppress(IndexError):
        r = x[i]
    return r


CASES = [
    (first_above_2d, (np.arange(12.0).reshape(3, 4), np.float64(5.0))),
    (first_above_2d, (np.arange(12.0).reshape(3, 4), np.float64(50.0))),
    (first_above_2d, (np.zeros((0, 2)), np.float64(0.0))),
    (first_position_2d, (np.arange(12.0).reshape(3, 4), np.float64(4.0))),
    (first_position_2d, (np.arange(12.0).reshape(3, 4), np.float64(7.0))),
    (first_position_2d, (np.arange(12.0).reshape(3, 4), np.float64(70.0))),
    (found_flag_nested, (np.arange(6.0).reshape(2, 3), np.float64(3.5))),
    (found_flag_nested, (np.arange(6.0).reshape(2, 3), np.float64(35.0))),
    (return_or_else_in_loop, (np.float64(1.5), np.float64(2.0), np.float64(3.0))),
    (return_or_else_in_loop, (np.float64(-1.0), np.float64(2.0), np.float64(3.0))),
    (pop_in_expression, (np.int64(0),)),
    (pop_in_expression, (np.int64(2),)),
    (pop_in_expression, (np.int64(3),)),
    (pop_in_expression, (np.int64(4),)),
    (rotate_popped, (np.int64(0),)),
    (rotate_popped, (np.int64(5),)),
    (reversed_and_slices, (np.int64(0),)),
    (reversed_and_slices, (np.int64(1),)),
    (reversed_and_slices, (np.int64(5),)),
    (comprehensions_over_staged, (np.int64(3), np.arange(4.0), np.ones(3), np.float64(1.5))),
    (comprehensions_over_staged, (np.int64(0), np.arange(4.0), np.ones(0), np.float64(9.0))),
    (last_of_list, (np.int64(3),)),
    (last_of_list, (np.int64(0),)),
    (scalar_casts_appended, (np.int64(4), np.float32(1.5))),
    (scalar_casts_appended, (np.int64(2), np.float32(0.0))),
    (zero_trip_raising_body, (np.int64(0), [1])),
    (zero_trip_raising_body, (np.int64(2), [1])),
    (list_only_in_else, (np.float64(1.0), np.float64(2.0), np.float64(3.0))),
    (list_only_in_else, (np.float64(-1.0), np.float64(2.0), np.float64(3.0))),
    (tuple_only_in_else_while, (np.float64(1.5), np.float64(2.0), np.float64(3.0))),
    (tuple_only_in_else_while, (np.float64(-1.0), np.float64(2.0), np.float64(3.0))),
    (handled_trace_time_key_error, (np.ones(3), np.int64(1), {})),
    (handled_trace_time_key_error, (np.ones(3), np.int64(1), {"scale": 3.0})),
    (index_or_default, (np.zeros(3), np.int64(7))),
    (suppressed_index, (np.zeros(3), np.int64(7))),
]
