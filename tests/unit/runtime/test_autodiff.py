"""Reverse-mode autodiff of staged code: the API (grad, value_and_grad, GradientTape,
stop_gradient, custom_gradient) and gradients through branches, loops and calls, checked
against central finite differences of the plain Python function."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from autostage.runtime.autodiff import GradientError

import autostage

TARGETS = ["interpreter", "cpu"]


def finite_difference(f, args, k, eps=1e-6):
    """Central differences of scalar ``f`` with respect to argument ``k`` (float64)."""
    args = [np.array(a, dtype=np.float64) for a in args]
    grad = np.zeros_like(args[k])
    for index in np.ndindex(args[k].shape):
        plus = [a.copy() for a in args]
        minus = [a.copy() for a in args]
        plus[k][index] += eps
        minus[k][index] -= eps
        grad[index] = (f(*plus) - f(*minus)) / (2 * eps)
    return grad


def check_gradients(f, args, target, argnums=(0,), tol=1e-6):
    got = autostage.grad(autostage.convert(f, target=target), argnums=argnums)(*args)
    for k, g in zip(argnums, got, strict=True):
        np.testing.assert_allclose(g, finite_difference(f, args, k), rtol=tol, atol=tol)


def layer(w, x):
    h = np.tanh(x @ w)
    return np.sum(h * h) / 2.0


def piecewise(x, w):
    if np.sum(x) > 0:
        y = np.sum(np.tanh(x * w))
    else:
        y = np.sum(x * x * w)
    return y


def fixed_point(x, w):
    steps = 0
    while np.sum(x) < 100.0:  # a trip count that depends on the data
        x = x * w + 1.0
        steps += 1
    return np.sum(x) + steps


def counted(x, w):
    total = 0.0
    for i in range(4):
        if i % 2 == 0:
            total = total + np.sum(x * w) * i
        else:
            total = total - np.sum(np.exp(x) * w)
    return total


RNG = np.random.default_rng(7)
CASES = [
    (layer, (RNG.standard_normal((3, 2)), RNG.standard_normal((4, 3)))),
    (piecewise, (np.array([0.5, -0.2, 1.0]), np.array([1.5, 2.0, -1.0]))),
    (piecewise, (np.array([-0.5, -0.2, 1.0]), np.array([1.5, 2.0, -1.0]))),
    (fixed_point, (np.array([0.5, 0.2, 1.0]), np.array([1.5, 2.0, 1.1]))),
    (counted, (np.array([0.3, -0.4]), np.array([1.2, 0.7]))),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", range(len(CASES)), ids=[c[0].__name__ for c in CASES])
def test_gradients_match_finite_differences(case, target):
    f, args = CASES[case]
    check_gradients(f, args, target, argnums=(0, 1), tol=1e-5)


def test_value_and_grad_returns_both_and_keeps_float32():
    w = np.ones((3, 2), np.float32)
    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    value, gw = autostage.value_and_grad(layer)(w, x)
    assert value.dtype == np.float32 and gw.dtype == np.float32
    np.testing.assert_allclose(value, layer(w, x), rtol=1e-6)
    np.testing.assert_allclose(gw, finite_difference(layer, (w, x), 0), rtol=2e-3, atol=2e-3)


def test_argnums_pytrees_and_aux():
    def loss(params, x):
        w, b = params["w"], params["b"]
        y = x @ w + b
        return np.sum(y * y), y

    params = {"w": np.ones((2, 2)), "b": np.array([0.5, -1.0])}
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    grads, aux = autostage.grad(loss, has_aux=True)(params, x)
    y = x @ params["w"] + params["b"]
    np.testing.assert_allclose(aux, y)
    np.testing.assert_allclose(grads["w"], x.T @ (2 * y))
    np.testing.assert_allclose(grads["b"], np.sum(2 * y, axis=0))


def test_python_float_argument_and_unconnected_zero():
    def f(a, b):
        return a * a * 3.0 + 0.0 * np.float64(1.0)

    da, db = autostage.grad(f, argnums=(0, 1))(2.0, 5.0)
    assert float(da) == 12.0
    assert float(db) == 0.0  # JAX's convention: zeros for an argument the value ignores



@pytest.mark.parametrize("target", TARGETS)
def test_a_0d_argument_gradient_has_its_kind(target):
    """A NumPy scalar (or Python float) argument's gradient is a NumPy scalar and a 0-d ndarray's
    a 0-d ndarray, whether the value depends on it or not (it was a NumPy scalar where it did,
    a 0-d ndarray where it did not)."""
    grad = autostage.grad(autostage.convert(lambda a, b: a * a * 3.0, target=target),
                          argnums=(0, 1))
    for make in (float, np.float64, np.float32, np.array,
                 lambda v: np.array(v, dtype=np.float32)):
        a = make(2.0)
        kind = np.ndarray if isinstance(a, np.ndarray) else np.dtype(type(a)).type
        da, db = grad(a, a)
        assert type(da) is kind and type(db) is kind, (type(a), type(da), type(db))
        assert da.dtype == db.dtype == np.asarray(a).dtype
        assert float(da) == 12.0 and float(db) == 0.0

def test_grad_errors_are_clear():
    with pytest.raises(TypeError, match="float scalar"):
        autostage.grad(lambda x: x * 2.0)(np.ones(3))
    with pytest.raises(TypeError, match="needs float arguments"):
        autostage.grad(lambda x: x * 2.0)(3)


def test_integer_and_bool_arrays_are_not_differentiated_to_zeros():
    """d sum(0.5 * x) / dx is 0.5, not the int zeros it was: refused, as JAX refuses."""
    def f(x, y):
        return np.sum(x * 0.5 * y)

    for x in (np.array([1, 2, 3]), np.int64(3), np.array([True, False, True])):
        with pytest.raises(TypeError, match=f"argument 0 holds values of dtype {x.dtype}"):
            autostage.grad(f)(x, np.ones(3))
    with pytest.raises(TypeError, match="argument 0 holds values of dtype int64"):
        autostage.grad(lambda p: np.sum(p["i"] * p["w"]))({"i": np.arange(2), "w": np.ones(2)})
    # an integer argument not differentiated is fine
    np.testing.assert_array_equal(autostage.grad(f, argnums=1)(np.array([1, 2, 3]), np.ones(3)),
                                  [0.5, 1.0, 1.5])



@pytest.mark.parametrize("target", TARGETS)
def test_grad_of_bound_methods(target):
    """A bound method (plain, or convert-ed in its class) is differentiated with respect to its
    own arguments, ``self`` bound; both were TypeErrors (a missing 'x', a StagedFunction)."""
    class Model:
        def __init__(self):
            self.k = 3.0

        def loss(self, x, y=1.0):
            return np.sum(x ** 2) * self.k * y

        @autostage.convert(target=target)
        def cubed(self, x):
            return np.sum(x ** 3) * self.k

    model, x = Model(), np.array([1.0, 2.0])
    np.testing.assert_array_equal(autostage.grad(model.loss)(x), [6.0, 12.0])
    value, (dx, dy) = autostage.value_and_grad(model.loss, argnums=(0, 1))(x, 2.0)
    assert value == 30.0 and float(dy) == 15.0
    np.testing.assert_array_equal(dx, [12.0, 24.0])
    model.k = 5.0
    np.testing.assert_array_equal(autostage.grad(model.cubed)(x), [15.0, 60.0])
    np.testing.assert_array_equal(autostage.grad(model.loss)(x), [10.0, 20.0])

def test_tape_outside_staged_code_is_a_clear_error():
    with pytest.raises(GradientError, match="inside staged code"):
        with autostage.GradientTape():
            pass


def test_tape_watch_persistent_and_unconnected_none():
    @autostage.convert(target="interpreter")
    def f(x, y):
        with autostage.GradientTape(persistent=True) as tape:
            tape.watch(x)
            z = np.sum(x * x)
        first = tape.gradient(z, x)
        second = tape.gradient(z, [x, y])
        return first, second[0], second[1] is None

    first, again, unconnected = f(np.array([1.0, 2.0]), np.array([3.0]))
    np.testing.assert_allclose(first, [2.0, 4.0])
    np.testing.assert_allclose(again, [2.0, 4.0])
    assert unconnected


def test_non_persistent_tape_computes_once():
    @autostage.convert(target="interpreter")
    def f(x):
        with autostage.GradientTape() as tape:
            tape.watch(x)
            z = np.sum(x * x)
        tape.gradient(z, x)
        return tape.gradient(z, x)

    with pytest.raises(GradientError, match="non-persistent"):
        f(np.ones(2))


def test_unwatched_tensor_has_no_gradient():
    @autostage.convert(target="interpreter")
    def f(x):
        with autostage.GradientTape() as tape:
            z = np.sum(x * x)
        return tape.gradient(z, x) is None

    assert f(np.ones(2))


@pytest.mark.parametrize("target", TARGETS)
def test_variables_read_in_the_tape_are_watched(target):
    w = autostage.Variable(np.array([1.0, -2.0]))

    @autostage.convert(target=target)
    def step(x):
        with autostage.GradientTape() as tape:
            loss = np.sum(x * w.read() * x * w.read())
        g = tape.gradient(loss, w)
        w.assign(w.read() - 0.1 * g)
        return loss

    x = np.array([1.0, 3.0])
    before = w.read().copy()
    step(x)
    np.testing.assert_allclose(w.read(), before - 0.1 * 2 * x * x * before)


def test_stop_gradient_blocks_and_custom_gradient_replaces():
    def f(x):
        return np.sum(x * autostage.stop_gradient(x))

    np.testing.assert_allclose(autostage.grad(f)(np.array([1.0, 2.0])), [1.0, 2.0])

    @autostage.custom_gradient
    def clipped_identity(x):
        def grad_fn(dy):
            return dy * 0.5
        return x * 1.0, grad_fn

    def g(x):
        return np.sum(clipped_identity(x) * 4.0)

    np.testing.assert_allclose(autostage.grad(g)(np.array([1.0, 2.0])), [2.0, 2.0])
    np.testing.assert_allclose(clipped_identity(np.array([3.0])), [3.0])  # plain call: y


def test_prints_in_a_loop_run_once_per_iteration():
    def f(x):
        for i in range(3):
            print("step", i)
            x = x * 2.0
        return np.sum(x)

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        g = autostage.grad(autostage.convert(f, target="interpreter"))(np.ones(2))
    np.testing.assert_allclose(g, [8.0, 8.0])
    assert out.getvalue().count("step") == 3  # the backward replay does not print again


def test_random_draws_in_a_replayed_loop_are_refused():
    rng = np.random.default_rng(0)

    def f(x, rng):
        while np.sum(x) < 10.0:  # a staged loop: its body is replayed backwards
            x = x + rng.uniform(0.5, 1.0, 2)
        return np.sum(x * x)

    with pytest.raises(GradientError, match="random"):
        autostage.grad(autostage.convert(f, target="interpreter"))(np.ones(2), rng)


def block(h, w):
    return np.tanh(h @ w) + h


def test_checkpoint_recomputes_the_call_and_gives_the_same_gradient():
    from autostage.runtime import ir
    from autostage.runtime.targets import optimized

    def deep(h, w):
        for _ in range(3):
            h = autostage.checkpoint(block)(h, w)
        return np.sum(h * h)

    h0, w = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 3)) * 0.5
    grad = autostage.grad(deep, argnums=1)
    np.testing.assert_allclose(grad(h0, w), finite_difference(deep, (h0, w), 1), rtol=1e-5,
                               atol=1e-6)
    module = optimized(ir.copy_module(grad.get_concrete_function(h0, w).module))
    calls = [op for f in module.functions.values() for op in f.body.walk()
             if op.name == "call" and op.attrs["callee"].startswith("block")]
    assert len(calls) == 3 and all(op.attrs.get("recompute") for op in calls)  # kept as calls


def test_custom_gradient_function_with_staged_control_flow():
    @autostage.custom_gradient
    def safe_norm(x):
        n = np.sqrt(np.sum(x * x))
        if n > 0:
            unit = x / n
        else:
            unit = x * 0.0

        def grad_fn(dy):
            return dy * unit
        return n, grad_fn

    x = np.array([3.0, 4.0])
    np.testing.assert_allclose(autostage.grad(safe_norm)(x), [0.6, 0.8])
    np.testing.assert_allclose(autostage.grad(safe_norm)(np.zeros(2)), [0.0, 0.0])



@pytest.mark.parametrize("target", TARGETS)
def test_custom_gradient_called_in_a_staged_loop(target):
    """The loop's side-effect watch looked into the wrapper's globals (autostage's caches) and
    refused the entry a dead grad_fn drops from one as a change of the user's dict."""
    @autostage.custom_gradient
    def clip_gradient(x):
        return x, lambda dy: np.clip(dy, -0.5, 0.5)

    def f(x, w, n):
        for _ in range(n):
            x = clip_gradient(np.tanh(x * w)) * 2.0
        return np.sum(x)

    x, w = np.array([0.3, 0.5]), np.array([1.0, 2.0])
    dx, dw = autostage.grad(autostage.convert(f, target=target), argnums=(0, 1))(
        x, w, np.int64(3))
    # by hand: each step's cotangent (2 * dy) clipped to 0.5, then through tanh
    gx, gw, h = np.ones(2), np.zeros(2), [x]
    for _ in range(3):
        h.append(np.tanh(h[-1] * w) * 2.0)
    for k in range(3, 0, -1):
        d = np.clip(2.0 * gx, -0.5, 0.5) * (1 - np.tanh(h[k - 1] * w) ** 2)
        gw += d * h[k - 1]
        gx = d * w
    np.testing.assert_allclose(dx, gx, rtol=1e-12)
    np.testing.assert_allclose(dw, gw, rtol=1e-12)

def test_identity_broadcasts_are_dropped_and_real_ones_kept():
    from autostage.runtime import ir
    from autostage.runtime.targets import optimized

    def f(x, b):
        return np.sum(np.tanh(x) * x * b)

    grad = autostage.grad(f, argnums=(0, 1))
    x = RNG.standard_normal((3, 4))
    for b in (RNG.standard_normal(4), RNG.standard_normal((1, 4)), RNG.standard_normal((3, 4))):
        gx, gb = grad(x, b)  # cpu: b broadcast along rows sums back to b's shape
        np.testing.assert_allclose(gx, finite_difference(f, (x, b), 0), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gb, finite_difference(f, (x, b), 1), rtol=1e-6, atol=1e-8)
    traced = grad.get_concrete_function(x, x).module

    def count(module):
        return sum(op.name == "sum_to" for op in module.main.body.walk())
    # Left: the two operands of the product with b (either may be broadcast at run time); the
    # cotangents inside x's own chain have x's shape, proven.
    assert count(traced) > 2 and count(optimized(ir.copy_module(traced))) == 2


def test_the_readme_examples_run_as_written():
    def loss(params, x, y):
        w, b = params
        p = 1.0 / (1.0 + np.exp(-(x @ w + b)))
        return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))

    x = RNG.standard_normal((8, 3))
    y = (RNG.random(8) > 0.5).astype(np.float64)
    loss_and_grads = autostage.value_and_grad(loss)
    value, (dw, db) = loss_and_grads((np.zeros(3), np.float64(0.0)), x, y)
    np.testing.assert_allclose(value, np.log(2.0))
    np.testing.assert_allclose(dw, x.T @ (0.5 - y) / 8)
    np.testing.assert_allclose(db, np.mean(0.5 - y))

    w = autostage.Variable(np.zeros((3, 1)))

    @autostage.convert
    def train_step(x, y):
        with autostage.GradientTape() as tape:          # Variables read inside are watched
            loss = np.mean((x @ w.read() - y) ** 2)
        w.assign(w.read() - 0.1 * tape.gradient(loss, w))
        return loss

    target = x @ np.array([[1.0], [-2.0], [0.5]])
    losses = [float(train_step(x, target)) for _ in range(50)]
    assert losses[-1] < 0.05 * losses[0]


