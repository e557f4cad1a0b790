"""Random array programs: compositions of NumPy operations over mixed dtypes, for the staged fuzzer.

``generate(seed)`` returns ``Program(source, arguments, inexact)``: a module with one function
``prog(a, b, c, s, n)`` (``a`` of shape (3, 4), ``b`` (4,), ``c`` (3, 1), each of a random dtype
among bool, int8, uint8, int32, int64, float32 and float64; ``s`` a NumPy or Python scalar;
``n`` an ``np.int64`` loop count), and two argument sets of the same types. The statements chain
element-wise arithmetic, comparisons and bitwise operators, ufuncs, casts, reductions along
axes, scans, sorts, slices, fancy and boolean indexing, joins and products, with staged ``if``,
``for`` and ``while`` over array conditions, in-place writes into copies and a list of rows.

Each candidate statement is run with NumPy on the first argument set as it is generated and kept
only if it runs (a few that raise end a program on purpose: the staged function must raise the
same). The generator tracks which values staged code must reproduce bit for bit: element-wise
IEEE arithmetic is exact in any order, so only transcendental functions and sums of non-integral
floats (the summation order differs) are ``inexact``; conditions, casts to integers, rounding
and arg-reductions read exact values only, so that a last-bit difference can never change
control flow. ``inexact`` lists the positions of the returned values compared with a tolerance.

``generate_writes(seed)`` adds statements that write into the argument arrays ``a``, ``b``, ``c``
themselves (element, slice, fancy and boolean-mask assignments at constant and staged indices,
augmented assignments, inside staged ``if``, ``for`` and ``while`` bodies), reads of the written
argument later on, and sometimes returns an argument itself; the caller's arrays must change as
NumPy's do. About a third of those writes are made by a module-level helper the program calls
with the argument (``_w0(a, t3, i)``), which writes into the array it is given. A temporary
that may share memory with an argument is dropped from what later statements read once that
argument is written (reading a stale view is refused by design).
``Program.inexact_arguments`` names the arguments whose final contents are compared with a
tolerance. ``generate(seed)`` makes the same programs as before.
"""

from __future__ import annotations

import dataclasses
import random
import re
import warnings

import numpy as np

DTYPES = ("bool", "int8", "uint8", "int32", "int64", "float32", "float64")
SHAPES = {"a": (3, 4), "b": (4,), "c": (3, 1)}
_INTEGRAL_LIMIT = 2.0 ** 20  # integral floats stay exact through products and sums
_NUMBER = re.compile(r"-?[0-9.]+(e-?[0-9]+)?")


@dataclasses.dataclass
class Program:
    source: str
    arguments: list[tuple]
    inexact: frozenset[int]
    inexact_arguments: frozenset[str] = frozenset()  # (a, b, c written with inexact values)


@dataclasses.dataclass
class _Value:
    """What the generator knows of a variable or expression."""
    text: str
    value: object
    exact: bool = True  # staged code must give it bit for bit
    integral: bool = True  # a float's values are integers (sums of them are exact)
    finite: bool = True  # no inf or nan possible (a cast to int is defined)


def _array(rng: random.Random, nprng: np.random.Generator, name: str, dtype: str) -> np.ndarray:
    shape = SHAPES[name]
    if dtype == "bool":
        return nprng.random(shape) < 0.5
    low = 0 if dtype == "uint8" else -4
    values = nprng.integers(low, 5, size=shape)
    return values.astype(dtype)


def _scalar(rng: random.Random) -> object:
    return rng.choice([np.float32(2.0), np.float64(-1.5), np.int64(3), np.int32(-2),
                       np.uint8(2), np.bool_(True), 2, -3, 0.5, True])


