"""Cases for the NumPy functions of docs/numpy_surface.csv that staged before issue 10.

Element-wise ufuncs, reductions, the products, ``where``/``clip``, joins of tuples, the shape
functions, creation with staged sizes, sorting, scans and ``np.linalg.norm``; each on varied
dtypes and shapes (empty and 0-d where NumPy accepts them), the first two argument sets on the
most informative inputs (they run on cpu by default).
"""

import numpy as np
from surface_harness import cases

F64 = np.linspace(-2.5, 3.0, 12).reshape(3, 4)
F32 = np.linspace(-1.5, 2.0, 6, dtype=np.float32).reshape(2, 3)
I32 = np.array([[3, -1, 4], [1, -5, 9]], np.int32)
I64 = np.array([7, -2, 0, 5, 5, -8], np.int64)
U8 = np.array([0, 7, 200, 255], np.uint8)
B = np.array([[True, False, True], [False, False, True]])
C128 = np.array([1 + 2j, -0.5 + 0j, 3 - 1j], np.complex128)
EMPTY = np.zeros((0, 3))
SCALAR = np.float64(0.75)
POS64 = np.linspace(0.25, 4.0, 8).reshape(2, 4)
POS32 = np.linspace(0.5, 8.0, 5, dtype=np.float32)
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5])

CASES = []
# cpu: transcendental functions may differ from NumPy's in the last bits (DESIGN: within 4 ulp),
# products and reductions by the summation order.
TOL = {"rtol": 2e-6, "atol": 1e-12}


def _unary(name):
    function = eval(name, {"np": np})

    def call(x):
        return function(x)
    call.__name__ = call.__qualname__ = name.replace(".", "_")
    return call


# ---- element-wise, one argument ------------------------------------------------------------
for _name, _arg_sets in {
    # np.exp of bool is float16 in NumPy: refused on cpu (no float16 in Numba), not listed here.
    "np.exp": [(F32,), (I32,), (F64,), (C128,), (EMPTY,), (SCALAR,)],
    "np.log": [(POS32,), (I64,), (POS64,), (C128,), (SPECIAL,), (SCALAR,)],
    "np.sqrt": [(POS64,), (I32,), (F32,), (C128,), (SPECIAL,), (EMPTY,)],
    "np.abs": [(I32,), (F32,), (C128,), (U8,), (SPECIAL,), (SCALAR,), (B,)],
    "np.sin": [(F32,), (I64,), (F64,), (C128,), (EMPTY,)],
    "np.cos": [(F64,), (I32,), (F32,), (C128,)],
    "np.tan": [(F32,), (F64,), (I32,)],
    "np.tanh": [(F32,), (I64,), (F64,), (C128,), (SPECIAL,)],
    "np.arctan": [(F64,), (I32,), (F32,)],
    "np.square": [(I32,), (F32,), (C128,), (U8,), (B,)],
    "np.sign": [(F64,), (I32,), (SPECIAL,), (F32,), (C128,), (U8,)],
    "np.floor": [(F32,), (I64,), (F64,), (SPECIAL,), (B,)],
    "np.ceil": [(F64,), (I32,), (F32,), (SPECIAL,)],
    "np.log1p": [(POS32,), (I32,), (F64,), (SPECIAL,)],
    "np.log10": [(POS64,), (I32,), (POS32,)],
    "np.log2": [(POS32,), (I64,), (POS64,)],
    "np.isnan": [(SPECIAL,), (I32,), (F32,), (C128,), (EMPTY,)],
    "np.isinf": [(SPECIAL,), (F32,), (I64,)],
    "np.isfinite": [(SPECIAL,), (I32,), (F32,), (B,)],
    "np.logical_not": [(B,), (F64,), (I32,)],
    "np.conj": [(C128,), (F32,), (I64,)],
}.items():
    CASES += cases(_name, _unary(_name), *_arg_sets, **TOL)


# ---- element-wise, two arguments (with Python-scalar, weak, operands) ----------------------
def maximum(x, y):
    return np.maximum(x, y)


def maximum_weak(x):
    return np.maximum(x, 0.5)


def minimum(x, y):
    return np.minimum(x, y)


def minimum_weak(x):
    return np.minimum(x, 2)


def power(x, y):
    return np.power(x, y)


def power_weak(x):
    return np.power(x, 2)



def logaddexp(x, y):
    return np.logaddexp(x, y)




def logical_and(x, y):
    return np.logical_and(x, y)


def logical_or(x, y):
    return np.logical_or(x, y)


def multiply(x, y):
    return np.multiply(x, y)


def multiply_weak(x):
    return np.multiply(x, 3.0)


def divide(x, y):
    return np.divide(x, y)




def equal(x, y):
    return np.equal(x, y)


