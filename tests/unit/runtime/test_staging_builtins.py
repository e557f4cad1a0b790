"""Tests for runtime/staging/builtins.py: ``type()`` of staged values (issue 8, item 16).

Each program runs in plain Python and staged on both targets; the results must be the same."""

import re

import numpy as np
import pytest
from autostage.runtime.tensor import StagingTypeError
from autostage.runtime.tracing import StagingError

import autostage

TARGETS = ["interpreter", "cpu"]


def branch_on_type(x):
    if type(x) is np.ndarray:
        return x + 1
    return x - 1


def type_of_scalars(x, v):
    n = x.shape[0]  # a Python int
    s = x[0]  # a NumPy scalar in Python
    total = x.sum()
    return (type(n) is int, type(s) is np.float32, type(total) is np.float32,
            type(v) is np.float64, type(v) is np.ndarray, type(x) is not np.ndarray)


def zero_d_array_argument(a):
    return type(a) is np.ndarray, type(a + 1) is np.float64


def type_of_a_list_and_constants(x, k):
    values = [x, x]
    return type(values) is list, type(k) is int, type(k).__name__, type("T", (), {}).__name__


@pytest.mark.parametrize("target", TARGETS)
def test_type_of_an_array_argument_is_ndarray(target):
    f = autostage.convert(branch_on_type, target=target)
    x = np.zeros(2)
    assert f(x).tolist() == branch_on_type(x).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("target", TARGETS)
def test_type_of_scalars_is_what_python_and_numpy_give(target):
    f = autostage.convert(type_of_scalars, target=target)
    x, v = np.ones(3, np.float32), np.float64(2.0)
    expected = type_of_scalars(x, v)
    assert expected == (True, True, True, True, False, False)
    assert tuple(bool(b) for b in f(x, v)) == expected


@pytest.mark.parametrize("target", TARGETS)
def test_type_of_a_zero_d_array_argument_is_ndarray(target):
    f = autostage.convert(zero_d_array_argument, target=target)
    a = np.array(1.0)
    assert zero_d_array_argument(a) == (True, True)
    assert tuple(bool(b) for b in f(a)) == (True, True)


@pytest.mark.parametrize("target", TARGETS)
def test_type_of_lists_constants_and_the_three_argument_form(target):
    f = autostage.convert(type_of_a_list_and_constants, target=target)
    x = np.ones(2)
    assert f(x, 3) == type_of_a_list_and_constants(x, 3) == (True, True, "int", "T")


class _Named:
    def __repr__(self):
        return f"{self.__class__.__name__}()"


def class_attributes(x):
    return (x.__class__.__name__, x.__class__ is np.ndarray, x.sum().__class__.__name__,
            x.shape[0].__class__ is int, repr(_Named()))


@pytest.mark.parametrize("target", TARGETS)
def test_the_class_attribute_of_staged_values_is_what_they_stand_for(target):
    """``x.__class__`` of a staged array was autostage's class (`'Tensor'`, not `np.ndarray`),
    silently; it is now ``type(x)``'s answer (``ag__.class_of``)."""
    f = autostage.convert(class_attributes, target=target)
    x = np.ones(3)
    expected = ("ndarray", True, "float64", True, "_Named()")
    assert class_attributes(x) == expected
    assert tuple(f(x)) == expected


def callable_of_values(x):
    largest = None
    for v in x:
        if v > 2:
            largest = v
    return callable(x), callable(x.sum()), callable(np.sum), callable(largest)


@pytest.mark.parametrize("target", TARGETS)
def test_callable_of_staged_values_and_of_a_variable_none_on_some_paths(target):
    """``callable`` of a variable None on some paths of a staged loop asked the stand-in (True,
    where Python says False whatever the run): now its StagingUnboundError."""
    from autostage.runtime.staging.errors import StagingUnboundError

    f = autostage.convert(callable_of_values, target=target)
    with pytest.raises(StagingUnboundError, match="variable 'largest' is None on some paths"):
        f(np.array([1.0, 3.0]))
    g = autostage.convert(lambda x: (callable(x), callable(x.sum()), callable(np.sum)),
                          target=target)
    assert g(np.ones(2)) == (False, False, True)