def test_variables_read_in_loops_and_calls_are_sources_and_assigning_them_is_refused():
    w = autostage.Variable(np.array([1.0, -2.0]))

    def helper(x):
        return np.sum(x * w.read())

    @autostage.convert(target="interpreter")
    def step(x, n):
        with autostage.GradientTape() as tape:
            loss = helper(x)  # a staged call reading w
            for _ in range(n):  # a staged loop reading w
                loss = loss + np.sum(w.read() * w.read())
        return tape.gradient(loss, w)

    x = np.array([1.0, 3.0])
    np.testing.assert_allclose(step(x, np.int64(3)), x + 3 * 2 * w.read())

    for inside_the_block in (True, False):  # assigned in the with block, or after it
        @autostage.convert(target="interpreter")
        def assigns(x, n, inside=inside_the_block):
            with autostage.GradientTape() as tape:
                loss = 0.0
                for _ in range(n):
                    loss = loss + np.sum(x * w.read())
                if inside:
                    w.assign(w.read() * 2.0)
            if not inside:
                w.assign(w.read() * 2.0)
            return tape.gradient(loss, w)

        with pytest.raises(GradientError, match="assigned after the tape began"):
            assigns(x, np.int64(2))


def test_python_floats_inside_a_differentiated_pytree():
    def f(params, x):
        return np.sum(params["w"] * x) * params["temperature"]

    grads = autostage.grad(f)({"w": np.array([1.0, 2.0]), "temperature": 1.5}, np.ones(2))
    np.testing.assert_allclose(grads["w"], [1.5, 1.5])
    assert float(grads["temperature"]) == 3.0


