"""Tuple-valued state of staged ifs and loops (early ``return a, b``), loops over a tensor list
that is still empty, ``zip(..., strict=True)``, ``np.array`` of a tensor list, exceptions built
from staged values, writes into arguments carried through staged control flow, and where a
Python side effect is reported (runtime/staging/merge.py, loops.py, iteration.py,
numpy_lists.py, raises.py, side_effects.py)."""

import inspect
import os
import sys
import warnings

import numpy as np
import pytest
from autostage.runtime import tracing
from autostage.runtime.staging import PythonSideEffectError
from autostage.runtime.tensor import StagingTypeError
from test_staging_support import run

import autostage


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    offset = next(i for i, line in enumerate(lines) if text in line)
    return f"{os.path.basename(inspect.getsourcefile(fn))}:{start + offset}"


def outcome(fn, *args):
    try:
        result = fn(*args)
    except Exception as e:  # noqa: BLE001 - the outcome compared is the exception
        return type(e), str(e)
    return result


def staged(fn):
    return autostage.convert(fn, target="interpreter")


# --- early return of a tuple -----------------------------------------------------------------

def sqrt_or_abs(x):
    if np.all(x >= 0):
        return np.sqrt(x), True
    return np.abs(x), False


def first_above(x, t):
    for i in range(x.shape[0]):
        if x[i] > t:
            return i, x[i]
    return -1, x.dtype.type(0)


def nested_tuple_return(x):
    for i in range(x.shape[0]):
        if x[i] < 0:
            return (i, (x[i], x[i] * 2))
    return (-1, (x[0], x[0]))


@pytest.mark.parametrize("x", [np.array([4.0, 9.0]), np.array([-4.0, 9.0])])
def test_if_returns_a_tuple_on_one_path(x):
    result, flag = run(sqrt_or_abs, x)
    expected, expected_flag = sqrt_or_abs(x)
    np.testing.assert_array_equal(result, expected)
    assert flag == expected_flag and isinstance(flag, np.bool_)


@pytest.mark.parametrize("x, t", [(np.array([0.5, 0.9, 0.95]), 0.8), (np.array([0.1]), 0.8)])
def test_loop_returns_a_tuple_early(x, t):
    i, value = run(first_above, x, np.float64(t))
    expected = first_above(x, t)
    assert (i, value) == expected and value.dtype == np.float64


@pytest.mark.parametrize("x", [np.array([1.0, -2.0, 3.0]), np.array([1.0, 2.0])])
def test_loop_returns_a_nested_tuple_early(x):
    i, (a, b) = staged(nested_tuple_return)(x)
    assert (i, (a, b)) == nested_tuple_return(x)


def test_loop_variable_that_changes_its_tuple_structure_is_an_error():
    def f(x):
        pair = (x[0], x[0])
        for v in x:
            pair = (v, v, v)
        return pair

    with pytest.raises(StagingTypeError, match="'pair'.*structure"):
        run(f, np.array([1.0, 2.0]))


# --- a loop over a tensor list the enclosing loop fills --------------------------------------

def gram_schmidt(vectors):
    basis = []
    for i in range(vectors.shape[0]):
        v = vectors[i]
        for b in basis:
            v = v - (v @ b) * b
        n = np.sqrt(np.sum(v * v))
        if n > 1e-10:
            basis.append(v / n)
    return np.stack(basis)


def test_for_over_a_list_appended_to_by_the_enclosing_loop():
    vectors = np.array([[3.0, 0.0, 4.0], [1.0, 1.0, 0.0], [6.0, 0.0, 8.0]])
    np.testing.assert_array_equal(run(gram_schmidt, vectors), gram_schmidt(vectors))


def test_for_over_a_list_that_is_never_appended_to_runs_zero_times():
    def f(x):
        empty = []
        total = x[0] * 0
        for v in x:
            for e in empty:
                total = total + e
            total = total + v
        return total

    assert run(f, np.array([1.0, 2.0])) == 3.0


# --- zip(..., strict=True) -------------------------------------------------------------------

def zip3(a, b, c):
    total = 0.0
    for x, y, z in zip(a, b, c, strict=True):
        print(x)
        total += x * y * z
    return total


