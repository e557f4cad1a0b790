"""``@numba.njit`` functions called from converted code: with staged values their Python source
(``py_func``) is staged as any helper's, with Python values the compiled function runs (as in
Python); ``numba.prange`` is a ``range``. Each program runs as Python and converted, on both
targets, and must give the same values."""

import numba
import numpy as np
import pytest

import autostage


@numba.njit
def _total(x):
    return x.sum()


@numba.njit("f8(f8[:])")
def _total_typed(x):
    return x.sum()


@numba.njit
def _into(out, v):
    out[0] = v


def calls_njit(x):
    return _total(x) + _total_typed(x)  # (the signature's types are the staged ones)


def calls_njit_in_a_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 1.0:
            s += _total(x[i:])
    return s


def calls_njit_on_python_values(x, n):
    return x * _total_typed(np.arange(float(n)))  # a Python int: the compiled function runs


def parallel_loop(x, out):
    for i in numba.prange(x.shape[0]):
        out[i] = x[i] * 3.0
    return out


@pytest.mark.parametrize("target", ["cpu", "interpreter"])
@pytest.mark.parametrize("fn,make", [
    (calls_njit, lambda: (np.arange(5.0),)),
    (calls_njit_in_a_loop, lambda: (np.arange(5.0),)),
    (calls_njit_on_python_values, lambda: (np.arange(3.0), 4)),
    (parallel_loop, lambda: (np.arange(5.0), np.zeros(5))),
])
def test_njit_functions_and_prange_give_pythons_values(fn, make, target):
    staged = autostage.convert(fn, target=target)
    for _ in range(2):
        plain_args, staged_args = make(), make()
        np.testing.assert_array_equal(staged(*staged_args), fn(*plain_args), strict=True)
        for p, s in zip(plain_args, staged_args, strict=True):
            np.testing.assert_array_equal(s, p)


def writes_through_njit(x, out):
    _into(out, x[0])
    return out


@numba.njit("i4(i8[:])")
def _wraps_to_int32(state):
    state[0] = state[0] * 3
    return state[0]


@numba.njit("i4(f4[::1], f4)")
def _float32_only(prio, p):
    return 1 if p < prio[0] else 0


@numba.njit("void(u1[::1], i4)")
def _mark_visited(table, candidate):  # (pynndescent's: a void signature)
    table[candidate >> 3] |= 1 << (candidate & 7)


def marks(table, c):
    _mark_visited(table, np.int32(c[0]))
    return table


def typed_result(state):
    return _wraps_to_int32(state) % 20  # Numba casts the int64 result to int32 (it wraps)


def typed_arguments(prio, x):
    return _float32_only(prio, x[0])  # Numba would convert the float64 x[0] to float32


@pytest.mark.parametrize("target", ["cpu", "interpreter"])
@pytest.mark.parametrize("fn,make", [
    (writes_through_njit, lambda: (np.arange(3.0) + 1, np.zeros(3))),  # the caller's out changes
    (typed_result, lambda: (np.array([1_500_000_000]),)),
    (marks, lambda: (np.zeros(4, np.uint8), np.array([10]))),
])
def test_njit_helpers_writing_and_typed_are_pythons(fn, make, target):
    staged = autostage.convert(fn, target=target)
    for _ in range(2):
        plain_args, staged_args = make(), make()
        expected, got = fn(*plain_args), staged(*staged_args)
        assert type(got) is type(expected) and np.array_equal(got, expected), (got, expected)
        for p, s in zip(plain_args, staged_args, strict=True):
            np.testing.assert_array_equal(s, p)


def test_an_njit_function_given_other_types_than_its_signature_is_a_clear_error():
    with pytest.raises(autostage.StagingError, match=r"test_numba_functions.py:\d+: "
                       r"`_float32_only` is an @numba.njit function with an explicit signature, "
                       r"called with staged values of other types than it declares"):
        autostage.convert(typed_arguments)(np.ones(1, np.float32), np.array([0.1]))
