"""return statements inside branches and loops."""

import numpy as np


def find_index(values, target):
    for i, v in enumerate(values):
        if v == target:
            return i
    return -1


def validate_user(user):
    if "name" not in user:
        return "missing name"
    if not user["name"]:
        return "empty name"
    if user.get("age", 0) < 0:
        return "negative age"
    return "ok"


def first_square_above(limit):
    n = 0
    while True:
        n += 1
        if n * n > limit:
            return n


def find_in_grid(grid, target):
    for r, row in enumerate(grid):
        for c, v in enumerate(row):
            if v == target:
                return r, c
    return None


def double_positive(x):
    if x > 0:
        return x * 2


def describe_number(n):
    if n == 0:
        return "zero"
    else:
        if n % 2 == 0:
            return "even"
        return "odd"


def parse_value(text):
    text = text.strip()
    if text.isdigit():
        return int(text)
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        return float(text)
    except ValueError:
        return text


def first_failing_check(value, checks):
    for name, check in checks:
        print("checking", name)
        if not check(value):
            return name
    print("all passed")
    return None


def first_duplicate(values):
    seen = set()
    for v in values:
        if v in seen:
            return v
        seen.add(v)
    return None


def loan_decision(income, debt, score):
    if score < 500:
        return "reject", "score"
    ratio = debt / income
    if ratio > 0.5:
        return "reject", "debt"
    if score > 750 and ratio < 0.2:
        return "accept", "prime"
    return "review", round(ratio, 3)


def contains_nested(items, target):
    for item in items:
        if isinstance(item, list):
            if contains_nested(item, target):
                return True
        elif item == target:
            return True
    return False


def first_above_threshold(x, threshold):
    for i in range(x.shape[0]):
        if x[i] > threshold:
            return i, x[i]
    return -1, x.dtype.type(0)


def early_return_in_while_with_state(values):
    total = 0
    i = 0
    while i < len(values):
        total += values[i]
        if total > 10:
            return "overflow at", i, total
        i += 1
    return "total", total


def normalize(x):
    norm = np.sqrt(np.sum(x * x))
    if norm == 0:
        return x
    return x / norm


_CHECKS = [("int", lambda v: isinstance(v, int)), ("even", lambda v: v % 2 == 0)]

CASES = [
    (find_index, ([5, 3, 7], 7)),
    (find_index, ([5, 3, 7], 4)),
    (find_index, ((), 1)),
    (validate_user, ({"age": 3},)),
    (validate_user, ({"name": ""},)),
    (validate_user, ({"name": "ann", "age": -1},)),
    (validate_user, ({"name": "bob"},)),
    (validate_user, (None,)),
    (first_square_above, (50,)),
    (first_square_above, (0,)),
    (find_in_grid, ([[1, 2], [3, 4]], 3)),
    (find_in_grid, ([[1, 2], [3, 4]], 5)),
    (double_positive, (4,)),
    (double_positive, (-4,)),
    (describe_number, (0,)),
    (describe_number, (8,)),
    (describe_number, (7,)),
    (parse_value, (" 42 ",)),
    (parse_value, ("True",)),
    (parse_value, ("2.5e3",)),
    (parse_value, ("hello",)),
    (first_failing_check, (7, _CHECKS)),
    (first_failing_check, (8, _CHECKS)),
    (first_failing_check, ("8", _CHECKS)),
    (first_duplicate, ([1, 2, 3, 2, 1],)),
    (first_duplicate, ("abc",)),
    (loan_decision, (5000, 100, 400)),
    (loan_decision, (5000, 3000, 600)),
    (loan_decision, (5000, 500, 800)),
    (loan_decision, (5000, 1500, 700)),
    (loan_decision, (0, 1500, 700)),
    (contains_nested, ([1, [2, [3, 4]], 5], 4)),
    (contains_nested, ([1, [2, [3, 4]], 5], 6)),
    (first_above_threshold, (np.array([0.1, 0.5, 0.9, 0.7]), 0.6)),
    (first_above_threshold, (np.array([1, 2], dtype=np.int32), 5)),
    (early_return_in_while_with_state, ([3, 4, 5, 6],)),
    (early_return_in_while_with_state, ([1, 2],)),
    (normalize, (np.array([3.0, 4.0]),)),
    (normalize, (np.zeros(3),)),
]