def zip_break(a, b):
    total = 0.0
    for x, y in zip(a, b, strict=True):
        if x > 5:
            break
        total += x * y
    return total


@pytest.mark.parametrize("lengths", [(3, 3, 3), (2, 3, 3), (3, 2, 3), (3, 3, 2), (2, 2, 3),
                                     (4, 3, 3), (0, 1, 1)])
def test_strict_zip_raises_python_s_error_after_the_shortest(lengths, capsys):
    args = [np.arange(n, dtype=float) + 1 for n in lengths]
    expected = outcome(zip3, *args)
    plain_out = capsys.readouterr().out
    assert outcome(staged(zip3), *args) == expected
    assert capsys.readouterr().out == plain_out  # the items before the error are printed


@pytest.mark.parametrize("a, b", [([1.0, 2.0, 3.0], [1.0, 1.0]), ([1.0, 9.0, 3.0], [1.0, 1.0])])
def test_strict_zip_after_break_raises_only_when_exhausted(a, b):
    a, b = np.array(a), np.array(b)
    assert outcome(staged(zip_break), a, b) == outcome(zip_break, a, b)


# --- np.array / np.asarray of a tensor list --------------------------------------------------

def positives(x):
    vals = []
    for v in x:
        if v > 0:
            vals.append(v)
    return np.array(vals)


def positives_f32(x):
    vals = []
    for v in x:
        if v > 0:
            vals.append(v * 2)
    return np.asarray(vals, dtype=np.float32)


@pytest.mark.parametrize("fn, x", [
    (positives, np.array([1, -2, 3])), (positives, np.array([1.5, -2.0])),
    (positives, np.array([-1.5])), (positives_f32, np.array([1, -2, 3])),
    (positives_f32, np.array([-1, -2])),
])
def test_np_array_of_a_tensor_list_stacks_it(fn, x):
    result, expected = run(fn, x), fn(x)
    assert result.dtype == expected.dtype and result.shape == expected.shape
    np.testing.assert_array_equal(result, expected)


def test_np_array_of_an_empty_list_of_ints_raises_instead_of_a_wrong_dtype():
    # NumPy gives a float64 (0,) array: the staged result would be int64, so it raises.
    assert run(positives, np.array([1, 2])).tolist() == [1, 2]
    with pytest.raises(ValueError, match=r"empty staged list.*float64.*dtype="):
        run(positives, np.array([-1, -2]))


def test_np_array_of_a_list_never_appended_to_is_an_empty_float_array():
    def f(x):
        vals = []
        for v in x:
            if v > 100:
                print(v)
        return np.array(vals)

    result = run(f, np.array([1, 2]))
    assert result.dtype == np.float64 and result.shape == (0,)


# --- exceptions in staged branches -----------------------------------------------------------

def test_exception_built_from_a_staged_value_is_a_staging_error():
    def f(x, window):
        if window > x.shape[0]:
            raise ValueError("window larger than input", window)
        return x[:window]

    with pytest.raises(StagingTypeError, match="holds a staged value itself") as info:
        run(f, np.array([1.0, 2.0]), np.int64(3))
    assert line_of(f, "raise ValueError") in str(info.value)


# --- writes into arguments carried through staged control flow -------------------------------

def clamp_in_place(x, v):
    for i in range(x.shape[0]):
        if x[i] < v:
            x[i] = v
    return np.sum(x)


def write_after_branch(x, flag):
    y = x * 2
    if flag > 0:
        y = x
    y[0] = 5.0
    return y


def scalar_countdown(n):
    total = n - n
    while n > 0:
        total += n % 10
        n //= 10
    return total


def test_a_write_into_an_argument_carried_by_control_flow_is_written_back():
    x, expected = np.array([1.0, 5.0, -2.0]), np.array([1.0, 5.0, -2.0])
    assert staged(clamp_in_place)(x, np.float64(0.0)) == clamp_in_place(expected, 0.0) == 6.0
    assert x.tolist() == expected.tolist() == [1.0, 5.0, 0.0]


