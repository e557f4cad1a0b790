"""A variable that is a Python number on some paths and a NumPy value on others
(staging.python_paths): Python's type and semantics on each path, or a clear run-time error where
staged code cannot hold Python's number."""

import re

import numpy as np
import pytest
from autostage.runtime.tensor import StagingTypeError

import autostage

TARGETS = ("interpreter", "cpu")


def mean(x):
    total = 0.0  # a Python float if the loop runs zero times, np.float64 if it runs
    for v in x:
        total += v
    return total / len(x)


def sum_and_twice(x):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + x[i]
    return total, total * 2, -total, total > 1


def count_positive(x):
    c = 0
    for v in x:
        if v > 0:
            c += np.int64(1)
    return c, c // len(x), c % 3


def while_sum(x):
    s = 0.0
    i = 0
    while i < len(x):
        s = s + x[i] * 2
        i += 1
    return s, i


def early_return(x):
    if x.shape[0] == 0 or x[0] < 0:
        return 0.0
    return x[0] / x.shape[0]


def branch_then_divide(x, n):
    if x[0] > 0:
        r = 1.0
    else:
        r = x[0] - x[1]
    return r / n, r // n, r % n


def big_int_divide(x):
    k = 3
    if x[0] > 0:
        k = np.int64(x[0])
    return k / 7


def plus_a_bool(x):
    c = 0
    for v in x:
        c = c + np.int64(v > 0)
    return c + True, c * False


def nested_loops(x):
    total = 0.0
    for i in range(x.shape[0]):
        for j in range(i):
            total += x[i] * x[j]
    return total / (x.shape[0] - 1)


def root_of_sum(x):
    s = 0.0
    for v in x:
        s += v * v
    return np.sqrt(s), np.exp(s), bool(s), str(s), f"{s:.2f}"


def numpy_constant_early(x):
    if x.shape[0] == 0 or x[0] > 0:
        return np.float64(1.0)
    return np.float64(2.0)


def grows_past(x):
    y = 1  # a Python int until the loop makes it a float: its comparisons are exact
    while y < 10:
        y = y * x[0]
    return y


def helper_mean(x):
    return mean(x) * 2


def helper_of_path_value(x):
    total = 0.0
    for v in x:
        total += v
    return halve(total)


def halve(v):
    return v / 0.5


INPUTS = [np.array([1.0, 2.0, -3.0]), np.array([2.5]), np.zeros(0), np.array([-1.0, 4.0])]


@pytest.mark.parametrize("target", TARGETS)
def test_a_python_int_held_as_a_float_compares_exactly(target):
    staged = autostage.convert(grows_past, target=target)
    for x in (np.array([3.0]), np.array([20.0])):
        assert repr(staged(x)) == repr(grows_past(x))


def _outcome(fn, *args):
    try:
        return repr(fn(*args))
    except Exception as e:  # noqa: BLE001 - compared with the staged outcome
        return f"{type(e).__name__}: {e}"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [mean, sum_and_twice, count_positive, while_sum, early_return,
                                big_int_divide, plus_a_bool, nested_loops, root_of_sum,
                                numpy_constant_early, helper_mean, helper_of_path_value],
                         ids=lambda f: f.__name__)
def test_each_path_has_pythons_type_and_semantics(fn, target):
    staged = autostage.convert(fn, target=target)
    for x in INPUTS:
        assert _outcome(staged, x) == _outcome(fn, x), x


@pytest.mark.parametrize("target", TARGETS)
def test_python_division_checks_only_where_the_value_is_a_python_number(target):
    staged = autostage.convert(branch_then_divide, target=target)
    for x in (np.array([1.0, 0.0]), np.array([-1.0, 2.0])):
        for n in (0, 2):
            assert _outcome(staged, x, n) == _outcome(branch_then_divide, x, n), (x, n)
    with pytest.raises(ZeroDivisionError, match="float division by zero"):
        staged(np.array([1.0, 0.0]), 0)  # Python's 1.0 / 0
    with np.errstate(divide="ignore", invalid="ignore"):
        got = staged(np.array([-1.0, 2.0]), 0)  # NumPy's -3.0 / 0: inf, nan
    assert np.isneginf(got[0]) and type(got[0]) is np.float64


