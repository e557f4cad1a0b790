"""``numpy_linalg``: one op for the NumPy linear-algebra functions that are computed by NumPy
itself (``np.linalg.solve``, ``inv``, ``det``, ``qr``, ``eigh``, ``svd``, ``lstsq``... and
``np.inner``, ``np.vdot``, ``np.tensordot``).

Attrs: ``function`` (a key of ``FUNCTIONS``, e.g. ``'linalg.qr'``) and ``kwargs`` (a tuple of
``(name, value)`` pairs of Python constants, e.g. ``(('mode', 'complete'),)``). Operands: the
array arguments (``multi_dot``: the list's elements). Results: one per array NumPy returns, in
order (``QRResult(Q, R)``: two); the front end (``numpy_linalg.py``) rebuilds NumPy's container.

Why NumPy itself: Numba's ``np.linalg`` calls LAPACK through SciPy, whose results differ from
NumPy's (bundled OpenBLAS) in the last bits for ``inv``, ``solve``, ``det``, ``cholesky`` and
``pinv``, and in the SIGNS of singular vectors for a 200x200 ``svd``: a silently different
answer. The interpreter and the CPU lowering (``numba.objmode``) both call the NumPy function, so
values, dtypes and errors (``LinAlgError('Singular matrix')``...) are NumPy's bit for bit.

Result dtypes (and NumPy's errors for a bad rank, dtype or keyword value) come from calling the
function on a tiny sample of the operand dtypes and ranks (all sizes 1); result shapes follow
NumPy's rules with unknown (``None``) sizes. Printed: ``%2:f64[?,?], %3:f64[?,?] = numpy_linalg
%1 {function='linalg.qr', kwargs=(('mode', 'reduced'),)}``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from autostage.runtime import op_registry
from autostage.runtime.dtype_rules import broadcast_shapes
from autostage.runtime.ops.linalg import dot_shape
from autostage.runtime.types import TensorType

Shape = tuple  # of int | None


def _same(a: int | None, b: int | None) -> int | None:
    """The size of two axes that must be equal (whichever is known)."""
    return a if a is not None else b


def _smaller(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else min(a, b)


def _square(a: Shape) -> Shape:
    n = _same(a[-2], a[-1])
    return (*a[:-2], n, n)


def _solve(shapes: list[Shape], kw: dict) -> list[Shape]:
    a, b = shapes
    n = _same(a[-2], a[-1])
    if len(b) == 1:
        return [(*a[:-2], _same(n, b[0]))]
    return [(*broadcast_shapes(a[:-2], b[:-2]), _same(n, b[-2]), b[-1])]


def _qr(shapes: list[Shape], kw: dict) -> list[Shape]:
    (a,) = shapes
    *batch, m, n = a
    k = _smaller(m, n)
    mode = kw.get("mode", "reduced")
    if mode == "complete":
        return [(*batch, m, m), (*batch, m, n)]
    if mode == "r":
        return [(*batch, k, n)]
    if mode == "raw":
        return [(*batch, n, m), (*batch, k)]
    return [(*batch, m, k), (*batch, k, n)]


def _eig(shapes: list[Shape], kw: dict) -> list[Shape]:
    n = _square(shapes[0])
    return [n[:-1], n]


def _svd(shapes: list[Shape], kw: dict) -> list[Shape]:
    (a,) = shapes
    *batch, m, n = a
    k = _smaller(m, n)
    if kw.get("hermitian", False):
        m = n = k = _same(m, n)
    if not kw.get("compute_uv", True):
        return [(*batch, k)]
    if kw.get("full_matrices", True):
        return [(*batch, m, m), (*batch, k), (*batch, n, n)]
    return [(*batch, m, k), (*batch, k), (*batch, k, n)]


def _lstsq(shapes: list[Shape], kw: dict) -> list[Shape]:
    a, b = shapes
    m, n = a
    x = (n,) if len(b) == 1 else (n, b[1])
    return [x, (None,), (), (_smaller(m, n),)]  # residuals: (K,) or (0,) as the rank says


def _multi_dot(shapes: list[Shape], kw: dict) -> list[Shape]:
    if len(shapes) == 2:  # NumPy calls np.dot on two arrays (of any rank)
        return [dot_shape(*shapes)]
    first, last = shapes[0], shapes[-1]
    return [(*first[:-1], *last[1:])]


def _inner(shapes: list[Shape], kw: dict) -> list[Shape]:
    a, b = shapes
    if not a or not b:
        return [a or b]
    return [(*a[:-1], *b[:-1])]


def _tensordot(shapes: list[Shape], kw: dict) -> list[Shape]:
    a, b = shapes
    axes = kw.get("axes", 2)
    if isinstance(axes, int):
        a_axes, b_axes = range(len(a) - axes, len(a)), range(axes)
    else:
        a_axes, b_axes = ((x,) if isinstance(x, int) else x for x in axes)
    a_axes = {x % len(a) for x in a_axes}
    b_axes = {x % len(b) for x in b_axes}
    return [tuple(d for i, d in enumerate(a) if i not in a_axes)
            + tuple(d for i, d in enumerate(b) if i not in b_axes)]


def _matrix_rank(shapes: list[Shape], kw: dict) -> list[Shape]:
    (a,) = shapes
    return [a[:-2] if len(a) >= 2 else ()]


# function -> (NumPy function, result shapes from operand shapes and keyword arguments)
FUNCTIONS: dict[str, tuple[Callable, Callable]] = {
    "linalg.solve": (np.linalg.solve, _solve),
    "linalg.inv": (np.linalg.inv, lambda s, kw: [_square(s[0])]),
    "linalg.det": (np.linalg.det, lambda s, kw: [s[0][:-2]]),
    "linalg.slogdet": (np.linalg.slogdet, lambda s, kw: [s[0][:-2], s[0][:-2]]),
    "linalg.cholesky": (np.linalg.cholesky, lambda s, kw: [_square(s[0])]),
    "linalg.qr": (np.linalg.qr, _qr),
    "linalg.eigh": (np.linalg.eigh, _eig),
    "linalg.eigvalsh": (np.linalg.eigvalsh, lambda s, kw: _eig(s, kw)[:1]),
    "linalg.eig": (np.linalg.eig, _eig),
    "linalg.eigvals": (np.linalg.eigvals, lambda s, kw: _eig(s, kw)[:1]),
    "linalg.svd": (np.linalg.svd, _svd),
    "linalg.svdvals": (np.linalg.svdvals, lambda s, kw: _svd(s, {"compute_uv": False})),
    "linalg.lstsq": (np.linalg.lstsq, _lstsq),
    "linalg.pinv": (np.linalg.pinv, lambda s, kw: [(*s[0][:-2], s[0][-1], s[0][-2])]),
    "linalg.matrix_rank": (np.linalg.matrix_rank, _matrix_rank),
    "linalg.matrix_power": (np.linalg.matrix_power, lambda s, kw: [_square(s[0])]),
    "linalg.cond": (np.linalg.cond, lambda s, kw: [s[0][:-2]]),
    "linalg.multi_dot": (lambda *arrays: np.linalg.multi_dot(arrays), _multi_dot),
    "linalg.norm": (np.linalg.norm, None),  # the ``norm`` op's type rule (ops/matrices.py)
    "inner": (np.inner, _inner),
    "vdot": (np.vdot, lambda s, kw: [()]),
    "tensordot": (np.tensordot, _tensordot),
}


def call(function: str, kwargs: tuple, operands: tuple) -> object:
    """NumPy's result of ``function`` (a key of ``FUNCTIONS``) on ``operands``."""
    return FUNCTIONS[function][0](*operands, **dict(kwargs))