def python_max_min(x):
    n = x.shape[0]
    return (max(n, 1), min(n - 5, 0, n), max(n * 0.5, 1.0), max(n > 1, n > 5),
            min(x.shape), max([n, 2]), min((n,)))  # (numpy-100 #64: min(Z.shape))


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_max_min_of_python_numbers_of_one_kind_are_python_numbers(target):
    import autostage

    got = autostage.convert(python_max_min, target=target)(np.zeros((3, 4)))
    assert got == python_max_min(np.zeros((3, 4))) == (3, -2, 1.5, True, 3, 3, 3)
    assert [type(v) for v in got] == [int, int, float, bool, int, int, int]


def max_of_int_and_float(x):
    n = x.shape[0]
    return max(n, 1.5)


def min_of_int_and_float(x):
    return min(x.shape[0] / 2, 1)


def max_of_bool_and_int(x):
    return max(x.shape[0] > 2, 0)


def max_of_three_kinds(x):
    n = x.shape[0]
    return max(n > 5, n, n * 0.5)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, listed, example", [
    (max_of_int_and_float, "max() of a Python int and a Python float", "max(float(n), ...)"),
    (min_of_int_and_float, "min() of a Python int and a Python float", "min(float(n), ...)"),
    (max_of_bool_and_int, "max() of a Python bool and a Python int", "max(int(n), ...)"),
    (max_of_three_kinds, "max() of a Python bool and a Python int and a Python float",
     "max(float(n), ...)"),
])
def test_max_min_of_python_numbers_of_mixed_kinds_is_a_clear_error(target, fn, listed, example):
    """Python returns whichever argument wins with its own type (max(3, 1.5) is the int 3,
    max(1, 1.5) the float 1.5): a staged value has one dtype, so this is refused."""
    import inspect

    from autostage.runtime.tensor import StagingTypeError

    lines, start = inspect.getsourcelines(fn)
    line = start + next(i for i, text in enumerate(lines) if "return" in text)
    with pytest.raises(StagingTypeError) as e:
        autostage.convert(fn, target=target)(np.zeros(3))
    message = str(e.value)
    assert message.startswith(f"{listed} at {inspect.getsourcefile(fn)}:{line}: Python returns "
                              "whichever argument wins")
    assert example in message


def max_of_numpy_and_python(x):
    r = max(x[0], 0.0)
    return r, max(0.0, x[0]), min(x[0], 0.0), max(x[0], 0.5, x[1]), r / x.shape[0]


def peak(x):
    best = 0  # a Python int until an item wins (held as the float64 0.0 on float input)
    for v in x:
        best = max(best, v)
    return best


def lowest(x):
    lo = 1.0
    for v in x:
        lo = min(v, lo)
    return lo


def clamped_sum(x):
    s = np.float32(0)
    for v in x:
        s += min(max(v, 0.0), 1.0)
    return s


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, inputs", [
    (max_of_numpy_and_python, [np.array([v, w]) for v in (-1.0, 0.25, np.nan, -0.0)
                               for w in (0.1, 2.0)] + [np.array([0.75, 0.1], np.float32)]),
    (peak, [np.array([1, 5, 2]), np.array([-1, -3]), np.array([-1.0, 2.5]),
            np.array([-1.0, -2.5]), np.array([], np.int64), np.array([2.5], np.float32)]),
    (lowest, [np.array([3.0, 0.5]), np.array([3.0, 2.0]), np.array([3.0, 2.0], np.float32),
              np.array([np.nan, 2.0]), np.array([], np.float32)]),
    (clamped_sum, [np.array([-1, 0.5, 3], np.float32)]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_max_min_of_a_python_number_and_a_numpy_value_is_the_winner_with_its_type(
        target, fn, inputs):
    """max(loss, 0.0) is an np.float64 or the Python float 0.0 depending on the values (and
    then `r / 0` is inf or a ZeroDivisionError): staged, the winner is flagged where it is the
    Python number (``python_paths.choose``)."""
    staged = autostage.convert(fn, target=target)
    for x in inputs:
        want, got = fn(x.copy()), staged(x.copy())
        assert repr(got) == repr(want), x
        assert [type(v) for v in np.atleast_1d(got)] == [type(v) for v in np.atleast_1d(want)]


def min_of_two_dtypes(x, y):
    return min(x[0], y[0])


def max_of_python_float_and_int64(x):
    return max(-float("inf"), x[0])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, args, listed", [
    (min_of_two_dtypes, (np.ones(2, np.float32), np.ones(2)),
     "min() of a NumPy float32 and a NumPy float64"),
    (max_of_python_float_and_int64, (np.ones(2, np.int64),),
     "max() of a NumPy int64 and a Python float"),
])
def test_max_min_of_values_one_dtype_cannot_hold_is_a_clear_error(target, fn, args, listed):
    """An int64 cannot hold the Python float -inf; two NumPy dtypes are two staged types."""
    from autostage.runtime.tensor import StagingTypeError

    with pytest.raises(StagingTypeError) as e:
        autostage.convert(fn, target=target)(*args)
    assert str(e.value).startswith(f"{listed} at {__file__}:")
    assert "np.maximum(a, b)" in str(e.value) or "np.minimum(a, b)" in str(e.value)


