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
"""

from __future__ import annotations

import dataclasses
import random
import warnings

import numpy as np

DTYPES = ("bool", "int8", "uint8", "int32", "int64", "float32", "float64")
SHAPES = {"a": (3, 4), "b": (4,), "c": (3, 1)}
_INTEGRAL_LIMIT = 2.0 ** 20  # integral floats stay exact through products and sums


@dataclasses.dataclass
class Program:
    source: str
    arguments: list[tuple]
    inexact: frozenset[int]


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
    def __init__(self, seed: int):
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
        self.known = {name: _Value(name, self.env[name]) for name in self.env}
        self.known["s"].integral = float(self.env["s"]) == int(self.env["s"])
        self.lines: list[str] = []
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
        text = form.format(x=x.text, y=y.text)
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

    def execute(self, lines: list[str]) -> bool:
        """Runs ``lines`` (one statement, perhaps a block) on the environment; False (and the
        environment unchanged) when NumPy raises."""
        env = dict(self.env)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                exec("\n".join(lines), {"np": np}, env)  # noqa: S102
            except Exception:  # noqa: BLE001
                return False
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

    def program(self) -> Program:
        statements = [self.assign, self.assign, self.assign, self.branch, self.loop,
                      self.in_place, self.rows]
        for _ in range(self.rng.randint(3, 7)):
            self.rng.choice(statements)()
        if self.rng.random() < 0.1:
            self.failing()
        temps = [n for n in self.known if n.startswith("t")] or ["a"]
        returned = self.rng.sample(temps, min(len(temps), self.rng.randint(1, 3)))
        inexact = frozenset(k for k, n in enumerate(returned) if not self.known[n].exact)
        body = self.lines or ["    pass"]
        source = "\n".join(["import numpy as np", "", "", "def prog(a, b, c, s, n):", *body,
                            f"    return ({', '.join(returned)},)", ""])
        return Program(source, self.arguments, inexact)


def generate(seed: int) -> Program:
    return _Generator(seed).program()
