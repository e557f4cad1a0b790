"""Loops and branches nested inside each other."""

import numpy as np


def count_primes(n):
    count = 0
    for k in range(2, n):
        is_prime = True
        d = 2
        while d * d <= k:
            if k % d == 0:
                is_prime = False
                break
            d += 1
        if is_prime:
            count += 1
    return count


def sign_counts(rows):
    pos = neg = zeros = 0
    for row in rows:
        for v in row:
            if v > 0:
                pos += 1
            elif v < 0:
                neg += 1
            else:
                zeros += 1
    return pos, neg, zeros


def bubble_sort(values):
    values = list(values)
    n = len(values)
    swapped = True
    passes = 0
    while swapped:
        swapped = False
        passes += 1
        for i in range(n - 1):
            if values[i] > values[i + 1]:
                values[i], values[i + 1] = values[i + 1], values[i]
                swapped = True
        n -= 1
    return values, passes


def binary_search(sorted_values, target):
    lo, hi = 0, len(sorted_values) - 1
    steps = 0
    while lo <= hi:
        steps += 1
        mid = (lo + hi) // 2
        if sorted_values[mid] == target:
            return mid, steps
        elif sorted_values[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1, steps


def parse_integers(text):
    numbers = []
    current = 0
    sign = 1
    in_number = False
    for ch in text:
        if ch.isdigit():
            current = current * 10 + int(ch)
            in_number = True
        elif ch == "-" and not in_number:
            sign = -1
        else:
            if in_number:
                numbers.append(sign * current)
            current = 0
            sign = 1
            in_number = False
    if in_number:
        numbers.append(sign * current)
    return numbers


def triangle_kind(a, b, c):
    if a + b <= c or a + c <= b or b + c <= a:
        raise ValueError(f"not a triangle: {a}, {b}, {c}")
    if a == b:
        if b == c:
            kind = "equilateral"
        else:
            kind = "isosceles"
    else:
        if b == c or a == c:
            kind = "isosceles"
        else:
            kind = "scalene"
    return kind


def longest_collatz(limit):
    best, best_len = 1, 1
    for start in range(1, limit):
        n, length = start, 1
        while n != 1:
            if n % 2 == 0:
                n //= 2
            else:
                n = 3 * n + 1
            length += 1
        if length > best_len:
            best, best_len = start, length
    return best, best_len


def pascal_row(n):
    row = [1]
    for _ in range(n):
        nxt = [1]
        for i in range(len(row) - 1):
            nxt.append(row[i] + row[i + 1])
        nxt.append(1)
        row = nxt
    return row


def count_islands(grid):
    rows, cols = len(grid), len(grid[0])
    seen = set()
    islands = 0
    for r in range(rows):
        for c in range(cols):
            if grid[r][c] != 1 or (r, c) in seen:
                continue
            islands += 1
            stack = [(r, c)]
            while stack:
                i, j = stack.pop()
                if (i, j) in seen:
                    continue
                seen.add((i, j))
                for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                    ni, nj = i + di, j + dj
                    if 0 <= ni < rows and 0 <= nj < cols and grid[ni][nj] == 1:
                        stack.append((ni, nj))
    return islands


def threshold_rows(x, limit):
    kept = []
    for i in range(x.shape[0]):
        total = 0.0
        for j in range(x.shape[1]):
            if x[i, j] < 0:
                continue
            total += x[i, j]
            if total > limit:
                break
        if total <= limit:
            kept.append(i)
    return kept


def tokenize_words(text, stopwords):
    words = []
    word = ""
    for ch in text + " ":
        if ch.isalpha():
            word += ch.lower()
        else:
            if word:
                if word not in stopwords:
                    words.append(word)
                word = ""
    return words


def staircase_search(matrix, target):
    i, j = 0, len(matrix[0]) - 1
    while i < len(matrix) and j >= 0:
        v = matrix[i][j]
        if v == target:
            return (i, j)
        if v > target:
            j -= 1
        else:
            i += 1
    raise LookupError(f"{target} not in matrix")


CASES = [
    (count_primes, (30,)),
    (count_primes, (2,)),
    (sign_counts, ([[1, -2, 0], [3, 0], []],)),
    (sign_counts, ([[np.float64(-1.5)], [0.0, 2.5]],)),
    (bubble_sort, ([5, 1, 4, 2, 8],)),
    (bubble_sort, ((3.5, -1.0, 3.5),)),
    (bubble_sort, ([],)),
    (binary_search, ([1, 3, 5, 7, 9, 11], 7)),
    (binary_search, ([1, 3, 5, 7, 9, 11], 1)),
    (binary_search, ([1, 3, 5, 7, 9, 11], 4)),
    (parse_integers, ("12 -7, 300;5",)),
    (parse_integers, ("--3 a9-",)),
    (triangle_kind, (3, 3, 3)),
    (triangle_kind, (3, 3, 5)),
    (triangle_kind, (3, 5, 5)),
    (triangle_kind, (3, 4, 5)),
    (triangle_kind, (1, 2, 3)),
    (longest_collatz, (30,)),
    (pascal_row, (0,)),
    (pascal_row, (6,)),
    (count_islands, ([[1, 1, 0, 0], [0, 1, 0, 1], [1, 0, 0, 1], [1, 1, 0, 0]],)),
    (count_islands, ([[0, 0], [0, 0]],)),
    (threshold_rows, (np.array([[1.0, -5.0, 2.0], [4.0, 4.0, 4.0], [0.5, 0.5, -1.0]]), 5.0)),
    (tokenize_words, ("The cat, and THE hat!", {"the", "and"})),
    (staircase_search, ([[1, 4, 7], [2, 5, 8], [3, 6, 9]], 6)),
    (staircase_search, ([[1, 4, 7], [2, 5, 8], [3, 6, 9]], 10)),
]