def test_max_of_numpy_values_of_one_dtype_is_staged():
    x = np.array([-1.0, 2.0])
    for target in TARGETS:
        got = autostage.convert(lambda v: max(v[0], v[1]), target=target)(x)
        assert got == 2.0 and type(got) is np.float64


def python_number_builtins(x):
    n = x.shape[0]
    flag = n > 2
    return (abs(flag), abs(n - 5), round(n / 2), round(flag), pow(n, 2), pow(n, -1),
            pow(flag, 2), divmod(n, 2), divmod(flag, 1), divmod(n, 0.5), sum([n, 1.5]),
            sum([flag, flag]))


@pytest.mark.parametrize("target", TARGETS)
def test_other_builtins_of_python_numbers_give_python_types(target):
    got = autostage.convert(python_number_builtins, target=target)(np.zeros(3))
    expected = python_number_builtins(np.zeros(3))
    assert repr(got) == repr(expected)  # values and types: (1, 2, 2, 1, 9, 0.333.., 1, (1, 1), ...


def modular_power(x):
    return pow(x.shape[0], 2, 5)


@pytest.mark.parametrize("target", TARGETS)
def test_three_argument_pow_of_a_staged_value_is_a_clear_error(target):
    from autostage.runtime.tensor import StagingTypeError

    with pytest.raises(StagingTypeError, match=r"pow\(\) with three arguments of a staged value "
                                               r"at .*test_staging_builtins.py:\d+ is not "
                                               r"supported .* write \(x \*\* y\) % mod"):
        autostage.convert(modular_power, target=target)(np.zeros(3))


def bool_of_comparison(x):
    return bool(x[0] > 0)


def bool_of_number(x):
    return bool(x[1])


def bool_in_arithmetic(x, flag):
    return bool(x[0]) + 1, bool(flag) * 2.5, flag


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, args", [
    (bool_of_comparison, (np.array([2.5, 0.0]),)),
    (bool_of_comparison, (np.array([-1, 3], np.int32),)),
    (bool_of_number, (np.array([2.5, 0.0]),)),
    (bool_of_number, (np.array([0, 7], np.uint8),)),
    (bool_in_arithmetic, (np.array([0.5, 1.0], np.float32), np.bool_(True))),
])
def test_bool_returns_a_python_bool(target, fn, args):
    """bool() of a staged value is a Python bool as in Python (it was a NumPy bool), and stays
    weak in arithmetic; a NumPy bool argument itself stays a NumPy bool."""
    expected = fn(*args)
    got = autostage.convert(fn, target=target)(*args)
    assert got == expected
    assert (
        type(got) is type(expected) if not isinstance(expected, tuple)
        else [type(v) for v in got] == [type(v) for v in expected])


# --- sum() of a staged array: Python's sequential order, not NumPy's pairwise sum ---------------


def _sequential_differs_from_pairwise(dtype, shape):
    """Data (from a fixed seed) whose Python sum differs from np.sum in the last bits (a 2-d
    array in Fortran order: NumPy sums a contiguous axis pairwise)."""
    rng = np.random.default_rng(3)
    for _ in range(100):
        x = (rng.normal(size=shape) * 10.0 ** rng.integers(-3, 4, size=shape)).astype(dtype)
        x = np.asfortranarray(x)
        if np.asarray(sum(x)).tobytes() != np.sum(x, axis=0).tobytes():
            return x
    raise AssertionError("no data found where the orders differ")


def python_sum(x):
    return sum(x)


def python_sum_from(x, start):
    return sum(x, start)


