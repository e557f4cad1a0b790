"""NumPy's linear algebra on staged tensors (issue 10, helper l): NumPy's errors at run time on
both targets, with the note naming the op and the user's line; NumPy's result containers; clear
refusals of what cannot be staged (eig of a real matrix, staged options, out=). Values are
compared with NumPy over many shapes and dtypes in tests/surface/cases_linalg.py."""

import numpy as np
import pytest
from autostage.runtime.staging.try_regions import StagingTryError
from autostage.runtime.tensor import StagingTypeError

import autostage

TARGETS = ["interpreter", "cpu"]
LinAlgError = np.linalg.LinAlgError


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(tmp_path / "cache"))


def solve(a, b):
    return np.linalg.solve(a, b)


def inv_loop(a, n):
    x = a
    for _ in range(n):
        x = np.linalg.inv(x) + a
    return x


def cholesky(a):
    return np.linalg.cholesky(a)


def qr_unpack(a):
    q, r = np.linalg.qr(a)
    res = np.linalg.qr(a)
    return q, r, res.Q, res.R, res


def lstsq(a, b):
    return np.linalg.lstsq(a, b)


def eig_real(a):
    return np.linalg.eig(a)


def eigvals_real(a):
    return np.linalg.eigvals(a)


def power_staged_n(a, n):
    return np.linalg.matrix_power(a, n)


def multi_dot_out(a, b, c):
    return np.linalg.multi_dot([a, b], out=c)


def qr_bad_mode(a):
    return np.linalg.qr(a, mode="bogus")


def rank_tol_array(a):
    return np.linalg.matrix_rank(a, tol=np.array([0.1, 0.2]))


def solve_in_try(a, b):
    try:
        x = np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        x = b * 0.0
    return x


def _line(fn, offset):
    """"file:line" of the line ``offset`` lines below ``fn``'s def."""
    return f"test_numpy_linalg.py:{fn.__code__.co_firstlineno + offset}"


def _notes(error):
    return " ".join(getattr(error, "__notes__", ()))


@pytest.mark.parametrize("target", TARGETS)
def test_singular_solve_raises_numpys_error_with_the_line(target):
    staged = autostage.convert(solve, target=target)
    with pytest.raises(LinAlgError, match="^Singular matrix") as info:
        staged(np.array([[1.0, 2.0], [2.0, 4.0]]), np.ones(2))
    assert str(info.value) == "Singular matrix"
    assert "numpy_linalg" in _notes(info.value) and _line(solve, 1) in _notes(info.value)
    np.testing.assert_array_equal(staged(np.eye(2) * 2, np.ones(2)), np.full(2, 0.5))


@pytest.mark.parametrize("target", TARGETS)
def test_singular_inv_in_a_loop(target):
    staged = autostage.convert(inv_loop, target=target)
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(staged(a, np.int64(2)), inv_loop(a, 2))
    with pytest.raises(LinAlgError, match="^Singular matrix") as info:
        staged(np.zeros((2, 2)), np.int64(3))
    assert str(info.value) == "Singular matrix" and _line(inv_loop, 3) in _notes(info.value)


@pytest.mark.parametrize("target", TARGETS)
def test_cholesky_not_positive_definite(target):
    staged = autostage.convert(cholesky, target=target)
    with pytest.raises(LinAlgError, match="^Matrix is not positive definite"):
        staged(np.array([[1.0, 2.0], [2.0, 1.0]]))


@pytest.mark.parametrize("target", TARGETS)
def test_shape_errors_are_numpys(target):
    staged = autostage.convert(solve, target=target)
    with pytest.raises(LinAlgError, match="Last 2 dimensions of the array must be square"):
        staged(np.ones((2, 3)), np.ones(2))
    with pytest.raises(LinAlgError, match="1-dimensional array given"):
        staged(np.ones(3), np.ones(3))  # the rank is known when tracing: raised there
    with pytest.raises(ValueError, match="mismatch in its core dimension 0") as info:
        staged(np.eye(3), np.ones(4))
    assert str(info.value) == str(_raised(np.linalg.solve, np.eye(3), np.ones(4)))


