"""dtype_rules: NumPy 2 promotion with weak scalars, and broadcasting with unknown dimensions."""

from __future__ import annotations

import numpy as np
import pytest
from autostage.runtime import dtype_rules
from autostage.runtime.dtype_rules import Weak, broadcast_shapes, resolve
from autostage.runtime.tensor import StagingTypeError

import autostage

F32, I8, I64, F64, U64 = (np.dtype(t) for t in (np.float32, np.int8, np.int64, np.float64,
                                                 np.uint64))


@pytest.mark.parametrize("a, b, expected", [
    ((3, 1), (1, 4), (3, 4)),
    ((None,), (1,), (None,)),
    ((None,), (5,), (5,)),
    ((1,), (None,), (None,)),
    ((None, 3), (None, None), (None, 3)),
    ((), (None, 2), (None, 2)),
    ((2, None), (7,), (2, 7)),
])
def test_broadcast_shapes(a, b, expected):
    assert broadcast_shapes(a, b) == expected


def test_broadcast_incompatible_names_both_shapes():
    with pytest.raises(ValueError, match=r"could not be broadcast together with shapes "
                                         r"\(2,3\) \(\?,4\)"):
        broadcast_shapes((2, 3), (None, 4))


@pytest.mark.parametrize("function, specs, dtypes, result", [
    (np.multiply, (F32, 2.0), (F32, F32), F32),        # weak float keeps float32
    (np.add, (I8, 2.5), (I8, F64), F64),               # weak float with ints: float64
    (np.divide, (I8, 2), (I8, F64), F64),              # true division of ints
    (np.less, (I8, 300), (I8, I64), np.dtype(bool)),   # comparisons exact out of range
    (np.add, (F32, Weak(int)), (F32, F32), F32),       # a staged Python int (x.shape[0])
    (np.add, (Weak(int), Weak(float)), (F64, F64), F64),
    (np.arctan2, (np.dtype(bool), 2**63), (np.dtype(bool), F64), F64),
])
def test_resolve_weak_operands(function, specs, dtypes, result):
    assert resolve(function, specs, function.__name__) == (dtypes, result)


def test_resolve_raises_numpy_overflow_error():
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for int8"):
        resolve(np.add, (I8, 300), "add")
    with pytest.raises(OverflowError, match="Python integer -1 out of bounds for uint64"):
        resolve(np.add, (U64, -1), "add")


def test_resolve_raises_numpy_type_error_for_missing_loop():
    with pytest.raises(TypeError, match="bitwise_and"):
        resolve(np.bitwise_and, (F32, F32), "bitwise_and")


@pytest.mark.parametrize("name, dtype, result", [
    ("sum", np.bool_, np.int64), ("sum", np.int8, np.int64), ("sum", np.uint8, np.uint64),
    ("mean", np.int16, np.float64), ("mean", np.float16, np.float16),
    ("std", np.complex64, np.float32), ("max", np.bool_, np.bool_), ("argmax", np.float32,
                                                                      np.int64),
])
def test_reduction_dtype(name, dtype, result):
    assert dtype_rules.reduction_dtype(name, np.dtype(dtype)) == np.dtype(result)


def test_normalize_axes():
    assert dtype_rules.normalize_axes((-1, 0), 3) == (0, 2)
    assert dtype_rules.normalize_axes(None, 2) == (0, 1)
    with pytest.raises(np.exceptions.AxisError):
        dtype_rules.normalize_axes(3, 3)
    with pytest.raises(ValueError, match="duplicate"):
        dtype_rules.normalize_axes((1, -2), 3)


@pytest.mark.parametrize("call", [
    lambda x, k: np.sort(x, axis=k), lambda x, k: np.cumsum(x, axis=k),
    lambda x, k: np.concatenate([x, x], axis=k), lambda x, k: np.argmax(x, axis=k),
    lambda x, k: np.median(x, axis=k), lambda x, k: np.take(x, 1, axis=k),
])
def test_a_staged_axis_is_refused_naming_the_users_line(call):
    """``axis=k`` of a NumPy integer argument: the error was a bare ``TypeError: axis must be a
    Python int, not Tensor``, naming no line."""
    x = np.arange(6.0).reshape(2, 3)
    line = call.__code__.co_firstlineno
    with pytest.raises(StagingTypeError, match=rf"test_dtype_rules.py:{line}: a staged tensor "
                                               rf"cannot be used as a Python int"):
        autostage.convert(call)(x, np.int64(1))
    with pytest.raises(TypeError, match="axis must be a Python int, not float"):
        dtype_rules.normalize_axis(1.0, 2)
