"""Data-dependent if/elif/else: piecewise functions, clipping, scalar promotion, dtypes."""

import numpy as np


def piecewise_scalar(x):
    if x < -1.0:
        y = -1.0 - 0.5 * (x + 1.0)
    elif x < 1.0:
        y = x * x * x
    else:
        y = 1.0 + np.log(x)
    return y


def relu_or_zero(x):
    # `y = 0` (a Python int) on one path, a float64 on the other: staged, a run-time error on
    # the path that returns the int (the other path is compiled code).
    y = 0
    if x > 0:
        y = x * 2
    return y


def branch_python_float_vs_float32(x):
    if x > np.float32(1.0):
        y = 0.5
    else:
        y = x * 2.0
    return y * x


def sign_with_counts(x):
    if x > 0:
        s = 1
    elif x < 0:
        s = -1
    else:
        s = 0
    return s


def clip_norm(v, max_norm):
    norm = np.sqrt(np.sum(v * v))
    if norm > max_norm:
        v = v * (max_norm / norm)
        clipped = True
    else:
        clipped = False
    return v, clipped


def normalize_or_keep(x):
    s = np.sum(x)
    if s == 0:
        return x
    return x / s


def standardize(x):
    mean = np.mean(x, axis=0, keepdims=True)
    std = np.std(x, axis=0, keepdims=True)
    if np.any(std == 0):
        std = np.where(std == 0, 1.0, std)
    return (x - mean) / std


def huber(residual, delta):
    a = np.abs(residual)
    if a <= delta:
        loss = 0.5 * residual * residual
    else:
        loss = delta * (a - 0.5 * delta)
    return loss


def huber_loop(residuals, delta):
    total = residuals.dtype.type(0)
    for r in residuals:
        a = np.abs(r)
        if a <= delta:
            total += 0.5 * r * r
        else:
            total += delta * (a - 0.5 * delta)
    return total


def both_branches_update(x, y):
    # Two variables modified in both branches, one read after.
    if np.sum(x) > np.sum(y):
        big, small = x, y
        diff = np.sum(x) - np.sum(y)
    else:
        big, small = y, x
        diff = np.sum(y) - np.sum(x)
    return big - small, diff


def nested_ifs(a, b):
    if a > 0:
        if b > 0:
            quadrant = 1
        else:
            quadrant = 4
    else:
        if b > 0:
            quadrant = 2
        else:
            quadrant = 3
    return quadrant


def ternary_chain(x):
    label = 2 if x > 10 else (1 if x > 0 else 0)
    scale = x * 0.1 if label == 2 else x
    return label, scale


def logical_ops(x, lo, hi):
    inside = x >= lo and x <= hi
    outside = not inside
    edge = x == lo or x == hi
    return inside, outside, edge


def chained_comparison(x, lo, hi):
    if lo < x < hi:
        return x - lo
    return hi - lo


def float32_stays_float32(x):
    # Python floats are weak: float32 arrays and scalars stay float32 (NumPy 2 rules).
    y = x * 2.0 + 1.0
    if np.sum(y) > 0.0:
        y = y / 3.0
    else:
        y = -y
    return y


def float32_scalar_mix(x):
    z = x * 2.0
    if z > 1:
        z = z - 1
    return z, z * np.float64(1.5)


def int_promotion(a, b):
    # int32 + int64 -> int64; int32 * Python int stays int32.
    c = a * 3
    if c > 10:
        c = c + b
    else:
        c = a + b
    return c


def float32_scaled_by_index(x):
    # The loop index comes from range(x.shape[0]) (a Python int in plain Python, so weak).
    acc = x.dtype.type(0)
    for i in range(x.shape[0]):
        acc = acc + x[i] * i
    return acc


def float32_mean_by_length(x):
    return np.sum(x) / x.shape[0], np.sum(x) / len(x)


def data_dependent_dtype_choice(x, use_half):
    if use_half:
        x = x.astype(np.float32)
    if x[0] > 0:
        x = x * 2
    return x


def branch_returns_tuple(x):
    if np.all(x >= 0):
        return np.sqrt(x), True
    return np.abs(x), False


def elif_chain_on_mean(x):
    m = np.mean(x)
    if m < 0.25:
        bucket = np.int64(0)
    elif m < 0.5:
        bucket = np.int64(1)
    elif m < 0.75:
        bucket = np.int64(2)
    else:
        bucket = np.int64(3)
    return bucket, m


def abs_min_max_builtins(x, y):
    return abs(x - y), max(x, y), min(x, y)


