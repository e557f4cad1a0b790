"""Subscript and attribute assignment, augmented assignment, nested containers and dicts."""

import numpy as np


class _Particle:
    def __init__(self, x, v):
        self.x = x
        self.v = v
        self.history = []


def identity_matrix(n):
    m = [[0] * n for _ in range(n)]
    for i in range(n):
        m[i][i] = 1
    return m


def histogram(values):
    counts = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return counts


def prefix_sums_in_place(values):
    for i in range(1, len(values)):
        values[i] += values[i - 1]
    return values[-1]


def patch_slices(values):
    values[1:3] = ["a", "b", "c"]
    values[-1] = "end"
    values[:1] = []
    return len(values)


def extended_slice_assign(values, fill):
    values[::2] = fill
    return values


def bump_port(config):
    config["db"]["port"] += 1
    config.setdefault("cache", {})["size"] = 64
    config["db"]["hosts"].append("backup")
    return config["db"]["port"]


def step_particles(particles, dt, steps):
    for _ in range(steps):
        for p in particles:
            p.x += p.v * dt
            p.history.append(round(p.x, 6))
            if p.x > 1.0:
                p.v = -p.v
    return [p.x for p in particles]


def make_particles(n):
    particles = [_Particle(0.1 * i, 0.5) for i in range(n)]
    step_particles(particles, 0.5, 3)
    particles[0].v *= 3
    return particles


def array_edits(x):
    y = x.copy()
    y[0] = 10
    y[1:] *= 2
    y[y > 15] = 0
    return y


def increment_evens_in_place(x):
    x[::2] += 1
    return x.sum()


def lookup(table, key):
    return table[key]


def swap_items(values, i, j):
    values[i], values[j] = values[j], values[i]
    return values


def assign_tuple_item(pair):
    pair[0] = 5
    return pair


def fill_grid(n):
    g = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            g[i, j] = i - j
    g[:, 0] += 0.5
    return g


def computed_indices(values, idx):
    values[idx[0] + 1] = values[idx[1]] * 10
    values[len(values) - 1] -= 5
    return values


def delete_entries(d, values):
    del d["a"]
    del values[0]
    del values[-2:]
    return sorted(d), values


def nested_counts(pairs):
    table = {}
    for outer, inner in pairs:
        if outer not in table:
            table[outer] = {}
        table[outer][inner] = table[outer].get(inner, 0) + 1
    return table


def string_slices(text):
    return text[::-1], text[1:-1], text[::2], text[-3:], text[10:20]


CASES = [
    (identity_matrix, (3,)),
    (histogram, ("mississippi",)),
    (histogram, ([1.0, 1, True, 2],)),
    (prefix_sums_in_place, ([1, 2, 3, 4],)),
    (prefix_sums_in_place, (np.array([0.5, 0.25, 0.125]),)),
    (prefix_sums_in_place, ([],)),
    (patch_slices, ([1, 2, 3, 4],)),
    (extended_slice_assign, ([0, 0, 0, 0, 0], [1, 2, 3])),
    (extended_slice_assign, ([0, 0, 0, 0, 0], [1, 2])),
    (bump_port, ({"db": {"port": 5432, "hosts": ["main"]}},)),
    (bump_port, ({"db": {"hosts": []}},)),
    (step_particles, ([_Particle(0.0, 1.0), _Particle(0.9, 0.25)], 0.5, 4)),
    (make_particles, (2,)),
    (array_edits, (np.array([1, 5, 9, 3]),)),
    (array_edits, (np.array([1.5, 8.0], dtype=np.float32),)),
    (increment_evens_in_place, (np.arange(5),)),
    (lookup, ({"a": 1}, "a")),
    (lookup, ({"a": 1}, "b")),
    (lookup, ([1, 2], 2)),
    (swap_items, ([1, 2, 3], 0, 2)),
    (swap_items, (np.array([1.0, 2.0, 3.0]), 0, 1)),
    (assign_tuple_item, ([1, 2],)),
    (assign_tuple_item, ((1, 2),)),
    (fill_grid, (3,)),
    (computed_indices, ([1, 2, 3, 4], (0, 2))),
    (delete_entries, ({"a": 1, "b": 2}, [1, 2, 3, 4])),
    (delete_entries, ({"b": 2}, [1, 2, 3, 4])),
    (nested_counts, ([("x", 1), ("y", 2), ("x", 1), ("x", 3)],)),
    (string_slices, ("autostage",)),
]
