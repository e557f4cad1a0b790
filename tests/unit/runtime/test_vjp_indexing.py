"""VJP rules of indexing (ops/indexing.py): getitem (basic: a setitem into zeros; advanced: a
``scatter_add``, so repeated positions accumulate), setitem (the write that stays gets the
cotangent), take_along_axis; and the ``scatter_add`` op itself on both targets."""

from __future__ import annotations

import numpy as np
import pytest
from autostage.runtime import tracing
from autostage.runtime.tensor import Tensor
from gradient_check import check_gradient, staged_gradient, weights
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cpu_ops_harness import run_cpu

import autostage

X = np.random.default_rng(1).normal(size=(4, 3, 5))


def _write_slice(x):
    y = x * 1.0
    y[1:3, 0] = x[0, 1] * 2.0
    return y


def _write_repeated(x):  # row 0 is written twice: the second write stays
    y = x * 2.0
    y[np.array([0, 2, 0]), 1] = x[1:4, 0] * x[1:4, 2]
    return y


def _write_broadcast(x):
    y = x * 2.0
    y[np.array([0, 2, 0])] = x[3, 0]
    return y


def _add_in_place(x):
    y = x * 1.0
    y[1:3] += x[0]
    return y


def _read_in_loop(x, w):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + np.sum(x[i] * w[i])
    return total


def _write_in_loop(x, w):
    y = np.zeros_like(x)
    for i in range(1, x.shape[0]):
        y[i] = y[i - 1] * x[i] + x[i - 1]
    return np.sum(y * w)


CASES = {
    "int": (lambda x, w: np.sum(x[1] * w), (3, 5)),
    "negative_ints": (lambda x, w: np.sum(x[-1, 2] * w), (5,)),
    "slices": (lambda x, w: np.sum(x[1:3, :, ::2] * w), (2, 3, 3)),
    "negative_step": (lambda x, w: np.sum(x[::-2, 1:, -1] * w), (2, 2)),
    "staged_slice": (lambda x, w: np.sum(x[1:x.shape[0] - 1, :x.shape[1] // 2] * w), (2, 1, 5)),
    "newaxis": (lambda x, w: np.sum(x[None, 1, :, None, 2:4] * w), (1, 3, 1, 2)),
    "ellipsis": (lambda x, w: np.sum(x[..., 1] * w), (4, 3)),
    "ellipsis_newaxis": (lambda x, w: np.sum(x[0, ..., None] * w), (3, 5, 1)),
    "repeated_rows": (lambda x, w: np.sum(x[np.array([0, 2, 2, 3, 0])] * w), (5, 3, 5)),
    "repeated_2d_index": (lambda x, w: np.sum(x[:, np.array([[1, 1], [0, 2]])] * w),
                          (4, 2, 2, 5)),
    "negative_repeated": (lambda x, w: np.sum(x[np.array([-1, -1, 3]), 1] * w), (3, 5)),
    "two_arrays": (lambda x, w: np.sum(x[np.array([0, 0, 1]), :, np.array([4, 4, 4])] * w),
                   (3, 3)),
    "mask": (lambda x, w: np.sum(x[0][x[0] > 0] * 2.0), ()),
    "mask_rows": (lambda x, w: np.sum(x[x[:, 0, 0] > -10.0][:, 0] * w), (4, 5)),
    "advanced_newaxis": (lambda x, w: np.sum(x[None, np.array([1, 1]), 0] * w), (1, 2, 5)),
    "take": (lambda x, w: np.sum(np.take(x, np.array([0, 2, 2]), axis=1) * w), (4, 3, 5)),
    "take_along_axis": (lambda x, w: np.sum(np.take_along_axis(
        x, np.array([[[0, 4]], [[4, 4]], [[1, 1]], [[-1, 0]]]), axis=2) * w), (4, 3, 2)),
    "take_along_axis_flat": (lambda x, w: np.sum(np.take_along_axis(
        x[0, 0], np.array([3, 3, -1]), axis=None) * w), (3,)),
    "sorted": (lambda x, w: np.sum(np.take_along_axis(x, np.argsort(x, axis=1), axis=1) * w),
               (4, 3, 5)),
    "setitem_slice": (lambda x, w: np.sum(_write_slice(x) * w), (4, 3, 5)),
    "setitem_repeated": (lambda x, w: np.sum(_write_repeated(x) * w), (4, 3, 5)),
    "setitem_broadcast": (lambda x, w: np.sum(_write_broadcast(x) * w), (4, 3, 5)),
    "add_in_place": (lambda x, w: np.sum(_add_in_place(x) * w), (4, 3, 5)),
    "read_in_loop": (_read_in_loop, (4, 3, 5)),
    "write_in_loop": (_write_in_loop, (4, 3, 5)),
}


@pytest.mark.parametrize("name", CASES)
def test_indexing_gradients_match_finite_differences(name):
    f, shape = CASES[name]
    check_gradient(f, X, weights(shape))


@pytest.mark.parametrize("name", ["slices", "newaxis", "repeated_2d_index", "two_arrays",
                                  "take_along_axis", "setitem_repeated", "write_in_loop"])
def test_static_shapes_take_the_same_rules(name):
    f, shape = CASES[name]
    check_gradient(f, X, weights(shape), static=True)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(-4, 3), min_size=1, max_size=6), st.integers(0, 2))
def test_repeated_integer_indices_accumulate(positions, axis):
    """Every read of a position adds its cotangent there: np.add.at, not assignment."""
    x = np.random.default_rng(0).normal(size=(4, 4, 4))
    index = np.array(positions)
    w = weights(np.take(x, index, axis=axis).shape)
    key = (slice(None),) * axis + (index,)

    def f(x, w):
        return np.sum(x[key] * w)
    expected = np.zeros_like(x)
    np.add.at(expected, key, w)
    np.testing.assert_allclose(staged_gradient(f, x, w), expected, rtol=1e-12)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=5))
