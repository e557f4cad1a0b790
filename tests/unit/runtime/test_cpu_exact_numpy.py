"""Compiled code computes exactly what NumPy computes on edge values (issue 9, items 1-6 and 15):
integer division by -1 and zero, integer powers, shifts by any count, float floor division with
inf/nan, reshape with -1 and empty arrays, complex -> real casts, uint64 compared with signed
integers, and no NumPy RuntimeWarnings.
Each case runs on both targets; the process-crash case (SIGFPE) runs in a subprocess."""

import operator
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import autostage

TARGETS = ["interpreter", "cpu"]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(tmp_path / "cache"))


def floor_divide(x, y):
    return x // y


def remainder(x, y):
    return x % y


def power(x, y):
    return x ** y


def expected(fn, *args):
    with np.errstate(all="ignore"):
        return fn(*args)


def assert_same(actual, wanted):
    np.testing.assert_array_equal(actual, wanted, strict=True)
    if np.asarray(wanted).dtype.kind == "f":  # signs of zeros too (a NaN's sign means nothing)
        numbers = ~np.isnan(wanted)
        np.testing.assert_array_equal(np.signbit(actual)[numbers], np.signbit(wanted)[numbers])


def test_integer_min_divided_by_minus_one_does_not_kill_the_process(tmp_path):
    script = textwrap.dedent("""
        import numpy as np, autostage
        @autostage.convert(target="cpu")
        def f(x, y):
            return x // y, x % y, np.fmod(x, y)
        for dt in (np.int8, np.int32, np.int64):
            m = np.iinfo(dt).min
            x, y = np.array([m, m, 7, -7], dt), np.array([-1, 0, -1, 2], dt)
            print(*(r.tolist() for r in f(x, y)))
    """)
    env = {**os.environ, "AUTOSTAGE_CACHE_DIR": str(tmp_path / "cache")}
    (tmp_path / "crash.py").write_text(script)
    done = subprocess.run([sys.executable, str(tmp_path / "crash.py")], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    lines = done.stdout.splitlines()
    for dt, line in zip((np.int8, np.int32, np.int64), lines, strict=True):
        m = int(np.iinfo(dt).min)
        assert line == f"[{m}, 0, -7, -4] [0, 0, 0, 1] [0, 0, 0, -1]"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint64])
def test_integer_floor_divide_and_remainder_match_numpy(target, dtype):
    info = np.iinfo(dtype)
    values = np.array(sorted({info.min, info.min + 1, 0, 1, 2, 7, info.max - 1, info.max}
                             | ({-1, -7} if info.min else set())), dtype)
    x, y = values[:, None], values[None, :]
    for fn in (floor_divide, remainder):
        staged = autostage.convert(fn, target=target)
        assert_same(staged(x, y), expected(fn, x, y))
        for a in values[[0, 1, -1]]:
            for b in values:
                assert_same(staged(a, b), expected(fn, a, b))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint64])
def test_integer_power_wraps_like_numpy(target, dtype):
    x = np.array([3, 2, 10, 7, 0, 1], dtype)
    y = np.array([50, 63, 30, 0, 0, 65], dtype)
    staged = autostage.convert(power, target=target)
    assert_same(staged(x, y), expected(power, x, y))
    assert_same(staged(x[0], y[0]), expected(power, x[0], y[0]))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("zero_d", [False, True])
def test_integer_power_with_a_negative_exponent_raises_numpys_value_error(target, zero_d):
    x, y = np.array([3, 2], np.int32), np.array([2, -1], np.int32)
    if zero_d:
        x, y = x[0], y[1]
    with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
        power(x, y)
    with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
        autostage.convert(power, target=target)(x, y)


def power_shortcuts(x, e):
    """Each way NumPy 2 computes a power with a scalar exponent: its shortcuts (sqrt, square,
    reciprocal, 1, x) and C's pow of NumPy scalars (an array exponent is pow, whose last bits
    may differ from NumPy's SIMD loop)."""
    zero_d = np.array(x[0])
    return (x ** 0.5, x ** 2, x ** -1, x ** 0.0, x ** 1.0, x ** np.float64(0.5),
            np.power(x, 0.5), np.power(x, 2), np.power(x, np.array(0.5)), zero_d ** 0.5,
            np.power(x[0], 0.5), x[0] ** 0.5, x[0] ** 2, x[0] ** -1, x ** e[0], x ** float(e[0]),
            np.power(x, e[0]))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
