"""A loop's products of a fixed matrix with a row of a fixed array, as one product before the
loop (runtime/passes/batched_products.py).

Soundness: values as NumPy's (to the last bits BLAS may differ in), Python's error at the step
where the sizes disagree and none when the loop runs no step, the per-step products when the big
one would be too large, non-contiguous inputs; and the rewrite only where the loop reads every
row once from the first.
"""

import numpy as np
import pytest
from autostage.runtime.function import optimized
from autostage.runtime.passes import batched_products

import autostage
from autostage import config

RTOL, ATOL = 1e-5, 1e-6


def rnn(xs, h0, w, u, b):
    h = h0
    outputs = []
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ w + h @ u + b)
        outputs.append(h)
    return np.stack(outputs)


def last_state(xs, h, w, u):
    for t in range(len(xs)):
        h = np.tanh(xs[t] @ w + h @ u)
    return h


def printed_steps(xs, w):
    total = np.zeros((xs.shape[1], w.shape[1]))
    for t in range(xs.shape[0]):
        print("step", t)
        total = total + xs[t] @ w
    return total


def from_step_one(xs, w):
    total = np.zeros((xs.shape[1], w.shape[1]))
    for t in range(1, xs.shape[0]):
        total = total + xs[t] @ w
    return total


def weights_change(xs, w):
    total = np.zeros((xs.shape[1], w.shape[1]))
    for t in range(xs.shape[0]):
        total = total + xs[t] @ w
        w = w * 0.5
    return total


def products(fn, *args):
    """(number of batched products, of matmuls left in loops) after the cpu pipeline."""
    with config.STATIC_SIZES.override(0):
        module = autostage.convert(fn, target="cpu").get_concrete_function(*args).module
    module = optimized(module)
    batched = in_loops = 0
    for op in module.main.body.walk():
        if op.name == "batched_product":
            batched += 1
        if op.name == "while":
            in_loops += sum(o.name == "matmul" for o in op.regions[1].walk())
    return batched, in_loops


