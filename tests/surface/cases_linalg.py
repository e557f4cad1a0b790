"""Cases for NumPy's linear algebra (np.linalg.*, np.inner, np.vdot, np.tensordot).

Every call is computed by NumPy itself on both targets, so values are expected bit for bit (no
tolerance), results in NumPy's containers (QRResult, SVDResult... namedtuples; lstsq's plain
tuple with an np.int32 rank), and NumPy's errors (LinAlgError('Singular matrix')...).
"""

import numpy as np
from surface_harness import cases

_rng = np.random.default_rng(10)


def _m(*shape, dtype=np.float64):
    x = _rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * _rng.standard_normal(shape)
    if np.dtype(dtype).kind in "iu":
        x = np.round(x * 4)
    return x.astype(dtype)


def _spd(*shape, dtype=np.float64):
    """Symmetric (Hermitian) positive definite matrices of shape (..., n, n)."""
    a = _m(*shape, dtype=dtype)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def _sym(*shape, dtype=np.float64):
    a = _m(*shape, dtype=dtype)
    return (a + np.conj(np.swapaxes(a, -1, -2))).astype(dtype)


F3 = _m(3, 3)
SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
NOT_SQUARE = _m(2, 3)


def solve(a, b):
    return np.linalg.solve(a, b)


def inv(a):
    return np.linalg.inv(a)


def det(a):
    return np.linalg.det(a)


def slogdet(a):
    sign, logabsdet = np.linalg.slogdet(a)
    res = np.linalg.slogdet(a)
    return res, sign, logabsdet, res.logabsdet


def cholesky(a):
    return np.linalg.cholesky(a)


def cholesky_upper(a):
    return np.linalg.cholesky(a, upper=True)


def qr(a):
    q, r = np.linalg.qr(a)
    res = np.linalg.qr(a)
    return res, q, r, res.Q, res.R


def qr_complete(a):
    return np.linalg.qr(a, mode="complete")


def qr_r(a):
    return np.linalg.qr(a, mode="r")


def qr_raw(a):
    return np.linalg.qr(a, mode="raw")


def eigh(a):
    w, v = np.linalg.eigh(a)
    res = np.linalg.eigh(a)
    return res, w, res.eigenvectors


def eigh_upper(a):
    return np.linalg.eigh(a, UPLO="U")


def eigvalsh(a):
    return np.linalg.eigvalsh(a)


def eig(a):
    w, v = np.linalg.eig(a)
    res = np.linalg.eig(a)
    return res, w, res.eigenvectors


def eigvals(a):
    return np.linalg.eigvals(a)


def svd(a):
    u, s, vh = np.linalg.svd(a)
    res = np.linalg.svd(a)
    return res, s, res.Vh


def svd_reduced(a):
    return np.linalg.svd(a, full_matrices=False)


def svd_values(a):
    return np.linalg.svd(a, compute_uv=False)


def svd_hermitian(a):
    return np.linalg.svd(a, hermitian=True)


def svdvals(a):
    return np.linalg.svdvals(a)


def lstsq(a, b):
    return np.linalg.lstsq(a, b)


def lstsq_rcond(a, b):
    x, residuals, rank, s = np.linalg.lstsq(a, b, rcond=1e-3)
    return x, residuals, rank, s


def pinv(a):
    return np.linalg.pinv(a)


def pinv_rcond(a):
    return np.linalg.pinv(a, rcond=0.5)


def pinv_hermitian(a):
    return np.linalg.pinv(a, hermitian=True)


def matrix_rank(a):
    return np.linalg.matrix_rank(a)


def matrix_rank_tol(a):
    return np.linalg.matrix_rank(a, tol=0.5)


def matrix_power3(a):
    return np.linalg.matrix_power(a, 3)


def matrix_power0(a):
    return np.linalg.matrix_power(a, 0)


def matrix_power_neg2(a):
    return np.linalg.matrix_power(a, -2)


def multi_dot3(a, b, c):
    return np.linalg.multi_dot([a, b, c])


def multi_dot2(a, b):
    return np.linalg.multi_dot([a, b])


def multi_dot4(a, b, c, d):
    return np.linalg.multi_dot((a, b, c, d))


def inner(a, b):
    return np.inner(a, b)


def vdot(a, b):
    return np.vdot(a, b)


def tensordot(a, b):
    return np.tensordot(a, b)


def tensordot1(a, b):
    return np.tensordot(a, b, axes=1)