def test_powers_take_numpys_shortcuts(target, dtype):
    """``x ** 0.5`` of an array is NumPy's sqrt (``-0.0`` stays ``-0.0``, ``-inf`` is nan; it was
    pow's 0.0 and inf), ``x ** 2`` and ``x ** -1`` its exact square and reciprocal, also with an
    exponent known only at run time; a NumPy scalar's ``**`` stays C's pow."""
    specials = [-0.0, 0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, -4.0, 4.0, 3.0, 0.1, 1e300]
    if np.dtype(dtype).kind == "c":
        specials = [complex(a, b) for a in (-4.0, -0.0, np.inf, -np.inf, np.nan, 2.0)
                    for b in (-0.0, 0.0, 3.0, -np.inf)]
    with np.errstate(over="ignore"):
        x = np.array(specials, dtype)
    staged = autostage.convert(power_shortcuts, target=target)
    for e in (0.5, 2.0, -1.0, 0.0, 1.0, 3.0):
        exponent = np.array([e, 3.0])
        for _ in range(2):
            for got, want in zip(staged(x, exponent), expected(power_shortcuts, x, exponent),
                                 strict=True):
                assert type(got) is type(want)
                if np.asarray(want).dtype.kind == "c":
                    assert_same(np.asarray(got).real, np.asarray(want).real)
                    assert_same(np.asarray(got).imag, np.asarray(want).imag)
                else:
                    assert_same(got, want)


def shifts(x, n):
    return x << n, x >> n


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64,
                                   np.uint8, np.uint16, np.uint32, np.uint64])
def test_shifts_by_any_count_match_numpy(target, dtype):
    bits = np.dtype(dtype).itemsize * 8
    info = np.iinfo(dtype)
    x = np.array([info.min, -1 if info.min else 1, 0, 1, 5, info.max], dtype)[:, None]
    counts = [0, 1, bits - 1, bits, bits + 1, 2 * bits] + ([-1, -bits] if info.min else [])
    n = np.array(counts, dtype)[None, :]
    staged = autostage.convert(shifts, target=target)
    for got, want in zip(staged(x, n), expected(shifts, x, n), strict=True):
        assert_same(got, want)
    for a in x[:, 0]:
        for b in n[0]:
            for got, want in zip(staged(a, b), expected(shifts, a, b), strict=True):
                assert_same(got, want)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_floor_divide_and_remainder_with_inf_nan_and_signed_zeros(target, dtype):
    values = np.array([-np.inf, -5.0, -1.5, -0.0, 0.0, 0.5, 2.0, np.inf, np.nan], dtype)
    x, y = values[:, None], values[None, :]
    assert_same(autostage.convert(floor_divide, target=target)(
        np.array([-5.0, np.inf]), np.array([np.inf, 2.0])), np.array([-1.0, np.nan]))
    for fn in (floor_divide, remainder):
        staged = autostage.convert(fn, target=target)
        assert_same(staged(x, y), expected(fn, x, y))
        for a in values:
            for b in values:
                assert_same(staged(a, b), expected(fn, a, b))


def reshape_zero_rows(x):
    return x.reshape(0, -1)


def reshape_n_rows(x, n):
    return x.reshape(n, -1)


def reshape_to_four(x):
    return x.reshape(4)


@pytest.mark.parametrize("target", TARGETS)
def test_reshape_checks_sizes_as_numpy_does(target):
    cases = [(reshape_zero_rows, (np.zeros(0),), "size 0 into shape (0,newaxis)"),
             (reshape_zero_rows, (np.zeros(6),), "size 6 into shape (0,newaxis)"),
             (reshape_n_rows, (np.zeros(6), np.int64(4)), "size 6 into shape (4,newaxis)"),
             (reshape_n_rows, (np.zeros(0), np.int64(0)), "size 0 into shape (0,newaxis)"),
             (reshape_to_four, (np.zeros(6),), "size 6 into shape (4,)")]
    for fn, args, words in cases:
        with pytest.raises(ValueError, match="cannot reshape array of"):
            fn(*args)
        with pytest.raises(ValueError, match=r"cannot reshape array of " + words.replace(
                "(", r"\(").replace(")", r"\)")):
            autostage.convert(fn, target=target)(*args)
    staged = autostage.convert(reshape_n_rows, target=target)
    assert staged(np.zeros(0), np.int64(3)).shape == (3, 0)
    assert staged(np.arange(6.0), np.int64(3)).shape == (3, 2)


