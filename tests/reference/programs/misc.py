"""Walrus, ternaries, augmented operators, star-unpacking, while True, deeply nested flow."""

import numpy as np


def read_chunks(data, size):
    chunks = []
    pos = 0
    while chunk := data[pos:pos + size]:
        chunks.append(chunk)
        pos += size
    return chunks


def walrus_in_if(values):
    if (n := len(values)) > 3:
        return f"long list ({n})"
    return f"short list ({n})"


def ternaries(x):
    kind = "neg" if x < 0 else "zero" if x == 0 else "pos"
    magnitude = -x if x < 0 else x
    return kind, magnitude


def ternary_side_effects(flag):
    log = []

    def pick(name, value):
        log.append(name)
        return value

    result = pick("yes", 1) if flag else pick("no", 2)
    return result, log


def augmented_ops(a, b):
    x = a
    x += b
    x -= 1
    x *= 3
    y = x
    y //= 2
    z = x
    z %= 7
    w = a
    w **= 2
    f = float(x)
    f /= 4
    bits = a
    bits <<= 2
    bits |= 1
    bits ^= 0b1010
    bits &= 0xFF
    bits >>= 1
    return x, y, z, w, f, bits


def augmented_on_mutables(items, extra):
    alias = items
    items += extra
    text = "ab"
    text *= 2
    counts = {"a": 1}
    counts["a"] += 5
    return alias is items, alias, text, counts


def star_unpacking(values):
    first, *middle, last = values
    head, *tail = middle or [None]
    return first, middle, last, head, tail


def star_in_calls_and_literals(a, b):
    merged = [*a, *b]
    combined = {**{"x": 1}, **{"x": 2, "y": 3}}
    return merged, combined, max(*merged), (*a, 0)


def while_true_menu(commands):
    state = 0
    log = []
    i = 0
    while True:
        if i >= len(commands):
            log.append("eof")
            break
        cmd = commands[i]
        i += 1
        if cmd == "inc":
            state += 1
        elif cmd == "dec":
            state -= 1
        elif cmd == "skip":
            continue
        elif cmd == "quit":
            log.append("quit")
            break
        else:
            raise ValueError(f"unknown command {cmd!r}")
        log.append(state)
    return state, log


def deeply_nested(n):
    out = []
    for i in range(n):
        if i % 2 == 0:
            j = 0
            while j < i:
                if j == 3:
                    break
                for k in range(j):
                    if (i + j + k) % 3 == 0:
                        continue
                    out.append((i, j, k))
                j += 1
            else:
                out.append(("done", i))
        else:
            try:
                if i == 5:
                    raise KeyError(i)
                out.append(("odd", i))
            except KeyError:
                out.append(("caught", i))
    return out


def swap_and_rotate(a, b, c):
    a, b = b, a
    a, b, c = c, a, b
    return a, b, c


def chained_assignment(n):
    x = y = [0] * n
    x[0] = 5
    a = b = n
    a += 1
    return x, y, a, b


def numpy_augmented(x):
    y = x
    y += 1
    z = x * 2
    z **= 2
    x[0] -= 100
    return y is x, z


def conditional_import_style(kind):
    import math

    fn = math.floor if kind == "floor" else math.ceil if kind == "ceil" else round
    return [fn(v) for v in (1.5, 2.5, -0.5)]


def integer_float_mix(n):
    total = 0
    for i in range(1, n + 1):
        total += 1 / i if i % 2 else i // 2
    return total, type(total).__name__


def string_building(words):
    result = ""
    for w in words:
        result += w[0].upper() if w else "_"
        result += "-" if len(result) < 5 else ""
    return result


CASES = [
    (read_chunks, ("abcdefg", 3)),
    (read_chunks, ([1, 2, 3, 4], 2)),
    (read_chunks, ("", 2)),
    (walrus_in_if, ([1, 2, 3, 4],)),
    (walrus_in_if, ([1],)),
    (ternaries, (-3,)),
    (ternaries, (0,)),
    (ternaries, (2.5,)),
    (ternary_side_effects, (True,)),
    (ternary_side_effects, (False,)),
    (augmented_ops, (7, 3)),
    (augmented_ops, (7.5, 3)),
    (augmented_on_mutables, ([1], [2, 3])),
    (star_unpacking, ([1, 2, 3, 4],)),
    (star_unpacking, ((1, 2),)),
    (star_unpacking, ([1],)),
    (star_in_calls_and_literals, ([1, 5], (3,))),
    (while_true_menu, (["inc", "inc", "skip", "dec", "quit", "inc"],)),
    (while_true_menu, (["inc"],)),
    (while_true_menu, (["inc", "jump"],)),
    (deeply_nested, (8,)),
    (swap_and_rotate, (1, 2, 3)),
    (chained_assignment, (3,)),
    (numpy_augmented, (np.array([1, 2, 3]),)),
    (numpy_augmented, (np.array([1.5, 2.5], dtype=np.float32),)),
    (conditional_import_style, ("floor",)),
    (conditional_import_style, ("ceil",)),
    (conditional_import_style, ("round",)),
    (integer_float_mix, (5,)),
    (string_building, (["alpha", "", "beta", "gamma", "delta"],)),
]