ROW32 = np.array([0.5, -1.0, 2.0], np.float32)
ROW_I64 = np.array([2, 0, -3], np.int64)
CASES += cases("np.maximum", maximum, (F32, ROW_I64), (I32, ROW_I64), (SPECIAL, SPECIAL[::-1]),
               (B, I32), (F64, F64.T[:3, :].T))
CASES += cases("np.maximum", maximum_weak, (F32,), (I32,), (SCALAR,))
CASES += cases("np.minimum", minimum, (I32, F32), (SPECIAL, np.zeros(6)), (U8, U8[::-1]))
CASES += cases("np.minimum", minimum_weak, (F32,), (U8,))
CASES += cases("np.power", power, (POS32, np.float32(1.5)), (I32, np.abs(I32)),
               (F64, np.float64(2.0)), (C128, C128), **TOL)
CASES += cases("np.power", power_weak, (F32,), (I64,), (C128,), **TOL)
CASES += cases("np.logaddexp", logaddexp, (F32, ROW32), (F64, SCALAR), (SPECIAL, SPECIAL), **TOL)
CASES += cases("np.logical_and", logical_and, (B, B[::-1]), (F64, I32[:, :1]))
CASES += cases("np.logical_or", logical_or, (B, B[:, ::-1]), (I64, SCALAR))
CASES += cases("np.multiply", multiply, (F32, I32), (I32, ROW_I64), (C128, F32))
CASES += cases("np.multiply", multiply_weak, (F32,), (I32,))
CASES += cases("np.divide", divide, (I32, ROW_I64), (F32, ROW32), (F64, np.zeros(4)),
               (C128, C128))
CASES += cases("np.equal", equal, (I32, ROW_I64), (SPECIAL, SPECIAL), (F32, F32.T.T))


# ---- where, clip ---------------------------------------------------------------------------
def where(c, x, y):
    return np.where(c, x, y)


def where_weak(x):
    return np.where(x > 0, x, 0.0)


def clip(x, lo, hi):
    return np.clip(x, lo, hi)


def clip_weak(x):
    return np.clip(x, -1, 1)


CASES += cases("np.where", where, (B, F32, I32), (B[0], I64[:3], ROW32),
               (SPECIAL > 0, SPECIAL, np.zeros(6)))
CASES += cases("np.where", where_weak, (F32,), (I32,), (EMPTY,))
CASES += cases("np.clip", clip, (F64, np.float64(-1.0), np.float64(1.0)),
               (I32, np.int32(0), np.int32(4)), (SPECIAL, np.float64(-1.0), np.float64(1.0)))
CASES += cases("np.clip", clip_weak, (F32,), (I64,), (U8,))


# ---- reductions ----------------------------------------------------------------------------
def _reduction(name, **kwargs):
    function = eval(name, {"np": np})

    def call(x):
        return function(x, **kwargs)
    suffix = "_".join(f"{k}{v}" for k, v in kwargs.items())
    call.__name__ = call.__qualname__ = f"{name.replace('.', '_')}_{suffix}"
    return call


for _name in ("np.sum", "np.mean", "np.max", "np.min", "np.prod", "np.any", "np.all",
              "np.argmax", "np.argmin", "np.amax", "np.std", "np.var"):
    _bool_ok = _name not in ("np.std", "np.var", "np.mean")
    CASES += cases(_name, _reduction(_name), (F32,), (I32,), (F64,), (SPECIAL,),
                   *([(B,)] if _bool_ok else []), (U8,), **TOL)
    CASES += cases(_name, _reduction(_name, axis=0), (I32,), (F32,), (F64,), **TOL)
    CASES += cases(_name, _reduction(_name, axis=-1, keepdims=True) if "arg" not in _name
                   else _reduction(_name, axis=-1), (F64,), (I64,), (B,), **TOL)
CASES += cases("np.sum", _reduction("np.sum"), (EMPTY,), (C128,), **TOL)
CASES += cases("np.mean", _reduction("np.mean", axis=1), (I32,), (C128.reshape(1, 3),), **TOL)
CASES += cases("np.prod", _reduction("np.prod", axis=1), (I32,), (U8.reshape(2, 2),))
CASES += cases("np.max", _reduction("np.max"), (EMPTY,))   # NumPy raises: same error staged
CASES += cases("np.std", _reduction("np.std", ddof=1), (F64,), (I32,), **TOL)
CASES += cases("np.var", _reduction("np.var", axis=0, ddof=1), (F32,), (I64.reshape(2, 3),), **TOL)


def cumsum(x):
    return np.cumsum(x)


def cumsum_axis(x):
    return np.cumsum(x, axis=1)