def rnn(w, b, xs, h):
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ w + h * b)
    return np.sum(h * h)


@pytest.mark.parametrize("target", TARGETS)
def test_a_loop_saves_its_costly_residuals_instead_of_replaying_them(target):
    """The backward loop reads each step's tanh from a stack; its matmul is not run again."""
    xs, h0 = RNG.standard_normal((5, 2, 3)), RNG.standard_normal((2, 4))
    w = RNG.standard_normal((3, 4)) * 0.5
    grad = autostage.grad(autostage.convert(rnn, target=target), argnums=(0, 1))
    for b in (RNG.standard_normal(4), RNG.standard_normal((1, 4)), RNG.standard_normal((2, 4))):
        # b broadcast along rows, or not: the backward sums to its shape, read from the stack
        # of each step's sizes (the product is not saved, only its shape is needed).
        gw, gb = grad(w, b, xs, h0)
        np.testing.assert_allclose(gw, finite_difference(rnn, (w, b, xs, h0), 0), rtol=1e-6,
                                   atol=1e-8)
        np.testing.assert_allclose(gb, finite_difference(rnn, (w, b, xs, h0), 1), rtol=1e-6,
                                   atol=1e-8)
    module = grad.get_concrete_function(w, b, xs, h0).module
    loops = [op for op in module.main.body.ops if op.name == "while"]
    counts = [[o.name for o in loop.regions[1].walk()].count for loop in loops]
    assert [c("matmul") for c in counts] == [1, 1]  # forward: x @ w; backward: its dw
    assert [c("tanh") for c in counts] == [1, 0]


