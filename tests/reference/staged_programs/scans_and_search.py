"""Scans over arrays with data-dependent branches, break, continue, early return and loop else."""

import numpy as np


def argmax_scan(x):
    best_i = 0
    best = x[0]
    for i in range(1, x.shape[0]):
        if x[i] > best:
            best = x[i]
            best_i = i
    return best_i, best


def argmin_iterating_values(x):
    best = x[0]
    best_i = 0
    i = 0
    for v in x:
        if v < best:
            best = v
            best_i = i
        i += 1
    return best_i, best


def first_above(x, threshold):
    found = -1
    for i in range(x.shape[0]):
        if x[i] > threshold:
            found = i
            break
    return found


def first_above_early_return(x, threshold):
    for i in range(x.shape[0]):
        if x[i] > threshold:
            return i
    return -1


def first_negative_while(x):
    i = 0
    n = x.shape[0]
    while i < n and x[i] >= 0:
        i += 1
    return i if i < n else -1


def cumulative_max_while(x):
    out = x.copy()
    i = 1
    while i < x.shape[0]:
        if out[i] < out[i - 1]:
            out[i] = out[i - 1]
        i += 1
    return out


def count_and_sum_above(x, threshold):
    count = 0
    total = np.zeros((), dtype=x.dtype) + 0
    for v in x:
        if v <= threshold:
            continue
        count += 1
        total = total + v
    return count, total


def longest_increasing_run(x):
    best = 1
    run = 1
    for i in range(1, x.shape[0]):
        if x[i] > x[i - 1]:
            run += 1
            if run > best:
                best = run
        else:
            run = 1
    return best


def for_else_search(x, target):
    for i in range(x.shape[0]):
        if x[i] == target:
            pos = i
            break
    else:
        pos = -1
    return pos


def while_else_countdown(n, stop_at):
    trace = n - n
    while n > 0:
        if n == stop_at:
            break
        trace = trace * 10 + n % 10
        n -= 1
    else:
        trace = -trace
    return trace


def nested_break_continue(m, limit):
    # Sum the entries of each row up to the first negative one; skip rows starting with zero;
    # stop at the first row whose partial sum exceeds ``limit``.
    total = m.dtype.type(0)
    rows_used = 0
    for r in range(m.shape[0]):
        if m[r, 0] == 0:
            continue
        row_sum = m.dtype.type(0)
        for c in range(m.shape[1]):
            if m[r, c] < 0:
                break
            row_sum += m[r, c]
        total += row_sum
        rows_used += 1
        if row_sum > limit:
            break
    return total, rows_used


def find_pair_with_sum(x, target):
    # Nested loops with early exit from both (a flag carried through the outer loop).
    found_i = -1
    found_j = -1
    done = False
    for i in range(x.shape[0]):
        for j in range(i + 1, x.shape[0]):
            if x[i] + x[j] == target:
                found_i = i
                found_j = j
                done = True
                break
        if done:
            break
    return found_i, found_j


def staircase_search(m, target):
    r = 0
    c = m.shape[1] - 1
    while r < m.shape[0] and c >= 0:
        v = m[r, c]
        if v == target:
            return r, c
        if v > target:
            c -= 1
        else:
            r += 1
    return -1, -1


