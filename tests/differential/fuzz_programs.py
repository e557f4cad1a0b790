"""A seeded generator of small random Python functions for the differential fuzzer.

``generate(seed, staged=False)`` returns the source of a module with one function ``prog`` and its
helpers. The same seed always gives the same text. Plain mode (compared under ``to_graph``):
``prog(a, b, c, xs, d, obj, log)`` with ints ``a``/``b``, a float ``c``, a list ``xs``, a dict
``d``, an object ``obj`` with attribute ``n`` and a list ``log``; the body mixes ``if``/``elif``/
``else``, ``for`` and ``while`` loops with ``break``/``continue``/``return``, ``and``/``or``/
``not``, ternaries, comparison chains, list ``append``/``pop``/indexing, dict items, attribute
updates, a closure writing a ``nonlocal``, ``print``, operands with side effects (``_note`` appends
to ``log``), and operations that can raise (``ZeroDivisionError``, ``IndexError``).

Staged mode (compared under ``convert``): ``prog(a, b, c, x)`` with NumPy scalars ``a``/``b``
(int64), ``c`` (float64) and a float64 array ``x``; the same statement forms on those values plus
a local list, a Python dict and an object whose state the body updates, and side-effect operands
in ``and``/``or``/ternaries/while tests. Loops are bounded (a counter incremented first), so every
program terminates.
"""

from __future__ import annotations

import random

INDENT = "    "
MAX_DEPTH = 3

HELPERS = '''
class _Box:
    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return type(other) is _Box and self.n == other.n


def _note(log, v):
    log.append(v)
    return v
'''


class _Writer:
    def __init__(self, rng: random.Random, staged: bool):
        self.rng = rng
        self.staged = staged
        self.lines: list[str] = []
        self.counter = 0

    def emit(self, depth: int, text: str) -> None:
        self.lines.append(INDENT * depth + text if text else "")

    # -- expressions ---------------------------------------------------------------------------

    def atom(self, scope: list[str]) -> str:
        rng = self.rng
        common = ["a", "b", "t", str(rng.randint(0, 9)), "box.n", "d['k']", "count", *scope]
        extra = (["x[1]", "len(acc)", "int(c)"] if self.staged
                 else ["len(xs)", "obj.n", "len(log)"])
        return rng.choice(common + extra)

    def value(self, scope: list[str], depth: int = 0) -> str:
        """An int-valued expression (an int or an int64 NumPy scalar)."""
        rng = self.rng
        a, b = self.atom(scope), self.atom(scope)
        if depth > 1:
            return a
        forms = [
            a, f"{a} + {b}", f"{a} - {b}", f"({a} * {rng.randint(2, 4)}) % 1009",
            f"{a} // {rng.randint(2, 5)}", f"{a} % {rng.randint(2, 7)}",
            f"abs({a} - {b})", f"min({a}, {b})", f"max({a}, {b})",
            f"({self.value(scope, depth + 1)} if ({self.condition(scope, depth + 1)}) "
            f"else {self.value(scope, depth + 1)})",
            f"{a} // ({b} - {rng.randint(0, 3)})",  # may divide by zero
            f"_note(log, {a})" if not self.staged else f"_note(log, {a})",
            "bump(1)",
        ]
        if not self.staged:
            forms += [f"xs[{a} % 4]", f"d.get({a} % 3, {b})"]  # may be out of range
        else:
            forms += [f"int(x[{a} % 4] > {b})", f"acc[-1] if acc else {b}"]
        return rng.choice(forms)

    def condition(self, scope: list[str], depth: int = 0) -> str:
        rng = self.rng
        a, b = self.atom(scope), self.atom(scope)
        c = rng.randint(0, 12)
        simple = [f"{a} > {c}", f"{a} <= {b}", f"{a} % 2 == {rng.randint(0, 1)}",
                  f"0 <= {a} < {c}", f"{a} != {b}", f"{a} == {c} or {b} > {c}",
                  "c > 1.5" if self.staged else "xs"]
        if depth > 1:
            return rng.choice(simple)
        s1, s2 = rng.choice(simple), rng.choice(simple)
        return rng.choice([
            *simple, f"{s1} and {s2}", f"{s1} or {s2}", f"not ({s1})",
            f"{s1} and _note(log, {a}) > {c}", f"{s1} or _note(log, {b}) % 2 == 0",
            f"({s1}) if {s2} else ({rng.choice(simple)})",
            f"{a} < {b} < _note(log, {c})",
        ])

    # -- statements ----------------------------------------------------------------------------

    def simple(self, depth: int, scope: list[str]) -> None:
        rng = self.rng
        v = self.value(scope)
        forms = [
            f"t = {v}", f"a = ({v}) % 1009", f"b += {v}", f"box.n += {v}", f"d['k'] = {v}",
            f"print('t', {v})", f"log.append({v})", "t = bump(2)",
            f"d[{rng.randint(0, 2)}] = {v}",
        ]
        if self.staged:
            forms += [f"acc.append({v})", "c = c * 0.5 + 1.0", f"c += {v}"]
        else:
            forms += [f"xs.append({v})", "if xs:\n" + INDENT * (depth + 1) + "t = xs.pop()",
                      f"obj.n = {v}", f"c = c / 2 + {v}"]
        self.emit(depth, rng.choice(forms))

    def jump(self, depth: int, scope: list[str], in_loop: bool) -> None:
        kind = self.rng.choice(["return"] + (["break", "continue"] * 2 if in_loop else []))
        self.emit(depth, f"if {self.condition(scope)}:")
        if kind == "return":
            self.emit(depth + 1, f"return {self.result()}")
        else:
            self.emit(depth + 1, kind)

    def result(self) -> str:
        if self.staged:
            return self.rng.choice(["a + b", "(a, b, c)", "t + count + box.n", "c",
                                    "a + len(acc)", "(a, len(log), d['k'])"])
        return self.rng.choice(["(a, b, t, c)", "t + count", "(a, xs, d, log)", "box.n"])

    def if_stmt(self, depth: int, scope: list[str], in_loop: bool) -> None:
        self.emit(depth, f"if {self.condition(scope)}:")
        self.block(depth + 1, scope, in_loop, self.rng.randint(1, 2))
        if self.rng.random() < 0.3:
            self.emit(depth, f"elif {self.condition(scope)}:")
            self.block(depth + 1, scope, in_loop, 1)
        if self.rng.random() < 0.5:
            self.emit(depth, "else:")
            self.block(depth + 1, scope, in_loop, self.rng.randint(1, 2))

    def for_stmt(self, depth: int, scope: list[str]) -> None:
        self.counter += 1
        v = f"v{self.counter}"
        rng = self.rng
        iterable = rng.choice([f"range({rng.randint(1, 5)})", "range(a % 4)"]
                              + (["range(b % 5)", "x"] if self.staged else ["list(xs)"]))
        self.emit(depth, f"for {v} in {iterable}:")
        self.loop_body(depth + 1, scope + ([] if iterable == "x" else [v]))

    def while_stmt(self, depth: int, scope: list[str]) -> None:
        self.counter += 1
        k = f"k{self.counter}"
        bound = self.rng.choice([str(self.rng.randint(1, 5)), "a % 4", "b % 3 + 1"])
        extra = ""
        if self.rng.random() < 0.4:
            extra = f" and ({self.condition(scope, depth=1)})"
        self.emit(depth, f"{k} = 0")
        self.emit(depth, f"while {k} < {bound}{extra}:")
        self.emit(depth + 1, f"{k} += 1")
        self.loop_body(depth + 1, scope + [k])

    def try_stmt(self, depth: int, scope: list[str], in_loop: bool) -> None:
        self.emit(depth, "try:")
        self.block(depth + 1, scope, in_loop, self.rng.randint(1, 2))
        self.emit(depth, f"except {self.rng.choice(['ZeroDivisionError', 'IndexError'])}:")
        self.emit(depth + 1, "t = -1")

    def loop_body(self, depth: int, scope: list[str]) -> None:
        self.block(depth, scope, True, self.rng.randint(1, 3))
        if self.rng.random() < 0.6:
            self.jump(depth, scope, True)

    def statement(self, depth: int, scope: list[str], in_loop: bool) -> None:
        r = self.rng.random()
        if depth >= MAX_DEPTH or r < 0.4:
            self.simple(depth, scope)
        elif r < 0.6:
            self.if_stmt(depth, scope, in_loop)
        elif r < 0.72:
            self.for_stmt(depth, scope)
        elif r < 0.84:
            self.while_stmt(depth, scope)
        elif r < 0.92:
            self.try_stmt(depth, scope, in_loop)
        else:
            self.jump(depth, scope, in_loop)

    def block(self, depth: int, scope: list[str], in_loop: bool, count: int) -> None:
        for _ in range(count):
            self.statement(depth, scope, in_loop)

    def function(self) -> str:
        if self.staged:
            self.emit(0, "def prog(a, b, c, x):")
            self.emit(1, "log = []")
            self.emit(1, "acc = []")
            self.emit(1, "d = {'k': 1}")
        else:
            self.emit(0, "def prog(a, b, c, xs, d, obj, log):")
        self.emit(1, "box = _Box(1)")
        self.emit(1, "t = 0")
        self.emit(1, "count = 0")
        self.emit(1, "")
        self.emit(1, "def bump(k):")
        self.emit(2, "nonlocal count")
        self.emit(2, "count += k")
        self.emit(2, "return count")
        self.emit(1, "")
        self.block(1, [], False, self.rng.randint(3, 6))
        self.emit(1, f"return {self.result()}")
        return "\n".join(self.lines)