def test_a_repeated_write_passes_the_gradient_of_the_write_that_stays(positions):
    x = np.random.default_rng(0).normal(size=(4, 2))
    v = np.random.default_rng(1).normal(size=(len(positions), 2))
    index = np.array(positions)

    def f(v, x):
        y = x * 1.0
        y[index] = v * v
        return np.sum(y * y)
    check_gradient(f, v, x)


@settings(max_examples=10, deadline=None)
@given(st.tuples(*(st.one_of(st.none(), st.integers(-6, 6)) for _ in range(3))),
       st.booleans())
def test_slices_static_or_staged(parts, staged):
    start, stop, step = parts
    step = None if step == 0 else step
    x = np.random.default_rng(0).normal(size=(5, 2))
    w = weights(x[start:stop:step].shape)

    def f(x, w):
        n = x.shape[0] - 5  # 0, staged: the same slice with staged bounds
        lo = start if start is None or not staged else start + n
        hi = stop if stop is None or not staged else stop + n
        return np.sum(x[lo:hi:step] * w)
    check_gradient(f, x, w)


def _scatter_add(x, v, index, *staged):
    values = [x.value, v.value, *(s.value for s in staged)]
    return Tensor(tracing.emit("scatter_add", values, {"index": index})[0])


def _scatters(x, v, i, m):
    return (_scatter_add(x, v, ("?",), i),                           # repeated rows
            _scatter_add(x, v[0, :2], ((None, None, None), (1, 3, None))),  # basic
            _scatter_add(x, v[:, 0], (0, "?"), i),
            _scatter_add(x, v[:2], ("?",), m),                       # a mask
            _scatter_add(x, v[:1], (None, "?"), i),                  # newaxis + advanced
            _scatter_add(x[0, 0], v[0, 0], ()))                      # 0-d


def test_scatter_add_matches_numpy_add_at_on_both_targets():
    x = np.arange(12.0).reshape(4, 3)
    v = np.random.default_rng(0).normal(size=(5, 3))
    i = np.array([1, 2, 1, -1, 1])
    m = np.array([True, False, False, True])
    found = []
    for args, index in (((v,), (i,)), ((v[0, :2],), (slice(None), slice(1, 3))),
                        ((v[:, 0],), (0, i)), ((v[:2],), (m,)), ((v[:1],), (None, i))):
        expected = x.copy()
        np.add.at(expected, index, args[0])
        found.append(expected)
    run_cpu(_scatters, x, v, i, m)  # the cpu lowering against the NumPy reference
    # ... and the NumPy reference against np.add.at itself
    from ops_harness import stage
    _, values = stage(_scatters, x, v, i, m)
    for value, expected in zip(values, found, strict=False):
        np.testing.assert_array_equal(value, expected)
    assert values[-1] == x[0, 0] + v[0, 0]


def _indexing_pipeline(x, w):
    y = x * 1.0
    y[np.array([0, 1, 0]), 1] = x[1, 0:3] * x[0, 0:3]
    y[1:, ::2, 0] = x[0, 1, 1:3] * 3.0
    a = x[np.array([1, 1, 0]), :, np.array([-1, 3, 3])]
    t = np.take_along_axis(x, np.argsort(x, axis=2), axis=2)
    return (np.sum(y * w) + np.sum(a * a) + np.sum(x[x > 0.5]) + np.sum(t * w)
            + np.sum(x[..., None, 2] * 2.0))


def test_cpu_target_smoke(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(tmp_path / "cache"))
    x, w = X[:2, :, :4], weights((2, 3, 4))
    found = check_gradient(_indexing_pipeline, x, w, target="cpu")
    interpreted = autostage.grad(autostage.convert(_indexing_pipeline, target="interpreter"))
    np.testing.assert_allclose(found, interpreted(x, w), rtol=1e-12)
