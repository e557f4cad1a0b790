"""The Tensor's NumPy surface: operators, methods, properties, NumPy dispatch, and the clear
errors for what cannot be staged."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from autostage.runtime import numpy_dispatch, stage_operator, tracing
from autostage.runtime.tensor import StagingTypeError, Tensor
from autostage.runtime.types import TensorType
from ops_harness import check_against_numpy, evaluate, stage, trace

import autostage
from autostage import config

F = np.array([[1.5, -2.0, 0.0], [4.0, np.nan, -0.5]], dtype=np.float32)
INTS = np.array([[1, -2, 3], [4, 5, -6]], dtype=np.int8)


@pytest.mark.parametrize("fn", [
    lambda x: x + 1, lambda x: 1 - x, lambda x: x * 2.0, lambda x: 2.0 / x, lambda x: x // 2,
    lambda x: x % 3, lambda x: x ** 2, lambda x: 2.0 ** x, lambda x: -x, lambda x: +x,
    lambda x: abs(x), lambda x: x < 1, lambda x: 1 <= x, lambda x: x == x, lambda x: x != 0,
    lambda x: divmod(x, 4), lambda x: x @ x.T, lambda x: x.T @ np.ones(2, np.float32),
    lambda x: np.maximum(x, 0), lambda x: np.abs(x), lambda x: np.exp(x), np.tanh, np.isnan,
    lambda x: np.where(x > 0, x, 0), lambda x: x.clip(0, 2), lambda x: np.clip(x, -1, None),
])
@pytest.mark.parametrize("array", [F, INTS], ids=["f32", "i8"])
def test_operators_match_numpy(fn, array):
    check_against_numpy(fn, array)


@pytest.mark.parametrize("fn", [
    lambda x: ~x, lambda x: x & 3, lambda x: 6 | x, lambda x: x ^ x, lambda x: x << 1,
    lambda x: x >> 1,
])
def test_bitwise_operators_match_numpy(fn):
    check_against_numpy(fn, INTS)
    check_against_numpy(fn, INTS > 0) if fn(np.ones(1, bool)).dtype == bool else None


@pytest.mark.parametrize("method", ["sum", "prod", "mean", "max", "min", "argmax", "argmin",
                                    "any", "all", "std", "var"])
@pytest.mark.parametrize("kwargs", [{}, {"axis": 0}, {"axis": -1, "keepdims": True}])
def test_reduction_methods_and_functions_match_numpy(method, kwargs):
    check_against_numpy(lambda x: getattr(x, method)(**kwargs), INTS)
    check_against_numpy(lambda x: getattr(np, method)(x, **kwargs), F)


def test_weak_scalars_and_dims():
    check_against_numpy(lambda x: x * 2.0, F)          # stays float32
    check_against_numpy(lambda x: x / 2, INTS)            # int / int -> float64
    (t,), _ = stage(lambda x: x * x.shape[0], F)       # x.shape[0] is a Python int: f32
    assert t.dtype == np.float32
    (t,), (v,) = stage(lambda x: x.shape[1] / 2 + x.size, F)
    assert t.dtype == np.float64 and v == 7.5


def test_i8_plus_out_of_range_int_raises_like_numpy():
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for int8"):
        stage(lambda x: x + 300, INTS)
    check_against_numpy(lambda x: x < 300, INTS)  # NumPy 2 compares exactly


def test_shape_ndim_dtype_size():
    def fn(x):
        n, m = x.shape
        assert m == 3 and isinstance(n, Tensor) and x.ndim == 2 and x.dtype == np.float32
        return n, x.size, np.shape(x)[0], n == 4, n * 0.5
    function = trace(fn, [TensorType(np.float32, (None, 3))])
    values = evaluate(function, np.zeros((4, 3), np.float32))
    assert [v.item() for v in values] == [4, 12, 4, True, 2.0]
    # all Python numbers: weak
    assert [str(t) for t in function.result_types] == ["i64[]~", "i64[]~", "i64[]~", "bool[]~",
                                                       "f64[]~"]


def test_len_and_iter():
    def fn(x):
        assert len(x.reshape(6, -1)) == 6
        with pytest.raises(StagingTypeError, match="staged len"):
            len(x)
        with pytest.raises(StagingTypeError, match="cannot be iterated at trace time"):
            iter(x)
        return x
    stage(fn, F)


@pytest.mark.parametrize("convert, message", [
    (bool, "used as a Python bool"), (int, "cannot be used as a Python int"),
    (float, "cannot be used as a Python float"), (np.asarray, "cannot be used as a NumPy array"),
    (operator.index, "np.zeros/np.ones/np.arange take staged sizes"),
])
def test_python_conversions_raise(convert, message):
    def fn(x):
        with pytest.raises(StagingTypeError, match=message):
            convert(x)
        return x
    stage(fn, INTS)


def test_unsupported_numpy_functions_name_themselves():
    def fn(x):
        with pytest.raises(StagingTypeError, match="np.fft.fft is not supported on staged"):
            np.fft.fft(x)
        with pytest.raises(StagingTypeError, match="np.partition is not supported on staged"):
            np.partition(x, 1)
        with pytest.raises(StagingTypeError, match=r"np.add.reduceat is not supported"):
            np.add.reduceat(x, [0, 1])
        with pytest.raises(StagingTypeError,
                           match=r"np.add\(..., out=...\) at .*test_tensor.py:\d+ cannot be"):
            np.add(x, 1, out=np.zeros((2, 3)))
        with pytest.raises(StagingTypeError, match=r"`\+=` at .*test_tensor.py:\d+ changes "
                                                   r"the NumPy array `buffer` in place.*"
                                                   r"`buffer = buffer \+ ...`"):
            buffer = np.zeros((2, 3), np.float32)
            buffer += x
        return x
    stage(fn, F)


def test_incompatible_shapes_message():
    with pytest.raises(ValueError, match=r"operands could not be broadcast together with shapes "
                                         r"\(2,3\) \(2,\)"):
        stage(lambda x: x + x[0, :2], F, known=True)


def test_staged_creation_table():
    def fn(x):
        n = x.shape[0]
        zeros = numpy_dispatch.staged_function(np.zeros)((n, 2), np.float32)
        stacked = numpy_dispatch.staged_function(np.array)([x[0], x[1]])
        same = numpy_dispatch.staged_function(np.asarray)(x)
        assert same is x
        return zeros, stacked
    (z, s), (zv, sv) = stage(fn, F)
    assert z == TensorType(np.float32, (None, 2)) and zv.shape == (2, 2)
    np.testing.assert_array_equal(sv, F)


def test_in_place_operators():
    def fn(x):
        y = x.copy()
        y += 1
        y *= 2.5        # float into int8: same_kind refuses, as NumPy does
        return y
    with pytest.raises(TypeError, match="Cannot cast ufunc 'multiply' output from "
                                        "dtype\\('float64'\\) to dtype\\('int8'\\)"):
        stage(fn, INTS)

    def ok(x):
        y = x + 0
        y += 1
        y -= x[0]
        return y
    check_against_numpy(ok, INTS)


def test_in_place_on_argument_is_an_error():
    def fn(x):
        x += 1
        return x
    with pytest.raises(tracing.StagingError, match="changes the argument `x` in place"):
        trace(fn, [TensorType(np.int8, (None,))], names=["x"])


def test_subscript_operator_hooks():
    def fn(x):
        y = stage_operator("setitem", x + 0, (0, 1), 9)
        y = stage_operator("iadd", y, 1)
        return stage_operator("getitem", y, (slice(None), 1))
    expected = INTS.copy() + 0
    expected[0, 1] = 9
    expected += 1
    (_,), (value,) = stage(fn, INTS)
    np.testing.assert_array_equal(value, expected[:, 1])


def test_item_assignment_outside_converted_code():
    def fn(x):
        with pytest.raises(StagingTypeError, match="could not stage: converted code turns"):
            x[0] = 1
        return x
    stage(fn, INTS)


def test_in_place_on_a_scalar_argument_rebinds():
    # a NumPy scalar argument is immutable: `n //= 10` is `n = n // 10`, as in Python
    def fn(n, f):
        n //= 10
        f += 1.5
        return n, f
    function = trace(fn, [TensorType(np.int64, ()), TensorType(np.float32, ())],
                     names=["n", "f"])
    assert function.result_types == (TensorType(np.int64, ()), TensorType(np.float32, ()))
    assert evaluate(function, np.int64(123), np.float32(1)) == (12, 2.5)


def _in_place_on_numpy_scalars(x):
    s = x[0]          # an np.int64: `s += 0.5` rebinds it to an np.float64
    s += 0.5
    t = x.sum()
    t *= 1.5
    z = np.zeros_like(x[0])  # a 0-d ndarray: written in place, same_kind casting
    z += 2
    return s, t, z


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_in_place_on_a_numpy_scalar_rebinds_it_to_the_promoted_result(target):
    """``s = x[0]; s += 0.5`` of an int array used to raise NumPy's same_kind casting
    TypeError, as for an array; a NumPy scalar is immutable and Python rebinds ``s``. And
    ``z += 2`` of a 0-d ndarray ``z`` used to come back as a NumPy scalar."""
    x = np.arange(1, 4)
    got = autostage.convert(target=target)(_in_place_on_numpy_scalars)(x)
    expected = _in_place_on_numpy_scalars(x)
    assert got == expected
    assert [type(v) for v in got] == [type(v) for v in expected]


def test_formatting_a_tensor_is_a_clear_error():
    def fn(x):
        for text in (lambda: f"{x:.3f}", lambda: f"{x}", lambda: format(x, ">10"),
                     lambda: "{}".format(x)):  # noqa: UP032
            with pytest.raises(StagingTypeError, match="print\\(x\\)"):
                text()
        with pytest.raises(StagingTypeError, match=r"str\(\) of a staged tensor"):
            str(x)
        assert repr(x).startswith("<staged Tensor f32[?,?]")  # debugging keeps working
        return x
    stage(fn, F)


def _repr_in_converted_code(x):
    return repr(x)


def _format_in_converted_code(x):
    return f"{x:.3f}"


@pytest.mark.parametrize("fn", [_repr_in_converted_code, _format_in_converted_code])
def test_text_of_a_tensor_in_converted_code_is_made_when_it_runs(fn):
    """(``staging.text``: the string is made from the run's value, as Python makes it.)"""
    import autostage
    for x in (np.float64(1.0), np.float64(2.5)):
        assert autostage.convert(fn, target="interpreter")(x) == fn(x)



@pytest.mark.parametrize("target", ["interpreter", "cpu"])
@pytest.mark.parametrize("sizes", ["0", "16"])
def test_an_in_place_operator_never_grows_its_target(target, sizes):
    """``w -= g`` with w of size 1 and g of size 20: NumPy refuses (the result would not fit
    in w); staged code once returned a 20-element w."""
    def shrink(w, g):
        w = w.copy()
        w -= g
        return w

    with config.STATIC_SIZES.override(int(sizes)):
        f = autostage.convert(shrink, target=target)
        np.testing.assert_array_equal(f(np.ones(20), np.ones(20)), np.zeros(20))
        with pytest.raises(ValueError, match=r"non-broadcastable output operand with shape "):
            f(np.ones(1), np.ones(20))
        np.testing.assert_array_equal(f(np.ones(20), np.ones(1)), np.zeros(20))


def _roots(values):
    return np.roots(values[::-1])  # (numpy_financial.irr)


def _poly(values):
    return np.poly(values)


def _nditer(values):
    return [v for v in np.nditer(values)]  # (numpy-100 #62)


def _ndenumerate(values):
    return [i for i, v in np.ndenumerate(values)]


@pytest.mark.parametrize("fn", [_roots, _poly, _nditer, _ndenumerate])
def test_numpy_functions_iterating_their_argument_name_themselves_and_the_line(fn):
    """Their dispatchers iterate the argument, or they take arrays without dispatching: NumPy
    replaced the staged value's refusal with "dispatcher for __array_function__ did not return
    an iterable", or failed in its iterator ("Iterator operand is flagged as writeable")."""
    line = fn.__code__.co_firstlineno + 1
    with pytest.raises(StagingTypeError, match=rf"np.{fn.__name__[1:]} is not supported on "
                                               rf"staged tensors at .*test_tensor.py:{line}"):
        autostage.convert(fn)(np.array([-100.0, 39.0, 59.0]))


def _ufunc_methods(x, y, b):  # (numpy-100 #41, #47, #99)
    return (np.add.reduce(x), np.add.reduce(x, axis=1), np.multiply.reduce(y),
            np.maximum.reduce(x, axis=None), np.logical_and.reduce(b),
            np.logical_or.reduce(b, axis=1, keepdims=True), np.add.accumulate(x),
            np.multiply.accumulate(y), np.subtract.outer(y, y), np.multiply.outer(x, y),
            np.add.outer(y, 2.0), np.minimum.reduce(y.astype(np.int8)), np.add.reduce(b))


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_ufunc_reduce_accumulate_and_outer_are_numpys(target):
    args = (np.arange(6.0).reshape(2, 3), np.array([1, 2, 3], np.int32),
            np.array([[True, False], [True, True]]))
    got, expected = autostage.convert(_ufunc_methods, target=target)(*args), _ufunc_methods(*args)
    for g, e in zip(got, expected, strict=True):
        assert type(g) is type(e) and g.dtype == e.dtype and np.shape(g) == np.shape(e)
        np.testing.assert_array_equal(g, e)


def _member(top, y):
    return y in top  # (a top-k accuracy check)


def test_membership_in_a_staged_array_is_refused_naming_the_line():
    """Python asks ``(x == v).any()`` for a bool at once; it raised a TypeError naming the
    internal class ("argument of type 'Tensor' is not iterable")."""
    line = _member.__code__.co_firstlineno + 1
    with pytest.raises(StagingTypeError, match=rf"test_tensor.py:{line}: `v in x` of a staged "
                                               r"array .*`\(x == v\).any\(\)`"):
        autostage.convert(_member)(np.array([1, 2]), np.int64(2))
