"""NumPy's errors where a scalar becomes an integer as a Python number would
(``runtime/integer_conversions.py``), and the exact comparisons of Python ints: staged values are
int64 or float64, whose casts would wrap silently. Each case runs plain, compiled and
interpreted; all three must give the same value or the same exception and message."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autostage


def _outcome(fn, args):
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            result = fn(*args)
    except Exception as e:  # noqa: BLE001 - compared below
        return type(e), str(e)
    return type(result), repr(result)


def _same_everywhere(fn, *args):
    expected = _outcome(fn, args)
    for target in ("cpu", "interpreter"):
        assert _outcome(autostage.convert(fn, target=target), args) == expected, target
    return expected


def add_int(w, x):
    return w + int(x[0])


def maximum_int(w, x):
    return np.maximum(w, int(x[0]))


def first_below_int(w, x):
    return w[0] < int(x[0])


def all_equal_int(w, x):
    return w == int(x[0])


@pytest.mark.parametrize("fn", [add_int, maximum_int, first_below_int, all_equal_int])
@pytest.mark.parametrize("dtype, value", [
    (np.int32, 3_000_000_000), (np.int32, -3_000_000_000), (np.int32, 5), (np.int32, -2**31),
    (np.uint8, -1), (np.uint8, 256), (np.uint8, 255), (np.int8, -129)])
def test_a_python_int_known_at_run_time_meets_a_narrower_integer_array(fn, dtype, value):
    outcome = _same_everywhere(fn, np.zeros(2, dtype), np.array([value]))
    if fn in (add_int, maximum_int) and not np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
        assert outcome == (OverflowError, f"Python integer {value} out of bounds for "
                                          f"{np.dtype(dtype)}")


def test_a_loop_index_added_to_int32_values_stays_int32():
    def f(w, n):
        acc = w[0]
        for i in range(n):
            acc = acc + i
        return acc

    assert _same_everywhere(f, np.array([2**31 - 1000], np.int32), np.int64(3)) == (
        np.int32, "np.int32(2147482651)")


def put(w, v):
    w[1] = v
    return w


def put_slice(w, v):
    w[0:2] = v
    return w


SCALARS = [np.float64(np.inf), np.float64(np.nan), np.float64(3e9), np.float64(300.7),
           np.float64(-1.5), np.float64(1e30), np.float64(1e19), np.float32(np.inf),
           np.float32(-3.5), np.int64(3_000_000_000), np.int64(300), np.int64(-1),
           np.int32(-70000)]


def _defined(dtype: type, value: np.generic) -> bool:
    """Whether NumPy defines the result: a NumPy float scalar goes into an unsigned array by a C
    cast, which leaves NaN, inf and values outside the dtype undefined (README: "Not
    guaranteed")."""
    return not (np.dtype(dtype).kind == "u" and isinstance(value, np.floating) and not (
        0 <= value < np.iinfo(dtype).max))


@pytest.mark.parametrize("fn", [put, put_slice])
@pytest.mark.parametrize("dtype, value", [
    (dtype, value) for dtype in (np.int32, np.int64, np.uint8, np.int8, np.uint64)
    for value in SCALARS if _defined(dtype, value)])
def test_a_scalar_written_into_an_integer_array(fn, dtype, value):
    _same_everywhere(fn, np.zeros(3, dtype), value)


def put_python_number(w, x):
    w[1] = float(x[0]) if x.dtype.kind == "f" else int(x[0])
    return w


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.uint64])
@pytest.mark.parametrize("value", [np.inf, np.nan, 3e9, -1.5, 1e30, 300.5, 3_000_000_000, -1])
def test_a_python_number_written_into_an_integer_array(dtype, value):
    _same_everywhere(put_python_number, np.zeros(3, dtype), np.array([value]))


