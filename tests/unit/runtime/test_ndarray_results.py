"""0-d results come back as NumPy gives them: 0-d ndarrays from creation/shape calls and for
0-d ndarray arguments, NumPy scalars from ufuncs, reductions and indexing (ndarray_results)."""

import inspect

import numpy as np
import pytest

import autostage

TARGETS = ("interpreter", "cpu")
S, A = np.float64(2.5), np.array(2.5)


def zeros_like(x):
    return np.zeros_like(x)


def identity(x):
    return x


def add0(x):
    return x + 0


def reshape0(x):
    return x.reshape(())


def via_rank1(x):
    return x.reshape(1).reshape(())


def transpose(x):
    return np.transpose(x)


def flip(x):
    return np.flip(x)


def ellipsis(x):
    return x[...]


def empty_index(x):
    return x[()]


def roll(x):
    return np.roll(x, 2)


def tensordot(x):
    return np.tensordot(x, x, axes=0)


def astype(x):
    return x.astype(np.float32)


def pair(x):
    return np.copy(x), np.sum(x), [x.reshape(())]


def unique_inverse(x):
    return np.unique(x, return_inverse=True)


def helper(x):
    return x.reshape(())


def calls_helper(x):
    return helper(x) + 0, helper(x)


def asarray_and_itself(x):
    return np.asarray(x), x  # (a scalar handed back as a 0-d array: x stays a scalar)


def boolean_scalar_index(x):
    return x[x > 1], x[None], x[True]


def broadcast_arrays(x):  # (numpy_financial.ipmt: isinstance(when, np.ndarray) afterwards)
    a, b = np.broadcast_arrays(x, np.float64(1.0))
    return a, b, isinstance(b, np.ndarray)


def any_and_contiguous(x):  # (numpy_financial: map(np.asarray, ...), np.asanyarray)
    return np.asanyarray(x), np.ascontiguousarray(x), np.ascontiguousarray(x, dtype=np.float32)


CASES = [zeros_like, identity, add0, reshape0, via_rank1, transpose, flip, ellipsis, empty_index,
         roll, tensordot, astype, pair, unique_inverse, calls_helper, asarray_and_itself,
         boolean_scalar_index, broadcast_arrays, any_and_contiguous]


def _types(result):
    if isinstance(result, (tuple, list)):
        return type(result), [_types(r) for r in result]
    return type(result), getattr(result, "dtype", None), np.shape(result)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("arg", [S, A, np.float32(1.5), np.array(3, np.int32)],
                         ids=["scalar", "array0d", "f32scalar", "i32array0d"])
def test_result_type_is_numpys(fn, arg, target):
    expected = fn(arg)
    got = autostage.convert(fn, target=target)(arg)
    assert _types(got) == _types(expected)
    np.testing.assert_equal(got, expected)


@pytest.mark.parametrize("target", TARGETS)
def test_returned_argument_is_the_callers_object(target):
    a = np.array(2.5)
    staged = autostage.convert(identity, target=target)
    assert staged(a) is a
    view = autostage.convert(reshape0, target=target)(a)
    assert type(view) is np.ndarray and view is not a and np.shares_memory(view, a)


@pytest.mark.parametrize("target", TARGETS)
def test_scalar_and_array0d_arguments_trace_apart(target):
    staged = autostage.convert(reshape0, target=target)
    assert type(staged(S)) is np.float64
    assert type(staged(A)) is np.ndarray
    assert type(staged(np.float64(1.0))) is np.float64
    assert staged.trace_count == 2


def isscalar_all(x):
    return (np.isscalar(x), np.isscalar(x.reshape(())), np.isscalar(x + 1),
            np.isscalar(np.zeros_like(x)), np.isscalar(np.sum(x)), np.isscalar(x[...]))


def isscalar_rows(x):
    return np.isscalar(x), np.isscalar(x[0]), np.isscalar(x.shape[0]), np.isscalar(x[0, ...])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, arg", [(isscalar_all, S), (isscalar_all, A),
                                     (isscalar_rows, np.arange(3.0))])
def test_isscalar_is_numpys(fn, arg, target):
    assert autostage.convert(fn, target=target)(arg) == fn(arg)


def larger(r, g):
    if r.sum() > g.sum():
        return r
    return g


def larger_0d(r, g):
    if r > g:
        return r
    return g


def max_0d(r, g):
    return max(r, g)


def filled_0d(v):
    z = np.zeros(())
    z[()] = v
    return z


def made_in_branches(v):
    z = np.array(v)
    if v > 0:
        z = np.array(2 * v)
    return z


@pytest.mark.parametrize("target", TARGETS)
def test_an_argument_chosen_by_a_staged_if_is_that_argument(target):
    """The second argument came back as a new array (the first as itself)."""
    staged = autostage.convert(larger, target=target)
    a, b = np.ones(2), np.zeros(2)
    assert staged(a, b) is a and staged(b, a) is a