def binary_search(sorted_x, target):
    lo = 0
    hi = sorted_x.shape[0] - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if sorted_x[mid] == target:
            return mid
        elif sorted_x[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


def count_sign_changes(x):
    changes = 0
    prev = x[0]
    for v in x[1:]:
        if v == 0:
            continue
        if prev != 0 and (v > 0) != (prev > 0):
            changes += 1
        prev = v
    return changes


def row_argmax_loops(m):
    out = np.zeros(m.shape[0], dtype=np.int64)
    for r in range(m.shape[0]):
        best = m[r, 0]
        for c in range(1, m.shape[1]):
            if m[r, c] > best:
                best = m[r, c]
                out[r] = c
    return out


def enumerate_threshold(x, t):
    hits = np.zeros_like(x, dtype=np.bool_)
    last = -1
    for i, v in enumerate(x):
        if v > t:
            hits[i] = True
            last = i
    return hits, last


def zip_dot_until_negative(a, b):
    acc = a[0] * 0
    for u, v in zip(a, b):  # noqa: B905 - plain zip, as users write it
        p = u * v
        if p < 0:
            break
        acc = acc + p
    return acc


CASES = [
    (argmax_scan, (np.array([3.0, 7.5, 7.5, -1.0, 9.25, 2.0]),)),
    (argmax_scan, (np.array([5, 4, 3], dtype=np.int32),)),
    (argmax_scan, (np.array([1.0], dtype=np.float32),)),
    (argmin_iterating_values, (np.array([3.0, -7.5, 7.5, -7.5]),)),
    (argmin_iterating_values, (np.array([2, 3], dtype=np.int16),)),
    (first_above, (np.array([0.1, 0.5, 0.9, 0.7]), 0.6)),
    (first_above, (np.array([1, 2], dtype=np.int32), 5)),
    (first_above, (np.array([1.0, 2.0], dtype=np.float32), np.float32(0.5))),
    (first_above_early_return, (np.array([0.1, 0.5, 0.9, 0.7]), np.float64(0.6))),
    (first_above_early_return, (np.array([0.1, 0.5]), np.float64(0.6))),
    (first_negative_while, (np.array([3, 1, -4, 1, -5]),)),
    (first_negative_while, (np.array([3, 1]),)),
    (first_negative_while, (np.array([], dtype=np.int64),)),
    (cumulative_max_while, (np.array([1.0, 3.0, 2.0, 5.0, 4.0]),)),
    (cumulative_max_while, (np.array([5, 4, 3], dtype=np.int32),)),
    (count_and_sum_above, (np.array([0.5, 1.5, 2.5, -1.0]), 1.0)),
    (count_and_sum_above, (np.array([1, 5, 9], dtype=np.int8), np.int8(4))),
    (count_and_sum_above, (np.array([1.0, 5.0], dtype=np.float32), np.float32(9.0))),
    (longest_increasing_run, (np.array([1, 2, 3, 1, 2, 3, 4, 0]),)),
    (longest_increasing_run, (np.array([3.0, 2.0, 1.0]),)),
    (for_else_search, (np.array([4, 8, 15, 16]), np.int64(15))),
    (for_else_search, (np.array([4, 8, 15, 16]), np.int64(23))),
    (while_else_countdown, (np.int64(5), np.int64(2))),
    (while_else_countdown, (np.int64(4), np.int64(9))),
    (nested_break_continue, (np.array([[1, 2, -1, 5], [0, 9, 9, 9], [3, 3, 3, 3], [7, 7, 7, 7]]),
                             np.int64(10))),
    (nested_break_continue, (np.array([[1.5, -2.0], [0.5, 0.25]]), np.float64(100.0))),
    (find_pair_with_sum, (np.array([1, 4, 6, 3, 5]), np.int64(9))),
    (find_pair_with_sum, (np.array([1, 2, 3]), np.int64(10))),
    (staircase_search, (np.array([[1, 4, 7], [2, 5, 8], [3, 6, 9]]), np.int64(6))),
    (staircase_search, (np.array([[1, 4, 7], [2, 5, 8], [3, 6, 9]]), np.int64(10))),
    (binary_search, (np.array([1, 3, 5, 7, 9, 11]), np.int64(7))),
    (binary_search, (np.array([1, 3, 5, 7, 9, 11]), np.int64(1))),
    (binary_search, (np.array([1.0, 3.0, 5.0]), np.float64(4.0))),
    (count_sign_changes, (np.array([1.0, -2.0, 0.0, -3.0, 4.0, 5.0, -1.0]),)),
    (count_sign_changes, (np.array([0, 0, 1], dtype=np.int32),)),
    (row_argmax_loops, (np.array([[1.0, 3.0, 2.0], [9.0, 1.0, 9.5], [0.0, 0.0, 0.0]]),)),
    (enumerate_threshold, (np.array([0.5, 2.0, 1.0, 3.0]), 0.9)),
    (enumerate_threshold, (np.array([1, 2], dtype=np.int32), 5)),
    (zip_dot_until_negative, (np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, -6.0]))),
    (zip_dot_until_negative, (np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32))),
]
