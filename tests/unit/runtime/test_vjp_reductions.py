"""VJP rules of reductions, scans, sorting, order statistics, creation ops and Python's math
functions (runtime/ops/reductions.py, sorting.py, statistics.py, creation.py, python_math.py):
``autostage.grad`` of ``sum(op(x) * w)`` against central finite differences in float64 on
hypothesis inputs away from ties and kinks; exact values at zeros (prod, cumprod) and ties
(max/min); second derivatives; ops that refuse a gradient say so; one CPU smoke test per family."""

from __future__ import annotations

import functools
import math

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pytest
from autostage.runtime import op_registry
from autostage.runtime.autodiff import GradientError
from autostage.runtime.tensor_spec import TensorSpec
from hypothesis import assume, given, settings
from test_vjp_elementwise import numeric_gradient

import autostage

EXAMPLES = settings(max_examples=10, deadline=None)
SHAPE = (3, 4)
Q = np.array([0.15, 0.6, 0.9])  # no q * (n - 1) is an integer for n = 3, 4 or 12 (kinks)


def arrays(low=-3.0, high=3.0, shape=SHAPE, signed=False):
    elements = st.floats(low, high)
    if signed:
        elements = st.one_of(elements, st.floats(-high, -low))
    return hnp.arrays(np.float64, shape, elements=elements)


@st.composite
def distinct_arrays(draw, low=-3.0, shape=SHAPE):
    """Arrays whose elements are at least 0.05 apart (sorting and max/min have kinks at ties)."""
    size = math.prod(shape)
    gaps = draw(hnp.arrays(np.float64, (size,), elements=st.floats(0.05, 0.6)))
    order = draw(st.permutations(range(size)))
    return (low + np.cumsum(gaps))[np.array(order)].reshape(shape)


def weighted(reduce):
    """``sum(reduce(x) * w)`` with a fixed random w of the result's shape."""
    def f(x):
        y = reduce(x)
        return np.sum(y * _weight(np.shape(reduce(np.ones(SHAPE)))))
    return f


@functools.cache
def _weight(shape: tuple) -> np.ndarray:
    return np.random.default_rng(len(shape) + sum(shape)).normal(size=shape)


@functools.cache
def gradient(f, target="interpreter"):
    return autostage.grad(autostage.convert(f, target=target))


def check(f, x, rtol=1e-5, atol=1e-6):
    g = gradient(f)(x)
    assert g.shape == x.shape and g.dtype == x.dtype
    np.testing.assert_allclose(g, numeric_gradient(f, (x,), 0), rtol=rtol, atol=atol)


AXES = [dict(axis=None), dict(axis=1), dict(axis=0, keepdims=True), dict(axis=(0, 1))]
SMOOTH = {  # name -> reduction of x, keyword arguments
    "sum": lambda x, kw: np.sum(x, **kw),
    "mean": lambda x, kw: np.mean(x, **kw),
    "var": lambda x, kw: np.var(x, **kw),
    "var_ddof": lambda x, kw: np.var(x, ddof=1, **kw),
    "std": lambda x, kw: np.std(x, **kw),
    "std_ddof": lambda x, kw: np.std(x, ddof=1, **kw),
}
REDUCERS = {(name, i): functools.partial(SMOOTH[name], kw=kw)
            for name in SMOOTH for i, kw in enumerate(AXES)}


@pytest.mark.parametrize("name", sorted(SMOOTH))
@pytest.mark.parametrize("axes", range(len(AXES)))
@EXAMPLES
@given(x=arrays())
def test_smooth_reductions_match_finite_differences(name, axes, x):
    if name.startswith("std"):
        assume(np.all(np.std(x, **{**AXES[axes], "keepdims": True}) > 1e-2))
    check(weighted(REDUCERS[name, axes]), x)


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("axes", range(len(AXES)))
@EXAMPLES
@given(x=distinct_arrays())
def test_max_and_min_match_finite_differences(name, axes, x):
    check(weighted(_reducer(name, axes)), x)


@pytest.mark.parametrize("axes", range(len(AXES)))
@EXAMPLES
@given(x=arrays(0.3, 2.0, signed=True))
def test_prod_matches_finite_differences(axes, x):
    check(weighted(_reducer("prod", axes)), x)


