"""CPU lowerings of diag, triu, tril and norm.

diag/triu/tril are loops writing into zeros (a 1-d input to triu/tril is broadcast to a square
matrix, as NumPy does). norm reuses the reduction loop nest: ``ord=None`` sums squares then
takes the square root (over all elements for ``axis=None``: NumPy uses a BLAS dot there, so
floats agree to rounding), vector ords 0, 1, inf, -inf, p, and matrix ords 'fro', 1, -1, inf,
-inf over two axes; the SVD-based ords (2, -2, 'nuc') call np.linalg.norm itself
(``lower_numpy_linalg``).
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cpu import lower_numpy_linalg
from autostage.runtime.backends.cpu import lower_support as s
from autostage.runtime.backends.cpu.codegen import Emitter, lowering
from autostage.runtime.backends.cpu.lower_reductions import _better, emit_reduction


@lowering("diag")
def lower_diag(op: ir.Op, em: Emitter) -> None:
    v, result = op.operands[0], op.results[0]
    k, out, i = op.attrs["k"], em.name(result), em.fresh("i")
    row, col = f"{i} + {max(-k, 0)}", f"{i} + {max(k, 0)}"
    sizes = s.dims(em, v)
    if v.type.ndim == 1:
        n = f"{sizes[0]} + {abs(k)}"
        em.line(f"{out} = {s.zeros(em, [n, n], result.type.dtype)}")
        with s.loops(em, [i], [sizes[0]]):
            em.line(f"{out}[{row}, {col}] = {em.name(v)}[{i}]")
        return
    rows, cols = sizes
    # (ufuncs of scalars: Numba's builtin max and min are compiled again in each process)
    length = (f"np.int64(np.maximum(0, np.minimum({rows}, {cols} - {k})))" if k >= 0
              else f"np.int64(np.maximum(0, np.minimum({rows} + {k}, {cols})))")
    em.line(f"{out} = {s.empty(em, [length], result.type.dtype)}")
    with s.loops(em, [i], [f"{out}.shape[0]"]):
        em.line(f"{out}[{i}] = {em.name(v)}[{row}, {col}]")


def _triangle(op: ir.Op, em: Emitter, keep: str) -> None:
    """out = m where ``keep`` (a test of j - i against k) holds, else zero."""
    m, result = op.operands[0], op.results[0]
    out, name = em.name(result), em.name(m)
    sizes = s.dims(em, m)
    if m.type.ndim == 1:
        sizes = [sizes[0], sizes[0]]
    idx = s.fresh_indices(em, len(sizes))
    i, j = idx[-2], idx[-1]
    em.line(f"{out} = {s.zeros(em, sizes, result.type.dtype)}")
    with s.loops(em, idx, sizes):
        em.line(f"if {j} - {i} {keep} {op.attrs['k']}:")
        with em.block():
            source = f"{name}[{j}]" if m.type.ndim == 1 else s.index_expr(name, idx)
            em.line(f"{s.index_expr(out, idx)} = {source}")


@lowering("triu")
def lower_triu(op: ir.Op, em: Emitter) -> None:
    _triangle(op, em, ">=")


@lowering("tril")
def lower_tril(op: ir.Op, em: Emitter) -> None:
    _triangle(op, em, "<=")


def _abs(op: ir.Op, value: str) -> str:
    """|value| in the result dtype (complex: the modulus)."""
    dtype = op.results[0].type.dtype
    if s.is_complex(op.operands[0].type.dtype):
        return s.cast(f"np.abs({value})", dtype)
    return f"abs({s.cast(value, dtype)})"


def _sum_of(term):
    """A reducer summing ``term(op, em, element)`` in the result dtype."""
    def reducer(op, em, inner, element, first, count):
        dtype = op.results[0].type.dtype
        acc = em.fresh("acc")
        em.line(f"{acc} = {s.zero(dtype)}")
        with inner():
            em.line(f"{acc} += {term(op, em, element)}")
        return acc
    return reducer


def _square(op, em, element):
    dtype = op.results[0].type.dtype
    if s.is_complex(op.operands[0].type.dtype):
        e = em.fresh("e")
        em.line(f"{e} = {element}")
        re, im = s.cast(f"{e}.real", dtype), s.cast(f"{e}.imag", dtype)
        return f"{re} * {re} + {im} * {im}"
    v = s.cast(element, dtype)
    return f"{v} * {v}"


def _vector_reducer(op: ir.Op, em: Emitter, ord_: object):
    dtype = op.results[0].type.dtype
    total = _sum_of(_square)
    if ord_ is None or ord_ == 2 or ord_ == "fro":
        return lambda *a: s.cast(f"np.sqrt({total(*a)})", dtype)
    if ord_ == 1:
        return _sum_of(lambda op, em, e: _abs(op, e))
    if ord_ == 0:
        return _sum_of(lambda op, em, e: s.cast(f"{e} != 0", dtype))
    if ord_ in (np.inf, -np.inf):
        return _extreme_abs("max" if ord_ > 0 else "min")
    if isinstance(ord_, (int, float)):
        p = s.cast(repr(float(ord_)), dtype)
        powers = _sum_of(lambda op, em, e: f"{_abs(op, e)} ** {p}")
        return lambda *a: f"{powers(*a)} ** ({s.one(dtype)} / {p})"
    raise s.unsupported(em, op, f"vector norm ord={ord_!r} is not lowered")


def _extreme_abs(kind: str):
    def reducer(op, em, inner, element, first, count):
        best, v = em.fresh("best"), em.fresh("v")
        em.line(f"{best} = {_abs(op, first)}")
        with inner():
            em.line(f"{v} = {_abs(op, element)}")
            em.line(f"if {_better(kind, v, best)}:")
            with em.block():
                em.line(f"{best} = {v}")
        return best
    return reducer


def _matrix_reducer(op: ir.Op, em: Emitter, ord_: object, axes: tuple[int, int]):
    """ord 1/-1: extreme column sum of |x|; inf/-inf: extreme row sum."""
    if ord_ is None or ord_ == "fro":
        return _vector_reducer(op, em, None)
    if ord_ not in (1, -1, np.inf, -np.inf):
        raise s.unsupported(em, op, f"matrix norm ord={ord_!r} (needs an SVD) is not lowered")
    row, col = axes
    outer, summed = (col, row) if ord_ in (1, -1) else (row, col)
    kind = "max" if ord_ > 0 else "min"

    def reducer(op, em, inner, element, first, count):
        dtype = op.results[0].type.dtype
        best, acc = em.fresh("best"), em.fresh("acc")
        em.line(f"{best} = {s.zero(dtype)}")
        with inner.over((outer,)):
            em.line(f"{acc} = {s.zero(dtype)}")
            with inner.over((summed,)):
                em.line(f"{acc} += {_abs(op, element)}")
            em.line(f"if {inner.idx[outer]} == 0 or {_better(kind, acc, best)}:")
            with em.block():
                em.line(f"{best} = {acc}")
        return best
    return reducer


@lowering("norm")
def lower_norm(op: ir.Op, em: Emitter) -> None:
    x = op.operands[0]
    ord_, axis, keepdims = op.attrs["ord"], op.attrs["axis"], op.attrs["keepdims"]
    if axis is None and ord_ is None:
        emit_reduction(op, em, tuple(range(x.type.ndim)), keepdims, _vector_reducer(op, em, None))
        return
    axes = tuple(range(x.type.ndim)) if axis is None else tuple(axis)
    if len(axes) == 2 and ord_ not in (None, "fro", 1, -1, np.inf, -np.inf):
        # 2, -2, 'nuc': singular values, computed by NumPy (exactly as np.linalg.norm)
        lower_numpy_linalg.emit_call(op, em, "linalg.norm", tuple(op.attrs.items()))
        return
    if len(axes) == 1:
        reducer = _vector_reducer(op, em, ord_)
    else:
        reducer = _matrix_reducer(op, em, ord_, axes)
    emit_reduction(op, em, axes, keepdims, reducer)