def starts_and_reads(x, n):
    y = x  # x starts the carried y and is read in the body: its two cotangents add up
    for _ in range(n):
        y = np.tanh(y * x) + y
    return y


def test_a_value_that_starts_a_loop_and_is_read_in_it_gets_both_gradients():
    x, eps = np.float64(0.3), 1e-5
    expected = (starts_and_reads(x + eps, 3) - starts_and_reads(x - eps, 3)) / (2 * eps)
    for target in TARGETS:
        df = autostage.grad(autostage.convert(starts_and_reads, target=target))
        np.testing.assert_allclose(df(x, np.int64(3)), expected, rtol=1e-6)


def test_second_derivative_through_a_loop_with_saved_residuals():
    def df(x, n):
        return autostage.grad(starts_and_reads)(x, n)

    x, n, eps = np.float64(0.3), np.int64(3), 1e-5
    expected = (df(x + eps, n) - df(x - eps, n)) / (2 * eps)
    np.testing.assert_allclose(autostage.grad(df)(x, n), expected, rtol=1e-6)
    plain = (starts_and_reads(x + 2e-4, 3) - 2 * starts_and_reads(x, 3)
             + starts_and_reads(x - 2e-4, 3)) / 4e-8
    np.testing.assert_allclose(expected, plain, rtol=1e-4)


