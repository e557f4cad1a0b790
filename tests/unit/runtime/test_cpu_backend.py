"""The CPU (Numba) backend end to end: results, dtypes and printed text identical to the
interpreter's on small programs (loops, branches, tensor lists, print order, asserts, raises,
Variables, staged calls), and compile errors named in the user's terms."""

import re

import numpy as np
import pytest
from autostage.runtime import ir, state
from autostage.runtime.backends.cpu import codegen
from autostage.runtime.backends.cpu import compile as cpu_compile
from autostage.runtime.function import optimized
from autostage.runtime.passes import inline

import autostage


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(tmp_path / "cache"))


def both(fn, *args, **kwargs):
    """(interpreter result, cpu result) of ``fn(*args)``."""
    expected = autostage.convert(fn, target="interpreter")(*args, **kwargs)
    actual = autostage.convert(fn, target="cpu")(*args, **kwargs)
    return expected, actual


def assert_identical(expected, actual, rtol=0.0):
    """Same types, dtypes and shapes; values bit for bit unless ``rtol`` (given with a reason)."""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for e, a in zip(expected, actual, strict=True):
            assert_identical(e, a, rtol)
        return
    assert type(actual) is type(expected), (expected, actual)
    assert np.asarray(actual).dtype == np.asarray(expected).dtype
    if rtol:
        np.testing.assert_allclose(actual, expected, rtol=rtol, strict=True)
    else:
        np.testing.assert_array_equal(actual, expected, strict=True)


def collatz(n):
    total = np.int64(0)
    for i in range(1, n + 1):
        x = i
        while x != 1:
            if x % 2 == 0:
                x = x // 2
            else:
                x = 3 * x + 1
            total += 1
    return total


def newton(a):
    x = a
    for _ in range(30):
        x = x - (x * x - a) / (2 * x)
    return x, x * np.float32(2.0), x > 1


def rnn_like(x, steps):
    outputs = []
    h = np.zeros_like(x)
    for _ in range(steps):
        h = np.tanh(x + h * np.float32(0.5))
        outputs.append(h)
    return np.stack(outputs)


def list_of_scalars(n):
    values = []
    i = 0
    while i < n:
        values.append(i * 2)
        i += 1
    last = values.pop()
    return np.stack(values), last, len(values)


def print_order(x):
    print("start", x)
    total = x
    for i in range(3):
        total = total * 2
        print("step", i, total)
    print("array", np.array([1.5, 2.0], np.float32) * total)
    return total


def mixed_dtypes(a, b, c):
    return a + b, a * c, b // c, a / b, np.sqrt(a), np.where(a > b, a, c), np.clip(a, 0, 2)


def test_collatz_matches_interpreter():
    expected, actual = both(collatz, np.int64(200))
    assert_identical(expected, actual)
    assert actual == np.int64(collatz(200))


def test_newton_float32_stays_float32():
    expected, actual = both(newton, np.float32(2.0))
    assert_identical(expected, actual)
    assert type(actual[0]) is np.float32 and type(actual[2]) is np.bool_


def test_loop_with_tensor_list():
    x = np.linspace(-1, 1, 5).astype(np.float32)
    # float32 tanh: Numba calls libm's tanhf, NumPy its own SIMD loop (1 ulp apart).
    assert_identical(*both(rnn_like, x, np.int64(4)), rtol=1e-6)
    assert_identical(*both(list_of_scalars, np.int64(5)))


def test_print_order_and_text(capsys):
    autostage.convert(print_order, target="interpreter")(np.float32(0.1))
    expected = capsys.readouterr().out
    autostage.convert(print_order, target="cpu")(np.float32(0.1))
    assert capsys.readouterr().out == expected
    assert "step 2 0.8" in expected


@pytest.mark.parametrize("dtypes", [(np.int32, np.int32, np.int32), (np.float32, np.int64, np.int8),
                                    (np.uint16, np.int8, np.float64), (np.float64, np.float32,
                                                                      np.int16)])
def test_scalar_promotion_is_numpy_2(dtypes):
    args = [t(v) for t, v in zip(dtypes, (3, 2, 5), strict=True)]
    assert_identical(*both(mixed_dtypes, *args))
    arrays = [np.arange(1, 4, dtype=t) for t in dtypes]
    assert_identical(*both(mixed_dtypes, *arrays))


def lone_where_and_clip(x, lo, c, y):
    return np.clip(x, lo, 0.5), np.where(c, x, y)


def test_a_lone_where_or_clip_on_arrays_is_a_loop_of_its_scalar_rule():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 5))
    x[1, 2] = np.nan  # propagated by clip, as NumPy's
    args = (x, rng.normal(size=5) - 1, rng.normal(size=(4, 1)) > 0, rng.normal(size=5) > 0)
    assert_identical(*both(lone_where_and_clip, *args))
    source = autostage.convert(lone_where_and_clip, target="cpu").backend_source(*args)
    assert "np.where(" not in source and "np.maximum(a1" not in source, source
    with pytest.raises(ValueError, match=r"broadcast together with shapes \(4,5\) \(3,\)"):
        autostage.convert(lone_where_and_clip, target="cpu")(x, np.ones(3), *args[2:])


