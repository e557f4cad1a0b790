"""List, dict and set comprehensions and generator expressions."""

import numpy as np


def squares_of_odds(n):
    return [i * i for i in range(n) if i % 2]


def word_lengths(text):
    return {w: len(w) for w in text.split()}


def unique_initials(names):
    return sorted({n[0].upper() for n in names if n})


def flatten(matrix):
    return [v for row in matrix for v in row]


def transpose(matrix):
    return [[row[i] for row in matrix] for i in range(len(matrix[0]))]


def conditional_values(values):
    return [v if v >= 0 else -v * 10 for v in values]


def grid_points(n):
    return [(i, j) for i in range(n) for j in range(i, n) if (i + j) % 2 == 0]


def invert_mapping(d):
    return {v: k for k, v in d.items()}


def total_of_generator(values):
    return sum(v * v for v in values if v > 0)


def any_all(values):
    return any(v > 10 for v in values), all(v % 2 == 0 for v in values)


def comprehension_with_calls(words):
    def score(w):
        return sum(ord(c) - 96 for c in w.lower())

    scores = {w: score(w) for w in words}
    best = [w for w in words if scores[w] == max(scores.values())]
    return scores, best


def comprehension_closure_over_arg(values, scale):
    return [v * scale for v in values]


def numpy_from_comprehension(n):
    rows = [np.arange(i, i + 3) * 0.5 for i in range(n)]
    return np.array([r.sum() for r in rows]), np.vstack(rows)


def nested_dict_comprehension(names, subjects):
    return {name: {s: len(name) * len(s) for s in subjects} for name in names}


def comprehension_raises(values):
    return [10 // v for v in values]


def walrus_in_comprehension(values):
    return [y for v in values if (y := v * v) > 10]


def set_operations(a, b):
    sa = {x for x in a}
    sb = {x for x in b}
    return sorted(sa & sb), sorted(sa | sb), sorted(sa - sb)


def dict_filter(prices, budget):
    affordable = {k: v for k, v in prices.items() if v <= budget}
    return affordable, len(affordable)


CASES = [
    (squares_of_odds, (10,)),
    (word_lengths, ("the quick brown fox the",)),
    (unique_initials, (["ann", "bob", "Al", "", "cy"],)),
    (flatten, ([[1, 2], [], [3]],)),
    (transpose, ([[1, 2, 3], [4, 5, 6]],)),
    (transpose, ([[1, 2], [3]],)),
    (conditional_values, ([3, -1, 0, -2.5],)),
    (grid_points, (4,)),
    (invert_mapping, ({"a": 1, "b": 2},)),
    (total_of_generator, ([1, -2, 3],)),
    (any_all, ([2, 4, 12],)),
    (any_all, ([],)),
    (comprehension_with_calls, (["abc", "cab", "zz", "a"],)),
    (comprehension_closure_over_arg, ([1, 2], 1.5)),
    (numpy_from_comprehension, (3,)),
    (nested_dict_comprehension, (["al", "bea"], ["math", "art"])),
    (comprehension_raises, ([1, 2, 5],)),
    (comprehension_raises, ([1, 0],)),
    (walrus_in_comprehension, ([1, 4, 2, 5],)),
    (set_operations, ([1, 2, 3, 3], [2, 3, 4])),
    (dict_filter, ({"tea": 2.5, "cake": 4.0, "pie": 3.0}, 3.0)),
]