@functools.cache
def _reducer(name: str, axes: int):
    function = getattr(np, name)
    return lambda x: function(x, **AXES[axes])


def test_max_splits_the_cotangent_among_ties():
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [5.0, 1.0, 0.0, 4.0]])
    g = gradient(_max_rows)(x)
    expected = np.array([[0, 0.5, 0.5, 0], [0.25] * 4, [1, 0, 0, 0]]) * _weight((3,))[:, None]
    np.testing.assert_allclose(g, expected)


def _max_rows(x):
    return np.sum(np.max(x, axis=1) * _weight((3,)))


def _prod_rows(x):
    return np.sum(np.prod(x, axis=1) * _weight((3,)))


def _others(x: np.ndarray) -> np.ndarray:
    """The product of the other elements of each row, computed directly."""
    return np.array([[np.prod(np.delete(row, i)) for i in range(row.size)] for row in x])


def test_prod_at_zeros_is_the_product_of_the_others():
    x = np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 0.0, 3.0, 2.0], [1.0, 2.0, 0.5, 4.0]])
    np.testing.assert_allclose(gradient(_prod_rows)(x), _others(x) * _weight((3,))[:, None])


def test_second_derivative_of_prod_is_exact_at_zeros():
    first = gradient(lambda x: np.prod(x))
    v = np.array([0.3, -1.1, 0.8, 1.7])
    hvp = gradient(lambda x: np.sum(first(x) * v))
    for x in (np.array([1.5, 0.0, 2.0, -1.0]), np.array([0.0, 0.0, 3.0, 2.0])):
        hessian = np.array([[0.0 if i == j else np.prod(np.delete(x, [i, j]))
                             for j in range(4)] for i in range(4)])
        np.testing.assert_allclose(hvp(x), hessian @ v, atol=1e-12)


@pytest.mark.parametrize("name", ["mean", "var", "max"])
def test_second_derivatives_of_reductions(name):
    function = getattr(np, name)
    v = np.array([0.3, -1.1, 0.8, 1.7])
    first = gradient(lambda x: function(x * x * x))
    hvp = gradient(lambda x: np.sum(first(x) * v))
    x = np.array([0.4, -1.3, 0.9, 2.1])
    expected = numeric_gradient(lambda x: np.sum(first(x) * v), (x,), 0)
    np.testing.assert_allclose(hvp(x), expected, rtol=1e-5, atol=1e-6)


def test_mean_with_dtype_and_float32_input():
    def f(x):
        return np.mean(x, axis=0, dtype=np.float64) @ np.array([1.0, 2.0, 3.0, 4.0])

    x = np.ones(SHAPE, np.float32)
    g = gradient(f)(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, np.tile([1, 2, 3, 4], (3, 1)) / 3)


def _mean_and_var(x):
    return np.sum(np.mean(x, axis=1)) + np.sum(np.var(x, axis=0)) + np.sum(np.median(x, axis=0))


def _tape_gradient(x):
    with autostage.GradientTape() as tape:
        tape.watch(x)
        y = _mean_and_var(x)
    return tape.gradient(y, x)


def test_static_shapes_count_with_constants():
    staged = autostage.convert(_tape_gradient, input_signature=[TensorSpec(SHAPE, np.float64)],
                               target="interpreter")
    x = np.random.default_rng(0).normal(size=SHAPE)
    np.testing.assert_allclose(staged(x), numeric_gradient(_mean_and_var, (x,), 0), rtol=1e-5,
                               atol=1e-6)
    text = staged.get_concrete_function(x).text()
    assert " size " not in text and " dim " not in text


SCANS = {
    "cumsum_1": lambda x: np.cumsum(x, axis=1),
    "cumsum_none": lambda x: np.cumsum(x),
    "cumprod_0": lambda x: np.cumprod(x, axis=0),
    "cumprod_none": lambda x: np.cumprod(x),
}
SORTS = {
    "sort_1": lambda x: np.sort(x, axis=1),
    "sort_0": lambda x: np.sort(x, axis=0),
    "sort_none": lambda x: np.sort(x, axis=None),
    "take_argsort": lambda x: np.take_along_axis(x * x, np.argsort(x, axis=1), axis=1),
}


