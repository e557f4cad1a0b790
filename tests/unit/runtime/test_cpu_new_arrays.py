"""New arrays written in line (backends/cpu/new_arrays.py): the same arrays, dtypes, aliasing and
errors as NumPy's ``empty``/``zeros``/``full``/``ascontiguousarray``, and nothing compiled for
them."""

import numba
import numpy as np
import pytest
from autostage.runtime.backends.cpu import new_arrays as new
from numba.core import event


@numba.njit
def _made(n, m):
    shape = (np.int64(n), np.int64(m))
    filled = new.empty(shape, np.float64)
    for i in range(n):
        for j in range(m):
            filled[i, j] = i * m + j
    return (filled, new.zeros(shape, np.int32), new.zeros((np.int64(n),), np.bool_),
            new.full(shape, True), new.full((np.int64(m),), 7), new.full(shape, np.float32(0.5)),
            new.zeros((), np.complex128), new.empty((np.int64(n),), filled.dtype))


@pytest.mark.parametrize("n, m", [(3, 4), (0, 5), (1, 1)])
def test_new_arrays_are_numpys(n, m):
    filled, zeros, flags, full_bool, full_int, full_f32, scalar, like = _made(n, m)
    expected = [(np.arange(n * m, dtype=np.float64).reshape(n, m)), np.zeros((n, m), np.int32),
                np.zeros(n, np.bool_), np.full((n, m), True), np.full(m, 7),
                np.full((n, m), np.float32(0.5)), np.zeros((), np.complex128)]
    for got, want in zip((filled, zeros, flags, full_bool, full_int, full_f32, scalar),
                         expected, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape and got.flags.c_contiguous
        np.testing.assert_array_equal(got, want)
    assert like.shape == (n,) and like.dtype == np.float64


def test_new_arrays_raise_numpys_errors():
    with pytest.raises(ValueError, match="^negative dimensions are not allowed$"):
        _made(-1, 2)
    with pytest.raises(ValueError, match="array is too big"):
        _made(2 ** 62, 4)


@numba.njit
def _contiguous(x):
    return new.contiguous(x)


@numba.njit
def _rare_contiguous(x):
    return new.rare_contiguous(x)


_BASE = np.arange(24.0).reshape(4, 6)


@pytest.mark.parametrize("x", [
    _BASE, _BASE.T, _BASE[1], _BASE[:, 1], _BASE[::2], _BASE[:, :0], _BASE[:1, ::2],
    np.asfortranarray(_BASE), np.asfortranarray(_BASE)[:, :1], _BASE[:, 2:3],
    np.ones((2, 1, 3))[:, :, ::2], _BASE.reshape(2, 2, 6)[:, ::-1], np.array(2.5),
    np.arange(5)[::-1], np.array([True, False, True])[::2]], ids=str)
@pytest.mark.parametrize("contiguous", [_contiguous, _rare_contiguous],
                         ids=["contiguous", "rare_contiguous"])
def test_contiguous_is_ascontiguousarray(x, contiguous):
    got, want = contiguous(x), np.ascontiguousarray(x)
    assert got.dtype == want.dtype and got.shape == want.shape and got.flags.c_contiguous
    np.testing.assert_array_equal(got, want)
    # the argument itself exactly when NumPy returns it (C-contiguous by NumPy's rule: typed C,
    # or typed 'A' and found so), else a copy
    assert np.shares_memory(got, x) == np.shares_memory(want, x)


@pytest.mark.parametrize("value", [2.5, True, 3])
def test_contiguous_of_a_scalar_is_a_1d_array(value):
    got = _contiguous(value)
    want = np.ascontiguousarray(value)
    assert got.shape == want.shape == (1,) and got[0] == value
    assert got.dtype == numba.np.numpy_support.as_dtype(numba.typeof(value))


def _compiling(fn, *args) -> tuple:
    """``fn(*args)`` and the names of the functions Numba compiled for the call."""
    compiled = []

    class Recorder(event.Listener):
        def on_start(self, e):
            compiled.append(getattr(e.data.get("dispatcher"), "py_func", None).__name__)

        def on_end(self, e):
            pass

    with event.install_listener("numba:compile", Recorder()):
        result = fn(*args)
    return result, compiled


def test_new_arrays_compile_nothing_of_their_own():
    @numba.njit
    def fresh(n, x):  # a new function: every call below is typed here for the first time
        return (new.empty((np.int64(n), np.int64(2)), np.float32), new.zeros((np.int64(n),),
                np.int16), new.full((np.int64(n),), np.int8(3)), new.contiguous(x))

    (empty, zeros, full, contiguous), compiled = _compiling(fresh, 3, np.arange(6.0)[::2])
    assert compiled == ["fresh"]
    assert empty.shape == (3, 2) and zeros.tolist() == [0, 0, 0] and full.tolist() == [3, 3, 3]
    assert full.dtype == np.int8 and contiguous.tolist() == [0.0, 2.0, 4.0]


@numba.njit
def _converted(x):
    return new.astype(x, np.int64), new.astype(x, np.float32), new.astype(x, np.bool_)


@pytest.mark.parametrize("x", [
    _BASE - 5.5, np.asfortranarray(_BASE), _BASE[::2, 1::3], _BASE[:, :0], np.array(-2.5),
    np.array([0.0, -0.0, 3.0])[::-1]], ids=str)
def test_astype_is_numpys(x):
    """``x.astype(dtype)``: NumPy's values, dtype and order (C or F as ``x``, else C), a new
    array each time."""
    for got, dtype in zip(_converted(x), (np.int64, np.float32, np.bool_), strict=True):
        want = x.astype(dtype)
        assert got.dtype == want.dtype and got.shape == want.shape
        if x.flags.c_contiguous:
            assert got.flags.c_contiguous
        elif x.flags.f_contiguous:
            assert got.flags.f_contiguous
        else:  # (a view: C, where NumPy's order "K" follows the view's strides)
            assert got.flags.c_contiguous
        np.testing.assert_array_equal(got, want)
        assert not np.shares_memory(got, x)


def test_astype_compiles_nothing_of_its_own():
    """Numba's ``astype`` allocated through an overload its pipeline compiled in every program
    using the method (0.15 s)."""
    @numba.njit
    def fresh(x):
        return new.astype(x, np.int32), new.astype(x.T, np.float64)

    (ints, floats), compiled = _compiling(fresh, np.arange(6).reshape(2, 3))
    assert compiled == ["fresh"]
    assert ints.dtype == np.int32 and floats.flags.f_contiguous
    assert floats.tolist() == np.arange(6.0).reshape(2, 3).T.tolist()


@numba.njit
def _copied(x):
    return new.copy(x)


@numba.njit
def _rare_copied(x):
    return new.rare_copy(x)


@pytest.mark.parametrize("copied", [_copied, _rare_copied], ids=["copy", "rare_copy"])
@pytest.mark.parametrize("x", [
    _BASE, _BASE.T, _BASE[:, 1], np.asfortranarray(_BASE), _BASE[::2, ::3], _BASE[:, :0],
    np.array(2.5), np.array([True, False, True])[::-1], _BASE.reshape(2, 3, 4)[:, ::-2, 1:]],
    ids=str)
def test_copy_is_a_new_c_array(copied, x):
    got = copied(x)
    assert got.dtype == x.dtype and got.shape == x.shape and got.flags.c_contiguous
    np.testing.assert_array_equal(got, x)
    assert not np.shares_memory(got, x) and got.flags.writeable


def test_a_rare_copy_is_left_unvectorised_and_unrolled():
    """``rare_copy``'s loops (one per axis) tell LLVM to leave them as they are: its code stays a
    tenth of ``copy``'s vectorised nest in each function calling it (``blas``)."""
    strided = _BASE[::2, ::3]
    _rare_copied(strided), _copied(strided)
    signature = (numba.typeof(strided),)
    rare, vectorised = _rare_copied.inspect_llvm(signature), _copied.inspect_llvm(signature)
    assert rare.count("!llvm.loop !") == 2 and "llvm.loop.unroll.disable" in rare
    assert '!{!"llvm.loop.vectorize.enable", i1 false}' in rare
    assert "vector.body" in vectorised and "vector.body" not in rare


@numba.njit
def _broadcast_copy(x, shape):
    return new.broadcast_copy(x, shape)


@pytest.mark.parametrize("x, shape", [
    (_BASE[:1], (5, 6)), (_BASE[:, :1], (4, 7)), (_BASE[:, ::2], (4, 3)), (_BASE[:1, ::-2], (3, 3)),
    (_BASE, (4, 6)), (_BASE.T[:1], (2, 4)), (_BASE[:1, :1], (3, 0)), (_BASE[:0], (0, 6)),
    (np.array([[True, False]]), (3, 2)), (np.arange(1.0), (5,)), (np.arange(5)[::-1], (5,)),
    (np.arange(6.0).reshape(1, 2, 3)[:, :, ::-1], (4, 2, 3)),
    (np.arange(4.0).reshape(2, 1, 2), (2, 3, 2)), (np.float32([[1.5], [2.5]]), (2, 3))],
    ids=str)
def test_broadcast_copy_is_numpys_broadcast_to_copied(x, shape):
    """Rows copied whole (contiguous rows), filled (a broadcast row) or element by element."""
    got = _broadcast_copy(x, tuple(np.int64(n) for n in shape))
    want = np.broadcast_to(x, shape).copy()
    assert got.dtype == want.dtype and got.shape == want.shape and got.flags.c_contiguous
    np.testing.assert_array_equal(got, want)
    assert not np.shares_memory(got, x) and got.flags.writeable


@numba.njit
def _copy_leading(dst, src, count):
    new.copy_leading(dst, src, count)
    return dst


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.bool_])
@pytest.mark.parametrize("count", [0, 1, 5, 12])
def test_copy_leading_writes_the_first_elements(dtype, count):
    src = (np.arange(12) % 3).astype(dtype).reshape(4, 3)
    dst = np.ones((6, 3), dtype)
    want = dst.copy()
    want.reshape(-1)[:count] = src.reshape(-1)[:count]
    np.testing.assert_array_equal(_copy_leading(dst, src, np.int64(count)), want)