def sum32(x):
    total = 0.0
    for v in x:
        total += v
    return total


@pytest.mark.parametrize("target", TARGETS)
def test_a_known_python_number_staged_code_cannot_hold_is_returned_as_python_does(target):
    staged = autostage.convert(sum32, target=target)
    x = np.array([1.5, 2.0], np.float32)
    got = staged(x)
    assert type(got) is np.float32 and got == 3.5
    got = staged(x[:0])  # Python returns the float 0.0 it started as: staged code held float32
    assert type(got) is float and got == 0.0


def best_above(x):
    best = 0  # a Python int until an item passes: staged, a float64
    for v in x:
        if v > 5.0:
            best = v
    return best


def test_a_python_number_kept_through_a_loop_that_ran_is_returned_as_python_does():
    staged = autostage.convert(best_above)
    x = np.array([1.0, 7.0, 6.0])
    assert repr(staged(x)) == repr(best_above(x)) == "np.float64(6.0)"
    assert repr(staged(np.array([1.0, 2.0]))) == "0"  # Python returns the int 0


def repr_of_total(x):
    t = 0.0
    for v in x:
        t += v
    return repr(t)


def test_repr_of_a_python_path_value_is_an_error_where_it_is_the_python_number():
    staged = autostage.convert(repr_of_total)
    x = np.array([1.5])
    assert staged(x) == repr_of_total(x) == "np.float64(1.5)"
    with pytest.raises(StagingTypeError, match=r"repr\(\) at .* of a value that is a Python "
                                               "float on this call's path"):
        staged(np.zeros(0))  # Python: '0.0'


def scales_float32(x, y32):
    total = 0.0
    for v in x:
        total += v
    return total * y32


@pytest.mark.parametrize("target", TARGETS)
def test_a_dtype_that_depends_on_the_path_is_a_run_time_error_there(target):
    staged = autostage.convert(scales_float32, target=target)
    y32 = np.ones(2, np.float32)
    got = staged(np.ones(3), y32)  # total is an np.float64: a float64 product, as in Python
    assert got.dtype == scales_float32(np.ones(3), y32).dtype == np.float64
    message = re.escape("has an operand that is a Python float on this call's path")
    with pytest.raises(StagingTypeError, match=message + r"(.|\n)*gives a float32 result for the "
                       r"Python number and gives a float64 result for the NumPy value"):
        staged(np.zeros(0), y32)  # Python: 0.0 * y32 is float32


def bool_arithmetic(x):
    b = True
    if x[0] > 0:
        b = x[1] > 0
    return b + b


def test_arithmetic_on_a_bool_of_either_kind_is_an_error_where_it_is_pythons():
    staged = autostage.convert(bool_arithmetic)
    x = np.ones(2)
    assert repr(staged(x)) == repr(bool_arithmetic(x)) == "np.True_"  # NumPy's bool + bool
    with pytest.raises(StagingTypeError, match=r"arithmetic \(\+\) at .*test_staging_python_paths"
                                               r".py:\d+ on a value that is a Python bool on "
                                               "this call's path"):
        staged(-x)  # Python: True + True == 2


def int_total_as_text(x):
    total = 0  # a Python int held as a float64: Python prints 0, not 0.0
    for v in x:
        total += v
    return f"total={total}"


def totals_in_a_list(x):
    out = []
    t = 0.0
    for v in x:
        t = v
        out.append(v)
    out.append(t)  # a Python float in Python's list where the loop did not run
    return out


def type_of_total(x):
    t = 0.0
    for v in x:
        t = v
    return isinstance(t, float), type(t).__name__


def compared_with_float32(x, thr):
    t = 0.1  # NumPy compares a Python float with np.float32 in float32, an np.float64 in float64
    for v in x:
        t = v
    return t < thr


def early_python_return(x):
    if x[0] > 0:
        return 0.0
    return x[0] * 2