@pytest.mark.parametrize("name", sorted(SCANS))
@EXAMPLES
@given(x=arrays(0.3, 1.5, signed=True))
def test_scans_match_finite_differences(name, x):
    check(weighted(SCANS[name]), x)


@pytest.mark.parametrize("name", sorted(SORTS))
@EXAMPLES
@given(x=distinct_arrays())
def test_sorts_match_finite_differences(name, x):
    check(weighted(SORTS[name]), x)


def test_cumprod_at_zeros():
    x = np.array([[1.5, 0.0, 2.0, 0.0], [0.0, 1.2, 0.5, 2.0], [1.1, 1.2, 1.3, 0.0]])

    def exact(x):  # d/dx_i of sum_k w_k prod(x[:k+1]): the product of the others
        w = _weight(SHAPE)
        out = np.zeros_like(x)
        for r, i in np.ndindex(x.shape):
            for k in range(i, x.shape[1]):
                out[r, i] += w[r, k] * np.prod(np.delete(x[r, :k + 1], i))
        return out

    cumprod_rows = weighted(lambda x: np.cumprod(x, axis=1))
    np.testing.assert_allclose(gradient(cumprod_rows)(x), exact(x), atol=1e-12)


ORDER_STATISTICS = {
    "median_1": lambda x: np.median(x, axis=1),
    "median_none": lambda x: np.median(x),
    "median_0_keepdims": lambda x: np.median(x, axis=0, keepdims=True),
    "nanmedian_1": lambda x: np.nanmedian(x, axis=1),
    "quantile_1": lambda x: np.quantile(x, Q, axis=1),
    "quantile_none_keepdims": lambda x: np.quantile(x, Q, keepdims=True),
    "quantile_scalar_0": lambda x: np.quantile(x, 0.3, axis=0),
    "nanquantile_0": lambda x: np.nanquantile(x, Q, axis=0),
}


@pytest.mark.parametrize("name", sorted(ORDER_STATISTICS))
@EXAMPLES
@given(x=distinct_arrays())
def test_median_and_quantile_match_finite_differences(name, x):
    check(weighted(ORDER_STATISTICS[name]), x)


def test_nanmedian_skips_nans_and_quantile_differentiates_q():
    x = np.random.default_rng(4).normal(size=SHAPE)
    x[0, 1] = x[2, 3] = np.nan
    f = weighted(ORDER_STATISTICS["nanmedian_1"])
    g = gradient(f)(x)
    assert g[0, 1] == 0 and g[2, 3] == 0
    np.testing.assert_allclose(g, numeric_gradient(f, (x,), 0), atol=1e-6)

    def by_q(x, q):
        return np.sum(np.quantile(x, q, axis=0) * _weight((3, 4)))

    x = np.random.default_rng(5).normal(size=SHAPE)
    dx, dq = autostage.grad(autostage.convert(by_q, target="interpreter"), argnums=(0, 1))(x, Q)
    np.testing.assert_allclose(dx, numeric_gradient(by_q, (x, Q), 0), atol=1e-6)
    np.testing.assert_allclose(dq, numeric_gradient(by_q, (x, Q), 1), atol=1e-6)


NORMS = [dict(), dict(ord="fro"), dict(axis=1), dict(axis=0, ord=1),
         dict(axis=1, ord=np.inf, keepdims=True), dict(axis=0, ord=-np.inf), dict(axis=1, ord=3),
         dict(axis=1, ord=-1.5), dict(axis=(1, 0))]


@functools.cache
def _norm(i: int):
    return lambda x: np.linalg.norm(x, **NORMS[i])


@pytest.mark.parametrize("i", range(len(NORMS)))
@EXAMPLES
@given(x=distinct_arrays())
def test_vector_and_frobenius_norms_match_finite_differences(i, x):
    assume(np.all(np.abs(x) > 1e-2))  # (|x| has a kink at 0)
    # (and the largest or smallest |x| one at ties, x and -x: finite differences see a tie where
    # the values differ in their last bits, the derivative one element)
    assume(np.all(np.diff(np.sort(np.abs(x).ravel())) > 1e-2))
    check(weighted(_norm(i)), x)


def test_matrix_norms_other_than_frobenius_say_so():
    with pytest.raises(GradientError, match="ord=2 of a matrix"):
        gradient(lambda x: np.linalg.norm(x, ord=2))(np.eye(3))


