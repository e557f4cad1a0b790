"""A seeded generator of small random Python functions for the differential fuzzer.

``generate(seed, staged=False)`` returns the source of a module with one function ``prog``, its
helpers and two generated helper functions ``h1`` (recursive, depth-bounded) and ``h2`` (calls
``h1``, has a ``None`` default, returns a tuple). The same seed always gives the same text.

Plain mode (compared under ``to_graph``): ``prog(a, b, c, xs, d, obj, log)`` with ints ``a``/``b``,
a float ``c``, a list ``xs``, a dict ``d``, an object ``obj`` with attribute ``n`` and a list
``log``. Staged mode (compared under ``convert``): ``prog(a, b, c, x)`` with NumPy scalars
``a``/``b`` (int64), ``c`` (float64) and a float64 array ``x`` of 3 to 5 elements, plus a local
list, a Python dict and objects whose state the body updates.

Forms, each drawn with moderate probability (one method each, below):

- control flow: ``if``/``elif``/``else``, ``for`` over ranges/lists/arrays, bounded ``while``
  loops (a counter incremented first) with ``break``/``continue``/``return``, a ``while`` search
  with an early exit (``while j < n and x[j] ...``), ``try``/``except`` (ZeroDivisionError,
  IndexError, KeyError; a handler that prints the message), ``with contextlib.suppress(...)``,
  ``assert`` with a formatted message;
- expressions: ``and``/``or``/``not``, ternaries, comparison chains, operands with side effects
  (``_note`` appends to ``log``), ``is None`` checks, tuple unpacking and swaps;
- Python-number arithmetic on values derived from the data (``n = x.shape[0]`` or ``len(xs)``,
  ``len(acc)``, loop indices, ``int(x[i])``, ``float(...)``, ``round(...)``) with ``//``, ``%``,
  ``/``, ``**``, ``<<``, ``~``, ``abs``, ``divmod``, divisors that are sometimes zero and shifts
  that are sometimes negative; NumPy scalar arithmetic mixed with Python numbers (staged);
- state: list ``append``/``pop``/indexing, dict items, attribute updates, a method updating a
  small class's attributes (``_Acc.add``), a closure writing a ``nonlocal`` (``bump``) and one
  reading a variable late (``peek``), calls to ``h1``/``h2`` (recursion, tuple returns);
- list comprehensions over ranges, lists and arrays; ``print`` with f-strings and ``%``;
- arrays (staged): ``np.where``, ``np.sum``, ``np.maximum``, slices ``x[i:j]``, boolean masks.

``generate(seed, staged, extended=True)`` writes other programs (the base seeds stay as they
were) that also draw the forms of ``_Writer.extended_stmt``, about a third of the statements:
``for``/``while`` with a data-dependent ``break`` and an ``else:`` clause; ``try`` with
``except``/``else``/``finally`` around code that raises (IndexError, ZeroDivisionError, KeyError,
ValueError from ``raise`` or NumPy, TypeError) and handlers that re-raise; ``with`` blocks
(``np.errstate``, a logging context manager ``_Ctx``, ``nullcontext``, ``suppress`` around a
``raise``); lambdas and nested functions capturing loop variables (late binding, defaults); a
``nonlocal`` counter ``tick`` called from data-dependent loops; list/dict/set comprehensions and
generator expressions with data conditions; augmented assignments on array slices, masks and
elements (``x`` itself too: the argument must change as Python's does); ``min``/``max``/``abs``/
``sum``/``any``/``all``/``round`` on arrays and numbers; NumPy int8/uint8/int16/int32/int64
overflow corners and out-of-range Python ints; Python numbers mixed with NumPy scalars of several
dtypes; f-strings (``=``, conversions, format specs), ``sep``/``end``, ``%`` formats and printed
arrays; tuple unpacking (starred, nested, ``enumerate``, ``zip``); early returns from nested
loops. Staged extended programs skip the base forms always refused beside a staged condition
(``_note(log, ...)``, dict and object writes) and return one structure, so that most run;
``staged_arguments(seed, extended=True)`` draws NumPy int64/int32/int8/uint8 or Python ints,
float64/float32 or Python floats and float64/float32 arrays per call.

Operations that can raise (ZeroDivisionError, IndexError, KeyError, ValueError, AssertionError)
are there on purpose: Python and autostage must raise the same exception with the same message.
Ints stay small (shifts and powers by small amounts), so that staged int64 arithmetic never
needs Python's big ints.
"""

from __future__ import annotations

import random

INDENT = "    "
MAX_DEPTH = 3

HELPERS = '''
import contextlib

import numpy as np


class _Box:
    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return type(other) is _Box and self.n == other.n


class _Acc:
    def __init__(self, total):
        self.total = total
        self.hits = 0

    def add(self, v):
        self.total = self.total + v
        self.hits += 1
        return self.total


def _note(log, v):
    log.append(v)
    return v
'''


EXTENDED_HELPERS = '''

class _Ctx:
    """A context manager that logs its entry and exit (and never swallows an exception)."""

    def __init__(self, log, tag):
        self.log = log
        self.tag = tag

    def __enter__(self):
        self.log.append(self.tag)
        return self.tag

    def __exit__(self, *exc):
        self.log.append(-1)
'''


