"""Staged recursion: functions that call themselves (or each other) on staged values, so that
the depth is only known at run time (fib, divide and conquer, trees as child-index arrays)."""

import numpy as np


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def factorial(n):
    if n <= 1:
        return np.int64(1)
    return n * factorial(n - 1)


def range_sum(x, lo, hi):
    """Divide and conquer: the sum of x[lo:hi] in a balanced order (not NumPy's)."""
    if hi - lo == 1:
        return x[lo]
    mid = (lo + hi) // 2
    return range_sum(x, lo, mid) + range_sum(x, mid, hi)


def merge_sort(x):
    n = x.shape[0]
    if n <= 1:
        return x
    left = merge_sort(x[:n // 2])
    right = merge_sort(x[n // 2:])
    out = np.empty_like(x)
    i = 0
    j = 0
    while i + j < n:
        if j >= right.shape[0] or (i < left.shape[0] and left[i] <= right[j]):
            out[i + j] = left[i]
            i += 1
        else:
            out[i + j] = right[j]
            j += 1
    return out


def tree_height(left, right, node):
    """Trees as arrays: children of node i are left[i] and right[i] (-1: none)."""
    if node < 0:
        return np.int64(0)
    return 1 + max(tree_height(left, right, left[node]), tree_height(left, right, right[node]))


def tree_weighted_sum(left, right, values, node):
    if node < 0:
        return 0.0
    below = tree_weighted_sum(left, right, values, left[node]) + \
        tree_weighted_sum(left, right, values, right[node])
    return values[node] + 0.5 * below


def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


def fib_sums(n):
    """Recursion inside a loop."""
    total = np.int64(0)
    for k in range(n):
        total += fib(k)
    return total


def collatz_depth(n):
    """A loop inside recursion: halve while even, then recurse on 3n + 1."""
    if n == 1:
        return np.int64(0)
    steps = np.int64(0)
    while n % 2 == 0 and n > 1:
        n = n // 2
        steps += 1
    if n == 1:
        return steps
    return steps + 1 + collatz_depth(3 * n + 1)


class Polynomial:
    """Recursion through a method: Horner's rule from coefficient ``i`` on."""

    def __init__(self, coefficients):
        self.coefficients = coefficients

    def horner(self, x, i):
        if i == self.coefficients.shape[0] - 1:
            return self.coefficients[i] * np.ones_like(x)
        return self.coefficients[i] + x * self.horner(x, i + 1)


def polynomial_at(polynomial, x, start):
    return polynomial.horner(x, start)


def evaluate(op, left, right, value, x, node):
    """An expression tree over arrays: op 0 a constant, 1 the variable, 2 add, 3 multiply,
    4 sin of the left child."""
    kind = op[node]
    if kind == 0:
        return value[node] * np.ones_like(x)
    if kind == 1:
        return x.copy()
    a = evaluate(op, left, right, value, x, left[node])
    if kind == 4:
        return np.sin(a)
    b = evaluate(op, left, right, value, x, right[node])
    if kind == 2:
        return a + b
    return a * b


def bisect_left(xs, target, lo, hi):
    if lo >= hi:
        return lo
    mid = (lo + hi) // 2
    if xs[mid] < target:
        return bisect_left(xs, target, mid + 1, hi)
    return bisect_left(xs, target, lo, mid)


def karatsuba(a, b):
    """The product of two polynomials of the same length: three half-size products."""
    n = a.shape[0]
    if n <= 1:
        return a * b
    h = n // 2
    a0, a1, b0, b1 = a[:h], a[h:], b[:h], b[h:]
    z0 = karatsuba(a0, b0)
    z2 = karatsuba(a1, b1)
    m = a1.shape[0]
    pa = np.zeros(m)
    pa[:h] += a0
    pa += a1
    pb = np.zeros(m)
    pb[:h] += b0
    pb += b1
    z1 = karatsuba(pa, pb)
    out = np.zeros(2 * n - 1)
    out[:z0.shape[0]] += z0
    out[2 * h:] += z2
    z1[:z0.shape[0]] -= z0
    z1 -= z2
    out[h:h + z1.shape[0]] += z1
    return out


def doublings(x, n):
    """A list built on the way back up."""
    if n == 0:
        return [x]
    found = doublings(x * 2.0, n - 1)
    found.append(x)
    return found


_LEFT = np.array([1, 3, 5, -1, -1, -1, -1])
_RIGHT = np.array([2, 4, 6, -1, -1, -1, -1])
_CHAIN_LEFT = np.array([1, 2, 3, -1])
_NONE = np.array([-1, -1, -1, -1])

# (x * 2 + sin(x)) * (x + 3)
_OP = np.array([3, 2, 2, 3, 4, 1, 0, 1, 1, 0])
_OP_LEFT = np.array([1, 3, 7, 5, 8, -1, -1, -1, -1, -1])
_OP_RIGHT = np.array([2, 4, 9, 6, -1, -1, -1, -1, -1, -1])
_OP_VALUE = np.array([0, 0, 0, 0, 0, 0, 2.0, 0, 0, 3.0])
_SORTED = np.array([-2.5, -1.0, -1.0, 0.0, 0.25, 3.0, 7.5])

CASES = [
    (fib, (np.int64(0),)),
    (fib, (np.int64(1),)),
    (fib, (np.int64(12),)),
    (factorial, (np.int64(0),)),
    (factorial, (np.int64(15),)),
    (range_sum, (np.arange(10.0), np.int64(0), np.int64(10))),
    (range_sum, (np.array([1e16, 1.0, -1e16, 1.0]), np.int64(0), np.int64(4))),
    (merge_sort, (np.array([5.0, 1.0, 4.0, 1.0, 3.0, 9.0, 2.0]),)),
    (merge_sort, (np.array([], dtype=np.float64),)),
    (merge_sort, (np.array([3, 2, 1]),)),
    (tree_height, (_LEFT, _RIGHT, np.int64(0))),
    (tree_height, (_CHAIN_LEFT, _NONE, np.int64(0))),
    (tree_height, (_LEFT, _RIGHT, np.int64(-1))),
    (tree_weighted_sum, (_LEFT, _RIGHT, np.arange(7.0), np.int64(0))),
    (tree_weighted_sum, (_CHAIN_LEFT, _NONE, np.ones(4), np.int64(1))),
    (is_even, (np.int64(10),)),
    (is_even, (np.int64(7),)),
    (is_odd, (np.int64(7),)),
    (fib_sums, (np.int64(10),)),
    (fib_sums, (np.int64(0),)),
    (collatz_depth, (np.int64(27),)),
    (collatz_depth, (np.int64(1),)),
    (polynomial_at, (Polynomial(np.array([1.0, -2.0, 0.5])), np.array([0.0, 1.0, 3.0]),
                     np.int64(0))),
    (polynomial_at, (Polynomial(np.array([2.0])), np.array([4.0]), np.int64(0))),
    (evaluate, (_OP, _OP_LEFT, _OP_RIGHT, _OP_VALUE, np.linspace(-2.0, 2.0, 5), np.int64(0))),
    (evaluate, (_OP, _OP_LEFT, _OP_RIGHT, _OP_VALUE, np.array([0.5]), np.int64(6))),
    (bisect_left, (_SORTED, -1.0, np.int64(0), np.int64(7))),
    (bisect_left, (_SORTED, 10.0, np.int64(0), np.int64(7))),
    (bisect_left, (_SORTED, 0.1, np.int64(2), np.int64(5))),
    (karatsuba, (np.arange(1.0, 8.0), np.linspace(-1.0, 1.0, 7))),
    (karatsuba, (np.array([2.0]), np.array([3.0]))),
    (doublings, (np.float64(1.5), np.int64(4))),
]