def test_bincount_weights_get_the_cotangent_of_their_bin():
    index = np.array([0, 2, 2, 5])

    def f(weights):
        return np.sum(np.bincount(index, weights) * np.arange(6.0))

    g = autostage.grad(autostage.convert(f, target="interpreter"))(np.ones(4))
    np.testing.assert_array_equal(g, [0.0, 2.0, 2.0, 5.0])


def test_creation_ops_pass_gradients_to_their_fill_and_bounds():
    def f(fill, start, step):
        return np.sum(np.full((2, 3), fill) * np.arange(6.0).reshape(2, 3)) + np.sum(
            np.arange(start, 5.0, step) ** 2)

    args = (np.float64(1.5), np.float64(0.25), np.float64(1.1))
    grads = autostage.grad(autostage.convert(f, target="interpreter"), argnums=(0, 1, 2))(*args)
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g, numeric_gradient(f, args, i), rtol=1e-6)


def _python_math(x, y):
    return (math.sin(x) * math.exp(x) + math.atan2(x, y) + math.erf(x) - math.erfc(y)
            + math.pow(y, x) + math.hypot(x, y) + math.fmod(x, y) + math.copysign(x, y)
            + math.log1p(y) + math.acosh(1.0 + y) + math.degrees(x) + math.fabs(x))


def test_python_math_functions():
    args = (0.7, 1.3)
    grads = autostage.grad(autostage.convert(_python_math, target="interpreter"),
                           argnums=(0, 1))(*args)
    for i, g in enumerate(grads):
        expected = numeric_gradient(lambda x, y: _python_math(float(x), float(y)),
                                    tuple(np.float64(a) for a in args), i)
        np.testing.assert_allclose(g, expected, rtol=1e-6)


def test_what_cannot_be_differentiated_says_so():
    def gamma(x):
        return math.gamma(x)

    with pytest.raises(GradientError, match="math.gamma"):
        autostage.grad(autostage.convert(gamma, target="interpreter"))(1.5)

    def draw(scale):
        with autostage.GradientTape() as tape:
            tape.watch(scale)
            y = np.sum(np.random.normal(0.0, scale, size=3))
        return tape.gradient(y, scale)

    with pytest.raises(GradientError, match="random draw"):
        autostage.convert(draw, target="interpreter")(np.float64(1.5))



def test_take_along_axis_accumulates_repeated_indices():
    def gather(x):
        return np.sum(np.take_along_axis(x, np.array([[0, 0, 1]]), axis=1))

    got = autostage.grad(autostage.convert(gather, target="interpreter"))(np.ones((2, 3)))
    np.testing.assert_array_equal(got, [[2.0, 1.0, 0.0], [2.0, 1.0, 0.0]])


def test_integer_results_pass_no_gradient():
    no_gradient = ["argmax", "argmin", "any", "all", "argsort", "searchsorted", "nonzero",
                   "eye", "int_overflows", "python_arith"]
    assert all(op_registry.lookup(n).vjp is op_registry.NO_GRADIENT for n in no_gradient)

    def f(x):
        return np.sum(np.sort(x) * np.argsort(x)) + np.argmax(x) + np.any(x > 1.0)

    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(gradient(f)(x), numeric_gradient(f, (x,), 0), atol=1e-6)


def _reductions_family(x):
    return (np.sum(np.mean(x, axis=1) * np.max(x, axis=1)) + np.sum(np.prod(x, axis=1))
            + np.std(x, ddof=1) + np.sum(np.var(x, axis=0)) + np.min(x))


def _scans_family(x):
    return np.sum(np.cumsum(x, axis=1) * np.cumprod(x, axis=0) + np.sort(x, axis=0) * x)


def _statistics_family(x):
    return np.sum(np.median(x, axis=0)) + np.sum(np.quantile(x, Q, axis=1) ** 2)


@pytest.mark.parametrize("family", [_reductions_family, _scans_family, _statistics_family])
def test_cpu_target_computes_the_interpreters_gradients(family):
    x = np.random.default_rng(6).uniform(0.5, 1.5, size=SHAPE)
    cpu = gradient(family, target="cpu")(x)
    np.testing.assert_allclose(cpu, gradient(family)(x), rtol=1e-12)