EMPTY = np.zeros(0)
CASES = [  # (function, arguments on a NumPy path, on the Python number's path, its error)
    (int_total_as_text, (np.array([1.5]),), (EMPTY,), "'total' is a Python int on this call"),
    (type_of_total, (np.array([1.5]),), (EMPTY,), r"type\(\) or isinstance\(\)"),
    (compared_with_float32, (np.array([0.5]), np.float32(0.1)), (EMPTY, np.float32(0.1)),
     r"less at .* compares in float32 for the Python number and compares in float64"),
]


def trajectory(x):
    t = 0.0  # a Python float until the first step adds an np.float64
    ts = [t]
    for v in x:
        t = t + v
        ts.append(t)
    return np.array(ts), len(ts)


def first_time(x):
    t = 0.0
    ts = [t]
    for v in x:
        t = t + v
        ts.append(t)
    return ts[0]  # Python's first item is the Python float; others np.float64


@pytest.mark.parametrize("target", TARGETS)
def test_a_list_of_python_numbers_and_numpy_values(target):
    """Appended where it may be either, a list holds both kinds: stacked it is one array, as
    in Python; returned as a list, Python's items would differ in type (a clear error)."""
    staged = autostage.convert(trajectory, target=target)
    for x in (np.array([0.5, 1.0]), EMPTY):
        assert _outcome(staged, x) == _outcome(trajectory, x)
    with pytest.raises(StagingTypeError, match=r"the list 'out' returned by totals_in_a_list\(\) "
                                               r"holds Python floats .* and NumPy values"):
        autostage.convert(totals_in_a_list, target=target)(np.array([1.5]))
    with pytest.raises(StagingTypeError, match=r"an item of .* is read at .* but the list holds "
                                               "Python numbers and NumPy values"):
        autostage.convert(first_time, target=target)(np.array([1.5]))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, numpy_args, python_args, error", CASES,
                         ids=[c[0].__name__ for c in CASES])
def test_a_use_staged_code_cannot_give_pythons_answer_for_raises_only_there(
        fn, numpy_args, python_args, error, target):
    staged = autostage.convert(fn, target=target)
    assert _outcome(staged, *numpy_args) == _outcome(fn, *numpy_args)
    with pytest.raises(StagingTypeError, match=error):
        staged(*python_args)


def ema(x):
    m = 0.0  # a Python float until the first step makes it float32: 0.9 * m is Python's there
    for v in x:
        m = 0.9 * m + 0.1 * v
    return m


def two_averages(x):
    m, s = 0.0, 0.0
    for v in x:
        if v < 0:
            continue  # (m stays the Python 0.0 until a step changes it)
        m = m * 0.5 + v
        s = s * s * 0.25 + m
    return m, s


def counts_while_small(x):
    best, k = 0.0, 0
    for v in x:
        if best < 0.5:  # a Python bool on the first step, np.bool_ after it
            k += 1
        best = 1.0 / (best + 1) + best * np.float64(2) + v
    return best, k


def branch_scaled(x):
    m = 0.25
    if x[0] > 1:
        m = x.sum()
    return m * 0.5 + x[1]


def changes_its_number(x):
    m = 0.0
    for v in x:
        m = 0.5 if v < 0 else 0.9 * m + v  # another Python number than it starts as
    return m


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [ema, two_averages, counts_while_small, branch_scaled],
                         ids=lambda f: f.__name__)
def test_a_python_number_of_another_kind_known_while_tracing_is_computed_as_python_does(
        fn, target):
    staged = autostage.convert(fn, target=target)
    for x in (np.array([1.5, -2.0, 3.0], np.float32), np.array([3.0, 0.5], np.float32),
              np.array([-0.1, 2.5, 0.7, 0.3], np.float32)):
        want, got = fn(x), staged(x)
        assert repr(got) == repr(want), x
        assert [type(v) for v in np.atleast_1d(got)] == [type(v) for v in np.atleast_1d(want)]


