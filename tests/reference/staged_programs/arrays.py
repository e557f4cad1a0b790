"""Array code inside staged control flow: reductions, masks, integer indexing, functional updates,
helper calls, and results returned as tuples and dicts."""

import numpy as np


def reductions_axis_keepdims(x):
    col = np.sum(x, axis=0)
    row = np.max(x, axis=1, keepdims=True)
    total = x.sum()
    if total > 0:
        centered = x - np.min(x, axis=1, keepdims=True)
    else:
        centered = x - row
    return col, row, centered, np.argmax(x, axis=1), np.min(x)


def boolean_mask_stats(x, threshold):
    mask = x > threshold
    n = np.sum(mask)
    if n > 0:
        mean_above = np.mean(x[mask])
    else:
        mean_above = np.float64(0)
    return n, mean_above, np.where(mask, x, 0)


def masked_assignment(x, lo):
    y = x.copy()
    y[y < lo] = lo
    return y


def integer_array_indexing(x, idx):
    picked = x[idx]
    if np.any(picked < 0):
        picked = -picked
    return picked, x[idx[::-1]]


def gather_rows(m, rows):
    out = m[rows]
    s = np.sum(out, axis=1)
    best = 0
    for i in range(s.shape[0]):
        if s[i] > s[best]:
            best = i
    return out, rows[best]


def functional_update_loop(x):
    x = x.copy()
    for i in range(x.shape[0]):
        if x[i] < 0:
            x[i] = 0
        else:
            x[i] = x[i] * 2
    return x


def swap_rows_until_sorted(m):
    # Bubble sort of rows by their first column, with row swaps on a copy.
    m = m.copy()
    n = m.shape[0]
    swapped = True
    passes = 0
    while swapped:
        swapped = False
        for i in range(n - 1):
            if m[i, 0] > m[i + 1, 0]:
                row = m[i].copy()
                m[i] = m[i + 1]
                m[i + 1] = row
                swapped = True
        passes += 1
    return m, passes


def in_place_input_update(x, v):
    # Mutates the caller's array: DESIGN requires the write to be visible to the caller.
    for i in range(x.shape[0]):
        if x[i] < v:
            x[i] = v
    return np.sum(x)