def _assert_identical(actual, expected):
    assert type(actual) is type(expected)
    assert np.asarray(actual).dtype == np.asarray(expected).dtype
    assert np.asarray(actual).tobytes() == np.asarray(expected).tobytes()  # bit for bit


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("shape", [(100,), (40, 3)])
def test_sum_adds_in_pythons_order(target, dtype, shape):
    x = _sequential_differs_from_pairwise(dtype, shape)
    _assert_identical(autostage.convert(python_sum, target=target)(x), sum(x))
    for start in (2.5, np.float64(0.1), 1):
        _assert_identical(autostage.convert(python_sum_from, target=target)(x, start),
                          sum(x, start))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("x", [np.array([True, True, False]), np.arange(5, dtype=np.int8),
                               np.array([-0.0]), np.array([[True], [True]]),
                               np.arange(6, dtype=np.uint16).reshape(3, 2)])
def test_sum_result_type_is_that_of_pythons_additions(target, x):
    _assert_identical(autostage.convert(python_sum, target=target)(x), sum(x))  # 0 + True: int


@pytest.mark.parametrize("target", TARGETS)
def test_sum_of_empty_and_0d_arrays(target):
    with pytest.raises(ValueError, match=r"sum\(\) of an empty staged array.*"
                                         r"test_staging_builtins\.py:\d+.*start value \(0\)"):
        autostage.convert(python_sum, target=target)(np.zeros(0))

    def empty_constant():
        return sum(np.zeros(0)), sum(np.zeros((0, 3)), 2.5)

    assert autostage.convert(empty_constant, target=target)() == (0, 2.5)
    with pytest.raises(TypeError, match="iteration over a 0-d"):
        autostage.convert(python_sum, target=target)(np.array(1.0))


def any_and_all_of_an_array(x, c):
    return any(x > c), all(x), any(x) + all(x > c), 1.5 if any(x < c) else -1.0


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("x", [np.array([1.0, -2.0, 3.0]), np.array([0.0, np.nan]),
                               np.zeros(0), np.arange(4, dtype=np.uint8)])
def test_any_and_all_of_a_1d_array_are_pythons_bools(target, x):
    # (refused as "needs the values while tracing" before)
    actual = autostage.convert(any_and_all_of_an_array, target=target)(x, 0.5)
    expected = any_and_all_of_an_array(x, 0.5)
    assert actual == expected and [type(v) for v in actual] == [type(v) for v in expected]


@pytest.mark.parametrize("target", TARGETS)
def test_any_of_a_0d_or_2d_array(target):
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        autostage.convert(lambda x: any(x), target=target)(np.array(1.0))
    with pytest.raises(autostage.StagingError, match=r"any\(\) of an array of rank 2 .*"
                                                     r"test_staging_builtins\.py:\d+"):
        autostage.convert(lambda x: any(x), target=target)(np.ones((2, 2)))


def test_sum_and_max_of_a_staged_range_name_it():
    # (the messages named the class: "sum() of a staged <class '...iteration.StagedRange'>")
    with pytest.raises(autostage.StagingError, match=r"^sum\(\) of a staged range\(\) at .*"
                                                     r"test_staging_builtins\.py:\d+"):
        autostage.convert(lambda n: sum(range(n)))(np.int64(3))
    with pytest.raises(autostage.StagingError, match=r"^max\(\) of one staged range\(\) at "):
        autostage.convert(lambda n: max(range(n)))(np.int64(3))


def _kinds_and_identities(x, s):
    n, t, z = x.shape[0], x.sum(), np.zeros(())
    positive = t > 0
    return (isinstance(n, int), isinstance(float(t), float), isinstance(t, np.floating),
            isinstance(t, float), isinstance(t, np.ndarray), isinstance(x, np.ndarray),
            isinstance(z, np.ndarray), isinstance(s, np.ndarray), isinstance(s, (int, np.float32)),
            isinstance(n, int | float), isinstance(positive, np.bool_),
            bool(positive) is True, bool(positive) is not False, positive is np.True_,
            positive is True, (not positive) is False, n is True, (t > 5) is np.False_,
            not positive, [not v for v in x > 0], (not n) + 1)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("x", [np.array([1.0, 2.0]), np.array([-1.0, -2.0])],
                         ids=["positive", "negative"])
@pytest.mark.parametrize("s", [np.float32(2), np.array(np.float32(2))], ids=["scalar", "0-d"])
def test_isinstance_is_and_not_see_what_a_staged_value_stands_for(target, x, s):
    """``isinstance(x.shape[0], int)`` is True (staged, it was asked of an ndarray), ``bool(t)
    is True`` compares the bool a staged value stands for (it was always False: the identity of
    a tensor), ``not t`` is a Python bool (it was an np.bool_)."""
    got = autostage.convert(_kinds_and_identities, target=target)(x, s)
    want = _kinds_and_identities(x, s)
    assert [type(g) for g in got] == [type(w) for w in want]
    assert got == want