def reciprocal_of_sum(x):
    y = 0  # a Python int until the loop adds a float64: held as float64
    for v in x:
        y = y + v
    return 1 / y, 5 % y, y ** -1  # Python's ZeroDivisionError where y is the int 0


def reciprocal_of_sum32(x):
    y = 0.0
    for v in x:
        y = y + v
    return 1.0 / y, y // 1.0


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, dtype", [(reciprocal_of_sum, np.float64),
                                       (reciprocal_of_sum32, np.float32)],
                         ids=["int_as_float64", "float_as_float32"])
def test_pythons_error_of_a_known_python_number_is_raised_on_its_path(fn, dtype, target):
    """1 / y raised nothing and gave inf (a NumPy division) before: the number is known, so its
    Python error is too."""
    staged = autostage.convert(fn, target=target)
    assert _outcome(staged, np.ones(2, dtype)) == _outcome(fn, np.ones(2, dtype))
    with np.errstate(all="ignore"):
        assert _outcome(staged, np.zeros(0, dtype)) == _outcome(fn, np.zeros(0, dtype))
    assert _outcome(fn, np.zeros(0, dtype)).startswith("ZeroDivisionError")


def two_kinds_of_python_number(x):
    m = 0  # a Python int before the loop; a Python float (1.5) or an np.float64 in it
    for i in range(x.shape[0]):
        m = 0.9 * x[i] + 0.1 * x[i]
        m = m if m > 1.5 else 1.5
    return m + 1, m * 2


def max_of_two_kinds(x):
    m = 0
    for i in range(x.shape[0]):
        m = x[i] if x[i] > 1.5 else 1.5
    return max(m, x[0])


@pytest.mark.parametrize("target", TARGETS)
def test_a_value_that_is_two_kinds_of_python_number_keeps_both(target):
    """m + 1 gave np.float64(2.5) where Python gives the float 2.5: the int path's number was
    computed and the float path's flag dropped (and max() of it picked silently)."""
    staged = autostage.convert(two_kinds_of_python_number, target=target)
    for x in (np.array([1.0]), np.array([3.0, 2.0])):
        assert _outcome(staged, x) == _outcome(two_kinds_of_python_number, x), x
    with pytest.raises(StagingTypeError, match=r"max\(\) of a value that is Python numbers of "
                                               r"two kinds on different paths at .*:\d+"):
        autostage.convert(max_of_two_kinds, target=target)(np.array([1.0]))


def ema_of_halves(x):
    m = ema(x[:2])  # a helper's result: the Python 0.0 on the path where x is empty
    return m, m * 0.5


def guarded_mean(losses):
    total, count = 0.0, 0
    for v in losses:
        total += v
        count += 1
    if count == 0:
        return 0.0  # (an early return of a Python number beside a float32 result)
    return total / count


@pytest.mark.parametrize("target", TARGETS)
def test_a_known_python_number_is_returned_where_its_flag_holds(target):
    for fn in (ema, ema_of_halves, guarded_mean):
        staged = autostage.convert(fn, target=target)
        for x in (np.zeros(0, np.float32), np.array([2.0, 4.0], np.float32)):
            want, got = fn(x), staged(x)
            assert repr(got) == repr(want), (fn, x)
            assert [type(v) for v in np.atleast_1d(got)] == [
                type(v) for v in np.atleast_1d(want)]
    assert type(autostage.convert(ema, target=target)(np.zeros(0, np.float32))) is float
    staged = autostage.convert(early_python_return, target=target)
    for x in (np.array([-1.5], np.float32), np.array([1.5], np.float32)):
        assert repr(staged(x)) == repr(early_python_return(x))


def test_a_known_python_number_result_is_exported_with_its_number(tmp_path):
    staged = autostage.convert(ema)
    inputs = (np.zeros(0, np.float32), np.array([2.0, 4.0], np.float32))
    for x in inputs:
        staged(x)
    autostage.save(staged, tmp_path / "ema.zip")
    loaded = autostage.load(tmp_path / "ema.zip")
    for x in inputs:
        assert repr(loaded(x)) == repr(ema(x))


