"""Iterative numerics whose loop trip counts depend on the values of NumPy arguments."""

import numpy as np


def newton_sqrt(a, tol):
    # Newton iteration for sqrt(a): runs until |x*x - a| < tol (a staged while).
    x = a
    steps = np.int64(0)
    while np.abs(x * x - a) >= tol:
        x = 0.5 * (x + a / x)
        steps += 1
    return x, steps


def newton_sqrt_float32(a):
    x = a
    for _ in range(20):
        if np.abs(x * x - a) < np.float32(1e-5) * a:
            break
        x = np.float32(0.5) * (x + a / x)
    return x


def collatz_steps(n):
    steps = np.int64(0)
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def collatz_peak(n):
    peak = n
    while n > 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        peak = np.maximum(peak, n)
    return peak


def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


def lcm_of_array(x):
    acc = x[0]
    for v in x[1:]:
        a, b = acc, v
        while b != 0:
            a, b = b, a % b
        acc = acc // a * v
    return acc


def fibonacci(n):
    a = np.int64(0)
    b = np.int64(1)
    i = np.int64(0)
    while i < n:
        a, b = b, a + b
        i += 1
    return a


def fibonacci_below(limit):
    terms = []
    a, b = np.int64(0), np.int64(1)
    while a < limit:
        terms.append(a)
        a, b = b, a + b
    return np.stack(terms)


def bisection(lo, hi, tol):
    # Root of x^3 - 2x - 5 on [lo, hi].
    f_lo = lo * lo * lo - 2.0 * lo - 5.0
    iters = 0
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        f_mid = mid * mid * mid - 2.0 * mid - 5.0
        if (f_mid < 0.0) == (f_lo < 0.0):
            lo = mid
            f_lo = f_mid
        else:
            hi = mid
        iters += 1
    return 0.5 * (lo + hi), iters


def power_iteration(a, tol, max_iter):
    v = np.ones(a.shape[0], dtype=a.dtype)
    v = v / np.linalg.norm(v)
    lam = a.dtype.type(0)
    for _ in range(max_iter):
        w = a @ v
        new_lam = v @ w
        v = w / np.linalg.norm(w)
        if np.abs(new_lam - lam) < tol:
            lam = new_lam
            break
        lam = new_lam
    return lam, v


def matrix_power(m, e):
    # Repeated squaring, a staged while on the exponent.
    result = np.eye(m.shape[0], dtype=m.dtype)
    base = m
    while e > 0:
        if e % 2 == 1:
            result = result @ base
        base = base @ base
        e = e // 2
    return result


def integer_sqrt(n):
    lo = np.int64(0)
    hi = n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if mid * mid <= n:
            lo = mid
        else:
            hi = mid - 1
    return lo


def exp_series(x, tol):
    term = np.ones_like(x)
    total = np.ones_like(x)
    k = 1
    while np.abs(term) > tol:
        term = term * x / k
        total = total + term
        k += 1
    return total, k


def fixed_point_cos(x0, max_iter):
    x = x0
    for i in range(max_iter):
        nxt = np.cos(x)
        if np.abs(nxt - x) < 1e-10:
            return nxt, i
        x = nxt
    return x, -1


def digits_sum(n):
    total = n - n
    while n > 0:
        total += n % 10
        n //= 10
    return total


def halve_until_small(x, limit):
    count = np.int32(0)
    while np.max(np.abs(x)) > limit:
        x = x / 2
        count += 1
    return x, count


def jacobi_solve(a, b, tol):
    x = np.zeros_like(b)
    d = np.diag(a)
    r = a - np.diag(d)
    it = 0
    err = np.inf
    while err > tol:
        x_new = (b - r @ x) / d
        err = np.max(np.abs(x_new - x))
        x = x_new
        it += 1
    return x, it


CASES = [
    (newton_sqrt, (np.float64(2.0), 1e-12)),
    (newton_sqrt, (np.float64(1.0), 1e-12)),
    (newton_sqrt, (np.float64(1e6), np.float64(1e-6))),
    (newton_sqrt_float32, (np.float32(2.0),)),
    (newton_sqrt_float32, (np.float32(9.0),)),
    (collatz_steps, (np.int64(27),)),
    (collatz_steps, (np.int64(1),)),
    (collatz_steps, (np.int64(6),)),
    (collatz_peak, (np.int64(27),)),
    (collatz_peak, (np.int64(1),)),
    (gcd, (np.int64(1071), np.int64(462))),
    (gcd, (np.int64(17), np.int64(0))),
    (gcd, (np.int32(12), np.int32(18))),
    (lcm_of_array, (np.array([4, 6, 10], dtype=np.int64),)),
    (lcm_of_array, (np.array([7], dtype=np.int64),)),
    (fibonacci, (np.int64(50),)),
    (fibonacci, (np.int64(0),)),
    (fibonacci_below, (np.int64(100),)),
    (fibonacci_below, (np.int64(2),)),
    (bisection, (np.float64(2.0), np.float64(3.0), 1e-10)),
    (bisection, (np.float64(2.0), np.float64(2.5), 1e-3)),
    (power_iteration, (np.array([[2.0, 1.0], [1.0, 3.0]]), 1e-12, 200)),
    (power_iteration, (np.array([[4.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]), 1e-9, 3)),
    (matrix_power, (np.array([[1, 1], [1, 0]], dtype=np.int64), np.int64(10))),
    (matrix_power, (np.array([[0.5, 0.25], [0.0, 1.0]]), np.int64(0))),
    (matrix_power, (np.array([[2.0]], dtype=np.float32), np.int64(5))),
    (integer_sqrt, (np.int64(1000000007),)),
    (integer_sqrt, (np.int64(0),)),
    (integer_sqrt, (np.int64(16),)),
    (exp_series, (np.float64(1.0), 1e-15)),
    (exp_series, (np.float64(-2.5), 1e-12)),
    (fixed_point_cos, (np.float64(1.0), 100)),
    (fixed_point_cos, (np.float64(0.7390851332151607), 100)),
    (fixed_point_cos, (np.float64(1.0), np.int64(5))),
    (digits_sum, (np.int64(98765),)),
    (digits_sum, (np.int64(0),)),
    (halve_until_small, (np.array([100.0, -3.0]), 1.0)),
    (halve_until_small, (np.array([0.5, 0.25], dtype=np.float32), np.float32(1.0))),
    (jacobi_solve, (np.array([[4.0, 1.0], [2.0, 5.0]]), np.array([1.0, 2.0]), 1e-12)),
]
