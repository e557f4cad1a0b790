"""for loops with break, continue and else."""

import numpy as np


def sum_squares(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def first_negative(values):
    for i, v in enumerate(values):
        if v < 0:
            found = (i, v)
            break
    else:
        found = None
    return found


def is_prime(n):
    if n < 2:
        return False
    for d in range(2, int(n**0.5) + 1):
        if n % d == 0:
            result = False
            break
    else:
        result = True
    return result


def sum_odd(values):
    total = 0
    for v in values:
        if v % 2 == 0:
            continue
        total += v
    return total


def running_max(values):
    out = []
    best = None
    for v in values:
        if best is None or v > best:
            best = v
        out.append(best)
    return out


def count_vowels(text):
    counts = {}
    for ch in text.lower():
        if ch not in "aeiou":
            continue
        counts[ch] = counts.get(ch, 0) + 1
    return counts


def product(values):
    p = 1
    for v in values:
        p *= v
    return p


def sum_until_sentinel(values, sentinel):
    total = 0
    skipped = 0
    for v in values:
        if v == sentinel:
            break
        if v is None:
            skipped += 1
            continue
        total += v
    else:
        print("no sentinel")
    return total, skipped


def contains_in_rows(matrix, target):
    for r, row in enumerate(matrix):
        for c, v in enumerate(row):  # noqa: B007 - c is read after the loop
            if v == target:
                break
        else:
            continue
        return r, c
    return None


def invoice_total(prices, quantities):
    total = 0.0
    for item, qty in quantities.items():
        total += prices[item] * qty
    return total


def double_in_place(values):
    for i in range(len(values)):
        values[i] = values[i] * 2
    return sum(values)


def join_words(words, sep):
    text = ""
    for i, w in enumerate(words):
        if i > 0:
            text += sep
        text += w
    return text


def tail_sum(x, k):
    total = x.dtype.type(0)
    for i in range(x.shape[0] - 1, x.shape[0] - k - 1, -1):
        total += x[i]
    return total


def rows_with_nan(x):
    bad = []
    for i, row in enumerate(x):
        for v in row:
            if np.isnan(v):
                bad.append(i)
                break
    return bad


CASES = [
    (sum_squares, (10,)),
    (sum_squares, (0,)),
    (first_negative, ([3, 1, -4, 1, -5],)),
    (first_negative, ([3, 1],)),
    (is_prime, (97,)),
    (is_prime, (91,)),
    (is_prime, (1,)),
    (is_prime, (2,)),
    (sum_odd, ([1, 2, 3, 4, 5],)),
    (sum_odd, ([1, "x"],)),
    (running_max, ([3, 1, 4, 1, 5, 9, 2, 6],)),
    (count_vowels, ("Autostage Compiles Python",)),
    (product, ([1.5, 2, 4],)),
    (product, ([],)),
    (product, ([np.int8(100), np.int8(2)],)),
    (sum_until_sentinel, ([1, None, 2, -1, 5], -1)),
    (sum_until_sentinel, ([1, None, 2], -1)),
    (sum_until_sentinel, ([1, "a", 2], -1)),
    (contains_in_rows, ([[1, 2], [3, 4], [5, 6]], 4)),
    (contains_in_rows, ([[1, 2], [3, 4]], 9)),
    (invoice_total, ({"apple": 0.5, "pear": 0.75}, {"apple": 4, "pear": 3})),
    (invoice_total, ({"apple": 0.5}, {"apple": 1, "kiwi": 2})),
    (double_in_place, ([1, 2, 3],)),
    (double_in_place, (np.array([1.5, 2.5]),)),
    (join_words, (["a", "b", "c"], ", ")),
    (join_words, ([], "-")),
    (tail_sum, (np.arange(10, dtype=np.int16), 3)),
    (tail_sum, (np.linspace(0.0, 1.0, 7), 7)),
    (rows_with_nan, (np.array([[1.0, np.nan], [2.0, 3.0], [np.nan, np.nan]]),)),
]