def test_a_write_into_what_is_the_argument_on_one_path_only_is_a_clear_error():
    x = np.array([1.0, 2.0])
    with pytest.raises(tracing.StagingError, match="the argument `x` on some paths") as info:
        staged(write_after_branch)(x, np.float64(1.0))
    assert line_of(write_after_branch, "y[0] = 5.0") in str(info.value)
    assert x.tolist() == [1.0, 2.0]


def test_in_place_operator_on_a_scalar_argument_carried_by_a_loop_rebinds_it():
    n = np.int64(4321)
    assert staged(scalar_countdown)(n) == scalar_countdown(n) == 10


def test_copied_argument_may_be_written_in_a_loop():
    def f(x, v):
        x = x.copy()
        for i in range(x.shape[0]):
            if x[i] < v:
                x[i] = v
        return x

    x = np.array([1.0, -2.0])
    np.testing.assert_array_equal(staged(f)(x, np.float64(0.0)), [1.0, 0.0])
    np.testing.assert_array_equal(x, [1.0, -2.0])


# --- Python side effects name the line of the change -----------------------------------------

_SEEN: list = []


def appends_in_branch(x):
    total = x[0] * 0
    for v in x:
        if v > 0:
            _SEEN.append(v)
        total = total + v
    return total


def test_side_effect_names_the_line_of_the_mutating_call():
    try:
        with pytest.raises(PythonSideEffectError, match="'_SEEN'") as info:
            run(appends_in_branch, np.array([1.0, -2.0]))
    finally:
        _SEEN.clear()
    assert line_of(appends_in_branch, "_SEEN.append(v)") in str(info.value)
    assert line_of(appends_in_branch, "if v > 0") in str(info.value)


def test_a_profiler_running_is_left_alone():
    """Under cProfile (whose hook is not a Python function to chain to), a staged loop whose
    Python state is watched runs as without it, and the profiler keeps profiling; an error
    then names the staged statement."""
    import cProfile
    import pstats

    def collect(x):
        seen = []
        total = x[0] * 0
        for v in x:
            if v > 0:
                seen.append(1)
            total = total + v
        return total, len(seen)

    profiler = cProfile.Profile()
    x = np.array([1.0, -2.0, 3.0])
    profiler.enable()
    try:
        got = run(collect, x)
        with pytest.raises(PythonSideEffectError, match="'_SEEN'") as info:
            run(appends_in_branch, np.array([1.0, -2.0]))
        still = sys.getprofile()
    finally:
        profiler.disable()
        _SEEN.clear()
    assert still is profiler
    assert got == collect(x)
    assert line_of(appends_in_branch, "if v > 0") in str(info.value)
    assert any(name == "collect" for _, _, name in pstats.Stats(profiler).stats)


def test_scalar_arithmetic_wraps_like_numpy_scalars_without_warnings():
    def product(values):
        p = values[0]
        for v in values[1:]:
            p *= v
        return p

    x = np.array([100, 2], dtype=np.int8)
    with warnings.catch_warnings(record=True) as plain:
        warnings.simplefilter("always")
        expected = np.int8(100) * np.int8(2)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        result = run(product, x)
    assert result == expected == np.int8(-56)
    # staged code computes with floating-point errors ignored, as compiled code (fp_state.py)
    assert [str(w.message) for w in plain] == ["overflow encountered in scalar multiply"]
    assert got == []


def _prefixes(x):
    out = []
    for i in range(x.shape[0]):
        out.append(x[: i + 1].copy())  # (views of x: refused, Python's items share x)
    return out


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_returned_list_of_rows_of_different_shapes_says_why_naming_its_function(target):
    """Python returns the rows as they are; staged code keeps a list as one array's rows: a
    clear error naming the list's function and line (it was np.stack's own message, located
    at the caller's line)."""
    import autostage

    with pytest.raises(ValueError, match="returned holds items of different shapes") as info:
        autostage.convert(_prefixes, target=target)(np.arange(3))
    assert "(in _prefixes)" in " ".join(getattr(info.value, "__notes__", []))
    assert [len(r) for r in autostage.convert(_prefixes, target=target)(np.arange(1))] == [1]