# -- threaded cotangents: a branch that does not use a weight passes its cotangent through ------

def weight_in_one_branch(w, x):
    y = np.sum(x)
    if y > 0:
        y = y + np.sum((x @ w) ** 2)
    return y + np.sum(np.tanh(x @ w))  # w's cotangent from here reaches the branch first


@pytest.mark.parametrize("target", TARGETS)
def test_branch_that_does_not_use_a_weight_passes_its_cotangent_through(target):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((3, 4))
    for x in (rng.standard_normal((2, 3)) + 2, rng.standard_normal((2, 3)) - 2):  # both ways
        check_gradients(weight_in_one_branch, (w, x), target)
    staged = autostage.grad(autostage.convert(weight_in_one_branch, target=target))
    text = staged.ir(w, x)
    start = text.rindex("\n", 0, text.rindex(" = cond ")) + 1
    backward = text[start:]  # from the backward cond's line on
    first = int(backward.strip().split(":")[0].lstrip("%"))  # the cond's first result
    else_branch = backward[backward.index("else:"):].split("yield")
    # the else branch yields the weight's cotangent so far (a value from before the cond), not
    # zeros of the weight's shape made in the branch
    assert "full_like" not in else_branch[0] and "add" not in else_branch[0]
    yielded = else_branch[1].splitlines()[0].replace(",", " ").split()
    assert yielded and all(int(v.lstrip("%")) < first for v in yielded)


