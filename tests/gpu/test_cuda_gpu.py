"""The cuda target on a real GPU: sizes that take many blocks (grid-stride loops, two-pass
reductions), bit-identical reductions from run to run, a matrix product of several tiles, and
the RNN of the benchmarks. Marked ``gpu``; skipped where numba-cuda finds no GPU (CI), run
through the device tool when a task is lent a GPU (README "CUDA").
"""

from __future__ import annotations

import numpy as np
import pytest
from autostage.runtime.backends.cuda import device

import autostage

pytestmark = pytest.mark.gpu


def _gpu_present() -> bool:
    if not device.installed() or device.simulated():
        return False
    from numba import cuda

    return cuda.is_available()


if not _gpu_present():
    pytest.skip("no CUDA GPU here", allow_module_level=True)


def _both(fn, *args):
    return (autostage.convert(fn, target="cuda")(*args),
            autostage.convert(fn, target="interpreter")(*args))


def test_large_elementwise_and_reductions():
    def f(x, y):
        z = np.tanh(x * 0.5 + y) * np.exp(-np.abs(x))
        return z, np.sum(z), np.max(z), np.min(x), np.sum(z > 0), np.mean(x)

    rng = np.random.default_rng(1)
    for dtype, rtol in ((np.float32, 1e-5), (np.float64, 1e-12)):
        x = rng.standard_normal(3_000_001).astype(dtype)  # many blocks and partials
        y = rng.standard_normal(3_000_001).astype(dtype)
        got, want = _both(f, x, y)
        for g, w in zip(got, want, strict=True):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(g, w, rtol=rtol * 100 if np.ndim(w) == 0 else rtol)


def test_reductions_are_deterministic():
    f = autostage.convert(lambda x: (np.sum(x), np.sum(x * x, axis=-1)), target="cuda")
    x = np.random.default_rng(2).standard_normal((700, 5000)).astype(np.float32)
    first = f(x)
    for _ in range(3):
        again = f(x)
        assert first[0].tobytes() == again[0].tobytes()
        assert first[1].tobytes() == again[1].tobytes()


def test_broadcasting_and_matmul_of_many_tiles():
    def f(a, b, c):
        return np.maximum(a @ b + c, 0.0), (a @ b).T @ a

    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((300, 170)), rng.standard_normal((170, 90))
    c = rng.standard_normal(90)
    got, want = _both(f, a, b, c)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)


def test_rnn_loop_with_list_stack():
    def rnn(xs, h0, w, u, b):
        h = h0
        outputs = []
        for t in range(xs.shape[0]):
            h = np.tanh(xs[t] @ w + h @ u + b)
            outputs.append(h)
        return np.stack(outputs)

    rng = np.random.default_rng(4)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    # weights scaled by 1/sqrt(fan-in), so that the recurrence does not amplify rounding
    args = (f32(64, 128, 64), np.zeros((128, 256), np.float32), f32(64, 256) / 8,
            f32(256, 256) / 16, f32(256) / 10)
    got, want = _both(rnn, *args)
    assert got.dtype == np.float32 and got.shape == (64, 128, 256)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_errors_name_the_users_line():
    def f(x, y):
        return x + y

    with pytest.raises(ValueError, match="broadcast") as info:
        autostage.convert(f, target="cuda")(np.ones(3), np.ones(4))
    assert any("test_cuda_gpu.py" in note for note in info.value.__notes__)


def _cupy():
    try:
        import cupy
    except ImportError:
        return None
    return cupy


def _on_host(value):
    """A GPU result (numba.cuda or CuPy) as NumPy."""
    return value.get() if hasattr(value, "get") else value.copy_to_host()


def test_device_arrays_as_arguments():
    from numba import cuda

    def f(x, w):
        return x, np.tanh(x @ w), np.sum(x[1:], axis=0)

    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((64, 32)), rng.standard_normal((32, 8))
    want = f(x, w)
    staged = autostage.convert(f, target="cuda")
    arguments = [cuda.to_device(x)]
    cupy = _cupy()
    if cupy is not None:
        arguments += [cupy.asarray(x), cupy.asarray(np.asfortranarray(x))]  # strided: copied
    for argument in arguments:
        got = staged(argument, w)
        assert got[0] is argument
        np.testing.assert_allclose(_on_host(got[1]), want[1], rtol=1e-12)
        np.testing.assert_allclose(_on_host(got[2]), want[2], rtol=1e-12)


def test_results_of_calls_with_gpu_arguments_stay_on_the_gpu():
    """numba.cuda arguments give numba.cuda results, CuPy arguments CuPy results (skipped
    without CuPy), NumPy arguments NumPy results; 0-d results are NumPy scalars and Python
    numbers, an argument returned is itself, from the first call on."""
    from numba import cuda

    def f(x, w):
        rows = []
        for k in range(3):
            rows.append(x[k] * 2.0)
        return (x, np.tanh(x @ w), np.sort(x, axis=-1), np.cumsum(x), rows, np.sum(x),
                x.shape[0])

    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((300, 40)), rng.standard_normal((40, 8))
    want = autostage.convert(f, target="interpreter")(x, w)
    staged = autostage.convert(f, target="cuda")
    libraries = [(cuda.to_device, cuda.devicearray.DeviceNDArray)]
    cupy = _cupy()
    if cupy is not None:
        libraries.append((cupy.asarray, cupy.ndarray))
    for place, kind in libraries:
        for _ in range(2):  # the same types from the first call on
            gx = place(x)
            got = staged(gx, place(w))
            assert got[0] is gx
            for g, v in zip((*got[1:4], *got[4]), (*want[1:4], *want[4]), strict=True):
                assert isinstance(g, kind)
                np.testing.assert_allclose(_on_host(g), v, rtol=1e-10, atol=1e-12)
            assert type(got[5]) is np.float64 and np.isclose(got[5], want[5])
            assert type(got[6]) is int and got[6] == 300
    got = staged(x, w)
    assert got[0] is x and all(type(v) is np.ndarray for v in (*got[1:4], *got[4]))
