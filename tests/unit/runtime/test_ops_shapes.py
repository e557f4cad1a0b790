"""Shape, creation, indexing and product ops: types and values against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from autostage.runtime import array_shapes as S
from autostage.runtime.types import TensorType
from ops_harness import check_against_numpy, stage, trace

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
V = np.array([3, -1, 4, 1, 5], dtype=np.int16)


@pytest.mark.parametrize("fn", [
    lambda x: x.reshape(6, -1), lambda x: x.reshape((4, 6)), lambda x: np.reshape(x, -1),
    lambda x: x.transpose(), lambda x: x.transpose(2, 0, 1), lambda x: x.T,
    lambda x: np.transpose(x, (1, 0, 2)), lambda x: np.expand_dims(x, (0, -1)),
    lambda x: np.squeeze(x[:1], 0), lambda x: x.flatten(), lambda x: x.ravel(),
    lambda x: np.concatenate([x, x], axis=1), lambda x: np.concatenate([x, x], axis=None),
    lambda x: np.stack([x, x * 2], axis=-1), lambda x: np.broadcast_to(x[:, :1], (2, 3, 4)),
    lambda x: np.copy(x), lambda x: x.astype(np.int8), lambda x: np.zeros_like(x),
    lambda x: np.ones_like(x, dtype=np.int32), lambda x: np.full_like(x, 7.5),
])
@pytest.mark.parametrize("known", [True, False])
def test_shape_ops_match_numpy(fn, known):
    check_against_numpy(fn, X, known=known)


def test_reshape_with_staged_size():
    def fn(x):
        return x.reshape(x.shape[0], -1)
    (t,), (value,) = stage(fn, X)
    assert t == TensorType(np.float32, (None, None))
    np.testing.assert_array_equal(value, X.reshape(2, -1))


def test_static_shapes_are_inferred():
    (t,), _ = stage(lambda x: np.concatenate([x, x[:, :2]], axis=1).reshape(-1, 4), X,
                    known=True)
    assert t == TensorType(np.float32, (10, 4))


def test_incompatible_reshape_is_an_error():
    with pytest.raises(ValueError, match=r"cannot reshape array of size 24 into shape \(5,\)"):
        stage(lambda x: x.reshape(5), X, known=True)


def test_squeeze_without_axis_needs_known_dims():
    with pytest.raises(TypeError, match="pass axis="):
        stage(lambda x: x.squeeze(), X)


@pytest.mark.parametrize("index", [
    0, -1, (1, 2), (slice(None), 0), (Ellipsis, 1), (None, 0), (slice(1, None), None, 2),
    (slice(None, None, -1),), (slice(0, 3, 2), slice(1, 2)), ([0, 1, 1],), ([1, 0], 2),
    (0, slice(None), [3, 0]), (slice(None), [0, 2], [1, 3]), ([1, 0], slice(None), [0, 3]),
    (np.array([True, False]),), (Ellipsis, np.array([True, False, True, False])),
])
@pytest.mark.parametrize("known", [True, False])
def test_getitem_matches_numpy(index, known):
    check_against_numpy(lambda x: x[index], X, known=known)


def test_getitem_with_mask_and_staged_indices():
    check_against_numpy(lambda v: v[v > 1], V)
    check_against_numpy(lambda v: v[v.astype(np.int64) % 2 == 0], V)
    check_against_numpy(lambda v: v[v.argmax()], V)
    check_against_numpy(lambda v: v[v.argmin():v.argmax()], V)
    check_against_numpy(lambda v: v[np.abs(v).astype(np.int64) % 5], V)


def test_getitem_out_of_bounds_static():
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 2"):
        stage(lambda x: x[5], X, known=True)
    with pytest.raises(IndexError, match="too many indices"):
        stage(lambda x: x[0, 0, 0, 0], X)


@pytest.mark.parametrize("index, value", [
    (0, 1.5), ((1, slice(None), 2), np.arange(3)), ((slice(None), 0), 7), ((Ellipsis, -1), 2),
    (([0, 1], [2, 0]), -3),
])
def test_setitem_is_functional(index, value):
    def fn(x):
        return S.setitem(x.copy(), index, value)

    expected = X.copy()
    expected[index] = value
    (t,), (result,) = stage(fn, X)
    assert t.dtype == np.float32
    np.testing.assert_array_equal(result, expected)


def test_setitem_with_staged_index_and_value():
    def fn(v):
        return S.setitem(v + 0, v.argmax(), v.sum())
    expected = V.copy()
    expected[V.argmax()] = V.sum()
    (_,), (result,) = stage(fn, V)
    np.testing.assert_array_equal(result, expected)


def test_setitem_overflow_like_numpy():
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for int8"):
        stage(lambda v: S.setitem(v.astype(np.int8), 0, 300), V)


def test_setitem_on_argument_is_an_error():
    with pytest.raises(Exception, match=r"changes the argument `x` in place, which cannot be "
                                        r"staged.*`x = x.copy\(\)`") as info:
        trace(lambda x: S.setitem(x, 0, 1.0), [TensorType(np.float32, (None,))], names=["x"])
    assert "test_ops_shapes.py" in str(info.value)  # names the user's line
    with pytest.raises(Exception, match="argument `x` in place through a view of it"):
        trace(lambda x: S.setitem(x.T[0], 0, 1.0), [TensorType(np.float32, (None, 3))],
              names=["x"])


def test_setitem_on_view_of_local_is_an_error():
    with pytest.raises(Exception, match="writes through a view of another array"):
        stage(lambda x: S.setitem((x + 1)[0], 0, 1.0), X)


def test_creation_with_static_and_staged_sizes():
    def fn(v):
        n = v.shape[0]
        return (S.zeros((n, 2), np.int32), S.ones(3), S.full(n, v[0]), S.arange(n),
                S.arange(1, n, 2, dtype=np.float32), S.eye(n, k=1), S.eye(3, 2, dtype=int),
                S.full((2, n), 2.5, np.float16))
    types, values = stage(fn, V)
    expected = (np.zeros((5, 2), np.int32), np.ones(3), np.full(5, V[0]), np.arange(5),
                np.arange(1, 5, 2, dtype=np.float32), np.eye(5, k=1), np.eye(3, 2, dtype=int),
                np.full((2, 5), 2.5, np.float16))
    for t, value, e in zip(types, values, expected, strict=True):
        assert t.dtype == e.dtype and t.ndim == e.ndim
        assert value.dtype == e.dtype
        np.testing.assert_array_equal(value, e)


A = np.arange(6, dtype=np.float32).reshape(2, 3)
B = np.arange(12, dtype=np.int64).reshape(3, 4)


@pytest.mark.parametrize("fn", [
    lambda a, b: a @ b, lambda a, b: np.matmul(a, b), lambda a, b: np.dot(a, b),
    lambda a, b: a[0] @ b, lambda a, b: a @ b[:, 0], lambda a, b: a[0] @ b[:, 0],
    lambda a, b: np.stack([a, a]) @ b, lambda a, b: np.dot(a[0], b[:, 0]),
    lambda a, b: np.einsum("ij,jk->ik", a, b), lambda a, b: np.einsum("ij,jk", a, b),
    lambda a, b: np.einsum("bi,ij->bj", a, b), lambda a, b: np.einsum("i,i->", a[0], a[1]),
    lambda a, b: np.einsum("ij->ji", a), lambda a, b: a.astype(np.int8) @ b.astype(np.int8),
    lambda a, b: (a > 1) @ (b > 2), lambda a, b: a.dot(b),
])
@pytest.mark.parametrize("known", [True, False])
def test_products_match_numpy(fn, known):
    check_against_numpy(fn, A, B, known=known)


def test_matmul_mismatch_is_an_error():
    with pytest.raises(ValueError, match="mismatch in its core dimension 0"):
        stage(lambda a, b: b @ a, A, B, known=True)
    with pytest.raises(ValueError, match=r"shapes \(3,4\) and \(2,3\) not aligned"):
        stage(lambda a, b: np.dot(b, a), A, B, known=True)


def _distance(x, mean):  # (filterpy's mahalanobis)
    x = np.atleast_1d(np.asarray(x).squeeze())
    y = x - np.atleast_1d(np.asarray(mean).squeeze())
    return float(np.sqrt(y @ y))


def test_squeeze_of_unknown_sizes_is_refused_naming_the_line():
    import inspect

    import autostage
    f = autostage.convert(_distance)
    assert f(np.ones(1), np.zeros(1)) == 1.0  # (sizes known: the first trace's)
    with pytest.raises(Exception, match=r"squeeze\(\) without axis") as e:
        f(np.ones(2), np.zeros(2))
    line = inspect.getsourcelines(_distance)[1] + 1
    assert str(e.value).startswith(f"{inspect.getsourcefile(_distance)}:{line}: squeeze()")