class _Generator:
    def __init__(self, seed: int, writes: bool = False):
        self.writes = writes  # statements that write into the arguments a, b, c themselves
        self.rng = rng = random.Random(seed)
        nprng = np.random.default_rng(seed)
        dtypes = {name: rng.choice(DTYPES) for name in SHAPES}
        scalar = _scalar(rng)
        self.arguments = []
        for _ in range(2):
            arrays = [_array(rng, nprng, name, dtypes[name]) for name in SHAPES]
            self.arguments.append((*arrays, scalar, np.int64(rng.choice([1, 2, 3]))))
        self.env: dict[str, object] = dict(zip(("a", "b", "c", "s", "n"), self.arguments[0],
                                               strict=True))
        for name in SHAPES:  # (the generator's own copies: writes must not change the arguments)
            self.env[name] = self.env[name].copy()
        self.known = {name: _Value(name, self.env[name]) for name in self.env}
        self.known["s"].integral = float(self.env["s"]) == int(self.env["s"])
        self.lines: list[str] = []
        self.helpers: list[str] = []  # (generate_writes) helpers writing into their argument
        self.count = 0
        self.ended = False

    # --- expressions ------------------------------------------------------------------------

    def pick(self, *, exact: bool = False, array: bool | None = None) -> _Value:
        names = [n for n, v in self.known.items() if n != "n" and (v.exact or not exact)
                 and (array is None or (np.ndim(v.value) > 0) == array)]
        return self.known[self.rng.choice(names or ["a"])]

    def literal(self) -> _Value:
        text = self.rng.choice(["2", "-1", "3", "0", "0.5", "2.0", "True", "np.float32(2)",
                                "np.int8(-3)", "200", "1e10"])
        return _Value(text, eval(text, {"np": np}), integral=text not in ("0.5",))  # noqa: S307

    def expr(self, depth: int) -> _Value:
        rng = self.rng
        if depth <= 0 or rng.random() < 0.2:
            return self.literal() if rng.random() < 0.2 else self.pick()
        kind = rng.random()
        if kind < 0.35:
            return self.binary(depth)
        if kind < 0.55:
            return self.unary(depth)
        if kind < 0.7:
            return self.reduction(depth)
        if kind < 0.85:
            return self.shaped(depth)
        return self.selection(depth)

    def binary(self, depth: int) -> _Value:
        rng = self.rng
        x, y = self.expr(depth - 1), self.expr(depth - 1)
        op = rng.choice(["+", "-", "*", "/", "//", "%", "**", "<", "<=", "==", "!=", ">",
                         "&", "|", "^", "<<", "np.maximum", "np.minimum", "@", "np.fmax",
                         "np.arctan2", "np.hypot", "np.logaddexp"])
        if op == "**":
            y = _Value(rng.choice(["2", "3", "0"]), None)
        if op == "<<":
            y = _Value(rng.choice(["1", "2"]), None)
        if op.startswith("np."):
            text = f"{op}({x.text}, {y.text})"
        else:
            text = f"({x.text} {op} {y.text})"
        exact = x.exact and y.exact and op not in ("np.arctan2", "np.hypot", "np.logaddexp")
        if op in ("//", "%") and not (x.exact and y.exact and x.integral and y.integral):
            exact = False  # (the floor of a quotient amplifies a last-bit difference)
        if op == "@" and not (x.integral and y.integral):
            exact = False  # (a product's sums)
        integral = (x.integral and y.integral and op not in ("/", "np.arctan2", "np.hypot",
                                                              "np.logaddexp"))
        finite = x.finite and y.finite and op not in ("/", "//", "%", "**", "np.logaddexp")
        return _Value(text, None, exact, integral, finite)

    def unary(self, depth: int) -> _Value:
        rng = self.rng
        x = self.expr(depth - 1)
        op = rng.choice(["-", "abs", "~", "np.sqrt", "np.exp", "np.tanh", "np.log1p", "np.sin",
                         "np.floor", "np.ceil", "np.sign", "np.square", "np.isnan",
                         "np.isfinite", "np.round", "np.trunc", "np.negative", "astype",
                         "np.cbrt", "np.expm1"])
        transcendental = op in ("np.exp", "np.tanh", "np.log1p", "np.sin", "np.cbrt",
                                "np.expm1")
        if op == "astype":
            target = rng.choice(["np.int64", "np.int32", "np.float32", "np.float64", "bool",
                                 "np.int8", "np.uint8"])
            if not (x.finite and x.exact) and target not in ("np.float32", "np.float64",
                                                              "bool"):
                target = "np.float64"
            if np.ndim(self.value_of(x)) == 0 and not isinstance(self.value_of(x), np.ndarray):
                return _Value(f"np.asarray({x.text}).astype({target})", None, x.exact,
                              x.integral, x.finite and target != "bool")
            return _Value(f"({x.text}).astype({target})", None, x.exact, x.integral, x.finite)
        if op in ("np.round", "np.floor", "np.ceil", "np.trunc", "np.sign") and not x.exact:
            op = "np.negative"
        text = f"({op}{x.text})" if op in ("-", "~") else f"{op}({x.text})"
        exact = x.exact and not transcendental
        integral = x.integral and op not in ("np.sqrt",) and not transcendental
        finite = x.finite and op not in ("np.sqrt", "np.exp", "np.log1p", "np.expm1")
        return _Value(text, None, exact, integral, finite)

    def reduction(self, depth: int) -> _Value:
        rng = self.rng
        x = self.expr(depth - 1)
        ndim = np.ndim(self.value_of(x))
        axis = rng.choice([None, *range(-ndim, ndim)]) if ndim else None
        how = f", axis={axis}" if axis is not None else ""
        op = rng.choice(["sum", "max", "min", "mean", "prod", "argmax", "argmin", "any", "all",
                         "cumsum", "std", "count_nonzero", "sort", "argsort", "median",
                         "cumprod", "ptp"])
        if op in ("argmax", "argmin", "argsort", "sort", "median", "ptp") and not x.exact:
            op = "max"
        text = f"np.{op}({x.text}{how})"
        summed = op in ("sum", "mean", "cumsum", "std", "prod", "cumprod", "median")
        exact = x.exact and (x.integral or not summed) and op != "std"
        integral = x.integral and op not in ("mean", "std", "median")
        return _Value(text, None, exact, integral, x.finite and op not in ("mean", "std",
                                                                              "median"))

    def shaped(self, depth: int) -> _Value:
        rng = self.rng
        x = self.expr(depth - 1)
        y = self.expr(depth - 1)
        form = rng.choice(["{x}.T", "{x}.reshape(-1)", "np.ravel({x})", "{x}[1:]",
                           "{x}[::-1]", "{x}[..., None]", "{x}[None]", "{x}[:, 1:3]",
                           "np.concatenate([{x}, {y}])", "np.stack([{x}, {y}])",
                           "np.concatenate([{x}, {y}], axis=-1)", "{x}[[0, 2, 2]]",
                           "np.expand_dims({x}, 0)", "np.squeeze({x})",
                           "np.broadcast_to({x}, (3, 4))", "np.repeat({x}, 2)",
                           "np.flip({x}, 0)", "np.transpose({x})", "{x}.copy()",
                           "np.where({x} > 0)[0]", "{x}[{x} > 1]", "{x}[-1]"])
        # (a bare number gets parentheses: ``0.reshape(-1)`` would not parse)
        operand = f"({x.text})" if _NUMBER.fullmatch(x.text) else x.text
        text = form.format(x=operand, y=y.text)
        both = "{y}" in form
        exact = x.exact and (y.exact or not both)
        return _Value(text, None, exact, x.integral and (y.integral or not both),
                      x.finite and (y.finite or not both))

    def selection(self, depth: int) -> _Value:
        rng = self.rng
        cond = self.condition_expr(depth - 1)
        x, y = self.expr(depth - 1), self.expr(depth - 1)
        if rng.random() < 0.5:
            text = f"np.where({cond}, {x.text}, {y.text})"
        else:
            low, high = sorted(rng.sample([-2, -1, 0, 1, 2, 3], 2))
            text = f"np.clip({x.text}, {low}, {high})"
            y = x
        return _Value(text, None, x.exact and y.exact, x.integral and y.integral,
                      x.finite and y.finite)

    def condition_expr(self, depth: int) -> str:
        x = self.exact_expr(depth)
        return f"({x.text} {self.rng.choice(['>', '<=', '==', '!='])} {self.rng.choice([0, 1])})"

    def exact_expr(self, depth: int) -> _Value:
        for _ in range(20):
            x = self.expr(depth)
            if x.exact and self.runs(x.text):
                return x
        return self.pick(exact=True)

    # --- evaluation --------------------------------------------------------------------------

    def value_of(self, x: _Value) -> object:
        if x.value is None:
            x.value = self.evaluate(x.text)
        return x.value

    def evaluate(self, text: str) -> object:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return eval(text, {"np": np}, dict(self.env))  # noqa: S307
            except Exception:  # noqa: BLE001 - a candidate NumPy rejects
                return None

    def runs(self, text: str) -> bool:
        value = self.evaluate(text)
        if value is None or isinstance(value, tuple):
            return False
        with np.errstate(all="ignore"):
            return self.small(np.asarray(value))

    @staticmethod
    def small(array: np.ndarray) -> bool:
        if array.dtype.kind not in "biuf" or array.size > 200:
            return False
        if array.dtype.kind == "f":  # integral floats stay far below the float's precision
            finite = array[np.isfinite(array)]
            if finite.size and np.abs(finite).max() > _INTEGRAL_LIMIT:
                return False
        if array.dtype.kind in "iu" and array.size and np.abs(array.astype(np.float64)).max(
                ) > _INTEGRAL_LIMIT:
            return False
        return True

    def execute(self, lines: list[str], commit: bool = True) -> bool:
        """Runs ``lines`` (one statement, perhaps a block) on the environment; False (and the
        environment unchanged) when NumPy raises; not ``commit``: only tries them."""
        env = dict(self.env)
        saved = [(v, v.copy()) for v in env.values() if isinstance(v, np.ndarray)
                 and v.base is None and v.flags.writeable] if self.writes else []
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                exec("\n".join(lines), {"np": np}, env)  # noqa: S102
            except Exception:  # noqa: BLE001
                for array, before in saved:  # (undo the writes made before it raised)
                    array[...] = before
                return False
        if not commit:
            for array, before in saved:
                array[...] = before
            return True
        self.env = env
        return True

    # --- statements --------------------------------------------------------------------------

    def fresh(self) -> str:
        self.count += 1
        return f"t{self.count}"

    def assign(self) -> None:
        for _ in range(30):
            x = self.expr(3)
            if self.runs(x.text):
                name = self.fresh()
                if self.execute([f"{name} = {x.text}"]):
                    self.lines.append(f"    {name} = {x.text}")
                    self.known[name] = dataclasses.replace(x, text=name, value=self.env[name])
                    return

    def kind(self, text: str) -> tuple | None:
        """The dtype and rank of ``text``'s value (a staged variable's type), None if it fails."""
        value = self.evaluate(text) if self.runs(text) else None
        return None if value is None else (np.result_type(value), np.ndim(value))

    def branch(self) -> None:
        cond = self.scalar_condition()
        x = self.expr(2)
        kind = self.kind(x.text)
        if not (cond and kind):
            return
        for _ in range(10):  # (branches of one dtype and rank: others are refused)
            y = self.expr(2)
            if self.kind(y.text) == kind:
                break
        else:
            y = x
        name = self.fresh()
        block = [f"if {cond}:", f"    {name} = {x.text}", "else:", f"    {name} = {y.text}"]
        if self.execute(block):
            self.lines += [f"    {line}" for line in block]
            self.known[name] = _Value(name, self.env[name], x.exact and y.exact,
                                      x.integral and y.integral, x.finite and y.finite)

    def scalar_condition(self) -> str | None:
        x = self.exact_expr(2)
        form = self.rng.choice(["np.sum({x}) > {k}", "np.max({x}) >= {k}", "np.any({x} == {k})",
                                "np.all({x} != {k})", "np.min({x}) < {k}",
                                "np.count_nonzero({x}) > {k}"])
        text = form.format(x=x.text, k=self.rng.choice([0, 1, 2]))
        return text if self.runs(text) else None

    def loop(self) -> None:
        name = self.fresh()
        init = self.expr(2)
        if not self.runs(init.text):
            return
        self.known[name] = dataclasses.replace(init, text=name, value=self.evaluate(init.text))
        self.env[name], self.env["i"] = self.known[name].value, np.int64(0)
        kind = self.kind(name)
        for _ in range(10):  # (a loop variable of one dtype and rank: others are refused)
            body = self.expr(2)
            step = self.rng.choice(["{t} + {e}", "{t} * 2 - {e}", "np.maximum({t}, {e})",
                                    "{t} + i"])
            new = step.format(t=name, e=body.text)
            if self.kind(new) == kind:
                break
        del self.env[name], self.env["i"]
        if self.rng.random() < 0.5:
            block = [f"{name} = {init.text}", "for i in range(n):", f"    {name} = {new}"]
        else:
            cond = f"np.sum({name}) < {self.rng.choice([5, 20])}"
            block = [f"{name} = {init.text}", "j = 0", f"while {cond} and j < 4:",
                     f"    {name} = {new}", "    j += 1"]
        ok = self.execute(block) and self.runs(name)
        if not ok:
            del self.known[name]
            return
        self.lines += [f"    {line}" for line in block]
        self.known[name] = _Value(name, self.env[name], init.exact and body.exact,
                                  init.integral and body.integral, init.finite and body.finite)

    def in_place(self) -> None:
        source = self.pick(array=True)
        name = self.fresh()
        value = self.expr(2)
        form = self.rng.choice(["{t}[{t} > 0] = {v}", "{t}[0] = {v}", "{t} += {v}",
                                "{t}[1:] *= 2", "{t}[..., 0] = -1", "{t}[[0, 1]] = {v}",
                                "{t} -= {v}", "{t}[:] = {v}"])
        block = [f"{name} = {source.text}.copy()", form.format(t=name, v=value.text)]
        if self.runs(value.text) and self.execute(block):
            self.lines += [f"    {line}" for line in block]
            self.known[name] = _Value(name, self.env[name], source.exact and value.exact,
                                      source.integral and value.integral,
                                      source.finite and value.finite)

    def rows(self) -> None:
        name, acc = self.fresh(), f"rows{self.count}"
        self.env["i"] = np.int64(0)
        self.known["i"] = _Value("i", self.env["i"])
        row = self.expr(2)
        del self.env["i"], self.known["i"]
        join = self.rng.choice(["np.stack", "np.concatenate", "np.array"])
        block = [f"{acc} = []", "for i in range(n):", f"    {acc}.append({row.text})",
                 f"{name} = {join}({acc})"]
        if self.execute(block) and self.runs(name):
            self.lines += [f"    {line}" for line in block]
            self.known[name] = _Value(name, self.env[name], row.exact, row.integral,
                                      row.finite)

    def failing(self) -> None:
        """A last statement NumPy raises on (the staged function must raise the same)."""
        for _ in range(30):
            x = self.expr(2)
            if self.evaluate(x.text) is None and "np.where(" not in x.text:
                self.lines.append(f"    t_fail = {x.text}")
                self.ended = True
                return

    # --- writes into the arguments (generate_writes) -----------------------------------------

    def index(self, size: int, loop: str | None) -> str:
        """An integer index into an axis of ``size``: a constant, a staged value, or the loop's."""
        rng = self.rng
        forms = [str(k) for k in (0, 1, -1, size - 1)]
        forms += ["n - 1", "n % 3", "int(n) - 2", "np.argmax({x}) % 3", "np.count_nonzero({x}) % 2"]
        if loop:
            forms += [loop, f"-{loop} - 1", f"n - 1 - {loop}", f"{loop} % 2"] * 2
        form = rng.choice(forms)
        return form.format(x=self.pick(exact=True, array=True).text) if "{x}" in form else form

    def mask(self, target: str, shape: tuple) -> str | None:
        """A boolean mask of ``shape`` over exact values."""
        for _ in range(10):
            x = self.exact_expr(1) if self.rng.random() < 0.6 else self.known[target]
            if not x.exact:
                continue
            op = self.rng.choice([">", "<=", "==", "!="])
            text = f"({x.text} {op} {self.rng.choice([0, 1])})"
            if self.runs(text) and np.shape(self.evaluate(text)) == shape:
                return text
        return None

    def write_line(self, target: str, loop: str | None, exact: bool) -> tuple[str, _Value] | None:
        """One statement writing into the argument ``target`` and the value written."""
        rng = self.rng
        shape = SHAPES[target]
        dtype = self.env[target].dtype
        for _ in range(15):
            value = self.literal() if rng.random() < 0.3 else self.expr(2)
            if (exact or dtype.kind != "f") and not (value.exact and value.finite):
                continue  # (a cast to an integer or bool must read exact, finite values)
            if not self.runs(value.text):
                continue
            i = self.index(shape[0], loop)
            if len(shape) == 2:
                j = self.index(shape[1], loop if rng.random() < 0.3 else None)
                places = [f"[{i}, {j}]", f"[{i}]", f"[:, {j}]", "[1:3]", f"[{i}:]", "[:, 1:]",
                          "[..., ::2]", "[...]", "[:]", "[[0, 2]]", f"[{i}, 1:]", "[-1]"]
            else:
                places = [f"[{i}]", "[1:3]", f"[{i}:]", "[::-1]", "[...]", "[:]", "[[0, 2]]",
                          "[:n]", "[-1]"]
            kind = rng.random()
            if kind < 0.15:
                m = self.mask(target, shape if rng.random() < 0.7 else shape[:1])
                if m is None:
                    continue
                place = f"[{m}]"
            elif kind < 0.3:
                line = f"{target} {rng.choice(['+=', '-=', '*=', '//=', '|='])} {value.text}"
                if rng.random() < 0.3:
                    line = f"{target} *= 2"
                return line, value
            else:
                place = rng.choice(places)
            op = rng.choice(["=", "=", "=", "+=", "-=", "*="])
            return f"{target}{place} {op} {value.text}", value
        return None

    def wrote(self, target: str, values: list[_Value], lines: list[str]) -> None:
        """Records a write block that ran: the argument's flags, and drops the temporaries that
        may be views of it (reading them after the write is refused by design)."""
        self.lines += [f"    {line}" for line in lines]
        known = self.known[target]
        float_target = self.env[target].dtype.kind == "f"
        for value in values:
            known.exact = known.exact and value.exact
            known.integral = known.integral and (value.integral or not float_target)
            known.finite = known.finite and (value.finite or not float_target)
        if float_target and any("//=" in line for line in lines):
            known.finite = False
        for name in [n for n in self.known if n not in ("a", "b", "c", "s", "n")]:
            value = self.env.get(name)
            if isinstance(value, np.ndarray) and np.may_share_memory(value, self.env[target]):
                del self.known[name]
        self.written.add(target)
        if self.rng.random() < 0.5:  # read it back at once
            form = self.rng.choice(["{t} + 0", "np.cumsum({t}, axis=0)", "{t}.copy()",
                                    "np.sum({t})", "{t} * 2", "np.max({t}, axis=0)"])
            text = form.format(t=target)
            name = self.fresh()
            if self.runs(text) and self.execute([f"{name} = {text}"]):
                self.lines.append(f"    {name} = {text}")
                self.known[name] = dataclasses.replace(known, text=name, value=self.env[name])

    def through_helper(self, line: str) -> str:
        """``line`` moved into a module-level helper taking the names it reads (the written
        argument first), and the call of it: the helper writes into the array it is given."""
        if self.rng.random() >= 0.35:
            return line
        names = list(dict.fromkeys(w for w in re.findall(r"\b[a-z_]\w*\b", line)
                                   if w in self.env or w in ("i", "j")))
        helper = f"_w{len(self.helpers)}"
        self.helpers.append(f"def {helper}({', '.join(names)}):\n    {line}\n")
        return f"{helper}({', '.join(names)})"

    def write(self) -> None:
        target = self.rng.choice(["a", "b", "c"])
        made = self.write_line(target, None, False)
        if made and self.execute([made[0]]):
            self.wrote(target, [made[1]], [self.through_helper(made[0])])

    def write_branch(self) -> None:
        target = self.rng.choice(["a", "b", "c"])
        cond = self.scalar_condition()
        made = self.write_line(target, None, False)
        if not (cond and made and self.execute([made[0]], commit=False)):
            return  # (each branch must run: NumPy's error in the branch not taken is not seen)
        block, values = [f"if {cond}:", f"    {made[0]}"], [made[1]]
        helped = [f"if {cond}:", f"    {self.through_helper(made[0])}"]
        if self.rng.random() < 0.5:
            other = self.write_line(target, None, False)
            if other and self.execute([other[0]], commit=False):
                block += ["else:", f"    {other[0]}"]
                helped += ["else:", f"    {self.through_helper(other[0])}"]
                values.append(other[1])
        if self.execute(block):
            self.wrote(target, values, helped)

    def write_loop(self) -> None:
        rng = self.rng
        target = rng.choice(["a", "b", "c"])
        loop = "i" if rng.random() < 0.6 else "j"
        self.env[loop] = np.int64(0)
        self.known[loop] = _Value(loop, self.env[loop])
        made = [self.write_line(target, loop, loop == "j") for _ in range(rng.choice([1, 1, 2]))]
        del self.env[loop], self.known[loop]
        made = [m for m in made if m]
        if not made:
            return
        body = [f"    {line}" for line, _ in made]
        helped = [f"    {self.through_helper(line)}" for line, _ in made]
        if loop == "i":
            block, written = ["for i in range(n):", *body], ["for i in range(n):", *helped]
        else:
            watched = self.known[target] if self.known[target].exact else self.pick(exact=True)
            cond = f"np.{rng.choice(['sum', 'max', 'min'])}({watched.text}) < {rng.choice([5, 20])}"
            block = ["j = 0", f"while {cond} and j < 4:", *body, "    j += 1"]
            written = ["j = 0", f"while {cond} and j < 4:", *helped, "    j += 1"]
        if self.execute(block):
            self.wrote(target, [value for _, value in made], written)

    def program(self) -> Program:
        statements = [self.assign, self.assign, self.assign, self.branch, self.loop,
                      self.in_place, self.rows]
        if self.writes:
            self.written: set[str] = set()
            statements += [self.write, self.write, self.write, self.write_branch,
                           self.write_loop, self.write_loop]
        for _ in range(self.rng.randint(3, 7) + (3 if self.writes else 0)):
            self.rng.choice(statements)()
        if self.rng.random() < 0.1:
            self.failing()
        temps = [n for n in self.known if n.startswith("t")] or ["a"]
        returned = self.rng.sample(temps, min(len(temps), self.rng.randint(1, 3)))
        if self.writes and self.rng.random() < 0.4:  # the argument itself
            argument = self.rng.choice(sorted(self.written) or ["a", "b", "c"])
            returned.insert(self.rng.randint(0, len(returned)), argument)
        inexact = frozenset(k for k, n in enumerate(returned) if not self.known[n].exact)
        body = self.lines or ["    pass"]
        helpers = [line for helper in self.helpers for line in (helper, "")]
        source = "\n".join(["import numpy as np", "", "", *helpers, "def prog(a, b, c, s, n):",
                            *body, f"    return ({', '.join(returned)},)", ""])
        inexact_arguments = frozenset(n for n in SHAPES if not self.known[n].exact)
        return Program(source, self.arguments, inexact, inexact_arguments)


def generate(seed: int) -> Program:
    return _Generator(seed).program()


def generate_writes(seed: int) -> Program:
    """A program that also writes into its argument arrays (see the module's doc)."""
    return _Generator(seed, writes=True).program()