def _rnn_inputs(steps, batch, inputs, hidden, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((steps, batch, inputs)).astype(dtype),
            np.zeros((batch, hidden), dtype),
            (rng.standard_normal((inputs, hidden)) * 0.3).astype(dtype),
            (rng.standard_normal((hidden, hidden)) * 0.1).astype(dtype),
            rng.standard_normal(hidden).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rnn_input_projection_is_batched(dtype):
    args = _rnn_inputs(20, 5, 24, 18, dtype)
    assert products(rnn, *args) == (1, 2)  # the loop keeps h @ u and the step's own product
    got = autostage.convert(rnn, target="cpu")(*args)
    assert got.dtype == dtype and got.shape == (20, 5, 18)
    np.testing.assert_allclose(got, rnn(*args), rtol=RTOL, atol=ATOL)


def test_the_big_product_is_one_call_without_size_tests():
    """The guard, reshapes and product are one call of a helper shared by every program (its
    sizes are its own: no test before it), and the row each step reads has no bounds test (its
    index is the loop's counter, below the big product's rows: the branch's test)."""
    rng = np.random.default_rng(5)
    xs, h0 = rng.normal(size=(20, 3, 4)), np.zeros((3, 5))
    w, u, b = rng.normal(size=(4, 5)), rng.normal(size=(5, 5)), rng.normal(size=5)
    source = autostage.convert(rnn).backend_source(xs, h0, w, u, b)
    function = source[source.index("def f_rnn"):]
    lines = [line.strip() for line in function.splitlines()]
    calls = [i for i, line in enumerate(lines) if "= h_batched_product_" in line]
    assert len(calls) == 1 and not lines[calls[0] - 1].startswith("cpu_chk.check(")
    assert ".reshape((" not in function and "raise IndexError" not in source
    np.testing.assert_allclose(autostage.convert(rnn)(xs, h0, w, u, b), rnn(xs, h0, w, u, b),
                               rtol=RTOL, atol=ATOL)


def test_each_step_reads_its_row_through_one_shared_helper():
    """The step's choice (its row, or its own product when the big one has no rows) is one call
    of a helper typed by dtypes and ranks; the product's size test runs at the site, only for
    the step's own product."""
    args = _rnn_inputs(20, 5, 24, 18, np.float64)
    source = autostage.convert(rnn).backend_source(*args)
    function = source[source.index("def f_rnn"):]
    (call,) = [line.strip() for line in function.splitlines() if "= h_batched_row_" in line]
    assert call.split(" = ")[1].startswith("h_batched_row_f64nxnxn_f64nxn_f64nxn_f64nxn(")
    assert "if less" not in function and "(not less" in function


def test_without_numpys_blas_the_big_product_takes_np_dot(monkeypatch):
    """Where NumPy's BLAS cannot be called (another build of NumPy), ``np.dot``."""
    from autostage.runtime.backends.cpu import blas

    monkeypatch.setattr(blas, "AVAILABLE", False)
    args = _rnn_inputs(6, 3, 7, 5, np.float64, seed=4)
    with config.STATIC_SIZES.override(0):
        f = autostage.convert(rnn, target="cpu")
        assert "np.dot(flat, " in f.backend_source(*args)
        np.testing.assert_allclose(f(*args), rnn(*args), rtol=1e-12, atol=1e-14)


def test_vector_rows():
    """A 2-d array's rows (batch 1): the big product is the plain 2-d one."""
    xs, h, w, u, _ = _rnn_inputs(30, 1, 20, 17, np.float64)
    xs, h = xs[:, 0], h[0]
    assert products(last_state, xs, h, w, u) == (1, 2)
    got = autostage.convert(last_state, target="cpu")(xs, h, w, u)
    np.testing.assert_allclose(got, last_state(xs, h, w, u), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("layout", ["strided", "transposed"])
def test_non_contiguous_rows(layout):
    xs, h0, w, u, b = _rnn_inputs(12, 6, 40, 19, np.float64)
    xs = xs[:, :, ::2] if layout == "strided" else np.ascontiguousarray(
        xs.transpose(2, 1, 0)).transpose(2, 1, 0)[:, :, :20]
    w = w[:20]
    got = autostage.convert(rnn, target="cpu")(xs, h0, w, u, b)
    np.testing.assert_allclose(got, rnn(xs, h0, w, u, b), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("target", ["cpu", "interpreter"])
def test_size_mismatch_raises_at_the_first_step(target, capsys):
    """Python raises in step 0's product, after the step's print: the same error and output
    (sizes unknown to the trace, so the product's check runs in the loop)."""
    xs = np.ones((4, 3, 5))
    w = np.ones((6, 2))
    with pytest.raises(ValueError) as expected:
        printed_steps(xs, w)
    printed = capsys.readouterr().out
    assert printed == "step 0\n"
    with config.STATIC_SIZES.override(0), pytest.raises(ValueError) as got:
        autostage.convert(printed_steps, target=target)(xs, w)
    assert str(got.value) == str(expected.value)
    assert "mismatch in its core dimension 0" in str(got.value)
    assert capsys.readouterr().out == printed


def test_no_step_no_error(capsys):
    """Sizes that disagree, but no row: Python computes no product, and neither do we."""
    xs = np.ones((0, 3, 5))
    w = np.ones((6, 2))
    with config.STATIC_SIZES.override(0):
        got = autostage.convert(printed_steps, target="cpu")(xs, w)
    np.testing.assert_array_equal(got, np.zeros((3, 2)))
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("shape", [(4, 3, 0), (0, 3, 5), (4, 0, 5)])
def test_empty_axes(shape):
    """No inputs per row (k = 0: each product is zeros), no steps, no batch."""
    xs = np.ones(shape)
    w = np.ones((shape[2], 6))
    with config.STATIC_SIZES.override(0):
        got = autostage.convert(printed_steps, target="cpu")(xs, w)
    np.testing.assert_array_equal(got, printed_steps(xs, w))


@pytest.mark.parametrize("sizes", [(9, 4, 12, 15), (5, 2, 2, 3)], ids=["blas", "tiny"])
def test_too_large_keeps_each_steps_product(monkeypatch, sizes):
    """No row of the big product: each step's own product (BLAS whatever its size)."""
    monkeypatch.setattr(batched_products, "MAX_ELEMENTS", 10)
    args = _rnn_inputs(*sizes, np.float64, seed=3)
    f = autostage.convert(rnn, target="cpu")
    np.testing.assert_allclose(f(*args), rnn(*args), rtol=1e-12, atol=1e-14)


def test_only_loops_reading_every_row_from_the_first():
    xs, _, w, _, _ = _rnn_inputs(10, 3, 8, 20, np.float64)
    assert products(from_step_one, xs, w)[0] == 0
    np.testing.assert_allclose(autostage.convert(from_step_one, target="cpu")(xs, w),
                               from_step_one(xs, w), rtol=1e-12)
    assert products(weights_change, xs, w)[0] == 0  # w is carried: not the same matrix
    np.testing.assert_allclose(autostage.convert(weights_change, target="cpu")(xs, w),
                               weights_change(xs, w), rtol=1e-12)


def test_printed_steps_match(capsys):
    xs, _, w, _, _ = _rnn_inputs(7, 2, 5, 20, np.float64)
    assert products(printed_steps, xs, w) == (1, 1)
    expected = printed_steps(xs, w)
    printed = capsys.readouterr().out
    with config.STATIC_SIZES.override(0):
        got = autostage.convert(printed_steps, target="cpu")(xs, w)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert capsys.readouterr().out == printed


def carried_product(xs, w):
    h = xs[0] @ w
    for t in range(xs.shape[0]):
        h = xs[t] @ w
    return h


def test_a_product_that_outlives_its_step_stays():
    """``h = xs[t] @ w`` carried out of the loop would be a view of the big product (keeping
    all of it alive): not batched."""
    xs, _, w, _, _ = _rnn_inputs(10, 3, 8, 20, np.float64)
    assert products(carried_product, xs, w)[0] == 0
    got = autostage.convert(carried_product, target="cpu")(xs, w)
    assert got.shape == (3, 20)
    np.testing.assert_allclose(got, carried_product(xs, w), rtol=1e-12)