def tensordot_pair(a, b):
    return np.tensordot(a, b, axes=([1, 0], [0, 1]))


def tensordot0(a, b):
    return np.tensordot(a, b, 0)


def cond(a):
    return np.linalg.cond(a)


def cond_fro(a):
    return np.linalg.cond(a, "fro")


def cond_2(a):
    return np.linalg.cond(a, -2)


def norm(a):
    return np.linalg.norm(a)


def norm_fro(a):
    return np.linalg.norm(a, "fro")


def norm_nuc(a):
    return np.linalg.norm(a, "nuc")


def norm_2(a):
    return np.linalg.norm(a, 2), np.linalg.norm(a, -2)


def norm_1_inf(a):
    return np.linalg.norm(a, 1), np.linalg.norm(a, np.inf), np.linalg.norm(a, -1), \
        np.linalg.norm(a, -np.inf)


def norm_axis(a):
    return np.linalg.norm(a, axis=1), np.linalg.norm(a, 3, axis=0), np.linalg.norm(a, 0, axis=1)


def norm_matrix_axes(a):
    return np.linalg.norm(a, axis=(1, 2)), np.linalg.norm(a, 2, axis=(2, 1), keepdims=True)


CASES = (
    cases("np.linalg.solve", solve, (F3, _m(3)), (_m(2, 3, 3, dtype=np.float32),
                                                  _m(2, 3, 2, dtype=np.float32)),
          (_m(3, 3, dtype=np.int64), _m(3, dtype=np.int32)), (_m(4, 4, dtype=np.complex128),
                                                              _m(4, 2, dtype=np.complex64)),
          (_m(1, 1), _m(1)), (_m(2, 3, 3), _m(3)), (SINGULAR, np.ones(2)),
          (NOT_SQUARE, np.ones(2)), (F3, np.ones(4)), (_m(3, 3) > 0, np.ones(3, bool)))
    + cases("np.linalg.inv", inv, (F3,), (SINGULAR,), (_m(2, 3, 3, dtype=np.float32),),
            (_m(3, 3, dtype=np.int32),), (_m(3, 3, dtype=np.complex64),), (_m(1, 1),),
            (NOT_SQUARE,), (_m(3),), (np.zeros((0, 0)),))
    + cases("np.linalg.det", det, (F3,), (_m(2, 4, 4, dtype=np.float32),), (SINGULAR,),
            (_m(3, 3, dtype=np.int64),), (_m(3, 3, dtype=np.complex128),), (_m(1, 1),),
            (np.zeros((0, 0)),), (NOT_SQUARE,))
    + cases("np.linalg.slogdet", slogdet, (F3,), (_m(2, 3, 3, dtype=np.complex64),),
            (SINGULAR,), (_m(3, 3, dtype=np.int32),), (_m(1, 1, dtype=np.float32),))
    + cases("np.linalg.cholesky", cholesky, (_spd(3, 3),), (F3,),
            (_spd(2, 3, 3, dtype=np.float32),), (_spd(3, 3, dtype=np.complex128),),
            (_spd(1, 1),), (NOT_SQUARE,), (np.array([[4, 2], [2, 3]]),))
    + cases("np.linalg.cholesky", cholesky_upper, (_spd(4, 4),), (_spd(2, 2, dtype=np.complex64),))
    + cases("np.linalg.qr", qr, (_m(4, 3),), (_m(2, 3, 5, dtype=np.float32),),
            (_m(3, 3, dtype=np.complex128),), (_m(3, 2, dtype=np.int64),), (_m(1, 1),),
            (_m(3),))
    + cases("np.linalg.qr", qr_complete, (_m(4, 3),), (_m(3, 4, dtype=np.complex64),))
    + cases("np.linalg.qr", qr_r, (_m(4, 3),), (_m(2, 3, 4, dtype=np.float32),))
    + cases("np.linalg.qr", qr_raw, (_m(4, 3),), (_m(3, 5, dtype=np.complex128),))
    + cases("np.linalg.eigh", eigh, (_sym(4, 4),), (_sym(2, 3, 3, dtype=np.float32),),
            (_sym(3, 3, dtype=np.complex128),), (_sym(3, 3, dtype=np.int32),), (_m(1, 1),),
            (NOT_SQUARE,))
    + cases("np.linalg.eigh", eigh_upper, (_m(3, 3),), (_m(3, 3, dtype=np.complex64),))
    + cases("np.linalg.eigvalsh", eigvalsh, (_sym(4, 4),), (_sym(2, 3, 3, dtype=np.complex64),),
            (_sym(3, 3, dtype=np.int64),), (_sym(1, 1, dtype=np.float32),))
    + cases("np.linalg.eig", eig, (_m(3, 3, dtype=np.complex128),),
            (_m(2, 3, 3, dtype=np.complex64),), (_m(1, 1, dtype=np.complex128),))
    + cases("np.linalg.eigvals", eigvals, (_m(4, 4, dtype=np.complex128),),
            (_m(2, 2, 2, dtype=np.complex64),))
    + cases("np.linalg.svd", svd, (_m(4, 3),), (_m(2, 3, 5, dtype=np.float32),),
            (_m(3, 3, dtype=np.complex128),), (_m(3, 2, dtype=np.int32),), (_m(1, 1),),
            (_m(30, 20),))
    + cases("np.linalg.svd", svd_reduced, (_m(3, 5),), (_m(2, 5, 3, dtype=np.complex64),))
    + cases("np.linalg.svd", svd_values, (_m(4, 3),), (_m(2, 3, 3, dtype=np.float32),))
    + cases("np.linalg.svd", svd_hermitian, (_sym(3, 3),), (_sym(3, 3, dtype=np.complex128),))
    + cases("np.linalg.svdvals", svdvals, (_m(4, 3),), (_m(2, 2, 3, dtype=np.complex64),))
    + cases("np.linalg.lstsq", lstsq, (_m(5, 3), _m(5)), (_m(4, 3, dtype=np.float32),
                                                          _m(4, 2, dtype=np.float32)),
            (np.ones((4, 2)), _m(4)), (_m(3, 3, dtype=np.int64), _m(3, dtype=np.int64)),
            (_m(4, 3, dtype=np.complex128), _m(4, dtype=np.complex128)), (_m(2, 4), _m(2)),
            (_m(1, 1), _m(1)), (_m(4, 3), _m(3)))
    + cases("np.linalg.lstsq", lstsq_rcond, (_m(5, 3), _m(5, 2)), (np.ones((4, 2)), _m(4)))
    + cases("np.linalg.pinv", pinv, (_m(4, 3),), (_m(2, 3, 5, dtype=np.float32),),
            (_m(3, 3, dtype=np.complex128),), (_m(3, 2, dtype=np.int32),), (np.ones((3, 3)),),
            (_m(1, 1),))
    + cases("np.linalg.pinv", pinv_rcond, (_m(4, 3),), (np.ones((3, 3)),))
    + cases("np.linalg.pinv", pinv_hermitian, (_sym(3, 3),), (_sym(2, 3, 3, dtype=np.float32),))
    + cases("np.linalg.matrix_rank", matrix_rank, (np.ones((3, 3)),), (_m(2, 3, 4),),
            (_m(3),), (np.zeros(3, np.float32),), (_m(3, 3, dtype=np.int64),),
            (_m(3, 3, dtype=np.complex64),), (np.zeros((2, 2)),))
    + cases("np.linalg.matrix_rank", matrix_rank_tol, (_m(3, 3),), (np.eye(3) * 0.1,))
    + cases("np.linalg.matrix_power", matrix_power3, (F3,), (_m(3, 3, dtype=np.int64),),
            (_m(2, 2, 2, dtype=np.float32),), (_m(3, 3, dtype=np.complex128),),
            (_m(2, 2) > 0,), (NOT_SQUARE,), (_m(1, 1, dtype=np.int32),))
    + cases("np.linalg.matrix_power", matrix_power0, (F3,), (_m(2, 2, dtype=np.int32),))
    + cases("np.linalg.matrix_power", matrix_power_neg2, (F3,), (_m(3, 3, dtype=np.int64),),
            (SINGULAR,))
    + cases("np.linalg.multi_dot", multi_dot3, (_m(3), _m(3, 4), _m(4)),
            (_m(2, 3), _m(3, 4, dtype=np.float32), _m(4, 5)),
            (_m(2, 3, dtype=np.int64), _m(3, 4, dtype=np.int64), _m(4, 2, dtype=np.int64)),
            (_m(2, 3, dtype=np.complex128), _m(3), _m(4)))
    + cases("np.linalg.multi_dot", multi_dot2, (_m(2, 3), _m(4, 3, 5)), (_m(3), _m(3)))
    + cases("np.linalg.multi_dot", multi_dot4, (_m(10, 30), _m(30, 5), _m(5, 60), _m(60, 2)),
            (_m(3, dtype=np.float32), _m(3, 3), _m(3, 3), _m(3, 2)))
    + cases("np.inner", inner, (_m(3), _m(3)), (_m(2, 3), _m(4, 3, dtype=np.float32)),
            (_m(3, dtype=np.int32), _m(3, dtype=np.int64)),
            (_m(3, dtype=np.complex128), _m(3, dtype=np.complex128)),
            (np.float32(2.0), _m(2, 2)), (_m(2, 2, 3), _m(3)), (_m(3) > 0, _m(3) > 0),
            (_m(3), _m(4)))
    + cases("np.vdot", vdot, (_m(3, dtype=np.complex128), _m(3, dtype=np.complex128)),
            (_m(2, 3), _m(3, 2)), (_m(4, dtype=np.int32), _m(4, dtype=np.int32)),
            (_m(3, dtype=np.float32), _m(3, dtype=np.float32)), (_m(3), _m(4)))
    + cases("np.tensordot", tensordot, (_m(2, 3, 4), _m(3, 4, 5)),
            (_m(3, 3, dtype=np.float32), _m(3, 3, 2, dtype=np.float32)),
            (_m(2, 2, dtype=np.int64), _m(2, 2, 2, dtype=np.int64)), (_m(2, 3), _m(3, 3, 2)))
    + cases("np.tensordot", tensordot1, (_m(2, 3), _m(3, 4)),
            (_m(3, dtype=np.complex64), _m(3, 2, dtype=np.complex64)))
    + cases("np.tensordot", tensordot_pair, (_m(3, 4, 5), _m(4, 3, 2)),
            (_m(2, 2, 3, dtype=np.int32), _m(2, 2, dtype=np.int32)))
    + cases("np.tensordot", tensordot0, (_m(2), _m(3)), (_m(2, 2, dtype=np.float32), _m(2)))
    + cases("np.linalg.cond", cond, (F3,), (_m(2, 3, 3, dtype=np.float32),), (SINGULAR,),
            (_m(4, 3),), (_m(3, 3, dtype=np.complex128),), (_m(3, 3, dtype=np.int32),))
    + cases("np.linalg.cond", cond_fro, (F3,), (_m(2, 3, 3, dtype=np.complex64),))
    + cases("np.linalg.cond", cond_2, (F3,), (_m(3, 3, dtype=np.float32),))
    # norm: ords 2, -2, 'nuc' are computed by NumPy (exact); the others are loops on cpu that
    # add sequentially where NumPy adds pairwise or with a BLAS dot (as the cpu target's sum
    # and mean do): a few ulps apart on cpu only.
    + cases("np.linalg.norm", norm_nuc, (_m(4, 3),), (_m(3, 3, dtype=np.float32),),
            (_m(2, 2, dtype=np.complex128),))
    + cases("np.linalg.norm", norm_2, (_m(4, 3),), (_m(3, 3, dtype=np.complex128),))
    + cases("np.linalg.norm", norm, (_m(30, 20),), (_m(3, 4, 5),), (_m(3, 3, dtype=np.int32),),
            (_m(3, 3, dtype=np.complex128),), rtol=1e-14)
    + cases("np.linalg.norm", norm_fro, (_m(4, 3),), (_m(3, 3, dtype=np.complex128),), rtol=1e-14)
    + cases("np.linalg.norm", norm_1_inf, (_m(4, 3),), (_m(3, 3, dtype=np.int64),), rtol=1e-14)
    + cases("np.linalg.norm", norm_axis, (_m(4, 3),), rtol=1e-14)
    + cases("np.linalg.norm", norm_matrix_axes, (_m(2, 3, 4),), rtol=1e-14)
    + cases("np.linalg.norm", norm, (_m(7, dtype=np.float32),), rtol=1e-6)
    + cases("np.linalg.norm", norm_fro, (_m(3, 3, dtype=np.complex64),), rtol=1e-6)
    + cases("np.linalg.norm", norm_1_inf, (_m(3, 5, dtype=np.float32),), rtol=1e-6)
    + cases("np.linalg.norm", norm_axis, (_m(3, 5, dtype=np.float32),), rtol=1e-6)
    + cases("np.linalg.norm", norm_matrix_axes, (_m(2, 3, 3, dtype=np.float32),), rtol=1e-6)
)