class _Writer:
    def __init__(self, rng: random.Random, staged: bool, extended: bool = False):
        self.rng = rng
        self.staged = staged
        self.extended = extended  # the forms of ``_Extended`` too (``generate(extended=True)``)
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

    def py_atom(self, scope: list[str]) -> str:
        """A Python int derived from the data (a staged Python-kind value in staged mode)."""
        rng = self.rng
        forms = ["n", "t", str(rng.randint(0, 9)), *scope]
        if self.staged:
            forms += ["len(acc)", "int(x[1])", "int(c)", f"int(x[{rng.randint(0, 2)}] * 3)",
                      "round(c)"]
        else:
            forms += ["a", "b", "len(xs)", "len(log)", "int(c)", "round(c * 3)"]
        return rng.choice(forms)

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
            f"_note(log, {a})",
            "bump(1)",
        ]
        if not self.staged:
            forms += [f"xs[{a} % 4]", f"d.get({a} % 3, {b})"]  # may be out of range
        else:
            forms += [f"int(x[{a} % 4] > {b})", f"acc[-1] if acc else {b}"]
        if rng.random() < 0.15:
            return rng.choice([f"h1({a}, {rng.randint(0, 3)})", f"h2({a})[0]",
                               f"peek({a})", f"acc2.add({a})", self.py_int(scope, depth)])
        return rng.choice(self.unrefused(forms))

    def py_int(self, scope: list[str], depth: int = 0) -> str:
        """A Python-int expression on data-derived values; may raise as Python does."""
        rng = self.rng
        p, q = self.py_atom(scope), self.py_atom(scope)
        k = rng.randint(0, 4)
        forms = [
            f"{p} // ({q} - {k})", f"{p} % ({q} - {k})", f"({p} - {q}) // {rng.randint(2, 5)}",
            f"({p} - {q}) % {rng.randint(2, 5)}", f"{p} ** {rng.randint(0, 3)}",
            f"({p} % 5) ** ({q} % 3)", f"({p} % 64) << ({q} % 4)", f"({p} % 64) >> ({q} - {k})",
            f"~{p}", f"-{p} + ~{q}", f"abs({p} - {q} * 2)", f"round({p} / ({q} - {k}))",
            f"divmod({p}, {q} - {k})[{rng.randint(0, 1)}]", f"int(float({p}) / 2)",
            f"({p} > {q}) + ({q} > {k})",
        ]
        return rng.choice(forms)

    def py_float(self, scope: list[str]) -> str:
        """A float expression: Python floats, or NumPy scalars mixed with Python numbers."""
        rng = self.rng
        p, q = self.py_atom(scope), self.py_atom(scope)
        k = rng.randint(0, 4)
        forms = [
            f"{p} / ({q} - {k})", f"float({p}) / {rng.choice(['3', '0.5', '-2.0'])}",
            f"float({p}) ** -{rng.randint(1, 2)}", f"({p} - {q}) / 4",
            f"divmod(float({p}), {q} - {k})[{rng.randint(0, 1)}]", f"float({p}) % ({q} - {k})",
            f"({p} - {k}) ** -1", f"abs(float({q}) - 2.5)", f"2.0 ** ({p} % 4)",
        ]
        if self.staged:
            forms += [f"c * {p} + 1", f"a / (b - {k})", "c ** 2 - a", f"np.float64({p}) * c",
                      "a % 3.5 + c", f"(a // (b - {k})) * 0.5", f"float(np.sum(x)) / ({p} - {k})",
                      f"float(x[{p} % n]) * c", f"np.float64(a) / {q}", f"c / {p} + s"]
        else:
            forms += [f"c * {p} + 1", "c ** 2 - a", f"c / ({p} - {k}) + s", "s * 0.5 + c"]
        return rng.choice(forms)

    def condition(self, scope: list[str], depth: int = 0) -> str:
        rng = self.rng
        a, b = self.atom(scope), self.atom(scope)
        c = rng.randint(0, 12)
        simple = [f"{a} > {c}", f"{a} <= {b}", f"{a} % 2 == {rng.randint(0, 1)}",
                  f"0 <= {a} < {c}", f"{a} != {b}", f"{a} == {c} or {b} > {c}",
                  "c > 1.5" if self.staged else "xs"]
        if not self.staged:  # staged: None on some paths is refused (its own test)
            simple += ["m is None", "m is not None"]
        if depth > 1:
            return rng.choice(simple)
        s1, s2 = rng.choice(simple), rng.choice(simple)
        return rng.choice(self.unrefused([
            *simple, f"{s1} and {s2}", f"{s1} or {s2}", f"not ({s1})",
            f"{s1} and _note(log, {a}) > {c}", f"{s1} or _note(log, {b}) % 2 == 0",
            f"({s1}) if {s2} else ({rng.choice(simple)})",
            f"{a} < {b} < _note(log, {c})",
        ]))

    def unrefused(self, forms: list[str]) -> list[str]:
        """Extended staged programs leave out the base forms that staged code refuses wherever
        they meet a staged condition (a Python list or dict changed by a call or a write inside a
        staged ``if``/loop), so that most programs run and the new forms are compared."""
        if not (self.extended and self.staged):
            return forms
        kept = [f for f in forms if "_note(log" not in f and not f.startswith(("d[", "log."))
                and "acc2.add" not in f and "box.n +=" not in f]
        return kept or forms

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
        self.emit(depth, rng.choice(self.unrefused(forms)))

    def arith_stmt(self, depth: int, scope: list[str]) -> None:
        """Python-number and NumPy-scalar arithmetic (may raise ZeroDivisionError/ValueError)."""
        rng = self.rng
        self.emit(depth, rng.choice([
            f"t = {self.py_int(scope)}", f"s = {self.py_float(scope)}",
            f"q, r = divmod({self.py_atom(scope)}, {self.py_atom(scope)} - {rng.randint(0, 3)})",
            f"t += {self.py_int(scope)}", f"s += {self.py_float(scope)}",
        ]))
        if self.lines[-1].lstrip().startswith("q, r"):
            self.emit(depth, "t = q * 2 + r")

    def search_stmt(self, depth: int, scope: list[str]) -> None:
        """A while loop with a counter and an early exit."""
        self.counter += 1
        j = f"j{self.counter}"
        rng = self.rng
        item = f"x[{j}]" if self.staged else f"xs[{j}]"
        limit = "n" if rng.random() < 0.7 else f"n + {rng.randint(0, 1)}"  # may run off the end
        self.emit(depth, f"{j} = 0")
        self.emit(depth, f"while {j} < {limit} and {item} {rng.choice(['<', '>', '!='])} "
                         f"{rng.choice(['0.5', 'c', '2', 't'])}:")
        self.emit(depth + 1, f"{j} += 1")
        if rng.random() < 0.5:
            self.emit(depth + 1, f"if {j} > {rng.randint(1, 3)}:")
            self.emit(depth + 2, rng.choice(["break", f"return {self.result()}"]))
        self.emit(depth, f"t = {j}")

    def helper_stmt(self, depth: int, scope: list[str]) -> None:
        """Calls of the generated helpers, the class method, closures; tuple unpacking."""
        rng = self.rng
        v, w = self.atom(scope), self.atom(scope)
        self.emit(depth, rng.choice([
            f"t = h1({v}, {rng.randint(0, 3)})", f"t = h1({v}, n % 4)",
            f"t, u = h2({v})", f"t, u = h2({v}, {w})", f"u = acc2.add({v})",
            f"t = peek({v})", "t, u = u, t", f"t = inner({v})",
            *([] if self.staged else [f"m = {v} if m is None else m + {v}"]),
        ]))

    def comprehension_stmt(self, depth: int, scope: list[str]) -> None:
        rng = self.rng
        v = self.py_atom(scope)
        if self.staged:
            form = rng.choice([
                f"ys = [x[i] * 2.0 for i in range({rng.randint(1, 3)})]",
                f"ys = [float(v) + c for v in x[:{rng.randint(1, 3)}]]",
                f"ys = [i * {v} for i in range({rng.randint(0, 4)}) if i % 2 == 0]",
                f"ys = [x[i % n] for i in range({v} % 3)]",
            ])
        else:
            form = rng.choice([
                f"ys = [v * 2 for v in xs if v > {v}]",
                f"ys = [i * {v} for i in range({rng.randint(0, 4)}) if i % 2 == 0]",
                f"ys = [xs[i] for i in range({v} % 3)]",
                "ys = [(k, v) for k, v in d.items() if k != 'k']",
            ])
        self.emit(depth, form)
        if self.staged:  # sum() and printing of a staged list are refused (clear errors)
            self.emit(depth, rng.choice(["t = len(ys)", "print('ys', len(ys))",
                                         "s = float(ys[0]) if ys else s"]))
        else:
            self.emit(depth, rng.choice(["t = len(ys)", "print('ys', ys)", "s = float(sum(ys))"]))

    def except_stmt(self, depth: int, scope: list[str], in_loop: bool) -> None:
        """try/except around code that raises on some inputs; suppress; assert."""
        rng = self.rng
        p = self.py_atom(scope)
        risky = rng.choice([
            f"t = d[{p} % 4]", f"t = {p} // ({self.py_atom(scope)} - {rng.randint(0, 3)})",
            f"t = acc[{p} % 3]" if self.staged else f"t = xs[{p}]",
            f"s = float(x[{p}])" if self.staged else f"t = d['k{p}']",
            f"s = c / {p}" if self.staged else f"s = c / ({p} - 2)",
        ])
        kind = rng.random()
        if kind < 0.4:
            caught = rng.choice(["KeyError", "ZeroDivisionError", "IndexError",
                                 "(KeyError, IndexError)", "Exception"])
            self.emit(depth, "try:")
            self.emit(depth + 1, risky)
            self.block(depth + 1, scope, in_loop, rng.randint(0, 1))
            self.emit(depth, f"except {caught} as e:")
            self.emit(depth + 1, rng.choice(["print('caught', type(e).__name__, e)", "t = -1",
                                             "print(f'error {e!r}')"]))
        elif kind < 0.7:
            suppressed = rng.choice(["ZeroDivisionError", "IndexError", "KeyError"])
            self.emit(depth, f"with contextlib.suppress({suppressed}):")
            self.emit(depth + 1, risky)
            self.emit(depth + 1, f"t += {rng.randint(1, 3)}")
        else:
            message = rng.choice(["f't={t} a={a}'", "'bad %d' % t", "(t, n)"])
            self.emit(depth, f"assert {self.condition(scope, depth=1)}, {message}")

    def print_stmt(self, depth: int, scope: list[str]) -> None:
        rng = self.rng
        v = self.atom(scope)
        if rng.random() < 0.5:
            self.emit(depth, rng.choice([f"print('v', {v}, s)", "print(t, y)", "print(n, u)",
                                         f'print(f"v={{{v}}} s={{s:.3f}} n={{n!r}}")',
                                         f'print(f"{{{v}!r:>12}}|" + str(s))']))
            return
        self.emit(depth, rng.choice([
            f'print(f"v={{{v}}} s={{s:.3f}} n={{n}}")', f"print('%d|%s' % ({v}, t))",
            "print('%.2f' % c, f'{t:>4}')", f'print(f"{{{v}!r}} {{u}}")',
            "print(f'{c:.4g}', f'{s}')", f"print('{{}}|{{:>6}}'.format({v}, t))",
            "print('%s %r' % (t, [n, s]))",
        ]))

    def array_stmt(self, depth: int, scope: list[str]) -> None:
        """NumPy array forms (staged mode): where, sum, maximum, slices, boolean masks."""
        rng = self.rng
        p, q = self.py_atom(scope), self.py_atom(scope)
        self.emit(depth, rng.choice([
            "y = np.where(y > c, y - 1.0, y * 2.0)", "y = np.maximum(y, c)",
            "s = float(np.sum(y))", f"s = np.sum(y[{p} % n:])", f"s = np.sum(x[{p}:{q}])",
            f"y = y[1:] if {rng.choice(['n > 3', 'c > 0'])} else y", "s = np.sum(y[y > 0])",
            f"y[{p} % n] = c", "y = y * 0.5 + x[0]", "s = np.sum(np.maximum(x, 0.0)) + s",
            f"t = int(np.sum(x > {rng.choice(['0', 'c'])}))",
        ]))

    def jump(self, depth: int, scope: list[str], in_loop: bool) -> None:
        kind = self.rng.choice(["return"] + (["break", "continue"] * 2 if in_loop else []))
        self.emit(depth, f"if {self.condition(scope)}:")
        if kind == "return":
            self.emit(depth + 1, f"return {self.result()}")
        else:
            self.emit(depth + 1, kind)

    # -- the extended forms (``generate(extended=True)``) ----------------------------------------

    def extended_stmt(self, depth: int, scope: list[str], in_loop: bool) -> None:
        """One of the forms users write that the base generator lacks: loops with ``else:``,
        ``try``/``except``/``else``/``finally`` and ``raise``, ``with`` blocks, closures and
        lambdas capturing loop variables, ``nonlocal`` counters, comprehensions with data
        conditions, augmented assignments on slices, builtins on arrays and numbers, NumPy
        integer overflow corners, mixed Python/NumPy scalars, f-strings, unpacking."""
        forms = [self.ext_builtin, self.ext_mixed, self.ext_overflow, self.ext_print,
                 self.ext_unpack, self.ext_closure, self.ext_comprehension, self.ext_slice_update]
        if depth < MAX_DEPTH:
            forms += [self.ext_loop_else, self.ext_try, self.ext_with, self.ext_nonlocal,
                      self.ext_search_return]
        self.in_loop = in_loop  # (read first thing by the forms that jump)
        self.rng.choice(forms)(depth, scope)

    def ext_builtin(self, depth: int, scope: list[str]) -> None:
        rng = self.rng
        p, q = self.py_atom(scope), self.atom(scope)
        forms = [f"w = abs(c - {p})", f"w = max({q}, c)", f"w = min({p}, 2.5)",
                 f"z = sum([{q}, {p}, t])", f"z = max({p}, {q}, t)", f"z = abs({q} - 7)",
                 f"w = round(c * {p}, {rng.randint(0, 2)})", f"z = round(c * {q})",
                 f"z = int(any([{q} > 3, {p} < 0]))", f"z = int(all([{q} > 0, t >= 0]))",
                 f"z = sum(range({p} % 5))", "z = max(range(n + 1))", "w = min(c, s, -0.0)",
                 f"w = max(0.0, -0.0, {rng.choice(['c', 's'])})", f"z = abs(-{p}) + abs(True)"]
        if self.staged:
            forms += ["w = sum(x)", "w = max(x)", "w = min(x)", "z = int(any(x > c))",
                      "z = int(all(x > -1.5))", "w = sum(x[:2], c)", "w = max(x[0], x[1], c)",
                      "y = abs(x)", "w = float(max(abs(x)))", "z = sum(x > 0)",
                      f"w = sum(y[{p} % n:])", "z = any(y < 0) + all(y < 2)",
                      "w = min(x) + max(y)", f"z = sum([int(v > {q}) for v in x])"]
        else:
            forms += ["z = sum(xs)", "z = max(xs)", "z = min(xs)", "z = max(xs, default=-1)",
                      "z = int(any(xs))", "z = int(all(v > 0 for v in xs))",
                      f"z = sum(v for v in xs if v > {p})", "w = sum(xs, c)",
                      "z = min(xs, key=lambda v: (v - 2) ** 2)", "z = sorted(xs)[-1]"]
        self.emit(depth, rng.choice(forms))

    def ext_mixed(self, depth: int, scope: list[str]) -> None:
        """Python ints/floats/bools mixed with NumPy scalars of several dtypes."""
        rng = self.rng
        p, q = self.py_atom(scope), self.atom(scope)
        k = rng.randint(0, 3)
        forms = [f"w = {q} + 1.5", "w = c + True", f"w = {q} / 2", f"w = {q} * c",
                 "w = np.float32(c) + 1", f"w = np.float32(c) * 1.5 + {k}",
                 f"w = np.float32(c) * {q}", f"z = np.int32({q}) + 1", f"z = np.int32({q}) + a",
                 f"z = np.int8({p} % 100) * 2", f"w = np.int8({p} % 100) / 3",
                 f"z = {q} ** {rng.choice(['-1', '2', '(b % 3)', '(b - 2)'])}",
                 f"z = 2 ** {q}", f"w = float({q}) // ({p} - {k})", f"w = c // ({q} - {k})",
                 f"z = divmod({q}, {p} - {k})[0]", f"z = {q} % ({p} - {k})",
                 f"w = c % ({q} - {k})", f"z = int(c * {q}) // 2", f"w = np.float64({p}) ** 0.5",
                 f"z = True + {q}", f"z = ({q} > 2) * 3", f"w = -{q} / np.float32(4)",
                 f"z = np.uint8({p} % 200) + 3", "w = np.float32(0.1) + 0.2",
                 f"z = np.int64({q}) // np.int64({p} - {k})", f"w = {q} * 0.1 + c * 0.2"]
        self.emit(depth, rng.choice(forms))

    def ext_overflow(self, depth: int, scope: list[str]) -> None:
        """NumPy fixed-width integer corners: wrapping, out-of-range Python ints, casts."""
        rng = self.rng
        p, q = self.py_atom(scope), self.atom(scope)
        forms = [f"z = np.int8({p} % 128) + np.int8(100)", f"z = np.uint8({p} % 256) - np.uint8(3)",
                 f"z = np.int8({p} % 100) + 200", f"z = np.int8({p} % 100) * 50",
                 f"z = -np.int8(-128) + {k}" if (k := rng.randint(0, 2)) else "z = -np.int8(-128)",
                 "z = abs(np.int8(-128))", f"z = np.int64({q}) * np.int64(2 ** 62)",
                 f"z = np.int64({q}) + 9223372036854775807", f"z = np.uint8({q})",
                 f"z = np.int8({q} * 40)", f"z = ~np.uint8({p} % 256)",
                 f"z = np.int8({p} % 100) // np.int8(0)", f"z = np.uint8({p} % 256) ** 2",
                 f"z = np.int64({q}) << 62", f"z = np.int32({q}) * 2 ** 30",
                 f"z = int(np.int8({p} % 128) + np.int8(127))",
                 f"z = np.uint8(250) + np.uint8({p} % 10)", f"z = np.int16({q}) * 20000",
                 f"w = float(np.uint8({p} % 256) - np.uint8(200))"]
        self.emit(depth, rng.choice(forms))

    def ext_print(self, depth: int, scope: list[str]) -> None:
        rng = self.rng
        v = self.atom(scope)  # (may hold quotes: d['k'])
        forms = [f'print(f"{{c:.3f}} {{{v}:+d}} {{s:e}}")', f'print(f"{{{v}=}}", f"{{c=:.2f}}")',
                 f"print({v}, c, sep=',', end=';\\n')", f'print(f"{{{v}:>5}}|{{c:<8.2f}}|")',
                 "print(repr(c), str(s))", f'print(f"{{{v}!s:^7}}")', "print(f'{w} {z!r}')",
                 f"print('%5.1f %-4d|' % (c, {v}))", f'print(f"{{{v} % 3}} {{c * 2}}")',
                 "print(f'{c:g}', f'{s:.2%}')", f"print(type({v}).__name__)"]
        if self.staged:
            forms += ["print(x)", "print(y[:2], sep='|')", "print(f'{y!r}')",
                      "print(f'{x[0]:.2e} {x.sum():g}')", "print(np.int8(a % 100), x.shape)",
                      "print(f'{x.max()} {np.sum(x > 0)}')", "print(repr(x[1]))",
                      "print(x.dtype, n, len(x))", "print(f'{np.float32(c)}')"]
        else:
            forms += ["print(xs, d)", "print(f'{xs!r:>20}')", "print(*xs, sep='-')"]
        self.emit(depth, rng.choice(forms))

    def ext_unpack(self, depth: int, scope: list[str]) -> None:
        rng = self.rng
        p, q = self.atom(scope), self.atom(scope)
        forms = [f"z, w = ({p}, c) if ({self.condition(scope, 1)}) else ({q}, s)",
                 f"z, (w, u) = t, (c, {p})", f"z, *rest = [{p}, {q}, t]\n{{i}}u = len(rest)",
                 f"*rest, z = ({p}, {q})\n{{i}}t = rest[0]", "(z, w), u = divmod(t, 3), u",
                 f"z, w = w, {p}", f"[z, u] = [{q}, z]"]
        if self.staged:
            forms += ["for i, v in enumerate(x):\n{i}    w += i * v",
                      "for p, q in zip(x, y):\n{i}    w += p * q",
                      "w, *rest = x[:3]\n{i}z = len(rest)",
                      "for i in reversed(range(n)):\n{i}    z = z * 2 + int(x[i] > 0)"]
        else:
            forms += ["for i, v in enumerate(xs):\n{i}    z += i * v",
                      "for p, q in zip(xs, xs[1:]):\n{i}    z += p - q",
                      "for k, v in d.items():\n{i}    z += len(str(k)) + v"]
        self.emit(depth, rng.choice(forms).replace("{i}", INDENT * depth))

    def ext_closure(self, depth: int, scope: list[str]) -> None:
        """Lambdas and nested functions capturing loop variables (late binding, defaults)."""
        rng = self.rng
        p, q = self.atom(scope), self.atom(scope)
        r = rng.randint(1, 4)
        i = INDENT * depth
        forms = [f"fs = []\n{i}for i in range({r}):\n{i}    fs.append(lambda v: v + i)\n"
                 f"{i}z = fs[0]({p}) + fs[-1]({q})",
                 f"fs = [lambda v, i=i: v * i for i in range({r})]\n{i}z = sum(f({p}) for f in fs)",
                 f"sq = lambda v: v * v + t\n{i}z = sq({p})",
                 f"def mk(k):\n{i}    def f(v):\n{i}        return v * k + t\n{i}    return f\n"
                 f"{i}z = mk({r})({p}) + mk(-1)({q})",
                 f"fs = [(lambda: i * 2) for i in range({r})]\n{i}z = fs[0]() + len(fs)",
                 f"key = lambda v: -v\n{i}z = max([{p}, {q}, t], key=key)",
                 f"for i in range({r}):\n{i}    def g(v):\n{i}        return v + i + z\n"
                 f"{i}    z = g({p}) % 1009"]
        if self.staged:
            forms += [f"f = lambda v: v * c\n{i}w = float(f(x[{r} % n]))",
                      f"g = lambda v: np.where(v > c, v, 0.0)\n{i}y = g(y)"]
        self.emit(depth, rng.choice(forms))

    def ext_comprehension(self, depth: int, scope: list[str]) -> None:
        rng = self.rng
        p = self.py_atom(scope)
        if self.staged:
            bound = rng.choice(["c", "0"])
            forms = ["ys = [v for v in x if v > c]",
                     "ys = [float(v) if v > 0 else 0.0 for v in x]",
                     f"dd = {{i: float(x[i]) for i in range(n) if x[i] > {bound}}}",
                     "z = len([v for v in x if v > 0])", "z = sum(1 for v in x if v > c)",
                     f"dd = {{k: k * {p} for k in range(3)}}", "ys = [v * 2.0 for v in x[::2]]",
                     "ys = [i for i in range(n) if x[i] < c]", "w = sum([v * v for v in x])",
                     "ys = [[v, -v] for v in x[:2]]", "z = len({int(v > 0) for v in x})"]
            tails = ["z = len(ys)", "print(len(ys))"]
        else:
            forms = ["dd = {v: v * 2 for v in xs if v % 2}", "ys = [v for v in xs if v > c]",
                     f"z = len({{v % {rng.randint(2, 4)} for v in xs}})",
                     f"dd = {{k: v + {p} for k, v in d.items() if k != 'k'}}",
                     "ys = [[v, -v] for v in xs[:2]]", "z = sum(1 for v in xs if v > a)"]
            tails = ["z = len(ys)", "print(ys)"]
        form = rng.choice(forms)
        self.emit(depth, form)
        if form.startswith("ys"):
            self.emit(depth, rng.choice(tails))
        elif form.startswith("dd"):
            self.emit(depth, rng.choice(["z = len(dd)", "print(dd)", "z = sum(dd) + len(dd)"]))

    def ext_slice_update(self, depth: int, scope: list[str]) -> None:
        """Augmented assignments on array slices, masks and elements (and list items)."""
        rng = self.rng
        p = self.py_atom(scope)
        if self.staged:
            target = rng.choice(["y", "y", "x"])  # x: the argument itself
            form = rng.choice([f"{target}[1:3] += c", f"{target}[::2] *= 2.0",
                               f"{target}[{target} > 0] -= 1.0", f"{target}[{p} % n] += a",
                               f"{target}[:n // 2] /= (c - 0.5)", f"{target}[-1] **= 2",
                               f"{target}[{p}:] -= {target}[0]", f"{target}[...] += 1",
                               f"{target}[{p} % n] //= 0.5", f"{target}[{target} < c] = 0.0",
                               f"{target}[{p}] += 1.0"])  # may be out of range
        else:
            form = rng.choice([f"xs[{p} % 4] += 1", "xs[1:3] = [t, u]", f"xs[{p}:] = []",
                               "xs[::2] = xs[::2]", f"d['k'] *= {p}", "xs[-1:] = [t]",
                               f"xs[{p}] -= 2"])
        self.emit(depth, form)

    def ext_loop_else(self, depth: int, scope: list[str]) -> None:
        """``for``/``while`` with a data-dependent ``break`` and an ``else:`` clause."""
        rng = self.rng
        self.counter += 1
        k = f"k{self.counter}"
        if rng.random() < 0.5:
            iterable = rng.choice(["range(n)", f"range({rng.randint(0, 4)})",
                                   "x" if self.staged else "list(xs)"])
            self.emit(depth, f"for {k} in {iterable}:")
            inner = scope + [k] if iterable.startswith("range") or not self.staged else scope
        else:
            bound = rng.choice([str(rng.randint(1, 4)), "n", "a % 4"])
            self.emit(depth, f"{k} = 0")
            item = "x" if self.staged else "xs"
            cond = rng.choice([f"{k} < {bound}",
                               f"{k} < n and {item}[{k}] {rng.choice(['<', '>'])} "
                               f"{rng.choice(['c', '0.5', '1'])}"])
            self.emit(depth, f"while {cond}:")
            self.emit(depth + 1, f"{k} += 1")
            inner = scope + [k]
        self.emit(depth + 1, f"if {self.condition(inner, 1)}:")
        self.emit(depth + 2, rng.choice(["break", f"z = {k}\n{INDENT * (depth + 2)}break",
                                         "continue", f"return {self.result()}"]))
        self.block(depth + 1, inner, True, rng.randint(0, 1))
        self.emit(depth, "else:")
        self.emit(depth + 1, rng.choice(["z += 1", "print('no break')", f"w = w + {k}",
                                         "z = -1"]))

    def ext_try(self, depth: int, scope: list[str]) -> None:
        """``try`` with ``except``/``else``/``finally``; ``raise`` of ValueError with a message;
        ``break``/``continue``/``return`` in the body and (in a loop) in the ``finally``."""
        in_loop = self.in_loop
        rng = self.rng
        p = self.py_atom(scope)
        risky = rng.choice([
            f"z = {p} // ({self.py_atom(scope)} - {rng.randint(0, 3)})",
            f"z = [t, u][{p}]", f"w = c / ({p} - {rng.randint(0, 2)})",
            f"z = int(x[{p}])" if self.staged else f"z = xs[{p}]",
            f"if {self.condition(scope, 1)}:\n{INDENT * (depth + 2)}raise ValueError(f'bad {{t}}')",
            "w = float(np.sqrt(c))", "z = d['missing']",
            "z = int(x[0] / 0.0)" if self.staged else "z = int(c / 0.0)",
            "z = np.reshape(x, (7,)).shape[0]" if self.staged else "z = int('x' + str(t))",
            "y = x[:2] + x[:3]" if self.staged else "z = [1, 2].index(t)",
        ])
        start = len(self.lines)
        self.emit(depth, "try:")
        self.emit(depth + 1, risky)
        if rng.random() < 0.4:
            self.jump(depth + 1, scope, in_loop)
        self.block(depth + 1, scope, in_loop, rng.randint(0, 1))
        shape = rng.random()
        if shape < 0.7:
            caught = rng.choice(["ValueError", "ZeroDivisionError", "IndexError", "KeyError",
                                 "(ValueError, IndexError)", "Exception", "ArithmeticError",
                                 "LookupError", "TypeError"])
            self.emit(depth, f"except {caught} as e:")
            self.emit(depth + 1, rng.choice(["print('caught', type(e).__name__, e)", "z = -1",
                                             "z = len(str(e))", "raise"]))
            if rng.random() < 0.4:
                self.emit(depth, "else:")
                self.emit(depth + 1, rng.choice(["z += 2", "print('ok', z)"]))
        if shape > 0.4:
            self.emit(depth, "finally:")
            self.emit(depth + 1, rng.choice(["z += 1", "print('finally', z)", "log.append(z)",
                                             "w = w * 2"]))
            # (not one that discards a pending return, or a continue a pending break: refused)
            pending = " ".join(self.lines[start:])
            jumps = [] if "return" in pending else (
                ["break"] if "break" in pending else ["break", "continue"])
            if in_loop and jumps and rng.random() < 0.4:
                self.emit(depth + 1, f"if {self.condition(scope, 1)}:")
                self.emit(depth + 2, rng.choice(jumps))

    def ext_with(self, depth: int, scope: list[str]) -> None:
        rng = self.rng
        head = rng.choice(["with np.errstate(divide='ignore', invalid='ignore'):",
                           "with _Ctx(log, 'cm') as cm:",
                           f"with contextlib.nullcontext({self.atom(scope)}) as z:",
                           "with _Ctx(log, 1), _Ctx(log, 2):",
                           "with contextlib.suppress(ValueError):"])
        self.emit(depth, head)
        if "suppress" in head:
            self.emit(depth + 1, rng.choice(["z = int('12')", "w = float(np.float64(c))",
                                             "raise ValueError('s')"]))
        self.block(depth + 1, scope, False, rng.randint(1, 2))

    def ext_nonlocal(self, depth: int, scope: list[str]) -> None:
        """A nested function counting through ``nonlocal``, called from a data-dependent loop."""
        rng = self.rng
        i = INDENT * depth
        self.emit(depth, "def tick(k=1):")
        self.emit(depth + 1, "nonlocal z, w")
        self.emit(depth + 1, "z += k")
        self.emit(depth + 1, rng.choice(["w = w + 0.5", "w += z * 0.25", "pass"]))
        self.emit(depth + 1, "return z")
        item = "x" if self.staged else "xs"
        cond = rng.choice(["v > 0", "v < c", "v > 0.5"]) if self.staged else "v > a"
        self.emit(depth, rng.choice([f"for v in {item}:\n{i}    if {cond}:\n{i}        tick()",
                                     f"t = tick({rng.randint(1, 3)}) + tick()",
                                     f"for j in range(n):\n{i}    if j % 2 == 0:\n"
                                     f"{i}        tick(j)"]))

    def ext_search_return(self, depth: int, scope: list[str]) -> None:
        """An early ``return`` (or ``break``) from nested loops on a data condition."""
        rng = self.rng
        i = INDENT * depth
        item = "x[j]" if self.staged else "xs[j]"
        exit_ = rng.choice([f"return {self.result()}" if self.staged else f"return (j, {item})",
                            f"return {self.result()}", f"z = j\n{i}            break"])
        self.emit(depth, f"for j in range(n):\n{i}    for jj in range({rng.randint(1, 3)}):\n"
                         f"{i}        if {item} * jj > {rng.choice(['c', '1', 't'])}:\n"
                         f"{i}            {exit_}")


    def result(self) -> str:
        if self.extended and self.staged:  # (one structure: no refusal for a mismatch)
            return "(t, z, w, s)"
        if self.extended and self.rng.random() < 0.3:
            return self.rng.choice(["(z, w)", "(t, z, w, s)", "z", "w", "(z, count, log)"])
        if self.staged:
            return self.rng.choice(["a + b", "(a, b, c)", "t + count + box.n", "c",
                                    "a + len(acc)", "(a, len(log), d['k'])", "(t, s)",
                                    "(n, t, acc2.total, acc2.hits)", "y", "(s, u, m)"])
        return self.rng.choice(["(a, b, t, c)", "t + count", "(a, xs, d, log)", "box.n",
                                "(t, s, u, m)", "(acc2.total, acc2.hits)"])

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
        iterable = rng.choice([f"range({rng.randint(1, 5)})", "range(a % 4)", "range(n)"]
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

    def extra(self, depth: int, scope: list[str], in_loop: bool) -> None:
        """One of the newer forms (each about as likely as the others)."""
        forms = [self.arith_stmt, self.arith_stmt, self.helper_stmt, self.print_stmt,
                 self.comprehension_stmt]
        if depth < MAX_DEPTH:
            forms += [self.search_stmt,
                      lambda d, s: self.except_stmt(d, s, in_loop)]
        if self.staged:
            forms += [self.array_stmt, self.array_stmt]
        if self.extended:
            forms += [lambda d, s: self.extended_stmt(d, s, in_loop)] * 4
        self.rng.choice(forms)(depth, scope)

    def statement(self, depth: int, scope: list[str], in_loop: bool) -> None:
        if self.extended and self.rng.random() < 0.35:
            self.extended_stmt(depth, scope, in_loop)
            return
        r = self.rng.random()
        if depth >= MAX_DEPTH or r < 0.3:
            if r < 0.15:
                self.extra(depth, scope, in_loop)
            else:
                self.simple(depth, scope)
        elif r < 0.52:
            self.extra(depth, scope, in_loop)
        elif r < 0.68:
            self.if_stmt(depth, scope, in_loop)
        elif r < 0.78:
            self.for_stmt(depth, scope)
        elif r < 0.88:
            self.while_stmt(depth, scope)
        elif r < 0.94:
            self.try_stmt(depth, scope, in_loop)
        else:
            self.jump(depth, scope, in_loop)

    def block(self, depth: int, scope: list[str], in_loop: bool, count: int) -> None:
        for _ in range(count):
            self.statement(depth, scope, in_loop)

    def helpers(self) -> None:
        """``h1`` (recursive, bounded by ``depth``) and ``h2`` (calls ``h1``, returns a tuple)."""
        rng = self.rng
        step = rng.choice(["v // 2", "v - 3", "v % 5 - 1", "(v + 1) // 3"])
        combine = rng.choice(["+ 1", "* 2", "- v", "+ v % 3"])
        self.emit(0, "def h1(v, depth):")
        self.emit(1, f"if depth <= 0 or v {rng.choice(['<= 0', '< 2', '== 1'])}:")
        self.emit(2, rng.choice(["return v", "return 0", "return v * 2"]))
        self.emit(1, f"return h1({step}, depth - 1) {combine}")
        self.emit(0, "")
        self.emit(0, "")
        self.emit(0, "def h2(v, w=None):")
        self.emit(1, "if w is None:")
        self.emit(2, f"w = {rng.randint(0, 3)}")
        self.emit(1, f"return h1(v, {rng.randint(1, 3)}) * w, v {rng.choice(['-', '+', '%'])} "
                     f"{rng.choice(['w', '(w + 1)'])}")
        self.emit(0, "")
        self.emit(0, "")

    def function(self) -> str:
        self.helpers()
        if self.staged:
            self.emit(0, "def prog(a, b, c, x):")
            self.emit(1, "log = []")
            self.emit(1, "acc = []")
            self.emit(1, "d = {'k': 1}")
            self.emit(1, "n = x.shape[0]")
            self.emit(1, "y = x * 1.0")
        else:
            self.emit(0, "def prog(a, b, c, xs, d, obj, log):")
            self.emit(1, "n = len(xs)")
        self.emit(1, "box = _Box(1)")
        self.emit(1, "acc2 = _Acc(0)")
        self.emit(1, "t = 0")
        self.emit(1, "u = 0")
        self.emit(1, "s = 0.0")
        self.emit(1, "m = None")
        self.emit(1, "count = 0")
        if self.extended:
            self.emit(1, "z = 0")
            self.emit(1, "w = 0.0")
            self.emit(1, "fs = []")
        self.emit(1, "")
        self.emit(1, "def bump(k):")
        self.emit(2, "nonlocal count")
        self.emit(2, "count += k")
        self.emit(2, "return count")
        self.emit(1, "")
        self.emit(1, "def peek(v):")
        self.emit(2, "return v + t")
        self.emit(1, "")
        self.emit(1, "def inner(v):")
        self.emit(2, f"return h1(v, {self.rng.randint(0, 2)}) + box.n")
        self.emit(1, "")
        self.block(1, [], False, self.rng.randint(3, 6))
        self.emit(1, f"return {self.result()}")
        return "\n".join(self.lines)


def generate(seed: int, staged: bool = False, extended: bool = False) -> str:
    """The source of a module with ``prog`` (see the module docstring); ``extended``: with the
    forms of ``_Writer.extended_stmt`` too (other programs: the base seeds stay as they were)."""
    rng = random.Random(seed * 2 + int(staged) + (1 << 32 if extended else 0))
    body = _Writer(rng, staged, extended).function()
    mode = ("extended " if extended else "") + ("staged" if staged else "plain")
    helpers = HELPERS + EXTENDED_HELPERS if extended else HELPERS
    return (f'"""Fuzzed program (tests/differential/fuzz_programs.py, seed {seed}, {mode})."""\n'
            f"{helpers}\n\n{body}\n")


def plain_arguments(seed: int) -> list[tuple]:
    """Argument tuples for a plain program: (a, b, c, xs, d, obj, log)."""
    rng = random.Random(seed)
    cases = []
    for _ in range(3):
        xs = [rng.randint(-3, 9) for _ in range(rng.randint(0, 5))]
        cases.append((rng.randint(-5, 12), rng.randint(-5, 12), rng.choice([0.5, 2.0, -1.25]),
                      xs, {"k": rng.randint(0, 5)}, _Obj(rng.randint(0, 4)), []))
    return cases


def staged_arguments(seed: int, extended: bool = False) -> list[tuple]:
    """Argument tuples for a staged program: NumPy int64/float64 scalars and a float64 array of
    3 to 5 elements (both calls share one trace: shapes are not part of the cache key).

    ``extended``: three calls, whose scalars are of types drawn per call among NumPy int64, int32,
    int8 and uint8 (``a``, ``b``) and float64/float32 (``c``), or Python numbers, and whose array
    is float64 or float32: a call of other types retraces (mixed Python/NumPy promotion, NumPy's
    fixed-width wrapping), one of the same types takes the cached trace."""
    import numpy as np

    rng = random.Random(seed)
    if not extended:
        return [(np.int64(rng.randint(-5, 12)), np.int64(rng.randint(-5, 12)),
                 np.float64(rng.choice([0.5, 2.0, -1.25])),
                 np.array([rng.uniform(-2, 2) for _ in range(rng.choice([4, 4, 3, 5]))]))
                for _ in range(2)]
    cases = []
    kinds = None
    for k in range(3):
        if not (k == 1 and rng.random() < 0.5):  # (else the types of the first call: cached)
            kinds = (rng.choice([np.int64, np.int64, np.int32, np.int8, np.uint8, int]),
                     rng.choice([np.float64, np.float64, np.float32, float]),
                     rng.choice([np.float64, np.float64, np.float32]))
        ints, floats, array = kinds
        low = 0 if ints is np.uint8 else -5
        cases.append((ints(rng.randint(low, 12)), ints(rng.randint(low, 12)),
                      floats(rng.choice([0.5, 2.0, -1.25])),
                      np.array([rng.uniform(-2, 2) for _ in range(rng.choice([4, 4, 3, 5]))],
                               dtype=array)))
    return cases


class _Obj:
    """The attribute-state argument of plain programs (compared by attributes)."""

    def __init__(self, n: int):
        self.n = n
