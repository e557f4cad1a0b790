"""runtime/numpy_shapes.py and runtime/numpy_grids.py: the errors of the staged NumPy shape
functions (NumPy's own, raised at trace or run time, and clear refusals naming the function,
the argument and the user's line), the ``repeat`` op, and which results are views."""

import re

import numpy as np
import pytest
from autostage.runtime import op_registry
from autostage.runtime.tensor import StagingTypeError
from autostage.runtime.tracing import StagingError
from autostage.runtime.types import TensorType

import autostage
from autostage import config

TARGETS = ("interpreter", "cpu")
THIS = __file__.rsplit("/", 1)[-1]


def staged(fn, target):
    return autostage.convert(fn, target=target)


@pytest.mark.parametrize("target", TARGETS)
def test_split_of_a_staged_size_checks_the_division_at_run_time(target):
    def f(x):
        return np.split(x, 4)

    assert [p.tolist() for p in staged(f, target)(np.arange(8.0))] == [
        [0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]
    with pytest.raises(ValueError, match="array split does not result in an equal division"):
        staged(f, target)(np.arange(6.0))


def test_split_into_zero_sections_is_pythons_zero_division():
    def f(x):
        return np.split(x, 0)

    with pytest.raises(ZeroDivisionError, match="integer modulo by zero"):
        staged(f, "interpreter")(np.arange(6.0))


def test_array_split_refuses_a_staged_number_of_sections():
    def f(x, n):
        return np.array_split(x, n)

    with pytest.raises(StagingTypeError, match=rf"np.split at .*{THIS}:\d+: a staged number of "
                       "sections is not supported"):
        staged(f, "interpreter")(np.arange(6.0), np.int64(2))


@pytest.mark.parametrize("target", TARGETS)
def test_repeat_errors_at_run_time(target):
    def count(x, n):
        return np.repeat(x, n)

    def counts(x, r):
        return np.repeat(x, r)

    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        staged(count, target)(np.arange(3.0), np.int64(-1))
    with pytest.raises(ValueError, match=r"could not be broadcast together with shape \(3,\) "
                       r"\(2,\)"):
        staged(counts, target)(np.arange(3.0), np.array([1, 2]))
    with pytest.raises(ValueError, match="repeats may not contain negative values"):
        staged(counts, target)(np.arange(3.0), np.array([1, -2, 0]))
    np.testing.assert_array_equal(staged(counts, target)(np.arange(3.0), np.array([0, 2, 1])),
                                  [1.0, 1.0, 2.0])


def test_repeat_with_float_counts_is_numpys_type_error():
    def f(x, r):
        return np.repeat(x, r)

    with pytest.raises(TypeError, match=r"Cannot cast array data from dtype\('float64'\) to "
                       r"dtype\('int64'\) according to the rule 'safe'"):
        staged(f, "interpreter")(np.arange(3.0), np.ones(3))


def test_repeat_op_type_rule_and_reference():
    x, counts = TensorType(np.float32, (None, 4)), TensorType(np.int64, (None,))
    assert op_registry.result_types("repeat", [x, counts], {"axis": 1}) == (
        TensorType(np.float32, (None, None)),)
    with pytest.raises(ValueError, match=r"broadcast together with shape \(3,\) \(2,\)"):
        op_registry.result_types("repeat", [TensorType(np.float32, (3,)),
                                            TensorType(np.int64, (2,))], {"axis": 0})
    with pytest.raises(TypeError, match="1-d int64"):
        op_registry.result_types("repeat", [x, TensorType(np.int32, (None,))], {"axis": 0})
    assert op_registry.lookup("repeat").doc


@pytest.mark.parametrize("target", TARGETS)
def test_take_errors(target):
    def wrap(x):
        return np.take(x, [1, 2], mode="wrap")

    def raising(x):
        return np.take(x, [1, 7])

    with pytest.raises(IndexError, match="cannot do a non-empty take from an empty axes."):
        staged(wrap, target)(np.zeros(0))
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 3"):
        staged(raising, target)(np.arange(3.0))


def test_take_refuses_out_and_rejects_bad_modes():
    def out(x, y):
        return np.take(x, [0], out=y)

    def mode(x):
        return np.take(x, [0], mode="nearest")

    with pytest.raises(StagingTypeError, match=rf"np.take at .*{THIS}:\d+: out= is not "
                       "supported on staged tensors"):
        staged(out, "interpreter")(np.arange(3.0), np.zeros(1))
    with pytest.raises(ValueError, match="clipmode must be one of 'clip', 'raise', or 'wrap'"):
        staged(mode, "interpreter")(np.arange(3.0))


def test_pad_refuses_other_modes_and_odd_reflection():
    def mean(x):
        return np.pad(x, 1, mode="mean")

    def odd(x):
        return np.pad(x, 1, mode="reflect", reflect_type="odd")

    def extra(x):
        return np.pad(x, 1, mode="edge", constant_values=3)

    with pytest.raises(StagingTypeError, match=rf"np.pad at .*{THIS}:\d+: mode='mean' is not "
                       "supported on staged tensors; the staged modes are 'constant', 'edge', "
                       "'reflect', 'symmetric', 'wrap'"):
        staged(mean, "interpreter")(np.arange(3.0))
    with pytest.raises(StagingTypeError, match="reflect_type='odd' is not supported"):
        staged(odd, "interpreter")(np.arange(3.0))
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge': "
                       r"\{'constant_values'\}"):
        staged(extra, "interpreter")(np.arange(3.0))


