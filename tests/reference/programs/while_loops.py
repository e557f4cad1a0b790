"""while loops: counters, convergence, while/else, break and continue."""

import numpy as np


def sum_digits(n):
    total = 0
    while n > 0:
        total += n % 10
        n //= 10
    return total


def newton_sqrt(a):
    if a < 0:
        raise ValueError("square root of a negative number")
    x = a if a > 1 else 1.0
    iterations = 0
    while abs(x * x - a) > 1e-12:
        x = 0.5 * (x + a / x)
        iterations += 1
    return x, iterations


def countdown(n):
    while n > 0:
        print(n)
        n -= 1
    print("liftoff")
    return n


def index_of(values, target):
    i = 0
    while i < len(values):
        if values[i] == target:
            break
        i += 1
    else:
        return -1
    return i


def halvings(x, limit):
    steps = 0
    while x > limit:
        x /= 2
        steps += 1
    return x, steps


def fibonacci_below(limit):
    a, b = 0, 1
    out = []
    while a < limit:
        out.append(a)
        a, b = b, a + b
    return out


def sum_skipping_multiples(n, k):
    i = 0
    total = 0
    while i < n:
        i += 1
        if i % k == 0:
            continue
        total += i
    return total


def zero_iterations(n):
    result = "initial"
    while n < 0:
        result = "ran"
        n += 1
    return result, n


def first_zero(values):
    i = 0
    while True:
        if values[i] == 0:
            return i
        i += 1


def reverse_digits(n):
    negative = n < 0
    n = abs(n)
    out = 0
    while n:
        out = out * 10 + n % 10
        n //= 10
    return -out if negative else out


def bisect_root(coeffs, lo, hi):
    def poly(x):
        total = 0.0
        for c in coeffs:
            total = total * x + c
        return total

    if poly(lo) * poly(hi) > 0:
        raise ValueError("root not bracketed")
    while hi - lo > 1e-10:
        mid = (lo + hi) / 2
        if poly(lo) * poly(mid) <= 0:
            hi = mid
        else:
            lo = mid
    return lo, hi


def decay_float32(x):
    steps = 0
    while np.abs(x) > np.float32(1e-3):
        x = x * np.float32(0.5)
        steps += 1
    return x, steps


def exp_series(x):
    term = 1.0
    total = 1.0
    k = 1
    while abs(term) > 1e-16 * abs(total):
        term *= x / k
        total += term
        k += 1
    return total, k


def gcd_trace(a, b):
    trace = []
    while b:
        trace.append((a, b))
        a, b = b, a % b
    return a, trace


CASES = [
    (sum_digits, (98765,)),
    (sum_digits, (0,)),
    (newton_sqrt, (2.0,)),
    (newton_sqrt, (0.25,)),
    (newton_sqrt, (np.float64(10.0),)),
    (newton_sqrt, (-1.0,)),
    (countdown, (3,)),
    (countdown, (0,)),
    (index_of, ([4, 8, 15, 16], 15)),
    (index_of, ([4, 8, 15, 16], 23)),
    (halvings, (100.0, 3)),
    (halvings, (np.float32(1.0), np.float32(2.0))),
    (fibonacci_below, (100,)),
    (fibonacci_below, (0,)),
    (sum_skipping_multiples, (10, 3)),
    (sum_skipping_multiples, (5, 0)),
    (zero_iterations, (5,)),
    (zero_iterations, (-2,)),
    (first_zero, ([3, 1, 0, 2],)),
    (first_zero, ([3, 1],)),
    (reverse_digits, (1230,)),
    (reverse_digits, (-456,)),
    (bisect_root, ([1.0, 0.0, -2.0], 0.0, 2.0)),
    (bisect_root, ([1.0, 0.0, 2.0], 0.0, 2.0)),
    (decay_float32, (np.float32(3.0),)),
    (decay_float32, (np.float32(-0.0001),)),
    (exp_series, (1.0,)),
    (exp_series, (-2.5,)),
    (gcd_trace, (1071, 462)),
    (gcd_trace, (5, 0)),
]