@pytest.mark.parametrize("target", TARGETS)
def test_another_python_number_than_the_one_known_is_a_clear_error_naming_the_variable(target):
    staged = autostage.convert(changes_its_number, target=target)
    with pytest.raises(StagingTypeError, match=r"^variable 'm' is a Python float on this call's "
                                               r"path through the staged for loop at .*np.float32"):
        staged(np.array([-1.0, 2.0], np.float32))
    for x in (np.zeros(0, np.float32), np.array([1.0, 2.0], np.float32)):
        with pytest.raises(StagingTypeError, match="^variable 'm' is a Python float"):
            staged(x)  # (the Python float of a step is not known while tracing)


def item_of_total(x):
    total = 0.0
    for v in x:
        total += v
    return total.item()  # np.float64 has .item(); a Python float has not


def item_of_a_size(x):
    return x.shape[0].item()


def is_integer_of_a_sum(x):
    return x.sum().is_integer()


@pytest.mark.parametrize("target", TARGETS)
def test_numpy_methods_of_python_numbers_raise_pythons_attribute_error(target):
    staged = autostage.convert(item_of_total, target=target)
    assert _outcome(staged, np.array([1.5])) == _outcome(item_of_total, np.array([1.5]))
    with pytest.raises(AttributeError, match="^'float' object has no attribute 'item'"):
        staged(EMPTY)
    with pytest.raises(AttributeError, match="^'int' object has no attribute 'item'"):
        autostage.convert(item_of_a_size, target=target)(np.ones(2))


def dtype_of_total(x):
    total = 0.0
    for v in x:
        total += v
    return total.dtype  # np.float64 has .dtype; a Python float has not


def properties_of_a_size(x):
    n = x.shape[0]
    return hasattr(n, "shape"), getattr(n, "ndim", -1), hasattr(n, "bit_length")


def shape_of_a_size(x):
    n = x.shape[0]
    return n.shape


def properties_of_a_sum(x):
    s = x.sum()
    return s.dtype, s.shape, s.ndim, s.size, s.T, s.itemsize, s.nbytes


@pytest.mark.parametrize("target", TARGETS)
def test_ndarray_properties_of_python_numbers_raise_pythons_attribute_error(target):
    staged = autostage.convert(dtype_of_total, target=target)
    assert staged(np.array([1.5])) == np.dtype(np.float64)
    with pytest.raises(AttributeError, match="^'float' object has no attribute 'dtype'"):
        staged(EMPTY)
    with pytest.raises(AttributeError, match="^'int' object has no attribute 'shape'"):
        autostage.convert(shape_of_a_size, target=target)(np.ones(2))
    assert autostage.convert(properties_of_a_size, target=target)(np.ones(2)) == (False, -1, True)
    sums = autostage.convert(properties_of_a_sum, target=target)(np.ones(2))
    assert sums == properties_of_a_sum(np.ones(2))
    assert [type(v) for v in sums] == [type(v) for v in properties_of_a_sum(np.ones(2))]


def test_a_numpy_scalar_method_autostage_does_not_stage_is_a_clear_error():
    with pytest.raises(StagingTypeError, match="numpy.float64 method 'is_integer' is not "
                                               "supported on staged values"):
        autostage.convert(is_integer_of_a_sum)(np.ones(2))


def _epoch_totals(x):
    out = []
    for _ in range(5):
        total = 0.0
        for t in range(4):
            total += x[t]
        out.append(total)
    return out


def _long_total(x):
    total = 0.0
    for t in range(40):
        total += x[t % 4]
    return total, type(total) is float


def test_a_python_number_a_loop_known_to_run_makes_numpy_is_numpy_after_it():
    """``total = 0.0`` then ``total += x[t]`` over a Python ``range`` (staged, not unrolled):
    the body runs, so after the loop it is a NumPy value on every call, as in Python (a list
    of them was refused as mixing Python floats and NumPy values)."""
    x = np.arange(4.0)
    for fn in (_epoch_totals, _long_total):
        f = autostage.convert(fn)
        for _ in range(2):
            got, want = f(x), fn(x)
            assert repr(got) == repr(want)
