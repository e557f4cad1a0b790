"""The cpu target's vectorised ``exp``, ``log`` and ``tanh`` (``backends/cpu/vector_math.py``).

Through compiled functions (``autostage.convert(fn, target="cpu")``) on arrays, 0-d values and
inside fused loops: within 4 ulp of NumPy's result (DESIGN.md) with NumPy's NaNs, infinities and
signs of zeros, on hypothesis-drawn float64 values over the whole range, random bit patterns and
a table of edge values (subnormals, thresholds of overflow and underflow, values near 1 and
0.625, huge ones); float32 on a strided sample of every bit pattern (all of them: ``-m slow``).
The kernels' own accuracy is checked against exact values too (mpmath for float64, NumPy's
float64 result for float32), which does not depend on NumPy's implementation on this CPU.
``AUTOSTAGE_EXACT_MATH=1`` gives libm's values bit for bit and shares no generated code with the
default, in one process and across processes; the generated source calls the kernels, and LLVM
vectorises their loop.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import mpmath
import numpy as np
import pytest
from autostage.runtime.backends.cpu import vector_math
from hypothesis import given, settings
from hypothesis import strategies as st

import autostage
from autostage import cli, config

NAMES = ("exp", "log", "tanh")
CONTRACT_ULPS = 4  # DESIGN.md: transcendentals within 4 ulp of NumPy's result
EXACT_ULPS = 2     # the kernels against the exact value (float32: the float64 one, rounded)
TANH_EXACT_ULPS = 2.5  # float64 tanh: a quotient of two rounded parts (2.01 seen near 0.5)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("AUTOSTAGE_EXACT_MATH", raising=False)


def whole(x):
    return np.exp(x), np.log(x), np.tanh(x)


def fused(x):
    return -np.exp(-x), np.log(x * 2.0) * 1.0, -np.tanh(-x)


def fused_reference(x):
    with np.errstate(all="ignore"):
        return -np.exp(-x), np.log(x * x.dtype.type(2.0)) * x.dtype.type(1.0), -np.tanh(-x)


# Compiled once per test session and dtype/rank (each trace compiles the three kernels); 0-d
# values have their own staged function (a trace per dtype and rank: more would warn).
WHOLE = autostage.convert(whole, target="cpu")
SCALAR = autostage.convert(whole, target="cpu")
FUSED = autostage.convert(fused, target="cpu")


def numpy_whole(x):
    with np.errstate(all="ignore"):
        return whole(x)


# -- comparing floats ---------------------------------------------------------------------------

def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """How many floats of the dtype lie between ``got`` and ``want`` (+0 and -0: none), as
    float64; compare NaNs and signs separately."""
    ints = {4: np.int32, 8: np.int64}[want.dtype.itemsize]
    low = np.iinfo(ints).min

    def ordered(a):  # the float's rank among all floats of its dtype, as int64
        i = a.view(ints).astype(np.int64)
        return np.where(i < 0, low - i, i)

    a, b = ordered(np.ascontiguousarray(got)), ordered(np.ascontiguousarray(want))
    same_side = (a < 0) == (b < 0)
    near = np.abs(np.where(same_side, a - b, 0)).astype(np.float64)
    far = np.abs(a.astype(np.float64)) + np.abs(b.astype(np.float64))
    return np.where(same_side, near, far)


def check(name: str, x: np.ndarray, got, want, limit: float = CONTRACT_ULPS) -> float:
    """Asserts ``got`` is ``want`` within ``limit`` ulp, with its NaNs, infinities and signs
    (NaN's sign aside); returns the largest distance."""
    got, want, x = np.asarray(got), np.asarray(want), np.asarray(x)
    assert got.dtype == want.dtype and got.shape == want.shape, (name, got.dtype, want.dtype)
    got, want, x = got.ravel(), want.ravel(), x.ravel()
    total = got.size
    ints = {4: np.int32, 8: np.int64}[want.dtype.itemsize]
    differ = np.flatnonzero(got.view(ints) != want.view(ints))  # the rest are identical
    got, want, x = got[differ], want[differ], x[differ]
    nan_got, nan_want = np.isnan(got), np.isnan(want)
    both = ~nan_got & ~nan_want
    distance = np.where(both, ulps(got, want), 0)
    bad = (nan_got != nan_want) | both & ((np.signbit(got) != np.signbit(want))
                                         | (np.isinf(got) != np.isinf(want))
                                         | (distance > limit))
    if bad.any():
        rows = [f"  {name}({x[i]!r}) = {got[i]!r}, want {want[i]!r} ({distance[i]:g} ulp)"
                for i in np.flatnonzero(bad)[:8]]
        raise AssertionError(f"{name}: {bad.sum()} of {total} values off by more than "
                             f"{limit} ulp (or NaN/inf/sign):\n" + "\n".join(rows))
    return float(distance.max(initial=0))


def test_the_checker_fails_on_a_wrong_value_sign_or_nan():
    x = np.array([1.0, 2.0])
    want = np.exp(x)
    with pytest.raises(AssertionError, match="1 of 2"):
        check("exp", x, want * [1, 1 + 1e-14], want)  # 1e-14: about 45 ulp
    assert check("exp", x, np.nextafter(want, np.inf), want) == 1
    with pytest.raises(AssertionError, match="sign"):
        check("tanh", x, np.array([-0.0]), np.array([0.0]))
    with pytest.raises(AssertionError):
        check("log", x, np.array([np.nan]), np.array([1.0]))
    with pytest.raises(AssertionError):
        check("exp", x, np.array([np.finfo(np.float64).max]), np.array([np.inf]))
    assert ulps(np.array([np.float32(1.0)]), np.array([np.float32(-1.0)]))[0] > 2**30


def test_coefficients_are_the_tools_fits():
    # tools/vector_math_coefficients.py recomputes every table with mpmath; a hand-edited
    # coefficient in vector_math.py fails here
    path = pathlib.Path(__file__).resolve().parents[3] / "tools" / "vector_math_coefficients.py"
    spec = importlib.util.spec_from_file_location("vector_math_coefficients", path)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    source = pathlib.Path(vector_math.__file__).read_text()
    blocks = tool.blocks()
    assert len(blocks) == 4 and all(block in source for block in blocks)
    assert vector_math.EXP_Q[3] == float(blocks[0].splitlines()[5].strip(" ,"))


# -- inputs --------------------------------------------------------------------------------------

def edge_values(dtype) -> np.ndarray:
    """Both signs of: 0, subnormals, the smallest and largest normals, inf, nan, the inputs
    where exp overflows, stops being normal, reaches the smallest subnormal and 0 (with their
    neighbours), values near 1 (log) and 0.625 (tanh's switch), tiny and large tanh inputs."""
    dtype = np.dtype(dtype)
    f = np.finfo(dtype)
    with np.errstate(all="ignore"):
        thresholds = np.log(np.array([float(f.max), float(f.tiny), float(f.smallest_subnormal),
                                      float(f.smallest_subnormal) / 2]))
    centres = [*thresholds.astype(dtype), 1.0, 0.625, math.sqrt(2), math.sqrt(0.5), 2.0, 0.5]
    values = [0.0, float(f.smallest_subnormal), 3 * float(f.smallest_subnormal),
              float(f.tiny) - float(f.smallest_subnormal), float(f.tiny), float(f.eps), 1e-30,
              1e-10, 1e-5, 0.1, math.e, 10.0, 19.06, 20.0, 22.0, 100.0, 1e10, 1e30,
              float(f.max), math.inf, math.nan, 1 + 1e-10, 1 - 1e-10, 1 + 1e-5, 1 - 1e-5,
              710.0, 746.0, 1000.0]
    out = list(np.array(values, dtype))
    for centre in np.array(centres, dtype):
        below = above = centre
        for _ in range(3):
            below, above = np.nextafter(below, dtype.type(-np.inf)), np.nextafter(above,
                                                                                 dtype.type(np.inf))
            out += [below, above]
        out.append(centre)
    out = np.array(out, dtype)
    return np.concatenate([out, -out])


def random_values(dtype, n: int = 100_000) -> np.ndarray:
    """Uniform bit patterns (the whole range) and uniform values where each function is
    neither flat nor saturated."""
    rng = np.random.default_rng(1234)
    dtype = np.dtype(dtype)
    ints = {4: np.uint32, 8: np.uint64}[dtype.itemsize]
    bits = rng.integers(0, np.iinfo(ints).max, n, dtype=ints, endpoint=True).view(dtype)
    limit = 750 if dtype == np.float64 else 105
    parts = [bits, rng.uniform(-limit, limit, n), rng.uniform(-25, 25, n),
             np.exp(rng.uniform(-limit, limit * 0.94, n)), rng.uniform(0.5, 2, n)]
    with np.errstate(all="ignore"):
        return np.concatenate([np.asarray(p).astype(dtype) for p in parts])


# -- float64 and float32 against NumPy: arrays, 0-d values, fused loops ---------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("values", [edge_values, random_values], ids=["edges", "random"])
def test_arrays_are_numpys_within_the_contract(dtype, values):
    x = values(dtype)
    for name, got, want in zip(NAMES, WHOLE(x), numpy_whole(x), strict=True):
        check(name, x, got, want)
    # a 2-D strided view: the loop of the whole-array op reads through its strides
    view = x[: (x.size // 6) * 6].reshape(-1, 6)[::2, ::3]
    for name, got, want in zip(NAMES, WHOLE(view), numpy_whole(view), strict=True):
        check(name, view, got, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_fused_loops_are_numpys_within_the_contract(dtype):
    x = np.concatenate([edge_values(dtype), random_values(dtype, 20_000)])
    for name, got, want in zip(NAMES, FUSED(x), fused_reference(x), strict=True):
        check(name, x, got, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_zero_d_values_are_numpys_within_the_contract(dtype):
    xs = edge_values(dtype)
    got = np.array([SCALAR(v) for v in xs])
    assert all(type(r) is np.dtype(dtype).type for r in SCALAR(xs[0]))
    with np.errstate(all="ignore"):
        want = np.array([whole(v) for v in xs])
    for i, name in enumerate(NAMES):
        check(name, xs, got[:, i].astype(dtype), want[:, i].astype(dtype))


@settings(max_examples=150)
@given(st.lists(st.floats(width=64), min_size=1, max_size=40))
def test_hypothesis_float64_values_are_numpys_within_the_contract(values):
    x = np.array(values, np.float64)
    for name, got, want in zip(NAMES, WHOLE(x), numpy_whole(x), strict=True):
        check(name, x, got, want)
    for name, got, want in zip(NAMES, FUSED(x), fused_reference(x), strict=True):
        check(name, x, got, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_special_values_are_exact(dtype):
    inf, nan, tiny = math.inf, math.nan, float(np.finfo(dtype).smallest_subnormal)
    x = np.array([0.0, -0.0, inf, -inf, nan, 1000.0, -1000.0, 30.0, -30.0, tiny, 1.0, -1.0],
                 dtype)
    e, lg, t = WHOLE(x)
    np.testing.assert_array_equal(e[:10], [1, 1, inf, 0, nan, inf, 0, e[7], e[8], 1])
    assert not np.signbit(e[3]) and not np.signbit(e[6])
    np.testing.assert_array_equal(lg[[0, 1, 2, 3, 4, 6, 10, 11]], [-inf, -inf, inf, nan, nan,
                                                                   nan, 0, nan])
    assert not np.signbit(lg[10])
    np.testing.assert_array_equal(t[:10], [0, -0.0, 1, -1, nan, 1, -1, 1, -1, tiny])
    assert not np.signbit(t[0]) and np.signbit(t[1])
    for v, want in [(-0.0, -0.0), (0.0, 0.0), (-inf, -1.0), (nan, nan), (-tiny, -tiny)]:
        got = SCALAR(dtype(v))[2]
        assert type(got) is dtype and (got == want or math.isnan(want) and np.isnan(got))
        assert np.signbit(got) == np.signbit(want) or math.isnan(want)


# -- the kernels against exact values -------------------------------------------------------------

def test_float64_kernels_are_within_their_bounds_of_the_exact_value():
    mpmath.mp.prec = 200
    exact = {"exp": mpmath.exp, "log": mpmath.log, "tanh": mpmath.tanh}
    rng = np.random.default_rng(7)
    x = np.concatenate([edge_values(np.float64), rng.uniform(-745, 709, 1500),
                        np.exp(rng.uniform(-744, 709, 1500)), rng.uniform(-3, 3, 1500),
                        rng.uniform(0.45, 0.55, 1500)])
    worst = {}
    for name, got in zip(NAMES, WHOLE(x), strict=True):
        errors = []
        for xi, gi in zip(x.tolist(), got.tolist(), strict=True):
            if not (math.isfinite(xi) and math.isfinite(gi)) or (name == "log" and xi <= 0):
                continue
            value = exact[name](mpmath.mpf(xi))
            if abs(value) > np.finfo(np.float64).max:
                continue
            errors.append(float(abs(mpmath.mpf(gi) - value)) / math.ulp(float(value)))
        worst[name] = max(errors)
    bounds = {"exp": EXACT_ULPS, "log": EXACT_ULPS, "tanh": TANH_EXACT_ULPS}
    assert all(worst[name] <= bounds[name] for name in NAMES), worst
    assert worst["tanh"] > 1  # the sample reaches where the bound matters


def float32_patterns(start: int, stop: int, step: int) -> np.ndarray:
    return np.arange(start, stop, step, dtype=np.uint64).astype(np.uint32).view(np.float32)


def check_float32(x: np.ndarray) -> dict[str, tuple[float, float]]:
    """Checks the kernels on float32 ``x``: within the contract of NumPy's float32 result, and
    within EXACT_ULPS of the float64 result rounded to float32 (the exact value but for rare
    double roundings); returns the largest distances to both, per function."""
    worst = {}
    with np.errstate(all="ignore"):
        references = numpy_whole(x), [r.astype(np.float32) for r in numpy_whole(x.astype(float))]
    for name, got, want, exact in zip(NAMES, WHOLE(x), *references, strict=True):
        worst[name] = (check(name, x, got, want), check(name, x, got, exact, EXACT_ULPS))
    return worst


def test_float32_strided_sample_of_every_bit_pattern():
    # 1/4099 of the 2**32 patterns (a prime stride: every exponent, varied mantissas, both signs)
    worst = check_float32(float32_patterns(0, 2**32, 4099))
    assert set(worst) == set(NAMES)


@pytest.mark.slow
def test_float32_every_bit_pattern():
    chunk = 1 << 22
    worst = {name: (0.0, 0.0) for name in NAMES}
    for start in range(0, 2**32, chunk):
        for name, w in check_float32(float32_patterns(start, start + chunk, 1)).items():
            worst[name] = tuple(map(max, worst[name], w))
    print("float32, largest ulp distances (to NumPy, to the exact value):", worst)


# -- AUTOSTAGE_EXACT_MATH=1: libm, no shared code ---------------------------------------------

def libm_inputs() -> np.ndarray:
    rng = np.random.default_rng(3)
    return np.concatenate([[1.0, 0.5, 2.0, 1e-300, 5e-324, 700.0, -700.0, -745.0, 20.0],
                           rng.uniform(-700, 700, 3000), rng.uniform(-3, 3, 3000),
                           np.exp(rng.uniform(-700, 700, 3000))])


def domain(name: str, x: np.ndarray) -> np.ndarray:
    """Where Python's ``math`` function returns a value (no OverflowError/ValueError)."""
    return x < 709.78 if name == "exp" else x > 0 if name == "log" else np.isfinite(x)


def python_math(name: str, x: np.ndarray) -> np.ndarray:
    return np.array([getattr(math, name)(v) for v in x.tolist()])


def test_exact_math_gives_libm_bit_for_bit_and_its_own_code():
    x = libm_inputs()
    with config.EXACT_MATH.override(True):
        exact = autostage.convert(whole, target="cpu")
        arrays = exact(x)
        scalars = [exact(v) for v in x[:200]]
    kernels = autostage.convert(whole, target="cpu")
    default = kernels(x)
    exact_source = exact.concrete_functions[0]._runner.source
    assert "cpu_vmath" not in exact_source and "np.tanh(" in exact_source
    assert "cpu_vmath.tanh(" in kernels.concrete_functions[0]._runner.source
    assert exact.concrete_functions[0]._runner.path != kernels.concrete_functions[0]._runner.path
    differ = 0
    for i, name in enumerate(NAMES):
        inside = domain(name, x)
        libm = python_math(name, x[inside])
        np.testing.assert_array_equal(arrays[i][inside].view(np.int64), libm.view(np.int64),
                                      err_msg=name)
        first = domain(name, x[:200])
        np.testing.assert_array_equal(
            np.array([s[i] for s in scalars])[first].view(np.int64),
            python_math(name, x[:200][first]).view(np.int64), err_msg=name)
        differ += int(np.sum(default[i][inside] != libm))
    assert differ > 0  # the kernels are not libm: the switch is observable (exp(1.0), ...)


PROCESS = textwrap.dedent('''
    import json, sys
    import numpy as np
    import autostage

    def whole(x):
        return np.exp(x), np.log(x), np.tanh(x)

    f = autostage.convert(whole, target="cpu")
    x = np.linspace(0.01, 50.0, 4001)
    results = f(x)
    runner = f.concrete_functions[0]._runner
    print(json.dumps({"bits": [r.view(np.int64).tolist() for r in results],
                      "path": runner.path, "kernels": "cpu_vmath" in runner.source}))
''')


def test_exact_math_never_reuses_another_process_s_code(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(PROCESS)

    def run(exact: str | None) -> dict:
        env = {**os.environ, "AUTOSTAGE_CACHE_DIR": str(tmp_path / "shared")}
        env.pop("AUTOSTAGE_EXACT_MATH", None)
        if exact is not None:
            env["AUTOSTAGE_EXACT_MATH"] = exact
        out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                             text=True, timeout=300, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    default, exact, again = run(None), run("1"), run("0")
    assert default["kernels"] and again["kernels"] and not exact["kernels"]
    assert exact["path"] != default["path"] == again["path"]
    x = np.linspace(0.01, 50.0, 4001)
    for i, name in enumerate(NAMES):
        assert exact["bits"][i] == python_math(name, x).view(np.int64).tolist(), name
    assert default["bits"] == again["bits"] != exact["bits"]


# -- the generated code ---------------------------------------------------------------------------

SOURCE = textwrap.dedent('''
    import numpy as np

    def rnn_step(x, h):
        return np.tanh(x + h) * np.exp(-h)

    def whole_log(x):
        return np.log(x)
''')


def cli_output(tmp_path, capsys, target: str, flag: str, args: str) -> str:
    path = tmp_path / "program.py"
    path.write_text(SOURCE)
    assert cli.main([f"{path}:{target}", flag, "--args", args]) == 0
    return capsys.readouterr().out


def test_generated_source_calls_the_kernels(tmp_path, capsys, monkeypatch):
    source = cli_output(tmp_path, capsys, "rnn_step", "--backend-source", "f64[?,?],f64[?,?]")
    # the kernels' source hash: Numba's cache of the module holds them inlined
    digest = hashlib.sha256(pathlib.Path(vector_math.__file__).read_bytes()).hexdigest()[:16]
    assert ("\nimport autostage.runtime.backends.cpu.vector_math as cpu_vmath  # source "
            f"{digest}\n") in source
    loops = source[source.index("for "):]  # the fused loop calls both kernels per element
    assert "cpu_vmath.tanh(" in loops and "cpu_vmath.exp(" in loops
    assert "np.tanh" not in source and "np.exp" not in source
    source = cli_output(tmp_path, capsys, "whole_log", "--backend-source", "f32[?]")
    # the kernel's result is of the loop's dtype: no cast around it
    assert re.search(r"for .*:\n.*\n\s+\w+ = cpu_vmath\.log_f32\(", source)
    source = cli_output(tmp_path, capsys, "whole_log", "--backend-source", "f64[]")
    assert "= cpu_vmath.log(" in source and "for " not in source
    source = cli_output(tmp_path, capsys, "whole_log", "--backend-source", "c128[?]")
    assert "cpu_vmath" not in source  # complex values keep NumPy's own functions
    monkeypatch.setenv("AUTOSTAGE_EXACT_MATH", "1")
    source = cli_output(tmp_path, capsys, "rnn_step", "--backend-source", "f64[?,?],f64[?,?]")
    assert "cpu_vmath" not in source and "np.tanh(" in source and "np.exp(" in source


@pytest.mark.parametrize("args, vector", [("f64[?,?],f64[?,?]", "double"),
                                          ("f32[?,?],f32[?,?]", "float")])
def test_llvm_vectorises_the_loop_over_the_kernels(tmp_path, capsys, monkeypatch, args, vector):
    bits = 64 if vector == "double" else 32
    llvm = cli_output(tmp_path, capsys, "rnn_step", "--llvm", args)
    assert re.search(rf"call <\d+ x {vector}> @llvm\.fmuladd\.v\d+f{bits}", llvm)
    assert not re.search(r"call \S+ @(tanh|exp)f?\(", llvm)
    monkeypatch.setenv("AUTOSTAGE_EXACT_MATH", "1")  # the test can fail: libm's scalar calls
    llvm = cli_output(tmp_path, capsys, "rnn_step", "--llvm", args)
    assert re.search(r"call \S+ @(tanh|exp)f?\(", llvm)
