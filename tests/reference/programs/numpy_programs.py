"""Plain NumPy code with Python control flow on NumPy scalars and arrays."""

import numpy as np


def argmax_scan(x):
    best_i = 0
    best = x[0]
    for i in range(1, x.shape[0]):
        if x[i] > best:
            best = x[i]
            best_i = i
    return best_i, best


def newton_cube_root(a, tol):
    x = a if a > 1 else np.float64(1.0)
    steps = 0
    while np.abs(x * x * x - a) > tol:
        x = x - (x * x * x - a) / (3 * x * x)
        steps += 1
    return x, steps


def collatz_steps(n):
    steps = np.int64(0)
    peak = n
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        if n > peak:
            peak = n
        steps += 1
    return steps, peak


def cumulative_sum(x):
    out = np.zeros_like(x)
    acc = x.dtype.type(0)
    for i in range(x.shape[0]):
        acc += x[i]
        out[i] = acc
    return out


def stable_softmax(logits):
    m = logits[0]
    for v in logits:
        if v > m:
            m = v
    e = np.exp(logits - m)
    return e / e.sum()


def power_iteration(a, iters):
    v = np.ones(a.shape[0])
    eig = 0.0
    for _ in range(iters):
        w = a @ v
        eig = np.linalg.norm(w)
        if eig == 0:
            break
        v = w / eig
    return eig, v


def moving_average(x, window):
    if window > x.shape[0]:
        raise ValueError(f"window {window} larger than input {x.shape[0]}")
    out = np.empty(x.shape[0] - window + 1)
    total = np.sum(x[:window])
    out[0] = total / window
    for i in range(window, x.shape[0]):
        total += x[i] - x[i - window]
        out[i - window + 1] = total / window
    return out


def gradient_descent(a, b, lr, max_steps):
    x = np.zeros_like(b)
    for step in range(max_steps):
        grad = a @ x - b
        if np.max(np.abs(grad)) < 1e-10:
            return x, step
        x = x - lr * grad
    return x, max_steps


def count_above(x, threshold):
    count = 0
    total = 0.0
    for v in x:
        if v > threshold:
            count += 1
            total += v
    return count, total


def mandelbrot_escape(c_re, c_im, max_iter):
    z_re = np.float64(0.0)
    z_im = np.float64(0.0)
    for i in range(max_iter):
        if z_re * z_re + z_im * z_im > 4.0:
            return i
        z_re, z_im = z_re * z_re - z_im * z_im + c_re, 2 * z_re * z_im + c_im
    return max_iter


def bincount_manual(labels, n_bins):
    counts = np.zeros(n_bins, dtype=np.int64)
    for label in labels:
        if label < 0 or label >= n_bins:
            raise IndexError(f"label {label} out of range")
        counts[label] += 1
    return counts


def float32_accumulate(x):
    total = np.float32(0)
    for v in x:
        total = total + v * v
    return total, total.dtype.name


def matmul_loops(a, b):
    n, k = a.shape
    k2, m = b.shape
    if k != k2:
        raise ValueError("shape mismatch")
    c = np.zeros((n, m), dtype=np.result_type(a, b))
    for i in range(n):
        for j in range(m):
            s = c.dtype.type(0)
            for p in range(k):
                s += a[i, p] * b[p, j]
            c[i, j] = s
    return c


def clip_in_loop(x, lo, hi):
    y = x.copy()
    clipped = 0
    for i in range(y.shape[0]):
        if y[i] < lo:
            y[i] = lo
            clipped += 1
        elif y[i] > hi:
            y[i] = hi
            clipped += 1
    return y, clipped


def normalize_until_unit(x, max_rounds):
    rounds = 0
    while np.abs(np.linalg.norm(x) - 1.0) > 1e-12:
        x = x / np.linalg.norm(x)
        rounds += 1
        if rounds >= max_rounds:
            break
    return x, rounds


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


def running_stats(x):
    mean = 0.0
    m2 = 0.0
    for k, v in enumerate(x, start=1):
        delta = v - mean
        mean += delta / k
        m2 += delta * (v - mean)
    var = m2 / (len(x) - 1) if len(x) > 1 else np.nan
    return mean, var


CASES = [
    (argmax_scan, (np.array([3.0, 7.5, 7.5, -1.0, 9.25, 2.0]),)),
    (argmax_scan, (np.array([5, 4, 3], dtype=np.int32),)),
    (argmax_scan, (np.array([]),)),
    (newton_cube_root, (np.float64(27.0), 1e-12)),
    (newton_cube_root, (np.float64(0.5), 1e-12)),
    (collatz_steps, (np.int64(27),)),
    (collatz_steps, (np.int64(1),)),
    (cumulative_sum, (np.array([1, 2, 3, 4], dtype=np.int32),)),
    (cumulative_sum, (np.array([0.1, 0.2, 0.3]),)),
    (stable_softmax, (np.array([1.0, 2.0, 3.0]),)),
    (stable_softmax, (np.array([1000.0, 1000.0], dtype=np.float32),)),
    (power_iteration, (np.array([[2.0, 1.0], [1.0, 3.0]]), 20)),
    (power_iteration, (np.zeros((2, 2)), 5)),
    (moving_average, (np.arange(6, dtype=np.float64), 3)),
    (moving_average, (np.arange(2, dtype=np.float64), 3)),
    (gradient_descent, (np.array([[3.0, 1.0], [1.0, 2.0]]), np.array([1.0, 1.0]), 0.2, 500)),
    (gradient_descent, (np.array([[3.0, 1.0], [1.0, 2.0]]), np.array([1.0, 1.0]), 0.2, 5)),
    (count_above, (np.array([0.5, 1.5, 2.5, -1.0]), 1.0)),
    (count_above, (np.array([1, 5, 9], dtype=np.int8), np.int8(4))),
    (mandelbrot_escape, (0.5, 0.5, 50)),
    (mandelbrot_escape, (-0.5, 0.0, 50)),
    (bincount_manual, (np.array([0, 2, 2, 1, 2]), 3)),
    (bincount_manual, (np.array([0, 3]), 3)),
    (float32_accumulate, (np.array([0.1, 0.2, 0.3], dtype=np.float32),)),
    (matmul_loops, (np.array([[1, 2], [3, 4]]), np.array([[0.5], [1.5]]))),
    (matmul_loops, (np.ones((2, 3)), np.ones((2, 3)))),
    (clip_in_loop, (np.array([-2.0, 0.5, 3.0, 1.0]), 0.0, 1.0)),
    (normalize_until_unit, (np.array([3.0, 4.0, 12.0]), 10)),
    (normalize_until_unit, (np.array([3.0, 4.0, 12.0]), 0)),
    (integer_sqrt, (np.int64(1000000007),)),
    (integer_sqrt, (np.int64(0),)),
    (running_stats, (np.array([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]),)),
    (running_stats, (np.array([3.0]),)),
]