def test_messages_are_numpys():
    assert _same_everywhere(put, np.zeros(3, np.int32), np.float64(np.nan)) == (
        ValueError, "cannot convert float NaN to integer")
    assert _same_everywhere(put, np.zeros(3, np.int32), np.float64(np.inf)) == (
        OverflowError, "cannot convert float infinity to integer")
    assert _same_everywhere(put, np.zeros(3, np.int8), np.float64(300.7)) == (
        OverflowError, "Python integer 300 out of bounds for int8")
    assert _same_everywhere(put, np.zeros(3, np.int32), np.float64(1e30)) == (
        OverflowError, "Python int too large to convert to C long")


def int32_of_int(x):
    return np.int32(int(x[0]))


def int32_of_float(x):
    return np.int32(float(x[0]))


def uint8_of_float(x):
    return np.uint8(float(x[0]))


def int32_of_element(x):
    return np.int32(x[0])  # a NumPy scalar: NumPy's cast, which wraps


@pytest.mark.parametrize("fn, values", [
    (int32_of_int, [3_000_000_000, -5, 7]),
    (int32_of_float, [3e9, np.nan, np.inf, -1.5, 2.5e9]),
    (uint8_of_float, [300.5, -1.5, 7.9]),
    (int32_of_element, [3_000_000_000, 7])])
def test_scalar_types_of_python_numbers(fn, values):
    for value in values:
        _same_everywhere(fn, np.array([value]))


def test_the_scalar_type_of_an_array_of_its_dtype_is_the_array_itself():
    def same(x):
        return np.float64(x) is x

    def writes_through(x):
        y = np.float64(x)
        y[0] = 5.0  # into the caller's array
        return y

    x = np.arange(3.0)
    assert autostage.convert(same)(x) is True
    assert autostage.convert(writes_through)(x) is x
    assert x[0] == 5.0
    assert _same_everywhere(writes_through, np.arange(3.0)) == (np.ndarray, repr(np.array(
        [5.0, 1.0, 2.0])))
    assert autostage.convert(lambda b: np.bool_(b) is b)(np.ones(2, bool)) is True


def clip_to_int(w, x):
    return np.clip(w, 0, int(x[0]))


def clip_from_int(w, x):
    return np.clip(w, int(x[0]), int(x[0]) + 5)


def full_of_int(w, x):
    return np.full(3, int(x[0]), dtype=np.int32)


def full_like_of_int(w, x):
    return np.full_like(w, int(x[0]))


def array_of_ints(w, x):
    return np.array([int(x[0]), 1], dtype=np.int32)


@pytest.mark.parametrize("fn", [clip_to_int, clip_from_int, full_of_int, full_like_of_int,
                                array_of_ints])
@pytest.mark.parametrize("value", [2**31, 5, -2**35, 2**40])
def test_python_ints_made_elements_or_bounds(fn, value):
    """NumPy drops a clip bound past the dtype's range (raises for one past the other end)
    and raises for an int made an element of an array it does not fit."""
    _same_everywhere(fn, np.zeros(3, np.int32), np.array([value]))


def put_at_mask(w, y):
    w[w == 0] = y[0]
    return w


def put_at_indices(w, y):
    w[np.array([0, 2])] = y[0]
    return w


@pytest.mark.parametrize("w, x", [
    (np.zeros(3, np.int8), np.array([255], np.uint8)),
    (np.zeros(3, np.int64), np.array([2**64 - 1], np.uint64)),
    (np.zeros(3, np.int32), np.array([2**40], np.uint64)),
    (np.zeros(3, np.int8), np.array([100], np.uint8)),
    (np.zeros(3, np.uint8), np.array([-1]))])
def test_numpy_integers_written_into_signed_arrays(w, x):
    for fn in (put, put_slice):
        _same_everywhere(fn, w, x[0])


@pytest.mark.parametrize("fn", [put_at_mask, put_at_indices])
def test_numpy_scalars_written_at_masks_and_index_arrays_are_cast(fn):
    _same_everywhere(fn, np.array([0, 1, 2], np.int8), np.array([300]))
    _same_everywhere(fn, np.array([0, 1, 2], np.int8), np.array([-2.7]))  # (a C cast, defined)
