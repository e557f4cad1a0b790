"""and / or / not with short-circuiting, comparison chains."""

import numpy as np


def traced_and(a, b):
    log = []

    def check(name, value):
        log.append(name)
        return value

    result = check("a", a) and check("b", b)
    return result, log


def traced_or(a, b, c):
    log = []

    def check(name, value):
        log.append(name)
        return value

    result = check("a", a) or check("b", b) or check("c", c)
    return result, log


def or_default(value, default):
    return value or default


def first_falsy(a, b, c):
    return a and b and c


def negations(values):
    return [not v for v in values]


def in_range(lo, x, hi):
    return lo <= x < hi


def chain_middle_once(x):
    calls = []

    def middle():
        calls.append("middle")
        return x

    inside = 0 < middle() <= 10
    return inside, calls


def chain_short_circuit(a, b):
    calls = []

    def third():
        calls.append("third")
        return 100

    result = a < b < third()
    return result, calls


def membership_chain(x, values, limit):
    return x in values != limit


def ticket_price(age, member, coupon):
    if (age < 12 or age >= 65) and not member:
        price = 5
    elif member and (coupon or age < 25):
        price = 6
    elif not (member or coupon):
        price = 12
    else:
        price = 9
    return price


def leading_positives(values):
    i = 0
    while i < len(values) and values[i] > 0:
        i += 1
    return i


def safe_ratio_positive(d, key):
    return key in d and d[key] > 0 and 100 / d[key]


def any_nan_or_large(x, limit):
    if x.size > 0 and (np.isnan(x).any() or x.max() > limit):
        verdict = "bad"
    else:
        verdict = "ok"
    return verdict


def numpy_operands(a, b):
    return (a > 0 and b), (a < 0 or b), not a


def chain_raises_late(x, text):
    return 0 < x < int(text)


def identity_chain(a, b):
    return a is b is not None, a is not b


def all_positive(values):
    ok = True
    for v in values:
        ok = ok and v > 0
    return ok


def xor_flags(a, b):
    return (a or b) and not (a and b)


def array_in_boolean_context(x, y):
    return x and y


def not_array(x):
    return not x


def ternary_on_array(x):
    return "big" if x > 1 else "small"


CASES = [
    (traced_and, (1, 2)),
    (traced_and, (0, 2)),
    (traced_and, ([], "x")),
    (traced_or, (0, "", "c")),
    (traced_or, (0, 5, "c")),
    (traced_or, ("a", 5, "c")),
    (or_default, (None, [1])),
    (or_default, (0.0, 2.5)),
    (or_default, ("set", "default")),
    (first_falsy, (1, 0, 3)),
    (first_falsy, (1, 2, 3)),
    (first_falsy, ("", 2, 3)),
    (negations, ([0, 1, "", "x", None, [0], 0.0, np.float64(2.0)],)),
    (in_range, (0, 5, 10)),
    (in_range, (0, 10, 10)),
    (in_range, (0.5, -1, 10)),
    (in_range, (0, "a", 10)),
    (chain_middle_once, (5,)),
    (chain_middle_once, (50,)),
    (chain_middle_once, (-5,)),
    (chain_short_circuit, (5, 3)),
    (chain_short_circuit, (1, 3)),
    (membership_chain, (2, [1, 2, 3], [1, 2, 3])),
    (membership_chain, (2, [1, 2, 3], [4])),
    (membership_chain, (5, [1, 2, 3], [4])),
    (ticket_price, (8, False, False)),
    (ticket_price, (20, True, False)),
    (ticket_price, (40, True, True)),
    (ticket_price, (40, False, False)),
    (ticket_price, (40, True, False)),
    (ticket_price, (70, False, True)),
    (leading_positives, ([3, 2, 1],)),
    (leading_positives, ([3, -2, 1],)),
    (safe_ratio_positive, ({"a": 4}, "a")),
    (safe_ratio_positive, ({"a": -4}, "a")),
    (safe_ratio_positive, ({"a": 4}, "b")),
    (any_nan_or_large, (np.array([1.0, np.nan]), 5.0)),
    (any_nan_or_large, (np.array([1.0, 7.0]), 5.0)),
    (any_nan_or_large, (np.array([1.0, 2.0]), 5.0)),
    (any_nan_or_large, (np.array([]), 5.0)),
    (numpy_operands, (np.float64(2.0), np.int32(0))),
    (numpy_operands, (np.float64(-1.5), np.int32(3))),
    (chain_raises_late, (5, "10")),
    (chain_raises_late, (-5, "ten")),
    (chain_raises_late, (5, "ten")),
    (identity_chain, (None, None)),
    (identity_chain, (True, True)),
    (all_positive, ([1, 2, 3],)),
    (all_positive, ([1, -2, 3],)),
    (xor_flags, (True, False)),
    (xor_flags, (1, 1)),
    (xor_flags, (0, "")),
    (array_in_boolean_context, (np.array([1, 2]), 3)),
    (array_in_boolean_context, (np.array([0]), 3)),
    (not_array, (np.array([1.0, 2.0]),)),
    (not_array, (np.array([], dtype=np.int64),)),
    (ternary_on_array, (np.array([2.0]),)),
    (ternary_on_array, (np.array([0.5, 2.0]),)),
]