CASES += cases("np.cumsum", cumsum, (I32,), (F32,), (B,), (U8,), (EMPTY,))
CASES += cases("np.cumsum", cumsum_axis, (F64,), (I32,))


def norm(x):
    return np.linalg.norm(x)


def norm_axis(x):
    return np.linalg.norm(x, axis=1)


def norm_ord(x):
    return np.linalg.norm(x, ord=1)


CASES += cases("np.linalg.norm", norm, (F32,), (I32,), (F64,), (C128,), (EMPTY,), **TOL)
CASES += cases("np.linalg.norm", norm_axis, (F64,), (F32,), **TOL)
CASES += cases("np.linalg.norm", norm_ord, (F64,), (I64,), **TOL)


# ---- products --------------------------------------------------------------------------------
def dot(a, b):
    return np.dot(a, b)


def matmul(a, b):
    return np.matmul(a, b)


def outer(a, b):
    return np.outer(a, b)


def einsum_ij_jk(a, b):
    return np.einsum("ij,jk->ik", a, b)


M34 = np.arange(12.0).reshape(3, 4)
M43 = np.linspace(-1, 1, 12).reshape(4, 3)
CASES += cases("np.dot", dot, (M34, M43), (F32, F32.T), (I32, I32.T), (M34[0], M43[:, 0]),
               (I64, I64), (M34, np.float64(2.0)), **TOL)
CASES += cases("np.matmul", matmul, (F32, F32.T), (M34, M43[:, 0]), (I32, I32.T.copy()),
               (np.ones((2, 3, 4)), M43), **TOL)
CASES += cases("np.outer", outer, (ROW32, I64), (I64, ROW_I64), (F64, ROW32), **TOL)
CASES += cases("np.einsum", einsum_ij_jk, (M34, M43), (F32, F32.T), **TOL)


# ---- creation with staged sizes --------------------------------------------------------------
def zeros_n(n):
    return np.zeros(n)


def zeros_shape(x):
    return np.zeros((x.shape[0], 2), np.int32)


def ones_n(n):
    return np.ones(n, dtype=np.float32)


def ones_shape(x):
    return np.ones(x.shape)


def empty_shape(x):
    return np.empty(x.shape).shape


def full_n(n, v):
    return np.full(n, v)


def full_weak(x):
    return np.full(x.shape, 2.5)


def arange_n(n):
    return np.arange(n)


def arange_range(a, b):
    return np.arange(a, b, 2)


def eye_n(n):
    return np.eye(n)


def eye_index(y):
    return np.eye(4)[y]


def like(function):
    def call(x):
        return function(x)
    call.__name__ = call.__qualname__ = function.__name__ + "_of"
    return call


def empty_like(x):
    return np.zeros_like(np.empty_like(x))  # the contents are undefined: dtype and shape only


def full_like(x):
    return np.full_like(x, 7)


def zeros_like_dtype(x):
    return np.zeros_like(x, dtype=np.float32)


def array_of_tensors(a, b):
    return np.array([a, b])


def array_copy(x):
    return np.array(x)


def array_dtype(x):
    return np.array(x, dtype=np.float32)


def asarray(x):
    return np.asarray(x)


def copy(x):
    return np.copy(x)


N3 = np.int64(3)
CASES += cases("np.zeros", zeros_n, (N3,), (np.int32(0),))
CASES += cases("np.zeros", zeros_shape, (F64,), (EMPTY,))
CASES += cases("np.ones", ones_n, (N3,), (np.int64(1),))
CASES += cases("np.ones", ones_shape, (I32,), (F32,))
CASES += cases("np.empty", empty_shape, (F64,), (I32,))
CASES += cases("np.full", full_n, (N3, np.float32(1.5)), (np.int64(2), np.int64(-4)),
               (N3, np.bool_(True)))
CASES += cases("np.full", full_weak, (I32,), (F64,))
CASES += cases("np.arange", arange_n, (np.int64(5),), (np.int32(0),), (np.float64(3.5),))
CASES += cases("np.arange", arange_range, (np.int64(-3), np.int64(6)),
               (np.float32(0.5), np.float32(4.0)))
CASES += cases("np.eye", eye_n, (N3,), (np.int64(1),))
CASES += cases("np.eye", eye_index, (np.array([2, 0, 3]),), (np.int64(1),))
for _function in (np.zeros_like, np.ones_like):
    _name = f"np.{_function.__name__}"
    CASES += cases(_name, like(_function), (F32,), (I32,), (B,), (C128,), (EMPTY,))
CASES += cases("np.empty_like", empty_like, (F32,), (I32,), (B,), (C128,), (EMPTY,))
# 0-d results: a 0-d ndarray here (for a NumPy scalar and a 0-d ndarray argument alike)
for _function in (np.zeros_like, np.ones_like, np.copy):
    CASES += cases(f"np.{_function.__name__}", like(_function), (SCALAR,), (np.array(2.5),))