def vector_matrix(w, x):
    return np.sum(np.tanh(x @ w)) + np.sum(np.tanh(w @ x[:2]) ** 2)


@pytest.mark.parametrize("target", TARGETS)
def test_the_matrix_cotangent_of_a_vector_product_is_an_outer_product(target):
    """``x @ w`` and ``w @ v`` (1-d x, v): w's cotangent is a broadcast multiply, which fuses
    with the addition of the two (no product with an inner size of 1)."""
    rng = np.random.default_rng(4)
    w, x = rng.standard_normal((3, 2)), rng.standard_normal(3)
    check_gradients(vector_matrix, (w, x), target, argnums=(0, 1))
    text = autostage.grad(autostage.convert(vector_matrix, target=target)).ir(w, x)
    assert text.count(" = matmul ") == 2  # the forward products only


@pytest.mark.parametrize("target", TARGETS)
def test_the_vector_cotangent_of_a_vector_product_is_a_matrix_vector_product(target):
    """x's cotangent in ``x @ w`` is ``w @ ct`` and in ``w @ v`` is ``ct @ w``: products on w
    as it lies (gemv), not 1-row products with w's transpose (a gemm that packs w)."""
    rng = np.random.default_rng(5)
    w, x = rng.standard_normal((3, 2)), rng.standard_normal(3)
    check_gradients(vector_matrix, (w, x), target, argnums=(1,))
    text = autostage.grad(autostage.convert(vector_matrix, target=target), argnums=1).ir(w, x)
    assert text.count(" = matmul ") == 4  # two forward, two backward
    assert "transpose" not in text and "expand_dims" not in text


