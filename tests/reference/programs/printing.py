"""print with sep, end, file and flush; printing inside control flow."""

import io
import sys

import numpy as np


class _Money:
    def __init__(self, cents):
        self.cents = cents

    def __str__(self):
        return f"${self.cents // 100}.{self.cents % 100:02d}"

    def __repr__(self):
        return f"Money({self.cents})"


def print_table(rows):
    for name, qty, price in rows:
        print(f"{name:<10}{qty:>4}{price:>8.2f}")
    print("-" * 22)
    return len(rows)


def print_separators(a, b, c):
    print(a, b, c)
    print(a, b, c, sep=", ", end=";\n")
    print(a, b, sep="")
    print(c, end="")
    print()
    return str(a) + str(b)


def print_to_buffer(values):
    buf = io.StringIO()
    print(*values, sep="|", file=buf)
    print("done", file=buf, end="!")
    return buf.getvalue()


def warn_to_stderr(value):
    if value < 0:
        print("warning: negative value", value, file=sys.stderr)
    print("value", value, file=sys.stdout)
    return abs(value)


def progress(n):
    for i in range(n):
        print(i, end=" ", flush=True)
        if i % 3 == 2:
            print("|", end=" ")
    print("end")
    return n


def print_array(x):
    print(x)
    print(x.dtype, x.shape, x.sum())
    print(repr(x[0]))
    return x.size


def print_formats(x):
    print(f"{x:.3f}", f"{x:>10}", f"{x:e}")
    print(repr(x), str(x), sep=" / ")
    return round(x, 1)


def print_defaults_none(values):
    print(*values, sep=None, end=None)
    return len(values)


def print_result_value():
    result = print("printing returns", None)
    return result, "after"


def print_custom_separator(x, sep):
    print("a", x, sep=sep)
    return x


def print_objects(amounts):
    items = [_Money(c) for c in amounts]
    print(*items)
    print(items)
    return str(items[0])


def report(scores):
    best = max(scores, key=scores.get)
    for name in sorted(scores):
        marker = "*" if name == best else " "
        print(marker, name, scores[name], sep="\t")
    return best


def print_nested(depth):
    def show(level):
        print("  " * level + f"level {level}")
        if level < depth:
            show(level + 1)
        print("  " * level + f"leaving {level}")

    show(0)
    return depth


CASES = [
    (print_table, ([("apple", 3, 0.5), ("kiwi", 12, 1.25)],)),
    (print_separators, (1, "two", 3.0)),
    (print_to_buffer, ([1, "a", None],)),
    (warn_to_stderr, (-2,)),
    (warn_to_stderr, (np.float64(2.5),)),
    (progress, (7,)),
    (print_array, (np.arange(6, dtype=np.int16).reshape(2, 3),)),
    (print_array, (np.linspace(0, 1, 3),)),
    (print_formats, (3.14159,)),
    (print_formats, (np.float32(2.5),)),
    (print_defaults_none, ([1, 2],)),
    (print_result_value, ()),
    (print_custom_separator, (1, " -> ")),
    (print_custom_separator, (1, 5)),
    (print_objects, ([150, 2005],)),
    (report, ({"ann": 3, "bob": 7, "cy": 5},)),
    (print_nested, (2,)),
]
