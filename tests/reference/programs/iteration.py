"""for over lists, tuples, dicts, strings, ranges, enumerate, zip and generators."""

import numpy as np


def _evens(limit):
    n = 0
    while n < limit:
        yield n
        n += 2


def sum_tuple_pairs(pairs):
    total_a = total_b = 0
    for a, b in pairs:
        total_a += a
        total_b += b
    return total_a, total_b


def invert_dict(d):
    inverted = {}
    for key in d:
        inverted[d[key]] = key
    return inverted


def dict_views(d):
    keys = []
    values = []
    for k, v in d.items():
        keys.append(k)
        values.append(v)
    total = 0
    for v in d.values():
        total += v
    return keys, values, total


def char_classes(text):
    letters = digits = other = 0
    for ch in text:
        if ch.isalpha():
            letters += 1
        elif ch.isdigit():
            digits += 1
        else:
            other += 1
    return letters, digits, other


def stepped_ranges(start, stop, step):
    forward = []
    for i in range(start, stop, step):
        forward.append(i)
    backward = []
    for i in range(stop, start, -step):
        backward.append(i)
    return forward, backward


def enumerate_from(words, start):
    lines = []
    for i, w in enumerate(words, start):
        lines.append(f"{i}. {w}")
    return lines


def dot_product(a, b):
    total = 0
    for x, y in zip(a, b, strict=True):
        total += x * y
    return total


def zip_shortest(names, scores, ages):
    rows = []
    for name, score, age in zip(names, scores, ages):  # noqa: B905 - stops at the shortest
        rows.append((name, score, age))
    return rows


def consume_generator(limit):
    total = 0
    count = 0
    for v in _evens(limit):
        total += v
        count += 1
    return total, count


def loop_variable_after(n):
    for i in range(n):  # noqa: B007 - i is read after the loop
        pass
    return i


def loop_variable_after_break(values, target):
    for i, v in enumerate(values):  # noqa: B007 - i is read after the loop
        if v == target:
            break
    return i, v


def zero_iteration_loops(values):
    touched = "no"
    for _ in values:
        touched = "yes"
    for _ in range(0):
        touched = "range"  # pragma: no cover - zero iterations
    for _ in "":
        touched = "string"  # pragma: no cover - zero iterations
    return touched


def pairs_with_sum(values, target):
    pairs = []
    for i, a in enumerate(values):
        for b in values[i + 1:]:
            if a + b == target:
                pairs.append((a, b))
                break
    return pairs


def iterate_array_rows(x):
    sums = []
    for row in x:
        sums.append(row.sum())
    for i, v in enumerate(x[:, 0]):
        sums.append(v * i)
    return sums


def nested_unpacking(records):
    out = []
    for name, (x, y), *tags in records:
        out.append((name, x + y, len(tags)))
    return out


def reversed_and_sorted(values):
    seq = []
    for v in reversed(values):
        seq.append(v)
    for v in sorted(values, reverse=True):
        seq.append(v)
    return seq


def iterate_set_sorted(values):
    unique = set(values)
    out = []
    for v in sorted(unique):
        out.append(v * v)
    return out


def iterate_while_mutating_copy(values):
    for v in list(values):
        if v % 2 == 0:
            values.remove(v)
    return values


def iterate_non_iterable(n):
    total = 0
    for v in n:
        total += v
    return total


def iterator_protocol(values):
    it = iter(values)
    head = next(it)
    rest = []
    for v in it:
        rest.append(v)
    return head, rest


def extend_while_iterating(values):
    for v in values:
        if v < 3:
            values.append(v + 10)
    return len(values)


def reassign_loop_variable(n):
    seen = []
    for i in range(n):
        seen.append(i)
        i = i * 100
    return seen, i


def iterate_dict_while_adding(d):
    for key in d:
        d[key + "_copy"] = d[key]
    return d


CASES = [
    (sum_tuple_pairs, (((1, 2), (3, 4), (5, 6)),)),
    (sum_tuple_pairs, ([(1, 2, 3)],)),
    (invert_dict, ({"a": 1, "b": 2, "c": 1},)),
    (dict_views, ({"x": 3, "y": 4},)),
    (char_classes, ("abc 123!?",)),
    (stepped_ranges, (0, 10, 3)),
    (stepped_ranges, (5, 5, 1)),
    (stepped_ranges, (0, 10, 0)),
    (enumerate_from, (["tea", "milk"], 1)),
    (dot_product, ([1, 2, 3], [4, 5, 6])),
    (dot_product, ((1.5, 2.0), np.array([2.0, 4.0]))),
    (dot_product, ([1, 2, 3], [4, 5])),
    (zip_shortest, (["a", "b", "c"], [90, 80], (20, 30, 40))),
    (consume_generator, (9,)),
    (consume_generator, (0,)),
    (loop_variable_after, (3,)),
    (loop_variable_after, (0,)),
    (loop_variable_after_break, ([5, 6, 7], 6)),
    (loop_variable_after_break, ([5, 6, 7], 9)),
    (loop_variable_after_break, ([], 9)),
    (zero_iteration_loops, ([],)),
    (zero_iteration_loops, ([1],)),
    (pairs_with_sum, ([1, 2, 3, 4, 5, 4], 8)),
    (iterate_array_rows, (np.arange(6).reshape(3, 2),)),
    (nested_unpacking, ([("p", (1, 2), "a", "b"), ("q", (3, 4))],)),
    (reversed_and_sorted, ([3, 1, 2],)),
    (iterate_set_sorted, ([3, -1, 3, 2],)),
    (iterate_while_mutating_copy, ([1, 2, 3, 4, 6],)),
    (iterate_non_iterable, (5,)),
    (iterate_non_iterable, ("ab",)),
    (iterate_non_iterable, ([1, 2.5],)),
    (iterator_protocol, ((1, 2, 3),)),
    (iterator_protocol, ("",)),
    (extend_while_iterating, ([1, 5, 2],)),
    (reassign_loop_variable, (3,)),
    (iterate_dict_while_adding, ({"a": 1},)),
    (iterate_dict_while_adding, ({},)),
]
