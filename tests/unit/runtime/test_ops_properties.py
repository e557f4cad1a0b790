"""Property tests: every element-wise op and reduction has NumPy 2's result dtype and values, for
all 14 dtypes, broadcast shapes with unknown dimensions, weak Python scalars and 0-d arrays."""

from __future__ import annotations

import os
import warnings

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pytest
from autostage.runtime import value_info
from autostage.runtime.ops.elementwise import BINARY, UNARY
from autostage.runtime.ops.reductions import REDUCTIONS
from autostage.runtime.types import DTYPES, TensorType
from hypothesis import HealthCheck, given, settings
from ops_harness import assert_same, check_type, evaluate, trace

ALL_DTYPES = list(DTYPES)
SETTINGS = settings(max_examples=int(os.environ.get("AUTOSTAGE_HYPOTHESIS_EXAMPLES", "40")),
                    deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

python_scalars = st.one_of(
    st.booleans(),
    st.integers(-300, 300),
    st.sampled_from([2**31, -(2**31) - 1, 2**63 - 1, 2**63, 2**64 - 1, -(2**63)]),
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.complex_numbers(max_magnitude=1e6, allow_nan=False),
)


def arrays_of(dtype, shape):
    return hnp.arrays(dtype, shape, elements=hnp.from_dtype(dtype, allow_subnormal=False)
                      if dtype.kind != "f" else None)


@st.composite
def operands(draw, count: int):
    """``count`` operands: arrays of broadcastable shapes, 0-d arrays or Python scalars, each
    array staged with a random mix of known and unknown dimensions."""
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=count, max_dims=3, max_side=3))
    result = []
    for shape in shapes.input_shapes:
        kind = draw(st.sampled_from(["array", "array", "zero_d", "python"]))
        if kind == "python":
            result.append(("python", draw(python_scalars), None))
            continue
        dtype = draw(st.sampled_from(ALL_DTYPES))
        shape = () if kind == "zero_d" else shape
        value = draw(arrays_of(dtype, shape))
        known = tuple(draw(st.booleans()) for _ in shape)
        staged_shape = tuple(d if k else None for d, k in zip(shape, known, strict=True))
        result.append(("array", value, TensorType(dtype, staged_shape)))
    if all(kind == "python" for kind, _, _ in result):  # at least one staged operand
        value = draw(arrays_of(np.dtype(np.float32), (2,)))
        result[0] = ("array", value, TensorType(np.float32, (None,)))
    return result


def _run_both(numpy_fn, ops):
    """NumPy's result (or exception type) and the staged one, for the same operands."""
    concrete = [value for _, value, _ in ops]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            expected = np.asarray(numpy_fn(*concrete))
        except (TypeError, ValueError, OverflowError) as e:
            expected = e
        staged_positions = [i for i, (kind, _, _) in enumerate(ops) if kind == "array"]
        param_types = [ops[i][2] for i in staged_positions]

        def fn(*params):
            args = list(concrete)
            for i, p in zip(staged_positions, params, strict=True):
                if isinstance(concrete[i], np.ndarray) and p.ndim == 0:
                    value_info.mark_array(p.value)  # (a 0-d ndarray, not a NumPy scalar)
                args[i] = p
            return numpy_fn(*args)

        try:
            function = trace(fn, param_types)
            (value,) = evaluate(function, *(concrete[i] for i in staged_positions))
        except (TypeError, ValueError, OverflowError) as e:
            return expected, e, None
    return expected, value, function.result_types[0]


def _check(expected, staged, staged_type):
    if isinstance(expected, Exception):
        assert isinstance(staged, Exception), f"NumPy raised {expected!r}, staged gave {staged}"
        assert type(staged) is type(expected) or isinstance(staged, type(expected)), (
            expected, staged)
        return
    assert not isinstance(staged, Exception), f"staging raised {staged!r}; NumPy gave {expected}"
    check_type(staged_type, staged)
    assert_same(staged, expected)


@pytest.mark.parametrize("name", sorted(BINARY))
@SETTINGS
@given(data=st.data())
def test_binary_ufunc_matches_numpy(name, data):
    ufunc = BINARY[name]
    ops = data.draw(operands(2))
    _check(*_run_both(ufunc, ops))


@pytest.mark.parametrize("name", sorted(UNARY))
@SETTINGS
@given(data=st.data())
def test_unary_ufunc_matches_numpy(name, data):
    ops = data.draw(operands(1))
    _check(*_run_both(UNARY[name], ops))


@pytest.mark.parametrize("symbol", ["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<",
                                    ">>", "<", "<=", "==", "!=", ">", ">="])
@SETTINGS
@given(data=st.data())
def test_python_operators_match_numpy(symbol, data):
    ops = data.draw(operands(2))
    fn = eval(f"lambda a, b: a {symbol} b")  # noqa: S307 - a fixed operator from the list
    _check(*_run_both(fn, ops))


@pytest.mark.parametrize("name", ["where", "clip"])
@SETTINGS
@given(data=st.data())
def test_ternary_functions_match_numpy(name, data):
    ops = data.draw(operands(3))
    _check(*_run_both(getattr(np, name), ops))


@st.composite
def reduction_case(draw):
    dtype = draw(st.sampled_from(ALL_DTYPES))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3))
    value = draw(arrays_of(dtype, shape))
    ndim = len(shape)
    axis = draw(st.one_of(
        st.none(),
        st.integers(-ndim, ndim - 1) if ndim else st.none(),
        st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).map(tuple)
        if ndim else st.none()))
    keepdims = draw(st.booleans())
    known = draw(st.booleans())
    return value, axis, keepdims, known


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@SETTINGS
@given(case=reduction_case())
def test_reduction_matches_numpy(name, case):
    value, axis, keepdims, known = case
    if name in ("argmax", "argmin") and isinstance(axis, tuple):
        axis = axis[0] if axis else None
    staged_type = TensorType(value.dtype, value.shape if known else (None,) * value.ndim)
    fn = lambda x: getattr(np, name)(x, axis=axis, keepdims=keepdims)  # noqa: E731
    ops = [("array", value, staged_type)]
    _check(*_run_both(fn, ops))