@pytest.mark.parametrize("target", TARGETS)
def test_0d_ndarrays_through_ifs_max_and_item_writes_stay_ndarrays(target):
    """Each came back as np.float64; larger_0d gave the other argument's value (a view of the
    first argument on one path only was handed back as that argument's element)."""
    for fn, args in [(larger_0d, (np.array(0.5), np.array(0.2))),
                     (larger_0d, (np.array(0.1), np.array(0.2))),
                     (max_0d, (np.array(0.5), np.array(0.2))), (filled_0d, (np.float64(0.5),)),
                     (made_in_branches, (np.float64(0.5),)),
                     (made_in_branches, (np.float64(-0.5),))]:
        want, got = fn(*args), autostage.convert(fn, target=target)(*args)
        assert type(got) is type(want) is np.ndarray and got.shape == () and got == want, fn


def accumulated_in_place(x):
    y = np.zeros(())
    for v in x:
        y += v
    return y


def accumulated_in_a_while(x):
    y = np.array(0.0)
    i = 0
    while i < x.shape[0]:
        y[...] = y + x[i]
        i += 1
    return y


def written_in_an_if(x):
    y = np.array(0.0)
    if x[0] > 0:
        y[...] = x[1]
    return y


def added_to_in_an_if_in_a_loop(x):
    y = np.zeros(())
    for v in x:
        if v > 1:
            y += v
    return y


def rebound_in_a_range_loop(x):
    y = np.zeros(())
    for i in range(3):
        y = y + x[i]  # (a NumPy scalar: the body runs)
    return y


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [accumulated_in_place, accumulated_in_a_while, written_in_an_if,
                                added_to_in_an_if_in_a_loop, rebound_in_a_range_loop],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [np.array([1.0, 2.0, 3.0]), np.array([-1.0, 2.0, 0.5])],
                         ids=["positive", "negative"])
def test_0d_ndarrays_made_before_staged_control_flow_keep_their_kind(fn, x, target):
    """A 0-d ndarray made while tracing (np.zeros(()), np.array(0.0)) and carried through a
    staged loop or if, or written in place there, came back as np.float64."""
    converted = autostage.convert(fn, target=target)
    want = fn(x)
    for _ in range(2):
        got = converted(x)
        assert type(got) is type(want) and got.dtype == want.dtype and got == want


def argument_or_a_scalar(x):
    if x > 0:
        return x
    return x * 0


def copy_maybe_rebound(x):
    y = x.copy()
    if y > 0:
        y = y + 1
    return y


def maybe_rebound_then_used(x):
    y = x.copy()
    if y > 0:
        y = y + 1
    return float(y * 2), type(y - 1)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [argument_or_a_scalar, copy_maybe_rebound],
                         ids=lambda f: f.__name__)
def test_a_0d_ndarray_on_some_paths_is_returned_as_the_path_taken_gives_it(fn, target):
    """Python returns a 0-d ndarray or a NumPy scalar depending on the path taken (for
    argument_or_a_scalar, the argument itself); staged code returned np.float64 on every path,
    then refused it: now a run-time flag says which."""
    converted = autostage.convert(fn, target=target)
    for x in [np.array(3.5), np.array(-2.0), np.array(3.5)]:
        want, got = fn(x), converted(x)
        assert type(got) is type(want) and got.dtype == want.dtype and got == want
        assert (got is x) == (want is x)


def rebound_in_a_while(x, n):
    y = np.zeros(())
    i = 0
    while i < n:
        y = y + x  # (a NumPy scalar: Python's after the loop if it ran, else the 0-d ndarray)
        i += 1
    return y


def rebound_in_a_range_loop_of_n(x, n):
    y = np.ones(())
    for _ in range(n):
        y = y * 2 + x
    return y


def made_an_ndarray_in_a_while(x, n):
    y = x * 1  # (a NumPy scalar)
    i = 0
    while i < n:
        y = np.full((), y + i)
        i += 1
    return y


def made_an_ndarray_in_a_range_loop(x, n):
    y = np.float32(0.5)
    for i in range(n):
        y = np.zeros_like(y) + np.float32(i)  # (a NumPy scalar, then a 0-d ndarray)
        y = np.asarray(y * 2)
    return y


def argument_rebound_in_a_loop(x, n):
    y = x
    for _ in range(n):
        y = y + 1
    return y


def rebound_until_break(x, n):
    y = np.ones(())
    i = 0
    while True:
        if i >= n:
            break
        y = y * x
        i += 1
    return y, i


def rebound_in_an_if_in_a_loop(x, n):
    y = np.zeros(())
    for i in range(n):
        if i > 1:
            y = y + x
    return y