def _raised(fn, *args):
    try:
        fn(*args)
    except Exception as error:  # noqa: BLE001
        return error
    raise AssertionError("NumPy did not raise")


@pytest.mark.parametrize("target", TARGETS)
def test_float16_is_refused_as_numpy_does(target):
    staged = autostage.convert(solve, target=target)
    with pytest.raises(TypeError, match="array type float16 is unsupported in linalg"):
        staged(np.eye(2, dtype=np.float16), np.ones(2, np.float16))


@pytest.mark.parametrize("target", TARGETS)
def test_qr_result_is_numpys_namedtuple(target):
    a = np.arange(12.0).reshape(4, 3) ** 1.5
    q, r, q2, r2, res = autostage.convert(qr_unpack, target=target)(a)
    assert type(res) is type(np.linalg.qr(a)) and res._fields == ("Q", "R")
    for got, wanted in zip((q, r, q2, r2), (*np.linalg.qr(a), *np.linalg.qr(a)), strict=True):
        assert got.dtype == wanted.dtype and np.array_equal(got, wanted)


@pytest.mark.parametrize("target", TARGETS)
def test_lstsq_is_a_plain_tuple_with_an_int32_rank(target):
    a, b = np.ones((4, 2)), np.arange(4.0)
    x, residuals, rank, s = autostage.convert(lstsq, target=target)(a, b)
    wanted = np.linalg.lstsq(a, b)
    assert type(rank) is np.int32 and rank == wanted[2] == 1
    assert residuals.shape == (0,)  # rank deficient: no residuals (a data-dependent length)
    assert np.array_equal(x, wanted[0]) and np.array_equal(s, wanted[3])
    x, residuals, rank, s = autostage.convert(lstsq, target=target)(np.eye(3)[:, :2], b[:3])
    assert residuals.shape == (1,) and rank == 2


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [eig_real, eigvals_real])
def test_eig_of_a_real_matrix_is_refused(target, fn):
    staged = autostage.convert(fn, target=target)
    with pytest.raises(StagingTypeError, match=r"np\.linalg\.eig(vals)? of a real \(float64\) "
                       r"matrix is not supported.*real or complex arrays depending on the "
                       r"values.*astype\(np\.complex128\).*eigh"):
        staged(np.eye(2))
    w = staged(np.eye(2, dtype=np.complex128))
    assert (w[0] if isinstance(w, tuple) else w).dtype == np.complex128


@pytest.mark.parametrize("target", TARGETS)
def test_staged_exponent_is_refused(target):
    staged = autostage.convert(power_staged_n, target=target)
    with pytest.raises(StagingTypeError, match=r"np\.linalg\.matrix_power: the argument n must "
                       r"be known when tracing.*test_numpy_linalg\.py:\d+"):
        staged(np.eye(2), np.int64(3))
    np.testing.assert_array_equal(staged(np.eye(2) * 2, 3), np.eye(2) * 8)


@pytest.mark.parametrize("target", TARGETS)
def test_unsupported_arguments(target):
    with pytest.raises(StagingTypeError, match=r"np\.linalg\.multi_dot\(\.\.\., out=\.\.\.\) "
                       "cannot be staged"):
        autostage.convert(multi_dot_out, target=target)(np.eye(2), np.eye(2), np.eye(2))
    with pytest.raises(ValueError, match="Unrecognized mode 'bogus'"):
        autostage.convert(qr_bad_mode, target=target)(np.eye(2))
    with pytest.raises(StagingTypeError, match=r"np\.linalg\.matrix_rank: an array for the "
                       "argument tol is not supported"):
        autostage.convert(rank_tol_array, target=target)(np.eye(2))


@pytest.mark.parametrize("target", TARGETS)
def test_try_catching_linalg_error_is_refused(target):
    # staged code has no exception handling (runtime/staging/try_regions.py): the handler would
    # never see the run-time LinAlgError, so the try is refused rather than silently ignored
    staged = autostage.convert(solve_in_try, target=target)
    with pytest.raises(StagingTryError, match=r"catches LinAlgError, which the 'numpy_linalg' "
                       "op at .* may raise when the staged code runs"):
        staged(np.eye(2), np.ones(2))