def bool_argument(flag, x):
    if flag:
        return x + 1
    return x - 1


CASES = [
    (piecewise_scalar, (np.float64(-3.0),)),
    (piecewise_scalar, (np.float64(0.5),)),
    (piecewise_scalar, (np.float64(4.0),)),
    (relu_or_zero, (np.float64(1.5),)),
    (relu_or_zero, (np.float64(-1.5),)),
    (relu_or_zero, (np.int32(3),)),
    (branch_python_float_vs_float32, (np.float32(3.0),)),
    (branch_python_float_vs_float32, (np.float32(0.25),)),
    (sign_with_counts, (np.float64(2.0),)),
    (sign_with_counts, (np.float64(-2.0),)),
    (sign_with_counts, (np.int64(0),)),
    (clip_norm, (np.array([3.0, 4.0]), np.float64(1.0))),
    (clip_norm, (np.array([0.3, 0.4]), np.float64(1.0))),
    (clip_norm, (np.array([3.0, 4.0], dtype=np.float32), np.float32(2.0))),
    (normalize_or_keep, (np.array([1.0, 3.0]),)),
    (normalize_or_keep, (np.array([1.0, -1.0]),)),
    (standardize, (np.array([[1.0, 2.0], [3.0, 2.0], [5.0, 2.0]]),)),
    (standardize, (np.array([[1.0, 2.0], [3.0, 4.0]]),)),
    (huber, (np.float64(0.5), np.float64(1.0))),
    (huber, (np.float64(-3.0), np.float64(1.0))),
    (huber_loop, (np.array([0.5, -3.0, 1.0, 2.0]), 1.0)),
    (huber_loop, (np.array([0.5, -3.0], dtype=np.float32), np.float32(1.0))),
    (both_branches_update, (np.array([1.0, 2.0]), np.array([0.5, 0.5]))),
    (both_branches_update, (np.array([1.0, 2.0]), np.array([5.0, 0.5]))),
    (nested_ifs, (np.float64(1.0), np.float64(1.0))),
    (nested_ifs, (np.float64(1.0), np.float64(-1.0))),
    (nested_ifs, (np.float64(-1.0), np.float64(1.0))),
    (nested_ifs, (np.float64(-1.0), np.float64(-1.0))),
    (ternary_chain, (np.float64(20.0),)),
    (ternary_chain, (np.float64(5.0),)),
    (ternary_chain, (np.float64(-5.0),)),
    (logical_ops, (np.int64(3), np.int64(1), np.int64(5))),
    (logical_ops, (np.int64(5), np.int64(1), np.int64(5))),
    (logical_ops, (np.int64(9), np.int64(1), np.int64(5))),
    (chained_comparison, (np.float64(2.0), np.float64(1.0), np.float64(5.0))),
    (chained_comparison, (np.float64(7.0), np.float64(1.0), np.float64(5.0))),
    (float32_stays_float32, (np.array([1.0, 2.0, -0.5], dtype=np.float32),)),
    (float32_stays_float32, (np.array([-1.0, -2.0], dtype=np.float32),)),
    (float32_scalar_mix, (np.float32(0.75),)),
    (float32_scalar_mix, (np.float32(0.2),)),
    (int_promotion, (np.int32(5), np.int64(2))),
    (int_promotion, (np.int32(2), np.int64(2))),
    (float32_scaled_by_index, (np.array([1.0, 0.5, 0.25], dtype=np.float32),)),
    (float32_mean_by_length, (np.array([1.0, 0.5, 0.25], dtype=np.float32),)),
    (data_dependent_dtype_choice, (np.array([1.0, 2.0]), True)),
    (data_dependent_dtype_choice, (np.array([-1.0, 2.0]), False)),
    (branch_returns_tuple, (np.array([4.0, 9.0]),)),
    (branch_returns_tuple, (np.array([4.0, -9.0]),)),
    (elif_chain_on_mean, (np.array([0.1, 0.2]),)),
    (elif_chain_on_mean, (np.array([0.4, 0.5]),)),
    (elif_chain_on_mean, (np.array([0.6, 0.7]),)),
    (elif_chain_on_mean, (np.array([0.9, 1.0]),)),
    (abs_min_max_builtins, (np.float64(-2.0), np.float64(3.5))),
    (abs_min_max_builtins, (np.int64(7), np.int64(-1))),
    (bool_argument, (True, np.int64(1))),
    (bool_argument, (np.bool_(False), np.int64(1))),
]