def _no_negative(heights):  # (TheAlgorithms dynamic_programming/trapped_water.py)
    if any(h < 0 for h in heights):
        raise ValueError("negative height")
    return all(h < 100 for h in heights), any([h > 2 for h in heights]), all([])


def _any_in_range(a, n):
    return any(a[i] > 2 for i in range(n))  # a[2] is out of range: Python stops before it


def _or_of_a_raising_operand(a):
    return bool(a[0] > 2) or bool(a[5] > 2)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, args", [
    (_no_negative, ([np.float64(1.0), np.float64(3.0), np.float64(2.0)],)),
    (_no_negative, ([np.float64(1.0), np.float64(-3.0)],)),
    (_any_in_range, (np.array([1.0, 3.0]), 3)),
    (_any_in_range, (np.array([1.0, 1.0]), 3)),
    (_or_of_a_raising_operand, (np.array([3.0, 1.0]),)),
    (_or_of_a_raising_operand, (np.array([1.0, 1.0]),)),
], ids=lambda v: getattr(v, "__name__", "-"))
def test_any_and_all_of_staged_items_short_circuit_as_python(target, fn, args):
    """``any``/``all`` of a generator: a staged item decides in a staged ``or``/``and`` whether
    the items after it are evaluated (they raised or were refused); an operand that raises while
    traced stands for a Python bool as the other one (its type was a NumPy bool)."""
    def outcome(f):
        try:
            result = f(*args)
        except (ValueError, IndexError) as e:
            return type(e).__name__, str(e)
        return result, [type(r) for r in (result if isinstance(result, tuple) else (result,))]

    assert outcome(autostage.convert(fn, target=target)) == outcome(fn)


def _smallest_batch(arrays):  # (a batch validator)
    return (min(a.shape[0] for a in arrays), max(x.sum() for x in arrays),
            min(map(len, arrays)))


@pytest.mark.parametrize("target", TARGETS)
def test_min_and_max_of_a_generator_of_staged_values_pick_at_run_time(target):
    """``min``/``max`` read every item of an iterator anyway: its items are taken as a list
    (they were refused as an unconverted use)."""
    arrays = [np.ones(300), np.ones(500)]
    got = autostage.convert(_smallest_batch, target=target)(arrays)
    assert got == _smallest_batch(arrays) == (300, 500.0, 300)
    assert [type(g) for g in got] == [int, np.float64, int]


def best_of_history(losses):
    history = []
    for v in losses:
        history.append(float(v))  # a list of Python floats
    return min(history), max(history)


def best_of_doubled(losses):
    history = []
    for v in losses:
        history.append(v * 2)  # a list of NumPy values
    return min(history), max(history)


