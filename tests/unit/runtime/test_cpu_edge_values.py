"""Property tests of the compiled (cpu) ops against NumPy on edge values: every element-wise op,
reduction and cast of the op table, per dtype, on INT_MIN/INT_MAX, -1, 0, shift widths, +-inf,
nan, -0.0, subnormals; as arrays broadcast against each other (every pair of values), as 0-d
scalars, inside a fused loop, on empty and zero-stride (np.broadcast_to) arrays.

Integers must be equal bit for bit, floats too (NaN where NumPy has NaN, signs of zeros), except
DESIGN's tolerance: transcendental functions within 4 ulp of NumPy's value. One staged function
per (op group, dtype) applies every op to the edge array, so compiles stay few; the default run
takes the dtypes most likely to differ, ``-m slow`` all of them.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from autostage.runtime.function import StagedFunction
from autostage.runtime.ops.elementwise import BINARY, UNARY
from autostage.runtime.types import DTYPES

ALL = [d for d in DTYPES if d != np.float16]  # the cpu target refuses float16 (Numba has none)
QUICK = [np.dtype(d) for d in ("int8", "float64")]
SLOW = [d for d in ALL if d not in QUICK]
DTYPE_PARAMS = [pytest.param(d, id=d.name) for d in QUICK] + [
    pytest.param(d, id=d.name, marks=pytest.mark.slow) for d in SLOW]
UNARY_PARAMS = [pytest.param(d, id=d.name, marks=pytest.mark.slow) if d in SLOW
                else pytest.param(d, id=d.name) for d in ALL]
TRANSCENDENTAL = {
    "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt", "sin", "cos", "tan",
    "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
    "power", "float_power", "arctan2", "hypot", "logaddexp", "logaddexp2"}
ULPS = 4


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(tmp_path / "cache"))


def edge_values(dtype: np.dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.array([False, True])
    if dtype.kind in "iu":
        info, bits = np.iinfo(dtype), dtype.itemsize * 8
        values = {info.min, info.min + 1, 0, 1, 2, 3, 7, bits - 1, bits, bits + 1, 2 * bits,
                  info.max - 1, info.max}
        if dtype.kind == "i":
            values |= {-1, -2, -3, -7, -bits}
        return np.array(sorted(values), dtype)
    if dtype.kind == "f":
        f = np.finfo(dtype)
        return np.array([-np.inf, -f.max, -2.5, -1, -0.5, -0.0, 0.0, f.smallest_subnormal,
                         f.tiny, 0.5, 1, 1.5, 2.5, 3, f.max, np.inf, np.nan], dtype)
    parts = [0.0, -0.0, 1.0, 2.0, -2.5, np.inf, -np.inf, np.nan]
    return np.array([complex(a, b) for a in parts for b in parts], dtype)


def defined(ufunc: np.ufunc, dtypes: list) -> bool:
    """NumPy has a loop for these operand dtypes, and it does not compute in float16."""
    try:
        return np.float16 not in ufunc.resolve_dtypes((*dtypes, None))
    except TypeError:
        return False


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    info = np.finfo(a.dtype)
    scale = np.maximum(np.abs(a), info.tiny) * info.eps
    with np.errstate(all="ignore"):
        return np.abs(a.astype(np.float64) - b.astype(np.float64)) / scale


def mismatches(name: str, want, got) -> np.ndarray:
    """A mask of the elements where ``got`` is not NumPy's ``want`` (within the tolerance)."""
    want, got = np.asarray(want), np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (name, got.dtype, want.dtype,
                                                                got.shape, want.shape)
    if want.dtype.kind not in "fc":
        return want != got
    bad = np.zeros(want.shape, bool)
    for part in ((np.real, np.imag) if want.dtype.kind == "c" else (lambda a: a,)):
        w, g = part(want), part(got)
        nan = np.isnan(w) & np.isnan(g)
        exact = (w == g) & (np.signbit(w) == np.signbit(g))
        if name in TRANSCENDENTAL:
            finite = np.isfinite(w) & np.isfinite(g)
            exact |= finite & (ulp_distance(w, g) <= ULPS)
            exact |= (w == g)  # +0 and -0 (pow(-0, 0.5) differs between NumPy's own paths)
        bad |= ~(nan | exact)
    return bad


def check(name, want, got, operands, where):
    bad = mismatches(name, want, got)
    if bad.any():
        index = tuple(np.argwhere(bad)[0])
        values = [np.broadcast_to(v, bad.shape)[index] for v in operands]
        pytest.fail(f"{name} {where}: {bad.sum()} elements differ from NumPy, e.g. "
                    f"{name}{tuple(values)} = {np.asarray(want)[index]!r} (NumPy), "
                    f"{np.asarray(got)[index]!r} (cpu)")