CASES += cases("np.zeros_like", zeros_like_dtype, (I64,), (B,))
CASES += cases("np.full_like", full_like, (F32,), (I32,), (B,), (U8,))
CASES += cases("np.array", array_of_tensors, (ROW32, ROW32[::-1]), (SCALAR, np.float64(2.0)),
               (I64, I64))
CASES += cases("np.array", array_copy, (F32,), (B,))
CASES += cases("np.array", array_dtype, (I32,), (F64,))
CASES += cases("np.asarray", asarray, (F32,), (I64,))
CASES += cases("np.copy", copy, (F64,), (I32,))


# ---- shapes and joins ------------------------------------------------------------------------
def reshape(x):
    return np.reshape(x, (-1, 2))


def reshape_flat(x):
    return np.reshape(x, -1)


def ravel(x):
    return np.ravel(x)


def transpose(x):
    return np.transpose(x)


def transpose_axes(x):
    return np.transpose(x, (1, 0, 2))


def expand_dims(x):
    return np.expand_dims(x, 1)


def expand_dims_last(x):
    return np.expand_dims(x, -1)


def squeeze(x):
    return np.squeeze(x)


def squeeze_axis(x):
    return np.squeeze(x, axis=0)


def concatenate(a, b):
    return np.concatenate((a, b))


def concatenate_axis1(a, b):
    return np.concatenate([a, b], axis=1)


def stack(a, b):
    return np.stack((a, b))


def stack_axis(a, b):
    return np.stack([a, b], axis=-1)


def broadcast_to(x):
    return np.broadcast_to(x, (2, 3))



def shape(x):
    return np.shape(x)


def ndim(x):
    return np.ndim(x)


def size(x):
    return np.size(x)


CUBE = np.arange(24.0).reshape(2, 3, 4)
CASES += cases("np.reshape", reshape, (F64,), (I32,), (B,), (EMPTY,))
CASES += cases("np.reshape", reshape_flat, (F32,), (SCALAR,))
CASES += cases("np.ravel", ravel, (F32.T,), (I32,), (SCALAR,), (EMPTY,))
CASES += cases("np.transpose", transpose, (F32,), (CUBE,), (I64,), (SCALAR,))
CASES += cases("np.transpose", transpose_axes, (CUBE,), (CUBE.astype(np.int32),))
CASES += cases("np.expand_dims", expand_dims, (F32,), (I64,), (B,))
CASES += cases("np.expand_dims", expand_dims_last, (SCALAR,), (C128,))
# np.squeeze without axis= on an array with unknown sizes is refused (test_catalog.py).
CASES += cases("np.squeeze", squeeze_axis, (F32[:1],), (np.ones((1, 3, 1), np.int32),),
               (F64,))  # NumPy raises on the third: the same error staged
CASES += cases("np.squeeze", squeeze, (SCALAR,))
CASES += cases("np.concatenate", concatenate, (F32, I32), (I64, ROW_I64), (EMPTY, F64[:, :3]),
               (B, B))
CASES += cases("np.concatenate", concatenate_axis1, (F32, I32), (F64, F64))
CASES += cases("np.stack", stack, (ROW32, ROW_I64), (F32, F32), (SCALAR, np.float64(1.0)))
CASES += cases("np.stack", stack_axis, (F64, F64), (B, I32))
CASES += cases("np.broadcast_to", broadcast_to, (ROW32,), (np.int64(4),), (I32[:1],))
CASES += cases("np.shape", shape, (F32,), (SCALAR,), (EMPTY,))
CASES += cases("np.ndim", ndim, (CUBE,), (SCALAR,))
CASES += cases("np.size", size, (F64,), (EMPTY,))


# ---- matrices, sorting -----------------------------------------------------------------------
def diag(x):
    return np.diag(x)


def diag_k(x):
    return np.diag(x, 1)




def sort(x):
    return np.sort(x)


def sort_axis0(x):
    return np.sort(x, axis=0)


def argsort(x):
    return np.argsort(x)


def argsort_stable(x):
    return np.argsort(x, kind="stable")


CASES += cases("np.diag", diag, (F64,), (I64,), (B,), (EMPTY,))
CASES += cases("np.diag", diag_k, (ROW32,), (M34,))
CASES += cases("np.sort", sort, (F32,), (I64,), (SPECIAL,), (B,), (EMPTY,))
CASES += cases("np.sort", sort_axis0, (I32,), (F64,))
CASES += cases("np.argsort", argsort, (I64,), (F32,), (SPECIAL,), (U8,))
CASES += cases("np.argsort", argsort_stable, (np.array([3, 1, 3, 1, 2]),), (B,))