def complex_casts(z):
    return z.astype(np.float64), z.astype(np.int32), z.astype(np.bool_), z.astype(np.complex64)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("zero_d", [False, True])
def test_complex_astype_real_keeps_the_real_part_and_warns_once_per_trace(target, zero_d):
    z = np.array([1.5 + 2j, -0.0 + 1j, 0j, 3 - 4j])
    z = z[0] if zero_d else z
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = complex_casts(z)
    staged = autostage.convert(complex_casts, target=target)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = staged(z)
        second = staged(z)
    for got in (first, second):
        for g, w in zip(got, want, strict=True):
            assert_same(g, w)
    complex_warnings = [w for w in caught
                        if issubclass(w.category, np.exceptions.ComplexWarning)]
    # two real casts in the trace, each warned once (NumPy warns per call); bool/complex: none
    assert len(complex_warnings) == 2, [str(w.message) for w in caught]
    assert all(w.filename == __file__ and "discards the imaginary part" in str(w.message)
               for w in complex_warnings)
    assert {w.lineno for w in complex_warnings} == {complex_casts.__code__.co_firstlineno + 1}


def floating_point_errors(x, y, i):
    return x / y, np.log(x - x - 1.0), x * np.float64(1e308) * np.float64(10.0), i * i, i // 0


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("zero_d", [False, True])
def test_compiled_code_emits_no_numpy_runtime_warnings(target, zero_d):
    x, y = np.array([1.0, 0.0, -1.0]), np.array([0.0, 0.0, 0.0])
    i = np.array([2**62, 3], np.int64)
    if zero_d:
        x, y, i = x[0], y[0], i[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        want = floating_point_errors(x, y, i)
    assert any(issubclass(w.category, RuntimeWarning) for w in caught)  # NumPy does warn
    staged = autostage.convert(floating_point_errors, target=target)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = staged(x, y, i)
        got = staged(x, y, i)
    assert [w for w in caught if issubclass(w.category, RuntimeWarning)] == []
    for g, w in zip(got, want, strict=True):
        assert_same(g, w)


def max_of_columns(x):
    return np.max(x, axis=0), np.min(x, axis=0), np.max(x), np.min(x)


def max_in_a_loop(x):
    m, j = np.max(x, axis=0), 0
    while np.min(x) < 20 and j < 2:
        m, j = np.max(x, axis=0) + 0.0, j + 1
    return m


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_and_min_of_signed_zeros_give_numpys_sign(target, dtype):
    """NumPy's maximum.reduce keeps the last of equal values: max([0.0, -0.0]) is -0.0."""
    staged, loop = (autostage.convert(f, target=target) for f in (max_of_columns, max_in_a_loop))
    for rows in ([[0.0], [-0.0], [-0.0]], [[-0.0, 0.0], [0.0, -0.0]], [[0.0, -1.0], [-0.0, -0.0]]):
        x = np.array(rows, dtype)
        for got, want in zip(staged(x), max_of_columns(x), strict=True):
            assert_same(got, want)
        assert_same(loop(x), max_in_a_loop(x))


def _bool_pairs_in_loop(m, k, op):
    out = []
    for i in range(m.shape[0]):
        out.append(op(m[i], k[i]))
    return out


def _bool_rows_in_loop(g, op):
    out = []
    for i in range(1, g.shape[0] - 1):
        out.append(op(g[i - 1], g[i + 1]))
    return out


@pytest.mark.parametrize("op", [operator.add, operator.mul, np.maximum, np.minimum,
                                operator.or_, operator.xor, np.logical_xor, operator.pow])
def test_bool_arithmetic_in_staged_loops_is_numpys(op):
    # NumPy's bool + and * are logical or / and (True + True is True); Numba's operators on
    # bools gave ints: [T, T] + [T, T] summed to 4, `(a > 0) + (b > 0) == 2` was true.
    m, k = np.array([True, True, False, False]), np.array([True, False, True, False])
    g = np.array([[True, False], [True, True], [True, True], [False, False]])
    for fn, args in ((_bool_pairs_in_loop, (m, k)), (_bool_rows_in_loop, (g,))):
        got = autostage.convert(fn, target="cpu")(*args, op)
        want = fn(*args, op)
        assert [(np.asarray(v).dtype, np.asarray(v).tolist()) for v in got] == \
            [(np.asarray(v).dtype, np.asarray(v).tolist()) for v in want], fn.__name__


def comparisons(x, y):
    return (x == y, x != y, x < y, x <= y, x > y, x >= y,
            np.equal(x, y), np.not_equal(x, y), np.less(x, y), np.less_equal(x, y),
            np.greater(x, y), np.greater_equal(x, y))


def comparisons_of_elements(x, y):
    out = np.zeros((6, x.shape[0]), dtype=np.bool_)
    for i in range(x.shape[0]):
        a, b = x[i], y[i]
        out[0, i], out[1, i], out[2, i] = a == b, a != b, np.less(a, b)
        out[3, i], out[4, i], out[5, i] = a <= b, np.greater(a, b), a >= b
    return out


def mixed_sign_arithmetic(x, y):
    return np.maximum(x, y), np.minimum(y, x), np.where(x > y, x, y), x + y


UNSIGNED = np.array([0, 1, 2**63 - 1, 2**63, 2**64 - 1], np.uint64)
SIGNED = np.array([-2**63, -1, 0, 2**63 - 1], np.int64)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("signed", [np.int64, np.int32])
def test_uint64_compares_with_signed_integers_exactly(target, signed):
    """NumPy 2 compares uint64 with int64 exactly (its qQ loops; int32 resolves to them too):
    uint64(2**63) == int64(2**63 - 1) is False. Numba's operators compared through float64."""
    info = np.iinfo(signed)
    s = np.clip(SIGNED, info.min, info.max).astype(signed)
    u, s = np.repeat(UNSIGNED, len(s)), np.tile(s, len(UNSIGNED))
    for fn in (comparisons, comparisons_of_elements, mixed_sign_arithmetic):
        staged = autostage.convert(fn, target=target)
        for x, y in ((u, s), (s, u)):
            want = fn(x, y)
            for _ in range(2):
                for got, wanted in zip(staged(x, y), want, strict=True):
                    assert_same(got, wanted)
    staged = autostage.convert(comparisons, target=target)
    for a in UNSIGNED:  # NumPy scalars, 0-d in the trace
        for b in SIGNED:
            for x, y in ((a, b), (b, a)):
                for got, wanted in zip(staged(x, y), comparisons(x, y), strict=True):
                    assert type(got) is type(wanted) and got == wanted, (x, y)


def _sum_of_powers(x, p):
    return np.sum(x ** p)


def _sum_of_np_powers(x, p):
    return np.sum(np.power(x, p))


@pytest.mark.parametrize("fn", [_sum_of_powers, _sum_of_np_powers])
@pytest.mark.parametrize("p", [2.0, 0.5, -1.0, 1.0, 0.0, 1.7])
def test_powers_with_a_run_time_exponent_keep_pows_gradient(fn, p):
    """NumPy's shortcuts chosen at run time (``numpy_power``) must not change the gradient:
    through their chain of selections the exponent got none at 0.5, 2, ... and x = 0 gave NaN
    (the square root's slope in a branch not taken)."""
    x = np.array([0.0, 0.5, 2.0, 3.0])
    gx, gp = autostage.grad(fn, argnums=(0, 1))(x, np.array(p))
    with np.errstate(divide="ignore", invalid="ignore"):
        want_x = np.where(p == 0, 0.0, p * x ** (p - 1))
        want_p = np.sum(np.where(x == 0, 0.0, x ** p * np.log(np.where(x == 0, 1.0, x))))
    np.testing.assert_allclose(gx, want_x, rtol=1e-12)
    np.testing.assert_allclose(gp, want_p, rtol=1e-12)


CAST_SPECIALS = [-0.0, 0.5, -0.5, -1.0, -2.0, -3.7, np.nan, np.inf, -np.inf, 2.0**31, -2.0**31 - 1,
                 2.0**32, 2.0**32 + 5, 2.0**53, 2.0**63, -2.0**63, 2.0**64, 1e20, -1e20, -5e18,
                 255.5, 256.0, -129.0, 65536.0, -3e9, 1.8e19]
INTEGERS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def float_to_integer_casts(x, b):
    """Each way a float becomes an integer: astype, element and slice stores, ``a[i] -= b[i]``
    of a uint64 ``a`` (a float64 result stored back), ``np.uint64(v)``. (An array cast to uint32
    is refused for NaN/out-of-range values: NumPy's own SIMD loop for it gives other results
    than its scalar one; elements are cast by the scalar rule.)"""
    casts = tuple(x.astype(getattr(np, name)) for name in INTEGERS if name != "uint32")
    a = np.zeros(x.shape[0], np.uint64)
    c = np.zeros(x.shape[0], np.uint32)
    d = np.zeros(x.shape[0], np.uint64)
    d[:] = x
    scalars = []
    for i in range(x.shape[0]):
        a[i] = x[i]
        c[i] = x[i]
        scalars.append(np.uint64(x[i]))
    e = np.zeros(x.shape[0], np.uint64) + np.uint64(7)
    for i in range(x.shape[0]):
        e[i] -= b[i]
    return casts + (a, c, d, e, scalars)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_to_integer_casts_give_numpys_results_for_nan_and_out_of_range(target, dtype):
    """NumPy's casts are x86's truncating conversions: -2.0 is 2**64 - 2 as a uint64 (NaN 2**63,
    1e20 0) and 2**32 - 2 as a uint32; compiled code gave 2**64 - 1 and 2**32 - 1 (LLVM's
    fptoui with AVX-512)."""
    with np.errstate(over="ignore"):
        x = np.array(CAST_SPECIALS, dtype)
    b = np.arange(x.shape[0]) * 3
    staged = autostage.convert(float_to_integer_casts, target=target)
    want = expected(float_to_integer_casts, x, b)
    for _ in range(2):
        got = staged(x, b)
        for g, w in zip(got[:-1], want[:-1], strict=True):
            assert_same(g, w)
        assert [type(v) for v in got[-1]] == [type(v) for v in want[-1]]
        assert [int(v) for v in got[-1]] == [int(v) for v in want[-1]]


def to_uint32(x):
    return x.astype(np.uint32)


def into_uint32(x):
    c = np.zeros(x.shape[0], np.uint32)
    c[:] = x
    return c


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [to_uint32, into_uint32])
def test_float_arrays_cast_to_uint32_refuse_what_numpys_blocks_decide(target, fn):
    """NumPy's contiguous float -> uint32 loop converts NaN and values outside [-2**31, 2**32)
    in blocks of four to other values than its scalar loop (the tail, strided arrays): where an
    array holds one, the cast raises; in range it is NumPy's value."""
    staged = autostage.convert(fn, target=target)
    good = np.array([1.0, 2.5, -2.0, 3e9, -2.0 ** 31, 2.0 ** 32 - 1])
    for _ in range(2):
        np.testing.assert_array_equal(staged(good), fn(good))
    for bad in (np.array([np.nan, 1.0]), np.array([2.0 ** 32, 1.0]), np.array([-3e9])):
        with pytest.raises(ValueError, match=r"cast to uint32 at .*test_cpu_exact_numpy.py"):
            staged(bad)


