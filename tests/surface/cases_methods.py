"""Cases for the array methods and attributes, builtins and ``@`` of docs/numpy_surface.csv.

``ndarray.X`` is ``x.X(...)`` on a staged array (or the attribute ``x.X``); builtins are applied to
staged arrays or to staged scalars (``x[0]``, ``x.sum()``), as model code writes them.
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
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5])
CUBE = np.arange(24.0).reshape(2, 3, 4)

CASES = []
TOL = {"rtol": 2e-6, "atol": 1e-12}  # cpu: summation order of products and reductions


# ---- attributes ------------------------------------------------------------------------------
def shape(x):
    return x.shape


def shape_first(x):
    return x.shape[0] * 2


def transposed(x):
    return x.T


def ndim(x):
    return x.ndim


def size(x):
    return x.size


def dtype_cast(x, y):
    return y.astype(x.dtype)




CASES += cases("ndarray.shape", shape, (F32,), (EMPTY,), (SCALAR,), (CUBE,))
CASES += cases("ndarray.shape", shape_first, (I64,), (F64,))
CASES += cases("ndarray.T", transposed, (F32,), (CUBE,), (I64,), (SCALAR,), (B,))
CASES += cases("ndarray.ndim", ndim, (CUBE,), (SCALAR,))
CASES += cases("ndarray.size", size, (F64,), (EMPTY,), (SCALAR,))
CASES += cases("ndarray.dtype", dtype_cast, (F32, I64), (I32, F64), (B, F32))


# ---- methods ---------------------------------------------------------------------------------
def reshape(x):
    return x.reshape(-1, 2)


def reshape_tuple(x):
    return x.reshape((2, -1))


def astype_f32(x):
    return x.astype(np.float32)


def astype_int(x):
    return x.astype(int)


def astype_bool(x):
    return x.astype(bool)


def copy(x):
    return x.copy()


def flatten(x):
    return x.flatten()


def ravel(x):
    return x.ravel()


def transpose(x):
    return x.transpose()


def transpose_axes(x):
    return x.transpose(1, 0)


def dot(x, y):
    return x.dot(y)


def squeeze(x):
    return x.squeeze(axis=0)


def argsort(x):
    return x.argsort()


def clip(x):
    return x.clip(-1, 1)


def clip_max(x):
    return x.clip(max=2)





CASES += cases("ndarray.reshape", reshape, (F64,), (I32,), (B,), (EMPTY,))
CASES += cases("ndarray.reshape", reshape_tuple, (F32,), (I64,))
CASES += cases("ndarray.astype", astype_f32, (F64,), (I32,), (B,), (SPECIAL,), (SCALAR,))
CASES += cases("ndarray.astype", astype_int, (F32,), (U8,), (B,))
CASES += cases("ndarray.astype", astype_bool, (F64,), (I64,))
CASES += cases("ndarray.copy", copy, (F64,), (I32,), (B,), (EMPTY,))
CASES += cases("ndarray.flatten", flatten, (F32.T,), (CUBE,), (SCALAR,), (EMPTY,))
CASES += cases("ndarray.ravel", ravel, (F64,), (I32.T,), (SCALAR,))
CASES += cases("ndarray.transpose", transpose, (F32,), (CUBE,), (I64,))
CASES += cases("ndarray.transpose", transpose_axes, (F64,), (B,))
CASES += cases("ndarray.dot", dot, (F64, F64.T), (I32, I32.T), (F32, F32.T), (I64, I64),
               (F64[0], F64[0]), **TOL)
CASES += cases("ndarray.squeeze", squeeze, (F32[:1],), (np.ones((1, 2), np.int32),), (F64,))
CASES += cases("ndarray.argsort", argsort, (I64,), (F32,), (SPECIAL,))
CASES += cases("ndarray.clip", clip, (F64,), (I32,), (U8,))
CASES += cases("ndarray.clip", clip_max, (F32,), (I64,))


def _method(name, **kwargs):
    def call(x):
        return getattr(x, name)(**kwargs)
    suffix = "_".join(f"{k}{v}" for k, v in kwargs.items())
    call.__name__ = call.__qualname__ = f"{name}_{suffix}"
    return call


for _name in ("sum", "mean", "max", "min", "argmax", "any", "all", "std", "var"):
    _catalog = f"ndarray.{_name}"
    CASES += cases(_catalog, _method(_name), (F32,), (I32,), (F64,), (SPECIAL,), (U8,), **TOL)
    CASES += cases(_catalog, _method(_name, axis=0), (I32,), (F64,), (B,), **TOL)
    if "arg" not in _name:
        CASES += cases(_catalog, _method(_name, axis=1, keepdims=True), (F64,), (I32,), **TOL)


# ---- the @ operator --------------------------------------------------------------------------
def matmul(a, b):
    return a @ b


def matmul_chain(a, b):
    return (a @ b) @ b.T


M34 = np.arange(12.0).reshape(3, 4)
M43 = np.linspace(-1, 1, 12).reshape(4, 3)
CASES += cases("operator.@", matmul, (M34, M43), (F32, F32.T), (I32, I32.T.copy()),
               (M34, M43[:, 0]), (M34[0], M43), (np.ones((2, 3, 4), np.float32), M43),
               (C128, C128), **TOL)
CASES += cases("operator.@", matmul_chain, (F32, F32), (M34, M34), **TOL)


# ---- builtins on staged arrays and scalars ---------------------------------------------------
def length(x):
    return len(x)


def range_loop(x):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + x[i]
    return total


def range_staged(n):
    total = 0
    for i in range(1, n, 2):
        total += i * i
    return total


def zip_loop(x, y):
    acc = x[0] * 0
    for a, b in zip(x, y):  # noqa: B905 - as users write it
        acc = acc + a * b
    return acc


def enumerate_loop(x):
    acc = x[0] * 0
    for i, row in enumerate(x):
        acc = acc + i * row
    return acc


def abs_array(x):
    return abs(x)


def abs_scalar(x):
    return abs(x[0])


def min_scalars(x):
    return min(x[0], x[1])


def max_scalars(x):
    return max(x[0], x[1], x[-1])


def sum_rows(x):
    return sum(x)


def round_scalar(x):
    return round(x[1])



def pow_array(x):
    return pow(x, 2)


def divmod_scalar(x):
    return divmod(x[0], 3)


def bool_scalar(x):
    return bool(x[0] > 0)


def tuple_shape(x):
    return tuple(x.shape)


def float_sum(x):
    return float(x.sum())


def int_scalar(x):
    return int(x[0])


F1 = np.array([2.75, -1.25, 0.5, 4.0])
CASES += cases("len", length, (F64,), (I64,), (EMPTY,))
CASES += cases("range", range_loop, (F64[0],), (I64,))
CASES += cases("range", range_staged, (np.int64(9),), (np.int32(0),))
CASES += cases("zip", zip_loop, (F64, F64[::-1]), (I64, I64[::-1]))
CASES += cases("enumerate", enumerate_loop, (F32,), (I32,))
CASES += cases("abs", abs_array, (I32,), (F32,), (C128,), (SPECIAL,))
CASES += cases("abs", abs_scalar, (F1,), (I64,))
CASES += cases("min", min_scalars, (F1,), (I64,), (SPECIAL,))
CASES += cases("max", max_scalars, (F1,), (I64,), (U8,))
CASES += cases("sum", sum_rows, (F64,), (I32,), (F1,))
CASES += cases("round", round_scalar, (F1,), (I64,), (np.float32([1.5, 2.5]),))
CASES += cases("pow", pow_array, (F32,), (I64,))
CASES += cases("divmod", divmod_scalar, (I64,), (F1,))
CASES += cases("bool", bool_scalar, (F1,), (I64,))
CASES += cases("tuple", tuple_shape, (F64,), (CUBE,))
CASES += cases("float", float_sum, (F64,), (I32,), (F32,))
CASES += cases("int", int_scalar, (F1,), (I64,), (U8,))


# ---- dtype helpers on a staged array's dtype -------------------------------------------------
def finfo_eps(x):
    return x + np.finfo(x.dtype).eps


def issubdtype(x):
    return np.issubdtype(x.dtype, np.floating), np.issubdtype(x.dtype, np.integer)


def isscalar(x):
    return np.isscalar(x)


CASES += cases("np.finfo", finfo_eps, (F32,), (F64,))
CASES += cases("np.issubdtype", issubdtype, (F32,), (I64,), (B,))
CASES += cases("np.isscalar", isscalar, (F64,), (I64,))
def isscalar_of(x):
    return (np.isscalar(x.reshape(())), np.isscalar(x + 1), np.isscalar(np.zeros_like(x)),
            np.isscalar(np.sum(x)), np.isscalar(x[...]), np.isscalar(x.shape))


CASES += cases("np.isscalar", isscalar, (SCALAR,), (np.array(2.5),), (np.int32(4),))
CASES += cases("np.isscalar", isscalar_of, (SCALAR,), (np.array(2.5),))