def extremes_of_ints(xs):
    seen = []
    for v in xs:
        seen.append(int(v) % 5)
    return max(seen), min(seen)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, inputs", [
    (best_of_history, [np.array([3.0, 1.0, 2.0], np.float32), np.array([np.nan, 1.0]),
                       np.array([1.0, np.nan, 0.5]), np.array([0.0, -0.0]),
                       np.array([-0.0, 0.0]), np.array([2.0]), np.array([])]),
    (best_of_doubled, [np.array([3.0, 1.0, 2.0], np.float32), np.array([1.0, np.nan, 0.5]),
                       np.array([np.nan, 1.0]), np.array([])]),
    (extremes_of_ints, [np.array([7, 3, 9]), np.array([], np.int64)]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_max_min_of_a_staged_list_pick_as_python_does(target, fn, inputs):
    """Python keeps the first item unless a later one is better: a nan first item wins, a later
    one never does, and of 0.0 and -0.0 the first; an empty list is Python's ValueError."""
    staged = autostage.convert(fn, target=target)
    for x in inputs:
        if x.size == 0:
            with pytest.raises(ValueError) as want:
                fn(x)
            with pytest.raises(ValueError, match=re.escape(str(want.value))):
                staged(x)
            continue
        want, got = fn(x.copy()), staged(x.copy())
        assert repr(got) == repr(want), x
        assert [type(v) for v in got] == [type(v) for v in want]


def _max_of_pairs(y):
    pairs = []
    for i in range(3):
        pairs.append((i, float(y[i])))
    return max(pairs)


def test_max_of_tuples_holding_staged_values_is_a_clear_error():
    # (it was NumPy's "Cannot interpret '0' as a data type", naming no line)
    with pytest.raises(StagingTypeError, match=r"max\(\) of tuples or lists holding staged "
                       r"values at .*test_staging_builtins.py:\d+ is not staged"):
        autostage.convert(_max_of_pairs)(np.array([-5.0, 2.0, 0.5]))


def _interleave(a, b):
    out = []
    for x, y in zip(a, b, strict=True):
        out += [x, y]
    return out


def _concat(a):
    out = []
    for v in a:
        out = out + [v, v * 2]
    return out


def _repeat(a):
    lst = []
    for v in a:
        lst.append(v)
    return lst * 2


def _item_of_a_held_list(a):
    row = []
    for v in a:
        row.append(v)
    grid = [row, 0]
    grid[0][0] = 99
    return grid[0]


def _positive_sum(x, start):
    lst = []
    for v in x:
        if v > 0:
            lst.append(v)
    return sum(lst) if start is None else sum(lst, start)


def test_lists_built_in_staged_code_extend_with_plus_as_in_python():
    # (a raw TypeError of TensorList before)
    a, b = np.array([1, 2]), np.array([3, 4])
    assert autostage.convert(_interleave)(a, b) == _interleave(a, b)
    assert autostage.convert(_concat)(a) == _concat(a)
    with pytest.raises(autostage.StagingError, match=r"a list built in staged code \* int at "
                       r".*test_staging_builtins.py:\d+ is not supported"):
        autostage.convert(_repeat)(a)
    with pytest.raises(autostage.StagingError, match="writes into a list built in staged code "
                       "through an expression"):
        autostage.convert(_item_of_a_held_list)(a)


def test_sum_of_a_staged_list_adds_in_pythons_order_and_refuses_an_empty_one_clearly():
    f = autostage.convert(_positive_sum)
    x = np.array([0.1, -1.0, 0.2, 0.3])
    assert f(x, None) == _positive_sum(x, None)
    # with a start: Python's ((start + e0) + e1) + ..., not start + (e0 + e1 + ...)
    assert f(x, np.float64(1e16)) == _positive_sum(x, np.float64(1e16))
    with pytest.raises(ValueError, match=r"sum\(\) of an empty staged array or list at .*: "
                       "Python returns the start value, which"):
        f(np.array([-1.0]), np.float64(0.5))  # (Python: 0.5)
    # Python's sum([]) is the int 0 (an IndexError of compiled code before)
    with pytest.raises(ValueError, match=r"sum\(\) of an empty list built in staged code at "
                       r".*: Python returns its start, the int 0"):
        f(np.array([-1.0, -2.0]), None)


def test_out_arguments_are_refused_naming_the_line():
    def cumsum_out(x):
        out = np.zeros_like(x)
        np.cumsum(x, out=out)
        return out

    with pytest.raises(autostage.StagingError, match=r"np.cumsum\(..., out=...\) at .*"
                       r"test_staging_builtins.py:\d+ is not supported"):
        autostage.convert(cumsum_out)(np.ones(3))


def _delete_first(a):
    lst = []
    for v in a:
        lst.append(v)
    del lst[0]
    return lst


def test_del_of_an_item_of_a_staged_list_is_refused_clearly():
    # (a raw TypeError of TensorList before)
    with pytest.raises(autostage.StagingError, match=r"del of an item of a list built in staged "
                       r"code at .*test_staging_builtins.py:\d+ is not supported: use lst.pop"):
        autostage.convert(_delete_first)(np.array([1.0, 2.0]))


def extremes(x):
    return max(x), min(x)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("x", [
    np.array([2.0, np.nan, 1.0]), np.array([np.nan, 2.0, 1.0]), np.array([0.0, -0.0]),
    np.array([-0.0, 0.0]), np.array([3, 1, 3, -2]), np.array([1.5], np.float32),
    np.array([np.inf, -np.inf, np.nan]), np.array([True, False]),
], ids=repr)
def test_max_min_of_one_array_pick_its_items_as_python_does(target, x):
    """Python's loop keeps the first item unless a later one is greater (smaller): a nan
    first wins, a later nan never does, and of 0.0 and -0.0 the first (NumPy's x.max() is
    nan if any item is, and may pick -0.0)."""
    got, want = autostage.convert(extremes, target=target)(x.copy()), extremes(x.copy())
    assert repr(got) == repr(want)
    assert [np.signbit(v) for v in got] == [np.signbit(v) for v in want]


@pytest.mark.parametrize("target", TARGETS)
def test_max_of_an_empty_array_is_pythons_error(target):
    with pytest.raises(ValueError) as want:
        extremes(np.array([]))
    with pytest.raises(ValueError) as got:
        autostage.convert(extremes, target=target)(np.array([]))
    assert str(got.value).startswith(str(want.value))


def max_of_rows(a):
    return max(a)


def max_of_two_arrays(a, b):
    return max(a, b)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, args, words", [
    (max_of_rows, (np.ones((2, 2)),), "max() of an array of rank 2"),
    (max_of_two_arrays, (np.ones(2), np.zeros(2)), "max() of arrays"),
])
def test_max_comparing_arrays_is_a_clear_error(target, fn, args, words):
    """Python compares rows or arrays themselves (ValueError: no single truth value); staged,
    NumPy's elementwise max was returned instead."""
    with pytest.raises(ValueError):
        fn(*args)
    with pytest.raises(StagingTypeError) as e:
        autostage.convert(fn, target=target)(*args)
    assert str(e.value).startswith(f"{words} at {__file__}:")