def bool_powers(x, z):
    return x ** 2, x ** 3, x ** 0, x ** 0.5, np.power(x, 2), z ** 2, x[0] ** 2, x ** True


def bool_power_of_run_time_int(x, e):
    return x ** int(e[0])


@pytest.mark.parametrize("target", TARGETS)
def test_bool_array_squared_is_numpys_int8_square(target):
    """``bool_array ** 2`` is NumPy's np.square (int8; it was the power loop's int64); other
    exponents, np.power and NumPy scalars keep the power loop; an exponent known only at run
    time that is 2 is a clear error (the dtype would depend on it)."""
    x, z = np.array([True, False, True]), np.array(False)
    staged = autostage.convert(bool_powers, target=target)
    for _ in range(2):
        for got, want in zip(staged(x, z), bool_powers(x, z), strict=True):
            assert type(got) is type(want)
            assert_same(got, want)
    staged = autostage.convert(bool_power_of_run_time_int, target=target)
    for _ in range(2):
        assert_same(staged(x, np.array([3])), bool_power_of_run_time_int(x, np.array([3])))
        with pytest.raises(TypeError, match=r"bool array \*\* n.*test_cpu_exact_numpy.py:\d+"):
            staged(x, np.array([2]))


def signbits(x):
    return np.signbit(x), np.signbit(x[0]), np.signbit(x[1])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                   np.int64, np.uint64])
def test_signbit_of_bools_and_integers_is_numpys(target, dtype):
    """np.signbit of bools and integers is ``x < 0`` (NumPy converts them to a float type: int8
    and uint8 to float16, which the CPU backend has no lowering for: it raised a bare
    ``NotImplementedError: float16``)."""
    x = np.array([1, -1, 0, 5]).astype(dtype)
    staged = autostage.convert(signbits, target=target)
    for _ in range(2):
        for got, want in zip(staged(x), signbits(x), strict=True):
            assert type(got) is type(want)
            assert_same(got, want)