def rebound_in_nested_loops(x, n):
    y = np.zeros((), np.int32)
    for _ in range(n):
        for _ in range(n):
            y = y + np.int32(2)
    return y


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [
    rebound_in_a_while, rebound_in_a_range_loop_of_n, made_an_ndarray_in_a_while,
    made_an_ndarray_in_a_range_loop, argument_rebound_in_a_loop, rebound_until_break,
    rebound_in_an_if_in_a_loop, rebound_in_nested_loops], ids=lambda f: f.__name__)
def test_a_0d_variable_a_staged_loop_rebinds_has_the_kind_of_the_iterations_run(fn, target):
    """Python's kind after the loop is the one it starts as if the loop runs zero times, the
    body's if it runs: staged code returned the body's (np.float64 for array(0.)) on every
    run."""
    converted = autostage.convert(fn, target=target)
    x = np.array(1.25)
    for n in [0, 1, 3, 0, 2, 1]:
        n = np.int64(n)
        want, got = fn(x, n), converted(x, n)
        want, got = (want, got) if type(want) is tuple else ((want,), (got,))
        for w, g in zip(want, got, strict=True):
            assert type(g) is type(w) and np.asarray(g).dtype == np.asarray(w).dtype, (n, got)
            assert g == w
            assert (g is x) == (w is x)


def used_after_a_loop(x, n, use):
    y = np.zeros(())
    for _ in range(n):
        y = y + x
    if use == "+=":
        y += 1
    elif use == "[...]":
        y[...] = 2.0
    elif use == "type":
        return type(y) is np.ndarray
    return y


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("use", ["+=", "[...]", "type"])
def test_a_use_of_such_a_variable_other_than_returning_it_is_refused(use, target):
    """``y += 1`` and ``y[...] = v`` change a 0-d ndarray in place and rebind a NumPy scalar,
    ``type(y)`` is the one or the other: a clear error naming the loop and the variable."""
    with pytest.raises(autostage.StagingError, match=(
            rf"variable 'y' is a 0-d ndarray on some paths through the staged for loop at "
            rf".*test_ndarray_results.py:{_line_of(used_after_a_loop, 'for _ in')} .*returning "
            "it follows it, its other uses do not")):
        autostage.convert(used_after_a_loop, target=target)(np.array(1.0), np.int64(2), use)


@pytest.mark.parametrize("target", TARGETS)
def test_a_0d_value_of_either_kind_is_staged_where_its_kind_does_not_matter(target):
    x = np.array(2.0)
    assert autostage.convert(maybe_rebound_then_used, target=target)(x) == (
        maybe_rebound_then_used(x))


def _line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("target", TARGETS)
def test_such_a_result_keeps_its_kind_and_identity_when_saved_and_loaded(target, tmp_path):
    converted = autostage.convert(argument_rebound_in_a_loop, target=target)
    x = np.array(1.25)
    converted(x, np.int64(0))
    autostage.save(converted, tmp_path / "f.autostage")
    loaded = autostage.load(tmp_path / "f.autostage")
    for n in [0, 2, 0]:
        want, got = argument_rebound_in_a_loop(x, np.int64(n)), loaded(x, np.int64(n))
        assert type(got) is type(want) and got == want and (got is x) == (want is x)


def _write_into_contiguous(x):
    y = np.ascontiguousarray(x)
    y[0, 0] = -1.0
    return y.sum()


def _return_contiguous(x):
    return np.asarray(x, order="C")


def _read_contiguous(x):
    return np.ascontiguousarray(x).sum() + np.asarray(x, order="C")[0, 1]


def _contiguous_without_a_copy(x):
    return np.asarray(x, order="C", copy=False).sum()


def _write_into_contiguous_of_fresh(x):
    y = np.ascontiguousarray(x + 1.0)
    y[0, 0] = 5.0
    return y


@pytest.mark.parametrize("target", TARGETS)
def test_a_c_ordered_array_of_an_argument_is_refused_where_copy_or_not_shows(target):
    """np.ascontiguousarray(x) / np.asarray(x, order="C") is x itself where x is C-contiguous
    and a copy where not (x.T), which only the run shows: a write into it (it changed the
    caller's x.T through staged code, where NumPy's copy leaves it) and returning it are
    refused; reads, and arrays the function made (C-ordered), are staged."""
    for x in (np.arange(12.0).reshape(3, 4), np.arange(12.0).reshape(3, 4).T):
        for fn in (_write_into_contiguous, _return_contiguous):
            with pytest.raises(autostage.StagingError, match="C-contiguous and a copy where not"):
                autostage.convert(fn, target=target)(x.copy() if x.flags.c_contiguous else x)
        for fn in (_read_contiguous, _write_into_contiguous_of_fresh):
            f = autostage.convert(fn, target=target)
            for _ in range(2):
                np.testing.assert_array_equal(f(x), fn(x))
    with pytest.raises(autostage.StagingTypeError, match="copy=False: whether NumPy needs"):
        autostage.convert(_contiguous_without_a_copy, target=target)(x)
    assert np.array_equal(x, np.arange(12.0).reshape(3, 4).T)  # (never written)