def numpy_results(functions, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return [fn(*args) for fn in functions]


def selected(table: dict, dtypes: list) -> dict:
    return {n: u for n, u in table.items() if defined(u, dtypes)}


def _astype_same(r):
    return r.astype(r.dtype)  # a cast (a copy) that fusion puts into one loop with ``r``


def run_everywhere(table: dict, operands: list, zero_d: list):
    """Checks every op of ``table`` on ``operands`` (arrays), fused into a loop, and on each
    tuple of 0-d ``zero_d`` operands, against NumPy."""
    names, functions = list(table), list(table.values())

    def apply(*xs):
        return tuple(fn(*xs) for fn in functions)

    def fused(*xs):  # the op inside a fused loop (its scalar rule per element)
        return tuple(_astype_same(fn(*xs)) for fn in functions)

    for where, staged in (("on arrays", apply), ("fused", fused)):
        got = StagedFunction(staged, target="cpu")(*operands)
        for name, want, g in zip(names, numpy_results(functions, *operands), got, strict=True):
            check(name, want, g, operands, where)
    compiled = StagedFunction(apply, target="cpu")
    for scalars in zero_d:
        got = compiled(*scalars)
        for name, want, g in zip(names, numpy_results(functions, *scalars), got, strict=True):
            if name == "power" and not np.isfinite(scalars).all():
                continue  # NumPy's scalar power(-inf, 0.5) is nan, its array power inf
            check(name, want, g, scalars, "on 0-d values")


@pytest.mark.parametrize("dtype", UNARY_PARAMS)
def test_unary_ops_on_edge_values(dtype):
    x = edge_values(dtype)
    table = selected(UNARY, [dtype])
    run_everywhere(table, [x], [(v,) for v in x])


@pytest.mark.parametrize("dtype", DTYPE_PARAMS)
def test_binary_ops_on_every_pair_of_edge_values(dtype):
    values = edge_values(dtype)
    x, y = values[:, None], values[None, :]
    table = selected(BINARY, [dtype, dtype])
    if dtype.kind == "i":  # negative exponents raise: test_cpu_exact_numpy checks that
        table.pop("power")
        x_pow, y_pow = x, np.abs(np.where(y == np.iinfo(dtype).min, 0, y))
        run_everywhere({"power": np.power}, [x_pow, y_pow], [])
    pairs = [(a, b) for a in values[[0, 1, len(values) // 2, -1]] for b in values]
    run_everywhere(table, [x, y], pairs)


def _broadcast_and_empty(dtype):
    values = edge_values(dtype)
    stride0 = np.broadcast_to(values[-1:], (5,))
    return [(stride0, stride0), (stride0[None, :], values[:5, None] if len(values) >= 5
                                 else values[:, None]),
            (np.empty(0, dtype), np.empty(0, dtype)),
            (np.empty((2, 0), dtype), np.empty((1, 0), dtype))]


@pytest.mark.parametrize("dtype", [np.dtype(np.int64), np.dtype(np.float64),
                                   pytest.param(np.dtype(np.uint8), marks=pytest.mark.slow),
                                   pytest.param(np.dtype(np.float32), marks=pytest.mark.slow)])
def test_binary_ops_on_zero_stride_and_empty_arrays(dtype):
    table = {n: u for n, u in selected(BINARY, [dtype, dtype]).items()
             if not (n == "power" and dtype.kind == "i")}
    for operands in _broadcast_and_empty(dtype):
        run_everywhere(table, list(operands), [])


REDUCTIONS = {
    "sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "any": np.any,
    "all": np.all, "argmax": np.argmax, "argmin": np.argmin,
    "sum_axis0": lambda a: np.sum(a, axis=0), "max_axis1": lambda a: np.max(a, axis=1),
    "min_keepdims": lambda a: np.min(a, axis=1, keepdims=True),
    "prod_axis1": lambda a: np.prod(a, axis=1), "mean": np.mean,
    "argmin_axis0": lambda a: np.argmin(a, axis=0),
}


@pytest.mark.parametrize("dtype", DTYPE_PARAMS + [pytest.param(np.dtype(np.complex128),
                                                                id="complex128-quick")])
def test_reductions_on_edge_values(dtype):
    values = edge_values(dtype)
    arrays = [values.reshape(1, -1), values[::-1].reshape(-1, 1),
              np.broadcast_to(values[:1], (3, 4))]
    for x in arrays:
        table = {n: f for n, f in REDUCTIONS.items()}
        names, functions = list(table), list(table.values())
        got = StagedFunction(lambda a, fs=functions: tuple(f(a) for f in fs), target="cpu")(x)
        for name, want, g in zip(names, numpy_results(functions, x), got, strict=True):
            check(name, want, g, [x], f"on shape {x.shape}")


@pytest.mark.parametrize("dtype", DTYPE_PARAMS)
def test_casts_of_edge_values_to_every_dtype(dtype):
    values = edge_values(dtype)
    targets = ALL
    if dtype.kind in "fc":  # out-of-range float -> int is undefined in C; NumPy's value is the
        # x86 instruction's. Compared: values every integer dtype holds.
        ints = [t for t in ALL if t.kind in "iu"]
        in_range = values[np.isfinite(values) & (np.abs(values.real) < 127)]
        in_range = in_range[in_range.real >= 0]  # negative -> unsigned: undefined in C too
        names = [t.name for t in ints]
        got = StagedFunction(lambda a: tuple(a.astype(t) for t in ints), target="cpu")(in_range)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name, t, g in zip(names, ints, got, strict=True):
                check(f"astype({name})", in_range.astype(t), g, [in_range], "in range")
        targets = [t for t in ALL if t.kind not in "iu"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ComplexWarning: tested in test_cpu_exact_numpy
        got = StagedFunction(lambda a: tuple(a.astype(t) for t in targets), target="cpu")(values)
        zero_d = StagedFunction(lambda a: tuple(a.astype(t) for t in targets), target="cpu")
        for t, g in zip(targets, got, strict=True):
            check(f"astype({t.name})", values.astype(t), g, [values], "on arrays")
        for v in values[[0, 1, -2, -1]]:
            for t, g in zip(targets, zero_d(v), strict=True):
                check(f"astype({t.name})", np.asarray(v).astype(t), np.asarray(g), [v], "0-d")