def range_as_python(x, j):
    r = range(0, len(x), 2)
    n = len(r)  # a Python int: 10 // 0 raises
    return (n, j in range(len(x)), j not in r, range(len(x))[-1], r[1], np.array(r),
            range(len(x)) == range(3), r == range(0, len(x), 2), r != [0, 2], 10 // n)


@pytest.mark.parametrize("target", TARGETS)
def test_a_range_with_a_staged_bound_is_a_python_range(target):
    f = autostage.convert(range_as_python, target=target)
    for x, j in [(np.zeros(3), 2), (np.zeros(5), 3), (np.zeros(4), -1), (np.zeros(3), 7)]:
        got, want = f(x, np.int64(j)), range_as_python(x, np.int64(j))
        assert repr(got) == repr(want), (x, j)
        assert type(got[0]) is int and type(got[9]) is int
    for fn in (range_as_python, f):
        with pytest.raises(IndexError, match="range object index out of range"):
            fn(np.zeros(0), np.int64(0))  # (range(0)[-1])


def batches(x, size):
    return 10 // len(range(0, len(x), size))


@pytest.mark.parametrize("target", TARGETS)
def test_the_length_of_a_staged_range_is_a_python_int(target):
    """(It was an np.int64: 10 // 0 gave 0 with NumPy's warning.)"""
    f = autostage.convert(batches, target=target)
    assert f(np.zeros(5), 2) == batches(np.zeros(5), 2) == 3
    for fn in (batches, f):
        with pytest.raises(ZeroDivisionError):
            fn(np.zeros(0), 2)


def range_index_out_of_range(x):
    return range(len(x))[3]


@pytest.mark.parametrize("target", TARGETS)
def test_a_ranges_index_out_of_range_is_pythons_index_error(target):
    f = autostage.convert(range_index_out_of_range, target=target)
    assert f(np.zeros(4)) == 3
    with pytest.raises(IndexError, match="range object index out of range"):
        f(np.zeros(3))


def ranges_of_numpy_integers(x):
    total, items, counts = 0, [], []
    for i in range(x[1], x[0]):
        total = total + i * 100
    for i in range(x[0], x[1], -1):
        items.append(i * 100)
    for j, _ in enumerate(x, x[1]):
        counts.append(j * 100)
    r = range(x[1], x[0])
    return total, items, counts, len(r), len(range(x[0], x[1])), [i for i in r]


def range_item_of_numpy_integers(x):
    return range(x[1], x[0])[0]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int64, np.uint64])
def test_range_and_enumerate_of_numpy_integers_give_python_ints(target, dtype):
    """``range``/``enumerate`` take a NumPy integer through ``__index__``: items are Python ints
    (a uint8 start's items wrapped: 188 for 700, ``len(range(5, 3))`` was 254; ``r[0]`` was an
    internal TypeError)."""
    f = autostage.convert(ranges_of_numpy_integers, target=target)
    g = autostage.convert(range_item_of_numpy_integers, target=target)
    for x in [np.array([5, 3], dtype), np.array([3, 5], dtype), np.array([120, 100], dtype)]:
        for _ in range(2):
            assert repr(f(x)) == repr(ranges_of_numpy_integers(x)), x
            got = g(x) if x[1] < x[0] else None
            assert got is None or repr(got) == repr(range_item_of_numpy_integers(x))


