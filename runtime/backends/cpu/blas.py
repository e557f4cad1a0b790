"""Float products through the BLAS NumPy itself uses, called directly from compiled code.

Numba's ``np.dot`` calls BLAS through SciPy's Cython bindings; SciPy's wheel bundles its own
OpenBLAS, which here runs products of the sizes models use (a 128x256 by 256x256 float64 product)
on one thread, where NumPy's OpenBLAS uses every core: 0.52 vs 0.26 ms on this two-core machine,
and JAX's XLA also computes its products on every core. So ``gemm``/``gemv`` below call NumPy's
own library (found through NumPy's extension module, whose dependencies ``dlsym`` searches) by
symbol name: the symbols are registered with LLVM at import (``llvmlite.binding.add_symbol``),
and compiled code refers to them by name only, so that Numba's on-disk cache stays valid across
processes. Threads follow NumPy's (``OPENBLAS_NUM_THREADS``, threadpoolctl). Where NumPy's BLAS
is not an ILP64 OpenBLAS with CBLAS symbols (another build of NumPy), ``AVAILABLE`` is false and
products keep ``np.dot``.

Operands are passed as they lie in memory: a 2-d array whose rows or whose columns are
contiguous (``x`` or ``x.T``, a slice of columns) goes to BLAS with its leading dimension and a
transpose flag, without a copy; any other layout is copied first. Results are C-contiguous.
Results equal NumPy's for the same call; sums are in BLAS's order, as in NumPy.
"""

from __future__ import annotations

import ctypes
import sys

import numba
from autostage.runtime.backends.cpu import new_arrays, numba_cache
from autostage.runtime.backends.cpu.direct_types import in_line
from llvmlite import binding as llvm
from numba import types
from numba.core import funcdesc
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
# (no CPython or cfunc wrapper: compiled code calls these; ~15 ms less to compile each)
_JIT = dict(cache=True, nogil=True, no_cfunc_wrapper=True, no_cpython_wrapper=True)

# NumPy's OpenBLAS wheels export ``scipy_cblas_<f>64_`` (ILP64: 64-bit sizes; the CBLAS enums
# stay C ints); other ILP64 OpenBLAS builds ``cblas_<f>64_``.
_NAMES = ("scipy_cblas_{}64_", "cblas_{}64_")
_FUNCTIONS = ("dgemm", "sgemm", "dgemv", "sgemv", "ddot", "sdot")


def _numpy_library() -> ctypes.CDLL | None:
    """NumPy's extension module as a library, whose dependencies ``dlsym`` searches."""
    try:
        from numpy._core import _multiarray_umath
        return ctypes.CDLL(_multiarray_umath.__file__)
    except (ImportError, OSError):
        return None


def _find_symbols() -> dict[str, int]:
    """Address of each of NumPy's CBLAS functions we call, or {} if one is missing."""
    library = _numpy_library()
    if library is None:
        return {}
    for pattern in _NAMES:
        found = {}
        for function in _FUNCTIONS:
            try:
                found[function] = ctypes.cast(getattr(library, pattern.format(function)),
                                              ctypes.c_void_p).value
            except AttributeError:
                break
        else:
            return found
    return {}


def _find_threads() -> int | None:
    """Address of the function that tells how many threads NumPy's OpenBLAS runs, or None."""
    library = _numpy_library()
    for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_"):
        function = getattr(library, name, None)
        if function is not None:
            return ctypes.cast(function, ctypes.c_void_p).value
    return None


_ADDRESSES = _find_symbols()
AVAILABLE = bool(_ADDRESSES)
for _function, _address in _ADDRESSES.items():
    llvm.add_symbol(f"autostage_cblas_{_function}", _address)
_THREADS_ADDRESS = _find_threads() if AVAILABLE else None

# Pointers pass as 64-bit integers (the same registers in the x86-64 and AArch64 C ABIs).
_i32, _i64 = types.int32, types.int64
_GEMM = {scalar: types.ExternalFunction(f"autostage_cblas_{prefix}gemm", types.void(
    _i32, _i32, _i32, _i64, _i64, _i64, scalar, _i64, _i64, _i64, _i64, scalar, _i64, _i64))
    for prefix, scalar in (("d", types.float64), ("s", types.float32))}
_GEMV = {scalar: types.ExternalFunction(f"autostage_cblas_{prefix}gemv", types.void(
    _i32, _i32, _i64, _i64, scalar, _i64, _i64, _i64, _i64, scalar, _i64, _i64))
    for prefix, scalar in (("d", types.float64), ("s", types.float32))}
_DOT = {scalar: types.ExternalFunction(f"autostage_cblas_{prefix}dot",
                                       scalar(_i64, _i64, _i64, _i64, _i64))
        for prefix, scalar in (("d", types.float64), ("s", types.float32))}


