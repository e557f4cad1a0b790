"""0-d results come back as NumPy gives them: 0-d ndarrays from creation/shape calls and for
0-d ndarray arguments, NumPy scalars from ufuncs, reductions and indexing (ndarray_results)."""

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