@pytest.mark.parametrize("target", TARGETS)
def test_pad_edge_of_an_empty_axis_raises_at_run_time(target):
    def f(x):
        return np.pad(x, 1, mode="edge")

    with pytest.raises(ValueError, match="can't extend empty axis 0 using modes other than "
                       "'constant' or 'empty'"):
        staged(f, target)(np.zeros(0))


@pytest.mark.parametrize("target", TARGETS)
def test_linspace_with_a_staged_num(target):
    def f(x, a):
        return np.linspace(a, 2.0, x.shape[0])

    def g(x):
        return np.linspace(np.float32(1), 3, x.shape[0] - 1, endpoint=False, dtype=np.int16)

    for n in (0, 1, 2, 7):
        y = staged(f, target)(np.zeros(n), np.float64(-1.0))
        want = np.linspace(-1.0, 2.0, n)
        assert y.dtype == want.dtype
        np.testing.assert_array_equal(y, want)
        if n:
            got = staged(g, target)(np.zeros(n))
            assert got.dtype == np.int16
            np.testing.assert_array_equal(got, g(np.zeros(n)))
    with pytest.raises(ValueError, match="Number of samples must be non-negative"):
        staged(g, target)(np.zeros(0))


@pytest.mark.parametrize("target", TARGETS)
def test_linspace_retstep_with_a_staged_num_is_refused(target):
    def f(x):
        return np.linspace(0.0, 1.0, x.shape[0], retstep=True)  # step: NumPy float, or nan

    line = f.__code__.co_firstlineno + 1
    with pytest.raises(TypeError, match=rf"retstep=True.*test_numpy_shapes.py:{line}.*"
                                        r"\(stop - start\) / \(num - 1\)"):
        staged(f, target)(np.zeros(3))


@pytest.mark.parametrize("target", TARGETS)
def test_cross_of_vectors_of_unknown_size(target):
    def f(a, b):
        return np.cross(a, b)

    with config.STATIC_SIZES.override(0):
        with pytest.raises(ValueError, match="autostage staged 3-vectors .* but they have 2 "
                           "components here"):
            staged(f, target)(np.ones(2), np.ones(2))
        with pytest.raises(ValueError, match=r"incompatible dimensions for cross product\n"
                           r"\(dimension must be 2 or 3\)"):
            staged(f, target)(np.ones(4), np.ones(4))
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])  # sizes known: NumPy's 2-d cross
    with pytest.warns(DeprecationWarning):
        expected = np.cross(a, b)
    assert staged(f, target)(a, b) == expected


def test_refusals_name_the_function_and_argument():
    def rot(x, k):
        return np.rot90(x, k)

    def single(x):
        return np.vstack(x)

    def offset(x, k):
        return np.diagonal(x, k)

    with pytest.raises(StagingTypeError, match="np.rot90 at .*: a staged k is not supported"):
        staged(rot, "interpreter")(np.ones((2, 2)), np.int64(1))
    # NumPy's dispatcher iterates the argument before dispatching: the tensor's own error
    with pytest.raises(StagingTypeError, match=rf"cannot be iterated at trace(.|\n)*{THIS}"):
        staged(single, "interpreter")(np.ones((2, 2)))
    with pytest.raises(StagingTypeError, match="np.diagonal at .*: a staged offset"):
        staged(offset, "interpreter")(np.ones((2, 2)), np.int64(1))