_GET_THREADS = (ctypes.CFUNCTYPE(ctypes.c_int)(_THREADS_ADDRESS)
                if _THREADS_ADDRESS is not None else None)


def threads() -> int:
    """How many threads ``gemm`` runs products on now (NumPy's OpenBLAS follows
    ``OPENBLAS_NUM_THREADS`` and threadpoolctl); 1 when products take Numba's ``np.dot``, whose
    OpenBLAS runs them on one thread."""
    return 1 if _GET_THREADS is None else int(_GET_THREADS())


# The BLAS calls take the arrays, not their addresses: the caller holds every operand (a copy
# included) until BLAS returns. (Numba releases a variable after its last use, which for
# ``x.ctypes.data`` would be before the call.) They are intrinsics, the call written in line:
# as ``@overload`` implementations, Numba's pipeline compiled each once per dtype (0.03-0.05 s,
# in the program meeting it first).

def _external_call(context, builder, external: types.ExternalFunction, values: list):
    """A call of ``external`` with ``values``: Python constants, or (LLVM value, Numba type)
    pairs cast to its argument types."""
    argtypes = external.sig.args
    args = [context.get_constant(to, value) if not isinstance(value, tuple) else
            context.cast(builder, value[0], value[1], to)
            for value, to in zip(values, argtypes, strict=True)]
    described = funcdesc.ExternalFunctionDescriptor(external.symbol, external.sig.return_type,
                                                    argtypes)
    function = context.declare_external_function(builder.module, described)
    return context.call_external_function(builder, function, argtypes, args)


def _address(context, builder, array_type: types.Array, value):
    """The address of an array's data, as an int64 (the BLAS functions' pointer arguments)."""
    data = context.make_array(array_type)(context, builder, value).data
    return builder.ptrtoint(data, context.get_value_type(types.int64)), types.int64


def _floats(*arrays) -> bool:
    return all(isinstance(a, types.Array) and a.dtype in _GEMM for a in arrays)


@intrinsic
def _gemm_call(typingctx, trans_a, trans_b, m, n, k, a, lda, b, ldb, out):
    """``out = op(a) @ op(b)`` (CBLAS, row-major)."""
    if not _floats(a, b, out):
        return None
    signature = types.void(trans_a, trans_b, m, n, k, a, lda, b, ldb, out)

    def codegen(context, builder, signature, args):
        typed = list(zip(args, signature.args, strict=True))
        _external_call(context, builder, _GEMM[out.dtype], [
            _ROW_MAJOR, *typed[:5], 1.0, _address(context, builder, a, args[5]), typed[6],
            _address(context, builder, b, args[7]), typed[8], 0.0,
            _address(context, builder, out, args[9]), typed[3]])
        return context.get_dummy_value()
    return signature, codegen


@intrinsic
def _gemv_call(typingctx, flag, rows, cols, a, lda, x, incx, out):
    """``out = op(a) @ x`` (CBLAS, row-major)."""
    if not _floats(a, x, out):
        return None
    signature = types.void(flag, rows, cols, a, lda, x, incx, out)

    def codegen(context, builder, signature, args):
        typed = list(zip(args, signature.args, strict=True))
        _external_call(context, builder, _GEMV[out.dtype], [
            _ROW_MAJOR, *typed[:3], 1.0, _address(context, builder, a, args[3]), typed[4],
            _address(context, builder, x, args[5]), typed[6], 0.0,
            _address(context, builder, out, args[7]), 1])
        return context.get_dummy_value()
    return signature, codegen


@intrinsic
def _dot_call(typingctx, n, x, incx, y, incy):
    """``x . y`` of ``n`` elements read every ``incx``/``incy`` elements (CBLAS)."""
    if not _floats(x, y):
        return None
    signature = x.dtype(n, x, incx, y, incy)

    def codegen(context, builder, signature, args):
        typed = list(zip(args, signature.args, strict=True))
        return _external_call(context, builder, _DOT[x.dtype], [
            typed[0], _address(context, builder, x, args[1]), typed[2],
            _address(context, builder, y, args[3]), typed[4]])
    return signature, codegen


@in_line
@numba.njit(**_JIT)
def _positive(n):
    """``max(n, 1)`` (the builtin is an overload Numba's pipeline compiled, once per machine)."""
    return n if n > 1 else 1