def checked(x):
    assert x > 0, "x must be positive"
    if x > 10:
        raise ValueError("too large")
    return x


def test_assert_and_raise():
    f = autostage.convert(checked, target="cpu")
    assert f(np.float64(2.0)) == 2.0
    with pytest.raises(AssertionError, match="x must be positive"):
        f(np.float64(-1.0))
    with pytest.raises(ValueError, match="too large"):
        f(np.float64(11.0))


def test_variables_are_written_through():
    v = state.Variable(np.float32(1.0))
    v.assign_add(np.float32(0.0))  # a 0-d sum stays a 0-d array that compiled code writes
    w = state.Variable(np.zeros(3))

    def step(x):
        v.assign_add(x)
        w.assign(w.read() + x)
        w.assign_add(np.ones(3))
        return v.read() * 2

    f = autostage.convert(step, target="cpu")
    assert f(np.float32(2.0)) == np.float32(6.0)
    assert f(np.float32(1.0)) == np.float32(8.0)
    assert v.read() == np.float32(4.0) and type(v.read()) is np.float32
    np.testing.assert_array_equal(w.read(), [5.0, 5.0, 5.0])


def helper(x):
    return x * 2 + 1


def calls(x):
    return helper(x) + helper(x + 1)


def test_staged_calls_are_native_calls(monkeypatch):
    assert_identical(*both(calls, np.arange(3.0)))
    f = autostage.convert(calls, target="cpu")
    f(np.arange(3.0))
    module = f.concrete_functions[0].module
    assert "call @helper" in f.ir(np.arange(3.0))  # the trace is not changed by compiling
    inlined = cpu_compile.generate(optimized(ir.copy_module(module))).source
    # the small helper is inlined (passes/inline.py): one function
    assert re.findall(r"\ndef (f_\w+)\(", inlined) == ["f_calls"]
    monkeypatch.setattr(inline, "MAX_OPS", -1)
    source = cpu_compile.generate(optimized(ir.copy_module(module))).source
    # two native functions, one calling the other
    assert len(re.findall(r"\ndef (f_\w+)\(", source)) == 2


def test_missing_lowering_names_op_and_line(monkeypatch):
    from autostage.runtime import op_registry

    monkeypatch.delitem(op_registry.REGISTRY["sqrt"].lowerings, "cpu")

    def uses_sqrt(x):
        return np.sqrt(x)

    with pytest.raises(codegen.LoweringError, match=r"`sqrt` at .*test_cpu_backend.py:\d+"):
        autostage.convert(uses_sqrt, target="cpu")(np.float64(4.0))


def test_numba_typing_error_is_translated(monkeypatch):
    from autostage.runtime import op_registry

    def broken(op, em):
        em.line(f"{em.name(op.results[0])} = {em.name(op.operands[0])}.no_such_method()")

    cpu_compile.load_lowerings()  # (else loading them later would replace ``broken``)
    monkeypatch.setitem(op_registry.REGISTRY["cbrt"].lowerings, "cpu", broken)

    def uses_cbrt(x):
        return np.cbrt(x) + 1

    with pytest.raises(cpu_compile.CpuCompileError, match=r"`cbrt` at .*test_cpu_backend.py") \
            as info:
        autostage.convert(uses_cbrt, target="cpu")(np.float64(8.0))
    assert any("no_such_method" in note for note in info.value.__notes__)


def test_float16_is_a_clear_error():
    def half(x):
        return x * 2

    with pytest.raises(codegen.LoweringError, match=r"float16.*` at .*test_cpu_backend"):
        autostage.convert(half, target="cpu")(np.float16(1.0))


def _chained_matmuls(a, n):
    x = a
    for _ in range(n):
        x = x @ a
    return x


def test_helpers_shared_by_call_sites_with_and_without_repeated_operands():
    # `a @ a` and `x @ a` share one helper kind; the helper must not mix up its operands.
    import autostage

    a = np.array([[0.5, 0.2], [0.1, 0.3]], np.float32)
    for n in (1, 2, 5):
        compiled = autostage.convert(_chained_matmuls, target="cpu")(a, n)
        expected = autostage.convert(_chained_matmuls, target="interpreter")(a, n)
        assert compiled.dtype == expected.dtype == np.float32
        np.testing.assert_allclose(compiled, expected, rtol=1e-6)


def _shifts(a, b):
    return a << b, a >> b


@pytest.mark.parametrize("a, b", [
    (np.int64(5), np.int64(64)), (np.int64(-5), np.int64(70)), (np.int64(5), np.int64(-1)),
    (np.int64(-5), np.int64(-1)), (np.int64(3), np.int64(63)), (np.uint8(200), np.uint8(3)),
    (np.array([5, -5, 3, 1], np.int8), np.array([8, 70, -1, 2], np.int8)),
    (np.array([5, -5, 3, 1], np.int8), np.int64(9))])
def test_shift_counts_out_of_range_give_numpys_values(a, b):
    got = autostage.convert(target="cpu")(_shifts)(a, b)
    for g, e in zip(got, _shifts(a, b), strict=True):
        assert np.asarray(g).dtype == np.asarray(e).dtype
        assert np.array_equal(g, e)