def unpack_known(a, b):
    x, y, z = np.array([a, b, a + b])  # a length the trace knows
    return x * y + z


def unpack_wrong_count(a, b):
    x, y = np.array([a, b, a])
    return x


def unpack_argument(p):
    k, r = p
    return k * r


def unpack_starred(p):
    k, *rest = p
    return k


def unpack_scalar(a):
    k, r = a
    return k


@pytest.mark.parametrize("target", TARGETS)
def test_unpacking_a_tensor_of_known_length_gives_its_items(target):
    """``x, y, z = arr`` in converted code used to be refused as "cannot be used as an
    iterable ... iterate over it in code autostage converts", though the code was converted."""
    a, b = np.float64(2.0), np.float64(3.0)
    got = staged(unpack_known, target)(a, b)
    assert got == unpack_known(a, b) and type(got) is np.float64
    with pytest.raises(ValueError, match=r"^too many values to unpack \(expected 2\)"):
        staged(unpack_wrong_count, target)(a, b)
    # A length known only at run time is tested then, with Python's errors; a starred target
    # (its list's length) and 0-d values are refused naming the line.
    f = staged(unpack_argument, target)
    for p in (np.array([2.0, 3.0]), np.arange(4.0).reshape(2, 2), np.array([1.0]),
              np.arange(3.0), np.zeros(0), np.array([5.0, 6.0])):
        try:
            want = unpack_argument(p)
        except ValueError as e:
            with pytest.raises(ValueError, match=f"^{re.escape(str(e))}"):
                f(p)
        else:
            np.testing.assert_array_equal(f(p), want)
    with pytest.raises(StagingTypeError, match=rf"{THIS}:\d+: unpacking a staged tensor is "
                                               r"not staged: .* starred target .* x\[1:\]"):
        staged(unpack_starred, target)(np.array([2.0, 3.0]))
    with pytest.raises(StagingTypeError, match=rf"{THIS}:\d+: unpacking .* it is 0-d"):
        staged(unpack_scalar, target)(a)


def test_split_pieces_are_views_and_take_results_are_not():
    def write_piece(x):
        y = x * 2
        a, b = np.split(y, 2)
        a[0] = 5.0
        return a

    def write_taken(x):
        y = np.take(x, [0, 1])
        y[0] = 5.0
        return y

    with pytest.raises(StagingError, match="writes through a view of another array"):
        staged(write_piece, "interpreter")(np.arange(4.0))
    np.testing.assert_array_equal(staged(write_taken, "interpreter")(np.arange(4.0)), [5.0, 1.0])


@pytest.mark.parametrize("target", TARGETS)
def test_broadcast_to_a_size_known_at_run_time_raises_numpys_error(target):
    # the cpu lowering filled the result by slice assignment: Numba's "cannot assign slice"
    def f(x, n):
        return np.broadcast_to(x, (n, 3))

    with config.STATIC_SIZES.override(0), pytest.raises(
            ValueError, match=r"operands could not be broadcast together with remapped shapes "
            r"\[original->remapped\]: \(2,4\)  and requested shape \(2,3\)"):
        staged(f, target)(np.ones((2, 4)), np.int64(2))
    with pytest.raises(ValueError, match=r"operands could not be broadcast together with "
                       r"remapped shapes \[original->remapped\]: \(2,4\)  and requested shape "
                       r"\(\?,3\)"):  # found while tracing: the staged size is unknown
        staged(f, target)(np.ones((2, 4)), np.int64(2))
    np.testing.assert_array_equal(staged(f, target)(np.arange(3.0), np.int64(2)),
                                  np.broadcast_to(np.arange(3.0), (2, 3)))


def _unravel(a, k):
    return np.unravel_index(k, a.shape)


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_unravel_index_out_of_bounds_is_a_clear_value_error(target):
    a = np.zeros((2, 3))
    staged = autostage.convert(_unravel, target=target)
    assert staged(a, np.int64(5)) == _unravel(a, np.int64(5)) == (1, 2)
    for k in (np.int64(6), np.int64(-1)):
        with pytest.raises(ValueError, match="np.unravel_index: an index is out of bounds for "
                                             "the shape's size"):
            staged(a, k)