def results(value: object) -> tuple:
    """The arrays of a NumPy result, in order (a tuple's elements, or the one value)."""
    return tuple(value) if isinstance(value, tuple) else (value,)


@functools.cache
def sample(function: str, kwargs: tuple, dtypes: tuple, ndims: tuple) -> object:
    """NumPy's result on operands of these dtypes and ranks with every size 1 (raises NumPy's
    error for a rank, dtype or keyword value it refuses)."""
    operands = [np.ones((1,) * n, d) for n, d in zip(ndims, dtypes, strict=True)]
    with np.errstate(all="ignore"):
        return call(function, kwargs, tuple(operands))


def _infer(operand_types: tuple, attrs: dict) -> tuple:
    function, kwargs = attrs["function"], attrs["kwargs"]
    for t in operand_types:
        if not isinstance(t, TensorType):
            raise TypeError(f"numpy_linalg expects tensors, got {t}")
    value = sample(function, kwargs, tuple(t.dtype for t in operand_types),
                   tuple(t.ndim for t in operand_types))
    shapes = FUNCTIONS[function][1]([t.shape for t in operand_types], dict(kwargs))
    found = results(value)
    if len(found) != len(shapes) or any(np.ndim(v) != len(s) for v, s in zip(
            found, shapes, strict=True)):
        raise AssertionError(f"numpy_linalg {function}: shape rule disagrees with NumPy")
    return tuple(TensorType(np.asarray(v).dtype, tuple(s)) for v, s in zip(
        found, shapes, strict=True))


def _evaluate(op, values: tuple, run) -> tuple:
    return tuple(np.asarray(v) for v in results(
        call(op.attrs["function"], op.attrs["kwargs"], tuple(values))))


op_registry.register(
    "numpy_linalg", _infer, _evaluate,
    doc="attrs: function (e.g. 'linalg.qr', 'tensordot'), kwargs (tuple of (name, value)); "
        "one result per array NumPy returns; computed by NumPy itself",
    raises=(np.linalg.LinAlgError, ValueError))  # a singular matrix...; sizes at run time
