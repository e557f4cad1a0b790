"""VJP rules of tensor lists (ops/lists.py: a list's cotangent is a dense array, one row per
element) and lists carried through staged loops (autodiff/control_flow.py, list_appends.py):
``autostage.grad`` against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from autostage.runtime import op_registry
from autostage.runtime.autodiff import GradientError
from gradient_check import check_gradient, numeric_gradient, weights
from hypothesis import given, settings
from hypothesis import strategies as st

import autostage
from autostage import GradientTape

X = np.random.default_rng(2).normal(size=(4, 3))


def rnn(W, U, x, h0):
    h = h0
    outs = []
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ W + h @ U)
        outs.append(h)
    s = np.stack(outs)
    return np.sum(s * s)


def rnn_squared(W, U, x, h0):
    h = h0
    outs = []
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ W + h @ U)
        outs.append(h)
    return np.sum(np.stack(outs) ** 2)


def _rnn_inputs(steps: int, hidden: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(3, hidden)), rng.normal(size=(hidden, hidden)) * 0.5,
            rng.normal(size=(steps, 3)), rng.normal(size=hidden) * 0.1)


def test_rnn_gradients_with_respect_to_the_weights():
    check_gradient(rnn, *_rnn_inputs(5, 4), argnums=(0, 1, 2, 3))


@pytest.mark.skipif(op_registry.lookup("power").vjp is None,
                    reason="the VJP of power (x ** 2) is another change's")
def test_rnn_as_written_with_a_power():
    check_gradient(rnn_squared, *_rnn_inputs(5, 4), argnums=(0, 1))


@settings(max_examples=8, deadline=None)
@given(st.integers(1, 4), st.integers(1, 3), st.integers(0, 100))
def test_rnn_of_any_length(steps, hidden, seed):
    check_gradient(rnn, *_rnn_inputs(steps, hidden, seed), argnums=(0, 1))


def test_rnn_on_the_cpu_target(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(tmp_path / "cache"))
    args = _rnn_inputs(5, 4)
    found = check_gradient(rnn, *args, argnums=(0, 1), target="cpu")
    interpreted = autostage.grad(autostage.convert(rnn, target="interpreter"), argnums=(0, 1))
    for a, b in zip(found, interpreted(*args), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def _nested(x, w):
    outs = []
    for i in range(x.shape[0]):
        for j in range(x.shape[1] - 1):
            outs.append(x[i] * float(j + 1))
    return np.sum(np.stack(outs) * w)


def _only_a_list(x, w):
    outs = []
    while len(outs) < x.shape[0] - 1:
        outs.append(x[0] * 2.0)  # (reading len(outs) here would be refused)
    return np.sum(np.stack(outs) * w[:3])


def _read_in_a_later_loop(x, w):
    hs = []
    for i in range(x.shape[0]):
        hs.append(np.tanh(x[i]))
    total = 0.0
    for i in range(x.shape[0]):
        total = total + np.sum(hs[i] * hs[x.shape[0] - 1 - i] * w[i])
    return total


def _after_the_loop(x, w):
    outs = []
    for i in range(x.shape[0]):
        outs.append(x[i] * x[i])
    last = outs.pop()
    first = outs.pop(0)
    outs[1] = outs[0] * 3.0
    return (np.sum(last * w[0]) + np.sum(first * w[1]) + np.sum(np.stack(outs) * w[2:4])
            + np.sum(outs[-1] * w[3]))


def _pop_at(x, w):
    outs = []
    for i in range(x.shape[0]):
        outs.append(x[i] * x[i])
    middle = outs.pop(-2)
    return np.sum(middle * w[0]) + np.sum(np.stack(outs) * w[1:])


def _stack_axis(x, w):
    outs = []
    for i in range(x.shape[0]):
        outs.append(x[i] * 2.0)
    return np.sum(np.stack(outs, axis=1) * w.T)


def _started_list(x, w):
    outs = [x[0] * 5.0, x[1]]
    for i in range(x.shape[0] - 2):
        outs.append(x[i + 2] * 3.0)
    return np.sum(np.stack(outs) * w)


def _replaced(x, w):
    buf = [x[0]]
    for i in range(x.shape[0] - 1):
        buf = []
        buf.append(x[i + 1] * 2.0)
    return np.sum(np.stack(buf) * w[:1])


def _appended_in_a_branch(x, w):
    outs = []
    for i in range(x.shape[0]):
        if np.sum(x[i]) > 0:
            outs.append(x[i] * 2.0)
        else:
            outs.append(x[i] * 3.0)
        if i % 2 == 0:
            outs.append(x[i] * x[i])
    return np.sum(np.stack(outs)[:4] * w)


def _unused_list(x, w):
    log = []
    h = x[0]
    for i in range(x.shape[0]):
        h = np.tanh(h * x[i])
        log.append(x[:i + 1] * 1.0)  # ragged, and no gradient goes through it
    return np.sum(h * w[0])


LIST_CASES = {
    "nested_loops": (_nested, (8, 3)), "only_a_list": (_only_a_list, (4, 3)),
    "read_in_a_later_loop": (_read_in_a_later_loop, (4, 3)),
    "after_the_loop": (_after_the_loop, (4, 3)), "pop_at": (_pop_at, (4, 3)),
    "stack_axis": (_stack_axis, (4, 3)), "started_list": (_started_list, (4, 3)),
    "replaced": (_replaced, (4, 3)), "appended_in_a_branch": (_appended_in_a_branch, (4, 3)),
    "unused_list": (_unused_list, (4, 3)),
}


@pytest.mark.parametrize("name", LIST_CASES)
def test_list_gradients_match_finite_differences(name):
    f, shape = LIST_CASES[name]
    check_gradient(f, X, weights(shape))


def _reads_in_the_loop(x, w):
    outs = [x[0]]
    for i in range(x.shape[0] - 1):
        outs.append(outs[-1] * x[i])
    return np.sum(np.stack(outs) * w)


def _length_in_the_loop(x, w):
    outs = []
    for i in range(x.shape[0]):
        outs.append(x[i] * float(len(outs)))
    return np.sum(np.stack(outs) * w)


def _reads_after_appending(x, w):
    outs = [x[0]]
    total = 0.0
    for i in range(x.shape[0] - 1):
        outs.append(np.tanh(outs[-1] * x[i] + 0.5 * outs[0]))
        total = total + np.sum(outs[-1] * outs[-2] * w[i])
    return total


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
@pytest.mark.parametrize("f", [_reads_in_the_loop, _length_in_the_loop, _reads_after_appending])
def test_a_loop_that_reads_the_list_it_appends_to(f, target):
    """The replay reads the final list at the index the list of that iteration had (its length
    saved per iteration): outs[-1], outs[0], len(outs), before and after the iteration's
    append, and the list is not used after the loop (only its reads carry the gradient)."""
    check_gradient(f, X, weights((4, 3)), argnums=(0, 1), target=target)


def _read_in_a_branch(x, w):
    outs = [x[0]]
    for i in range(x.shape[0] - 1):
        if np.sum(x[i]) > 0:
            h = outs[-1] * x[i]
        else:
            h = outs[-1] + x[i]
        outs.append(h)
    return np.sum(np.stack(outs) * w)


def _read_after_a_branch_appends(x, w):
    outs = [x[0]]
    for i in range(x.shape[0] - 1):
        if np.sum(x[i]) > 0:
            outs.append(x[i] * 2.0)
        h = outs[-1] * x[i]
        outs.append(h)
    return np.sum(outs[-1] * w[0])


def _reads_a_list_it_replaces(x, w):
    outs = [x[0]]
    for i in range(x.shape[0] - 1):
        h = outs[-1]
        outs = [np.tanh(h * x[i])]  # the final list holds the last iteration's list only
    return np.sum(outs[-1] * w[0])


@pytest.mark.parametrize("f, message", [
    (_read_in_a_branch, "outside its branches and inner loops"),
    (_read_after_a_branch_appends, "one by one"),
    (_reads_a_list_it_replaces, "replaces it with a new list")])
def test_a_loop_that_reads_its_list_where_the_final_list_cannot_tell_is_refused(f, message):
    with pytest.raises(GradientError, match=message):
        autostage.grad(autostage.convert(f, target="interpreter"))(X, weights((4, 3)))


def test_second_derivative_of_a_loop_that_reads_its_list():
    def f(x, n):
        outs = [x]
        for _ in range(n):
            outs.append(np.tanh(outs[-1] * x) + 0.1 * outs[0])
        return outs[-1]

    def df(x, n):
        return autostage.grad(f)(x, n)

    x, n, eps = np.float64(0.4), np.int64(3), 1e-5
    np.testing.assert_allclose(df(x, n), (f(x + eps, 3) - f(x - eps, 3)) / (2 * eps), rtol=1e-7)
    np.testing.assert_allclose(autostage.grad(df)(x, n),
                               (df(x + eps, n) - df(x - eps, n)) / (2 * eps), rtol=1e-6)


def _ragged(x, w):
    outs = []
    for i in range(x.shape[0]):
        outs.append(x[:i + 1] * 2.0)
    return np.sum(outs[0] * w[0]) + np.sum(outs[-1] * w)


def test_a_ragged_list_raises_instead_of_broadcasting():
    with pytest.raises(ValueError, match="share one shape"):
        autostage.grad(autostage.convert(_ragged, target="interpreter"))(X[:, 0], X[:, 1])


def _loop(x):
    h = x * 0.5
    outs = []
    for t in range(x.shape[0]):
        h = np.tanh(h * x[t] + x)
        outs.append(h)
    s = np.stack(outs)
    return np.sum(s * s) + np.sum(h)


def _second(x, w):
    with GradientTape() as outer:
        outer.watch(x)
        with GradientTape() as inner:
            inner.watch(x)
            y = _loop(x)
        z = np.sum(inner.gradient(y, x) * w)
    return outer.gradient(z, x)


def test_second_derivative_through_a_loop_with_a_list():
    x, w = np.array([0.3, -0.2, 0.5]), weights((3,))
    first = autostage.grad(autostage.convert(_loop, target="interpreter"))
    expected = numeric_gradient(lambda x: float(np.sum(first(x) * w)), (x,), 0)
    found = autostage.convert(_second, target="interpreter")(x, w)
    np.testing.assert_allclose(found, expected, rtol=1e-5, atol=1e-7)


def _stacked_in_a_branch(w, xs):
    outs = []
    h = w * 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(w * h + xs[t])
        outs.append(h)
    return np.sum(np.stack(outs) ** 2) if np.sum(h) > -100.0 else np.sum(w)


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_second_derivative_of_a_list_stacked_in_a_staged_branch(target):
    """The list's cotangent, threaded through the branch's backward ``cond``, was cast and
    summed to the list as if it were a tensor: an AttributeError ('ListType' ... 'dtype')
    staged as the function's raise."""
    w, xs, v = np.array([0.5, -0.3]), X[:3, :2], np.array([1.0, 2.0])
    first = autostage.grad(autostage.convert(_stacked_in_a_branch, target="interpreter"))

    def hvp(w, xs, v):
        return np.sum(autostage.grad(_stacked_in_a_branch)(w, xs) * v)

    expected = numeric_gradient(lambda w: float(np.sum(first(w, xs) * v)), (w,), 0)
    found = autostage.grad(autostage.convert(hvp, target=target))(w, xs, v)
    np.testing.assert_allclose(found, expected, rtol=1e-5, atol=1e-7)