# Numba-style kernels writing their results into arrays the caller passes (written back).
def laplace_step(u, out):
    n, m = u.shape
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            out[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
    return out


def histogram_into(values, lo, hi, counts):
    nbins = counts.shape[0]
    width = (hi - lo) / nbins
    for v in values:
        k = int((v - lo) / width)
        if 0 <= k < nbins:
            counts[k] += 1
        elif v == hi:
            counts[nbins - 1] += 1
    return counts.sum()


def normalize_rows_in_place(X):
    for i in range(X.shape[0]):
        norm = np.sqrt(np.sum(X[i] ** 2))
        if norm > 0:
            X[i] /= norm


def insertion_sort_in_place(a):
    for i in range(1, a.shape[0]):
        key = a[i]
        j = i - 1
        while j >= 0 and a[j] > key:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = key
    return a

def _scale(v, factor):
    return v * factor


def _safe_divide(a, b):
    if b == 0:
        return a * 0
    return a / b


def helper_calls(x, y):
    s = _scale(x, 2.0)
    q = _safe_divide(np.sum(s), np.sum(y))
    return s, q


def _norm(v):
    return np.sqrt(np.sum(v * v))


def gram_schmidt(vectors):
    basis = []
    for i in range(vectors.shape[0]):
        v = vectors[i]
        for b in basis:
            v = v - (v @ b) * b
        n = _norm(v)
        if n > 1e-10:
            basis.append(v / n)
    return np.stack(basis)


def returns_dict(x):
    lo = np.min(x)
    hi = np.max(x)
    if hi - lo > 0:
        scaled = (x - lo) / (hi - lo)
    else:
        scaled = np.zeros_like(x)
    return {"min": lo, "max": hi, "scaled": scaled}


def nested_structures(pair, params):
    a, b = pair
    w = params["w"]
    out = a @ w + b
    if np.sum(out) > 0:
        out = out * params["scale"]
    return (out, [np.sum(out), np.max(out)])


def list_of_rows_to_array(m):
    rows = []
    for i in range(m.shape[0]):
        if np.sum(m[i]) >= 0:
            rows.append(m[i] * 2)
        else:
            rows.append(-m[i])
    return np.stack(rows)


def scalar_list_then_array(x):
    vals = []
    for v in x:
        if v % 2 == 0:
            vals.append(v // 2)
    vals.append(x[0])
    return np.array(vals)


def pop_from_stack(x):
    stack = []
    for v in x:
        if v > 0:
            stack.append(v)
        elif len(stack) > 0:
            stack.pop()
    return np.stack(stack) if len(stack) > 0 else x[:0], len(stack)


def shape_dependent_python_branch(x):
    # ndim is part of the trace key, so this branch runs at trace time.
    if x.ndim == 1:
        return np.sum(x)
    return np.sum(x, axis=-1)


def outer_and_triangle(x):
    n = x.shape[0]
    m = np.zeros((n, n), dtype=x.dtype)
    for i in range(n):
        for j in range(i + 1):
            m[i, j] = x[i] * x[j]
    return m, np.tril(np.outer(x, x))


def histogram_loop(x, n_bins):
    counts = np.zeros(n_bins, dtype=np.int64)
    lo = np.min(x)
    width = (np.max(x) - lo) / n_bins
    for v in x:
        k = ((v - lo) / width).astype(np.int64) if width > 0 else np.int64(0)
        if k >= n_bins:
            k = np.int64(n_bins - 1)
        counts[k] += 1
    return counts


def recursive_sum(x):
    if x.shape[0] == 0:
        return x.dtype.type(0)
    return x[0] + recursive_sum(x[1:])


def prefix_products(x):
    out = np.empty_like(x)
    acc = x.dtype.type(1)
    for i in range(x.shape[0]):
        acc = acc * x[i]
        out[i] = acc
    return out


def matrix_trace_checked(m):
    # ndim is static (part of the trace key): this raise happens at trace time.
    if m.ndim != 2:
        raise ValueError("expected a matrix, got ndim=" + str(m.ndim))
    total = m.dtype.type(0)
    for i in range(min(m.shape[0], m.shape[1])):
        total += m[i, i]
    return total


def raise_on_negative(x):
    # A data-dependent raise inside a staged loop.
    total = x.dtype.type(0)
    for v in x:
        if v < 0:
            raise ValueError("negative entry")
        total += v
    return total


CASES = [
    (reductions_axis_keepdims, (np.array([[1.0, 5.0, 2.0], [4.0, -1.0, 0.5]]),)),
    (reductions_axis_keepdims, (np.array([[-1, -5], [-4, 2]], dtype=np.int32),)),
    (boolean_mask_stats, (np.array([0.5, 1.5, 2.5, -1.0]), 1.0)),
    (boolean_mask_stats, (np.array([0.5, 0.25]), np.float64(1.0))),
    (boolean_mask_stats, (np.array([1, 7, 3], dtype=np.int16), 2)),
    (masked_assignment, (np.array([-2.0, 0.5, 3.0]), np.float64(0.0))),
    (masked_assignment, (np.array([5, -5], dtype=np.int32), 1)),
    (integer_array_indexing, (np.array([10.0, -20.0, 30.0, 40.0]), np.array([3, 1]))),
    (integer_array_indexing, (np.array([10.0, -20.0, 30.0, 40.0]), np.array([0, 2, 2]))),
    (gather_rows, (np.array([[1.0, 2.0], [5.0, 5.0], [0.0, 1.0]]), np.array([2, 0, 1]))),
    (functional_update_loop, (np.array([1.0, -2.0, 3.0]),)),
    (functional_update_loop, (np.array([-1, 4], dtype=np.int64),)),
    (swap_rows_until_sorted, (np.array([[3.0, 0.0], [1.0, 1.0], [2.0, 2.0]]),)),
    (swap_rows_until_sorted, (np.array([[1, 9], [2, 8]], dtype=np.int32),)),
    (in_place_input_update, (np.array([1.0, 5.0, -2.0]), np.float64(0.0))),
    (laplace_step, (np.arange(20.0).reshape(4, 5) ** 1.5, np.zeros((4, 5)))),
    (histogram_into, (np.array([0.1, 0.5, 0.99, 1.0, -0.2, 0.5]), 0.0, 1.0,
                      np.zeros(4, dtype=np.int64))),
    (normalize_rows_in_place, (np.array([[3.0, 4.0], [0.0, 0.0], [1.0, 1.0]]),)),
    (insertion_sort_in_place, (np.array([5.0, -1.0, 3.0, 3.0, 0.5]),)),
    (insertion_sort_in_place, (np.array([2, 9, 1], dtype=np.int32),)),
    (helper_calls, (np.array([1.0, 2.0]), np.array([1.0, 3.0]))),
    (helper_calls, (np.array([1.0, 2.0]), np.array([1.0, -1.0]))),
    (gram_schmidt, (np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [2.0, 1.0, 0.0]]),)),
    (returns_dict, (np.array([1.0, 3.0, 2.0]),)),
    (returns_dict, (np.array([2.0, 2.0]),)),
    (nested_structures, ((np.array([[1.0, 2.0]]), np.array([0.5, -0.5])),
                         {"w": np.array([[1.0, 0.0], [0.0, 1.0]]), "scale": 3.0})),
    (nested_structures, ((np.array([[-1.0, -2.0]]), np.array([0.5, -0.5])),
                         {"w": np.array([[1.0, 0.0], [0.0, 1.0]]), "scale": np.float64(3.0)})),
    (list_of_rows_to_array, (np.array([[1.0, -3.0], [2.0, 2.0], [-1.0, 0.5]]),)),
    (scalar_list_then_array, (np.array([4, 3, 8, 5], dtype=np.int64),)),
    (scalar_list_then_array, (np.array([1], dtype=np.int32),)),
    (pop_from_stack, (np.array([1.0, 2.0, -1.0, 3.0, -1.0, -1.0, 4.0]),)),
    (pop_from_stack, (np.array([1.0, -1.0]),)),
    (shape_dependent_python_branch, (np.array([1.0, 2.0]),)),
    (shape_dependent_python_branch, (np.array([[1.0, 2.0], [3.0, 4.0]]),)),
    (outer_and_triangle, (np.array([1.0, 2.0, 3.0]),)),
    (outer_and_triangle, (np.array([2, -1], dtype=np.int32),)),
    (histogram_loop, (np.array([0.0, 0.1, 0.5, 0.9, 1.0]), 3)),
    (histogram_loop, (np.array([2.0, 2.0]), 2)),
    (recursive_sum, (np.array([1.0, 2.0, 3.5]),)),
    (recursive_sum, (np.array([], dtype=np.int64),)),
    (prefix_products, (np.array([1.0, 2.0, 0.5, 4.0]),)),
    (prefix_products, (np.array([2, 3, -1], dtype=np.int32),)),
    (matrix_trace_checked, (np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),)),
    (matrix_trace_checked, (np.array([1.0, 2.0]),)),
    (raise_on_negative, (np.array([1.0, 2.0]),)),
    (raise_on_negative, (np.array([1.0, -2.0]),)),
]