def enumerate_with_a_float_start(x):
    return [j for j, _ in enumerate(x, x[0])]


@pytest.mark.parametrize("target", TARGETS)
def test_range_bounds_out_of_int64_and_float_starts_are_errors(target):
    """Python's ints are exact; staged ones are int64, so a uint64 bound past int64 is a clear
    error; a float start is Python's TypeError (staged items were floats)."""
    x = np.array([2**64 - 1, 2**63 + 3], np.uint64)
    with pytest.raises(OverflowError, match=f"range\\(\\) start of a number out of the int64 "
                       f"range in staged code at {__file__}:"):
        autostage.convert(range_item_of_numpy_integers, target=target)(x)
    f = autostage.convert(enumerate_with_a_float_start, target=target)
    for fn in (enumerate_with_a_float_start, f):
        with pytest.raises(TypeError):
            fn(np.array([1.0, 2.0]))


def lists_compared(x):
    a, b, c, floats = [], [], [], []
    for v in x:
        a.append(int(v))
        b.append(int(v))
        floats.append(float(v))
        if v > 1:
            c.append(v > 2)
    return (a == [1, 2, 3], a != [1, 2, 3], a == b, [1, 2] == a, c == [True], c != [],
            a == (1, 2, 3), a == [True, 2, 3], floats == [], [] != floats)


@pytest.mark.parametrize("target", TARGETS)
def test_lists_built_in_staged_code_compare_as_python_lists(target):
    """Python's list equality: as long, with equal items (before: identity, always False)."""
    f = autostage.convert(lists_compared, target=target)
    for x in [np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0]), np.array([]),
              np.array([1.0, 3.0, 3.0]), np.array([3.0])]:
        got = f(x)
        assert got == lists_compared(x), x
        assert all(type(v) is bool for v in got)


def float_lists_compared(x):
    a = []
    for v in x:
        a.append(float(v))
    return a == [1.0]


def lists_ordered(x):
    a = []
    for v in x:
        a.append(int(v))
    return a < [2]


@pytest.mark.parametrize("fn, words", [
    (float_lists_compared, "`==` of a list built in staged code"),
    (lists_ordered, "ordering comparison of a list built in staged code"),
])
def test_comparisons_of_staged_lists_not_staged_are_clear_errors(fn, words):
    with pytest.raises(StagingTypeError) as e:
        autostage.convert(fn)(np.array([1.0]))
    assert str(e.value).startswith(f"{words} at {__file__}:")


def _array_plus_range(x):
    return np.zeros(3) + range(x[1], x[1] + 3)


def _sum_of_array_plus_range(x):
    return (np.zeros(3) + range(x[1], x[1] + 3)).sum()


def _object_array_of(x):
    held = np.empty(2, dtype=object)
    held.fill(x[0])  # (NumPy's own method: autostage does not see it)
    return held


@pytest.mark.parametrize("fn", [_array_plus_range, _sum_of_array_plus_range])
def test_a_staged_range_used_as_a_numpy_array_is_refused(fn):
    """NumPy would take the range apart item by item at trace time: an object array of staged
    values came back (and its sum was another array)."""
    with pytest.raises(StagingTypeError, match=r"range\(\) is used as a NumPy array .*np.arange"):
        autostage.convert(fn)(np.array([5, 3, 1]))


def test_an_object_array_holding_staged_values_does_not_leave_the_function():
    with pytest.raises(StagingError, match="object array holding staged values"):
        autostage.convert(_object_array_of)(np.array([5.0, 3.0]))


def _zip_with_a_constant_array(x):
    s = 0.0
    for a, w in zip(x, np.array([1.0, 2.0, 3.0])):  # noqa: B905 - lengths differ
        s += a * w
    return s


def _rows_of_a_constant_array(x):
    out = []
    for a, row in zip(x, np.array([[1.0, 2.0], [3.0, 4.0]])):  # noqa: B905
        out.append(a * row)
    return out


@pytest.mark.parametrize("fn", [_zip_with_a_constant_array, _rows_of_a_constant_array])
def test_a_staged_loop_zips_a_numpy_array_made_in_the_function(fn):
    """A NumPy array the function makes from constants, zipped with a staged one, is iterated
    as a constant tensor (it was refused: "a staged loop cannot iterate a ndarray")."""
    f = autostage.convert(fn)
    for x in (np.array([1.0, 1.0, 1.0]), np.array([2.0, 3.0]), np.ones(5)):
        np.testing.assert_array_equal(f(x), fn(x))
