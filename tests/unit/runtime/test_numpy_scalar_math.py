"""Where NumPy's scalar path differs from its array loop, staged code gives the plain program's
value: np.fmax/np.fmin of equal zeros on 0-d operands (the installed NumPy's tie rule), Python's
ordering of complex NumPy scalars with a NaN part (NumPy's scalar math: the parts
lexicographically) against the ufunc's rule on arrays and 0-d arrays, and complex abs: the loop's
SIMD form for np.abs and arrays, libm's hypot for Python's abs of a NumPy scalar. Each case runs
on both targets, twice, against plain NumPy, bit for bit (signs of zero included)."""

import warnings

import numpy as np
import pytest

import autostage

TARGETS = ["interpreter", "cpu"]
ZEROS = [0.0, -0.0, np.nan, 1.0, -np.inf]
PARTS = [0.0, -0.0, 1.0, -1.5, 3.0, 1e-310, 5e-324, 1e308, -1.7e308, 1e-20, np.inf, -np.inf,
         np.nan]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(tmp_path / "cache"))


def _bits(value):
    """Each leaf's type and bytes: equal exactly when values, dtypes, types and zero signs are."""
    if isinstance(value, (list, tuple)):
        return [_bits(v) for v in value]
    return type(value).__name__, np.asarray(value).dtype.str, np.asarray(value).tobytes()


def check(fn, target, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wanted = _bits(fn(*args))
        converted = autostage.convert(fn, target=target)
        for _ in range(2):
            assert _bits(converted(*args)) == wanted


def min_max_loop(x, y):
    a, b, c, d, e, f = [], [], [], [], [], []
    for i in range(x.shape[0]):
        a.append(np.fmax(x[i], y[i]))
        b.append(np.fmin(x[i], y[i]))
        c.append(np.maximum(x[i], y[i]))
        d.append(np.minimum(x[i], y[i]))
        e.append(max(x[i], y[i]))
        f.append(min(x[i], y[i]))
    return a, b, c, d, e, f


def fmax_converted_loop(k, y):
    a, b = [], []
    for i in range(k.shape[0]):
        a.append(np.fmax(k[i], y[i]))
        b.append(np.fmin(y[i], k[i]))
    return a, b


def complex_orderings(x, y):
    a, b, c, d = [], [], [], []
    for i in range(x.shape[0]):
        a.append(x[i] < y[i])
        b.append(x[i] <= y[i])
        c.append(x[i] > y[i])
        d.append(x[i] >= y[i])
    return a, b, c, d


def complex_ordering_arrays(x, y):
    return x < y, x >= y, np.asarray(x[0]) > y[0], np.less(x[0], y[0])


def complex_beside_real(z, r):
    a, b, c, d = [], [], [], []
    for i in range(z.shape[0]):
        a.append(z[i] < r[i])
        b.append(r[i] > z[i])
        c.append(z[i] < 1.0)
        d.append(2 >= z[i])
    return a, b, c, d


def complex_abs(z):
    a, b = [], []
    for i in range(z.shape[0]):
        a.append(abs(z[i]))
        b.append(np.abs(z[i]))
    return np.abs(z), abs(z), a, b, abs(np.asarray(z[0]))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_min_max_of_numpy_scalars(target, dtype):
    x = np.array([p for p in ZEROS for _ in ZEROS], dtype)
    y = np.array([q for _ in ZEROS for q in ZEROS], dtype)
    check(min_max_loop, target, x, y)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("other", [np.int64, np.bool_])
def test_fmax_of_converted_scalars(target, dtype, other):
    check(fmax_converted_loop, target, np.zeros(3, other), np.array([-0.0, 0.0, -0.0], dtype))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_ordering_scalar_math_and_arrays(target, dtype):
    values = [complex(r, i) for r in (-1.0, 0.0, 1.0, np.nan, np.inf)
              for i in (-1.0, 0.0, 1.0, np.nan, np.inf)]
    x = np.array([a for a in values for _ in values], dtype)
    y = np.array([b for _ in values for b in values], dtype)
    check(complex_orderings, target, x, y)
    check(complex_ordering_arrays, target, x, y)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("real", [np.float32, np.float64, np.int8, np.int64, np.uint64, np.bool_])
def test_complex_beside_real_scalar(target, dtype, real):
    z = np.array([complex(0, np.nan), complex(1, np.nan), complex(np.nan, 0), 0j], dtype)
    check(complex_beside_real, target, z, np.array([1, 0, 1, 0], real))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_abs(target, dtype):
    grid = [complex(r, i) for r in PARTS for i in PARTS]
    rng = np.random.default_rng(0)
    random = (rng.standard_normal(500) + 1j * rng.standard_normal(500)) * 10.0 ** rng.integers(
        -30, 30, 500)
    check(complex_abs, target, np.concatenate([np.array(grid, dtype), random.astype(dtype)]))
    check(complex_abs, target, np.array([-1.5 + 1j], dtype))


def ufunc_products(a, b):
    return [np.multiply(a[i], b[i]) for i in range(a.shape[0])]


def operator_products(a, b):
    return [a[i] * b[i] for i in range(a.shape[0])]


def mixed_products(a, b):
    out = []
    for i in range(a.shape[0]):
        out.append(a[i] * 1.5 + 0j)  # a Python number beside a NumPy scalar: scalar math
        out.append(a[i:i + 1].reshape(()) * b[i])  # a 0-d array: the loop
    return out


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("fn", [ufunc_products, operator_products, mixed_products])
def test_complex_products_of_numpy_scalars_are_the_loops_or_scalar_maths(target, dtype, fn):
    """np.multiply of two complex NumPy scalars is NumPy's loop (each part's products fused:
    it was Numba's a * b, off in the last bit for ~40% of random values), Python's * of them
    NumPy's scalar math (unfused)."""
    rng = np.random.default_rng(7)
    a = (rng.normal(size=300) + 1j * rng.normal(size=300)).astype(dtype)
    b = (rng.normal(size=300) + 1j * rng.normal(size=300)).astype(dtype)
    check(fn, target, a, b)


def squares_of_scalars(a):
    return [np.square(a[i]) for i in range(a.shape[0])]


def squares_of_0d_arrays(a):
    return [np.square(a[i:i + 1].reshape(())) for i in range(a.shape[0])]


def squares_of_an_array(a):
    return np.square(a)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("fn", [squares_of_scalars, squares_of_0d_arrays, squares_of_an_array])
def test_complex_squares_are_numpys_loop_or_scalar_math(target, dtype, fn):
    """np.square of complex arrays and 0-d arrays is NumPy's loop (its fused product: the cpu
    target's was Numba's, an ulp off for ~30% of values), of a complex NumPy scalar NumPy's
    scalar math (the interpreter's was the loop)."""
    np.square(dtype(1 + 1j))  # (NumPy's first np.square of a scalar of a type takes its loop)
    rng = np.random.default_rng(11)
    a = (rng.normal(size=300) + 1j * rng.normal(size=300)).astype(dtype)
    check(fn, target, a)
