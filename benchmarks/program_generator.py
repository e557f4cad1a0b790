"""A seeded generator of realistic Python modules, the input of ``conversion_time.py``.

``generate_module(n_functions, seed)`` returns the source of a module of functions
``f_0 ... f_<n-1>``, each ``f_k(n, xs) -> int`` (``n`` a non-negative int, ``xs`` a list of ints),
of 10-40 lines: nested ``if``/``elif``/``else``, ``for`` and ``while`` loops with ``break``,
``continue`` and ``else``, early returns, list appends, subscript (and augmented subscript)
assignments, ``and``/``or``/``not``, chained comparisons, ternaries, builtins and calls to other
functions of the module. Every function terminates (``while`` loops count up to a small bound, the
counter incremented first) and never raises on valid inputs, and calls only go to functions of a
lower *level* (``k // 50``), so the call graph is acyclic and its cost bounded. The same seed always
gives the same text.
"""

from __future__ import annotations

import random

LEVEL_SIZE = 50  # f_k calls only functions f_j with j // LEVEL_SIZE < k // LEVEL_SIZE
MAX_DEPTH = 3  # nesting depth of compound statements
MAX_CALLS = 2  # calls to other functions per function
INDENT = "    "


class _FunctionWriter:
    """Writes one function; ``lines`` holds its source, one line per entry."""

    def __init__(self, rng: random.Random, index: int):
        self.rng = rng
        self.index = index
        self.lines: list[str] = []
        self.calls = 0
        self.counter = 0  # fresh names for loop variables
        self.callees = list(range((index // LEVEL_SIZE) * LEVEL_SIZE))

    # -- expressions ---------------------------------------------------------------------------

    def value(self, scope: list[str]) -> str:
        """An int-valued expression over the variables in scope."""
        rng = self.rng
        atoms = ["acc", "n", "len(out)", "buf[1]", str(rng.randint(1, 9)), *scope]
        a, b = rng.choice(atoms), rng.choice(atoms)
        return rng.choice([
            a,
            f"{a} + {b}",
            f"{a} * {rng.randint(2, 5)} - {b}",
            f"({a} + {b}) % {rng.randint(3, 13)}",
            f"abs({a} - {b})",
            f"min({a}, {b})",
            f"max({a}, {b}) // 2",
            f"{a} if {self.condition(scope, simple=True)} else {b}",
        ])

    def condition(self, scope: list[str], simple: bool = False) -> str:
        """A boolean (or truthy) expression; ``simple`` leaves out and/or/not."""
        rng = self.rng
        x = rng.choice(["acc", "n", *scope, *scope])
        c = rng.randint(2, 30)
        simple_choices = [
            f"{x} > {c}",
            f"{x} % {rng.randint(2, 5)} == {rng.randint(0, 1)}",
            f"{x} <= {c}",
            f"0 < {x} < {c}",
            f"{x} in ({rng.randint(0, 5)}, {rng.randint(6, 12)})",
            f"len(out) > {rng.randint(1, 6)}",
        ]
        if simple:
            return rng.choice(simple_choices)
        left, right = rng.choice(simple_choices), rng.choice(simple_choices)
        return rng.choice([
            *simple_choices,
            f"{left} and {right}",
            f"{left} or {right}",
            f"not {left}",
            f"not out or {right}",
            f"({left} or {right}) and acc != {c}",
        ])

    # -- statements ----------------------------------------------------------------------------

    def emit(self, depth: int, text: str) -> None:
        self.lines.append(INDENT * depth + text)

    def simple_statement(self, depth: int, scope: list[str]) -> None:
        rng = self.rng
        kind = rng.choice(["acc", "acc", "augment", "append", "setitem", "isetitem", "ternary",
                           "call", "call"])
        if kind == "call" and self.calls < MAX_CALLS and self.callees and depth <= 2:
            self.calls += 1
            callee = rng.choice(self.callees)
            argument = rng.choice(["xs", "out", "xs[:3]", "buf"])
            target = rng.choice(["acc += ", "out.append(", "buf[0] = "])
            call = f"f_{callee}(({self.value(scope)}) % {rng.randint(5, 20)}, {argument})"
            self.emit(depth, f"{target}{call}{')' if target.endswith('(') else ''}")
        elif kind in ("acc", "call"):
            self.emit(depth, f"acc = (acc + {self.value(scope)}) % 1009")
        elif kind == "augment":
            self.emit(depth, f"acc += {self.value(scope)}")
        elif kind == "append":
            self.emit(depth, f"out.append({self.value(scope)})")
        elif kind == "setitem":
            self.emit(depth, f"buf[({self.value(scope)}) % 4] = {self.value(scope)}")
        elif kind == "isetitem":
            self.emit(depth, f"buf[{rng.randint(0, 3)}] += {self.value(scope)}")
        else:
            name = f"t{depth}"
            self.emit(depth, f"{name} = {self.value(scope)} if {self.condition(scope)} else "
                             f"{self.value(scope)}")
            self.emit(depth, f"acc = (acc + {name}) % 1009")

    def jump(self, depth: int, scope: list[str], in_loop: bool) -> None:
        """``if C: break/continue/return`` (the jumps a loop body or function body may hold)."""
        options = ["return"] + (["break", "continue", "break"] if in_loop else [])
        kind = self.rng.choice(options)
        self.emit(depth, f"if {self.condition(scope)}:")
        if kind == "return":
            self.emit(depth + 1, f"return {self.rng.choice(['acc', 'acc + len(out)', 'n'])}")
        else:
            if self.rng.random() < 0.4:
                self.simple_statement(depth + 1, scope)
            self.emit(depth + 1, kind)

    def if_statement(self, depth: int, scope: list[str], in_loop: bool) -> None:
        self.emit(depth, f"if {self.condition(scope)}:")
        self.block(depth + 1, scope, in_loop, self.rng.randint(1, 3))
        for _ in range(self.rng.choice([0, 0, 1, 2])):
            self.emit(depth, f"elif {self.condition(scope)}:")
            self.block(depth + 1, scope, in_loop, self.rng.randint(1, 2))
        if self.rng.random() < 0.5:
            self.emit(depth, "else:")
            self.block(depth + 1, scope, in_loop, self.rng.randint(1, 2))

    def for_statement(self, depth: int, scope: list[str]) -> None:
        rng = self.rng
        self.counter += 1
        v, i = f"v{self.counter}", f"i{self.counter}"
        header, names = rng.choice([
            (f"for {v} in xs:", [v]),
            (f"for {v} in range({rng.randint(2, 6)}):", [v]),
            (f"for {v} in range(n % {rng.randint(3, 7)} + 1):", [v]),
            (f"for {i}, {v} in enumerate(xs):", [i, v]),
        ])
        self.emit(depth, header)
        self.loop_body(depth + 1, scope, names)

    def while_statement(self, depth: int, scope: list[str]) -> None:
        self.counter += 1
        k = f"k{self.counter}"
        bound = self.rng.choice([str(self.rng.randint(2, 6)), "n % 5 + 2", "len(xs)"])
        self.emit(depth, f"{k} = 0")
        extra = f" and {self.condition(scope, simple=True)}" if self.rng.random() < 0.3 else ""
        self.emit(depth, f"while {k} < {bound}{extra}:")
        self.emit(depth + 1, f"{k} += 1")  # first, so that continue cannot skip it
        self.loop_body(depth + 1, scope, [k])

    def loop_body(self, depth: int, scope: list[str], loop_names: list[str]) -> None:
        """A loop body seeing ``loop_names``; its ``else`` sees only ``scope`` (the loop may not
        have run)."""
        outer, scope = scope, scope + loop_names
        self.block(depth, scope, True, self.rng.randint(2, 4))
        if self.rng.random() < 0.6:
            self.jump(depth, scope, in_loop=True)
            if self.rng.random() < 0.5:
                self.simple_statement(depth, scope)
        if self.rng.random() < 0.25:
            self.emit(depth - 1, "else:")
            self.block(depth, outer, False, 1)

    def statement(self, depth: int, scope: list[str], in_loop: bool) -> None:
        r = self.rng.random()
        if depth >= MAX_DEPTH or r < 0.45:
            self.simple_statement(depth, scope)
        elif r < 0.65:
            self.if_statement(depth, scope, in_loop)
        elif r < 0.80:
            self.for_statement(depth, scope)
        elif r < 0.90:
            self.while_statement(depth, scope)
        else:
            self.jump(depth, scope, in_loop)

    def block(self, depth: int, scope: list[str], in_loop: bool, count: int) -> None:
        for _ in range(count):
            self.statement(depth, scope, in_loop)

    def function(self, target_lines: int) -> str:
        self.emit(0, f"def f_{self.index}(n, xs):")
        self.emit(1, f"acc = n % {self.rng.randint(5, 17)}")
        self.emit(1, "out = []")
        self.emit(1, "buf = [0, 0, 0, 0]")
        while len(self.lines) < target_lines - 1:
            self.statement(1, [], in_loop=False)
        self.emit(1, self.rng.choice([
            "return (acc + len(out) + sum(buf)) % 10007",
            "return acc + (out[-1] if out else 0)",
            "return max(acc, len(out)) + buf[2]",
        ]))
        return "\n".join(self.lines)


def generate_module(n_functions: int = 200, seed: int = 0) -> str:
    """The source of a module of ``n_functions`` functions ``f_k(n, xs) -> int``."""
    rng = random.Random(seed)
    functions = []
    for index in range(n_functions):
        target = rng.randint(10, 34)  # nested blocks often overshoot by a few lines
        text = _FunctionWriter(rng, index).function(target)
        while len(text.splitlines()) > 40:  # keep to the 10-40 line range: draw again
            text = _FunctionWriter(rng, index).function(target)
        functions.append(text)
    header = f'"""Generated by benchmarks/program_generator.py (seed {seed}); do not edit."""\n'
    return header + "\n\n\n".join(functions) + "\n"