def two_layers_in_branches(w, x):
    if np.sum(x) > 0:
        y = np.tanh(x @ w)
    else:
        y = np.exp((x * 0.5) @ w)
    return np.sum(y * y)


@pytest.mark.parametrize("target", TARGETS)
def test_a_backward_branch_reads_what_the_forward_branch_computed(target):
    """The forward cond yields its product and transcendental (the other branch yields
    placeholders) and the backward branch reads them: each computed once per branch."""
    rng = np.random.default_rng(6)
    w = 0.3 * rng.standard_normal((3, 4))
    for x in (rng.standard_normal((2, 3)) + 2, rng.standard_normal((2, 3)) - 2):  # both ways
        check_gradients(two_layers_in_branches, (w, x), target)
    text = autostage.grad(autostage.convert(two_layers_in_branches, target=target)).ir(w, x)
    assert text.count(" = matmul ") == 2 + 2  # the forward products, then x.T @ ct per branch
    assert text.count(" = tanh ") == 1 and text.count(" = exp ") == 1
    assert " = undef " in text  # a branch's placeholder for the other branch's values


def branches_in_a_loop(w, x):
    total = np.sum(x) * 0.0
    i = 0
    while i < x.shape[0]:
        if np.sum(x[i]) > 0:
            total = total + np.sum(np.tanh(x[i] @ w))
        else:
            total = total + np.sum(np.sin(x[i] @ w) * w[0])
        i += 1
    return total


@pytest.mark.parametrize("target", TARGETS)
def test_branch_residuals_inside_a_loop_and_with_a_persistent_tape(target):
    rng = np.random.default_rng(7)
    w, x = 0.3 * rng.standard_normal((3, 4)), rng.standard_normal((5, 3))
    check_gradients(branches_in_a_loop, (w, x), target, argnums=(0, 1))

    def twice(w, x):
        with autostage.GradientTape(persistent=True) as tape:
            tape.watch(w)
            y = two_layers_in_branches(w, x)
            tripled = y * 3.0
        return tape.gradient(y, w), tape.gradient(tripled, w)

    for x in (rng.standard_normal((2, 3)) + 2, rng.standard_normal((2, 3)) - 2):
        first, second = autostage.convert(twice, target=target)(w, x)
        expected = finite_difference(two_layers_in_branches, (w, x), 0)
        np.testing.assert_allclose(first, expected, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(second, 3.0 * expected, rtol=1e-6, atol=1e-6)


def _rnn_under_a_tape(w, xs):
    with autostage.GradientTape() as tape:
        tape.watch(w)
        outs = []
        h = np.zeros(w.shape[0])
        for t in range(xs.shape[0]):
            h = np.tanh(w @ h + xs[t])
            outs.append(h)
        loss = np.sum(np.stack(outs) ** 2)
    return loss, tape.gradient(loss, w)


@pytest.mark.parametrize("target", TARGETS)
def test_a_list_appended_in_a_staged_loop_inside_the_tape_block(target):
    """Loops inside ``with`` shared their variables with the function (for a context manager
    that may swallow an exception): the appended list was a Python list, a
    PythonSideEffectError. A tape never swallows one: the list is a tensor list."""
    w, xs = RNG.standard_normal((3, 3)) * 0.5, RNG.standard_normal((4, 3))

    def plain(w):
        h, total = np.zeros(3), 0.0
        for t in range(4):
            h = np.tanh(w @ h + xs[t])
            total += np.sum(h ** 2)
        return total

    loss, grad = autostage.convert(_rnn_under_a_tape, target=target)(w, xs)
    assert loss == pytest.approx(plain(w), rel=1e-12)
    np.testing.assert_allclose(grad, finite_difference(plain, (w,), 0), rtol=1e-6, atol=1e-8)