def generate(seed: int, staged: bool = False) -> str:
    """The source of a module with ``prog`` (see the module docstring)."""
    rng = random.Random(seed * 2 + int(staged))
    body = _Writer(rng, staged).function()
    mode = "staged" if staged else "plain"
    return (f'"""Fuzzed program (tests/differential/fuzz_programs.py, seed {seed}, {mode})."""\n'
            f"{HELPERS}\n\n{body}\n")


def plain_arguments(seed: int) -> list[tuple]:
    """Argument tuples for a plain program: (a, b, c, xs, d, obj, log)."""
    rng = random.Random(seed)
    cases = []
    for _ in range(3):
        xs = [rng.randint(-3, 9) for _ in range(rng.randint(0, 5))]
        cases.append((rng.randint(-5, 12), rng.randint(-5, 12), rng.choice([0.5, 2.0, -1.25]),
                      xs, {"k": rng.randint(0, 5)}, _Obj(rng.randint(0, 4)), []))
    return cases


def staged_arguments(seed: int) -> list[tuple]:
    """Argument tuples for a staged program: NumPy int64/float64 scalars and a float64 array."""
    import numpy as np

    rng = random.Random(seed)
    return [(np.int64(rng.randint(-5, 12)), np.int64(rng.randint(-5, 12)),
             np.float64(rng.choice([0.5, 2.0, -1.25])),
             np.array([rng.uniform(-2, 2) for _ in range(4)]))
            for _ in range(2)]


class _Obj:
    """The attribute-state argument of plain programs (compared by attributes)."""

    def __init__(self, n: int):
        self.n = n
