"""Building and consuming lists: append, pop, extend, insert, remove, stacking arrays."""

import numpy as np


def squares(n):
    out = []
    for i in range(n):
        out.append(i * i)
    return out


def split_even_odd(values):
    evens = []
    odds = []
    for v in values:
        if v % 2 == 0:
            evens.append(v)
        else:
            odds.append(v)
    return evens, odds


def drain_stack(stack):
    processed = []
    while stack:
        item = stack.pop()
        processed.append(item * 10)
    return processed


def pop_at(values, i):
    item = values.pop(i)
    return item, len(values)


def pop_from_empty():
    pending = []
    return pending.pop()


def reorder(values):
    values.extend([7, 8])
    values.insert(0, -1)
    values.insert(100, 99)
    values.reverse()
    return values[:3]


def remove_all(values, x):
    removed = 0
    while x in values:
        values.remove(x)
        removed += 1
    return removed


def remove_missing(values):
    values.remove("absent")
    return values


def multiplication_table(n):
    rows = []
    for i in range(1, n + 1):
        row = []
        for j in range(1, n + 1):
            row.append(i * j)
        rows.append(row)
    return rows


def stack_rows(n):
    parts = []
    for i in range(n):
        parts.append(np.full(3, i, dtype=np.int64) * 2)
    return np.stack(parts)


def collect_float32(x):
    values = []
    for v in x:
        if v > 0:
            values.append(v * np.float32(2))
    return np.array(values, dtype=np.float32), len(values)


def dedupe(values):
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def sort_records(records):
    ordered = sorted(records, key=lambda r: (r["age"], r["name"]))
    return [r["name"] for r in ordered]


def chunk(values, size):
    if size <= 0:
        raise ValueError("size must be positive")
    chunks = []
    current = []
    for v in values:
        current.append(v)
        if len(current) == size:
            chunks.append(current)
            current = []
    if current:
        chunks.append(current)
    return chunks


def rotate_left(values, k):
    for _ in range(k):
        values.append(values.pop(0))
    return values


def queue_rounds(jobs, quantum):
    queue = list(jobs)
    order = []
    while queue:
        name, remaining = queue.pop(0)
        if remaining > quantum:
            queue.append((name, remaining - quantum))
        else:
            order.append(name)
    return order


def list_arithmetic(a, b):
    combined = a + b
    repeated = a * 2
    combined += [0]
    return combined, repeated, combined.index(0), combined.count(a[0])


CASES = [
    (squares, (5,)),
    (squares, (0,)),
    (split_even_odd, ([1, 2, 3, 4, 5, 6],)),
    (split_even_odd, ([np.int64(3), np.int64(4)],)),
    (drain_stack, ([1, 2, 3],)),
    (drain_stack, ([],)),
    (pop_at, ([10, 20, 30], 1)),
    (pop_at, ([10, 20, 30], -1)),
    (pop_at, ([10, 20, 30], 5)),
    (pop_from_empty, ()),
    (reorder, ([1, 2],)),
    (remove_all, ([1, 2, 1, 3, 1], 1)),
    (remove_all, ([1, 2], 5)),
    (remove_missing, (["present"],)),
    (remove_missing, (["absent", "present", "absent"],)),
    (multiplication_table, (3,)),
    (stack_rows, (3,)),
    (stack_rows, (0,)),
    (collect_float32, (np.array([1.5, -2.0, 0.25], dtype=np.float32),)),
    (dedupe, ([3, 1, 3, 2, 1],)),
    (sort_records, ([{"name": "b", "age": 3}, {"name": "a", "age": 3}, {"name": "c", "age": 1}],)),
    (sort_records, ([{"name": "b"}],)),
    (chunk, ([1, 2, 3, 4, 5], 2)),
    (chunk, ([1, 2, 3, 4], 2)),
    (chunk, ([1], 0)),
    (rotate_left, ([1, 2, 3, 4], 3)),
    (rotate_left, ([], 1)),
    (queue_rounds, ([("a", 3), ("b", 1), ("c", 5)], 2)),
    (list_arithmetic, ([1, 2], [3, 1])),
]