@numba.njit
def _reshaped(x, shape):
    return new.reshaped(new.contiguous(x), shape)


@pytest.mark.parametrize("x, shape", [
    (np.arange(12.0), (3, 4)), (np.arange(12.0), (-1, 6)), (np.arange(12.0), (2, -1, 3)),
    (_BASE.T, (-1,)), (np.arange(6)[::-1], (1, -1)), (np.zeros((0, 5)), (0, -1)),
    (np.zeros((0, 5)), (5, 0)), (np.zeros((2, 0)), (-1, 3)), (np.array([7.5]), (1, 1, 1))],
    ids=str)
def test_reshaped_is_numpys_reshape_of_a_contiguous_copy(x, shape):
    # (NumPy refuses (0, -1) of an empty array; Numba's reshape, which this replaces, gives 0)
    want = np.ascontiguousarray(x).reshape(tuple(0 if s == -1 and 0 in shape else s
                                                 for s in shape))
    got = _reshaped(x, tuple(np.int64(s) for s in shape))
    assert got.shape == want.shape and got.strides == want.strides and got.dtype == x.dtype
    np.testing.assert_array_equal(got, want)
    if x.flags.c_contiguous:
        assert np.shares_memory(got, x) or x.size == 0  # a view, as NumPy's


@pytest.mark.parametrize("shape, message", [
    ((5, 3), "total size of new array must be unchanged"),
    ((-1, 5), "total size of new array must be unchanged"),
    ((0, -1), "total size of new array must be unchanged"),
    ((-1, -1), "multiple negative shape values")])
def test_reshaped_raises_numbas_errors(shape, message):
    with pytest.raises(ValueError, match=message):
        _reshaped(np.arange(12.0), tuple(np.int64(s) for s in shape))
    with pytest.raises(ValueError, match=message):  # Numba's own reshape, which it replaces
        numba.njit(lambda x, s: x.reshape(s))(np.arange(12.0), tuple(np.int64(s) for s in shape))


def test_reshaped_mixes_literal_and_run_time_sizes_and_keeps_read_only():
    x = np.arange(6.0)
    x.flags.writeable = False
    got = numba.njit(lambda x, n: new.reshaped(x, (1, n, -1)))(x, np.int64(2))
    assert got.shape == (1, 2, 3) and not got.flags.writeable
    np.testing.assert_array_equal(got, x.reshape(1, 2, 3))