@in_line
@numba.njit(**_JIT)
def _layout(x, rows, cols):
    """(transpose flag, leading dimension) under which BLAS reads ``x`` (rows x cols, row-major
    terms) in place; (0, 0) when neither its rows nor its columns are contiguous. Strides of an
    axis of length 1 are arbitrary in NumPy, so such an axis counts as contiguous. (Lowered in
    its callers by ``direct``, ``in_line``: Numba's ``inline="always"`` copied and typed its body
    again at each call, ~50 ms of every signature of ``gemm`` and ``gemv``.)"""
    item = x.itemsize
    s0, s1 = x.strides[0] // item, x.strides[1] // item
    if (s1 == 1 or cols == 1) and (rows == 1 or s0 >= _positive(cols)):
        return _NO_TRANS, _positive(s0 if rows > 1 else cols)
    if (s0 == 1 or rows == 1) and (cols == 1 or s1 >= _positive(rows)):
        return _TRANS, _positive(s1 if cols > 1 else rows)
    return 0, 0


@intrinsic
def any_layout(typingctx, x):
    """``x`` typed as an array of any layout, and writable (BLAS only reads it): the array
    itself, no code. Generated code hands ``gemm``/``gemv`` their operands so, and they compile
    once per dtype, not once per pair of the operands' layouts (0.15-0.25 s each in the program
    meeting a pair first; C and F operands are still read in place: ``_layout`` reads the
    strides)."""
    if not isinstance(x, types.Array):
        return None
    result = x.copy(layout="A", readonly=False)

    def codegen(context, builder, signature, args):
        return impl_ret_borrowed(context, builder, result, args[0])
    return result(x), codegen


any_layout.same_value = True  # (``direct``'s lowering takes the argument as it is: no incref)


@numba.njit(**_JIT)
def gemm(a, b):
    """``a @ b`` for 2-d arrays of one float dtype (sizes already checked)."""
    m, k = a.shape
    n = b.shape[1]
    if m == 0 or n == 0 or k == 0:
        return new_arrays.zeros((m, n), a.dtype)
    out = new_arrays.empty((m, n), a.dtype)
    trans_a, lda = _layout(a, m, k)
    if trans_a == 0:
        a = new_arrays.rare_copy(a)
        trans_a, lda = _NO_TRANS, k
    trans_b, ldb = _layout(b, k, n)
    if trans_b == 0:
        b = new_arrays.rare_copy(b)
        trans_b, ldb = _NO_TRANS, n
    _gemm_call(trans_a, trans_b, m, n, k, a, lda, b, ldb, out)
    return out


@numba.njit(**_JIT)
def gemv(a, x, transpose):
    """``a @ x`` (``transpose``: ``x @ a``) for a 2-d ``a`` and a 1-d ``x``."""
    if transpose:
        k, m = a.shape
    else:
        m, k = a.shape
    if m == 0 or k == 0:
        return new_arrays.zeros((m,), a.dtype)
    out = new_arrays.empty((m,), a.dtype)
    rows, cols = a.shape
    flag, lda = _layout(a, rows, cols)
    if flag == 0:
        a = new_arrays.rare_copy(a)
        flag, lda = _NO_TRANS, cols
    if flag == _TRANS:  # BLAS names the shape of the matrix as stored
        rows, cols = cols, rows
    if transpose:
        flag = _TRANS if flag == _NO_TRANS else _NO_TRANS
    incx = x.strides[0] // x.itemsize
    if incx <= 0:  # a reversed or broadcast vector: BLAS would read it from its other end
        x = new_arrays.rare_copy(x)
        incx = 1
    _gemv_call(flag, rows, cols, a, lda, x, incx, out)
    return out


@numba.njit(**_JIT)
def dot(x, y, copy):
    """``x . y`` for 1-d arrays of one float dtype (sizes already checked), as NumPy computes
    it: BLAS when both strides are positive whole elements; else (a reversed or broadcast
    vector) ``np.dot`` copies the operand for BLAS (``copy``) and matmul sums in a loop in
    index order. One function per dtype, where Numba's ``np.dot`` of vectors compiled its SciPy
    binding again in each process (~0.3 s)."""
    if copy and not _in_place(x):
        x = new_arrays.rare_copy(x)
    if copy and not _in_place(y):
        y = new_arrays.rare_copy(y)
    if _in_place(x) and _in_place(y):
        return _dot_call(x.shape[0], x, x.strides[0] // x.itemsize, y, y.strides[0] // y.itemsize)
    total = x.dtype.type(0)
    for i in range(x.shape[0]):
        total += x[i] * y[i]
    return total


@in_line
@numba.njit(**_JIT)
def _in_place(x):
    """Whether BLAS reads the vector ``x`` where it lies (NumPy's test)."""
    return x.strides[0] > 0 and x.strides[0] % x.itemsize == 0


# (content-named, private files; new arrays are written in line: new_arrays' source in the key)
numba_cache.tie_data_files(sys.modules[__name__], writes_in_line=(new_arrays,))
