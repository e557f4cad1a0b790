"""CPU lowerings of diag, triu, tril and norm.

diag/triu/tril are loops writing into zeros (a 1-d input to triu/tril is broadcast to a square
matrix, as NumPy does). norm computes what ``np.linalg.norm`` computes, in its order, bit for
bit: over all elements with ``ord=None`` (or 'fro', or 2 of a vector) the square root of a BLAS
dot of the flattened array with itself; along axes, sums (NumPy's pairwise sums: the ``sum`` op's
lowering) of squares or of absolute values, and a matrix 1/inf norm's extreme of those sums;
vector ords inf, -inf and 0 are one loop (extremes and counts: any order). Other ords (p, the
SVD-based 2, -2, 'nuc'), complex values and matrix norms with ``keepdims`` call np.linalg.norm
itself (``lower_numpy_linalg``). (It summed squares in one loop: ~1 ulp from NumPy's result
for long vectors, numpy-ml's squared error.)
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import ir, op_registry
from autostage.runtime.backends.cpu import blas, lower_numpy_linalg
from autostage.runtime.backends.cpu import lower_support as s
from autostage.runtime.backends.cpu.codegen import Emitter, hashed_import, lowering
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
            em.line(s.accumulate(acc, "+", term(op, em, element), dtype))
        return acc
    return reducer


def _vector_reducer(op: ir.Op, em: Emitter, ord_: object):
    """Vector ords inf, -inf (the extreme |x|) and 0 (the count of nonzero elements)."""
    if ord_ == 0:
        dtype = op.results[0].type.dtype
        return _sum_of(lambda op, em, e: s.cast(f"{e} != 0", dtype))
    return _extreme_abs("max" if ord_ > 0 else "min")


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


def _keep_order_ravel(em: Emitter, x: str, ndim: int) -> str:
    """``x.ravel("K")`` (C-contiguous; a view when ``x`` is one after ordering its axes): the
    axes in the order NumPy's iterator takes them (from the innermost, a stable insertion sort
    by increasing stride in which a broadcast or single-element axis compares with none; the
    largest stride ends outermost), each read in its own direction."""
    if ndim <= 1:
        return f"cpu_new.flat_view({s.contiguous(em, x)})"
    s.new_arrays_import(em)
    axes = ", ".join(f"inner[{i}]" for i in reversed(range(ndim)))
    helper = em.helper(f"keep_order_ravel_{ndim}", (
        "@numba.njit(**JIT)\n"
        "def {name}(x):\n"
        "    inner = np.arange(x.ndim)[::-1].copy()\n"
        "    for i in range(1, x.ndim):\n"
        "        axis, at = inner[i], i\n"
        "        step = abs(x.strides[axis]) if x.shape[axis] != 1 else 0\n"
        "        for j in range(i - 1, -1, -1):\n"
        "            other = abs(x.strides[inner[j]]) if x.shape[inner[j]] != 1 else 0\n"
        "            if step != 0 and other != 0:\n"
        "                if other <= step:\n"
        "                    break\n"
        "                at = j\n"
        "        for j in range(i, at, -1):\n"
        "            inner[j] = inner[j - 1]\n"
        "        inner[at] = axis\n"
        f"    return cpu_new.flat_view(cpu_new.contiguous(x.transpose(({axes},))))\n"))
    return f"{helper}({x})"


@lowering("norm")
def lower_norm(op: ir.Op, em: Emitter) -> None:
    x = op.operands[0]
    ord_, axis, keepdims = op.attrs["ord"], op.attrs["axis"], op.attrs["keepdims"]
    ndim = x.type.ndim
    axes = tuple(range(ndim)) if axis is None else tuple(axis)
    frobenius = ord_ is None or ord_ in ("f", "fro") and len(axes) == 2 or ord_ == 2 and (
        len(axes) == 1)
    if axis is None and frobenius and x.type.dtype.kind != "c":
        _dot_norm(op, em)
        return
    if len(axes) == 1 and ord_ in (np.inf, -np.inf, 0):
        emit_reduction(op, em, axes, keepdims, _vector_reducer(op, em, ord_))
        return
    summed = frobenius or (ord_ == 1 if len(axes) == 1 else ord_ in (1, -1, np.inf, -np.inf)
                           and not keepdims)
    if x.type.dtype.kind == "c" or not summed:
        # p norms, SVD-based matrix norms, complex values: NumPy's own function
        lower_numpy_linalg.emit_call(op, em, "linalg.norm", tuple(op.attrs.items()))
        return
    x = _as_float(op, em, x)
    if frobenius:
        squares = _sub(op, em, "multiply", (x, x))
        total = _sub(op, em, "sum", (squares,), axis=axes, keepdims=keepdims, dtype=None)
        result = _sub(op, em, "sqrt", (total,))
    elif len(axes) == 1:
        result = _sub(op, em, "sum", (_sub(op, em, "absolute", (x,)),), axis=axes,
                      keepdims=keepdims, dtype=None)
    else:  # NumPy: the sums of |x| along one axis, then their extreme along the other
        row, col = axes
        along, other = (row, col) if ord_ in (1, -1) else (col, row)
        sums = _sub(op, em, "sum", (_sub(op, em, "absolute", (x,)),), axis=(along,),
                    keepdims=False, dtype=None)
        result = _sub(op, em, "max" if ord_ > 0 else "min", (sums,),
                      axis=(other - (other > along),), keepdims=False)
    em.line(f"{em.name(op.results[0])} = {em.name(result)}")


def _sub(op: ir.Op, em: Emitter, name: str, operands: tuple, **attrs: object) -> ir.Value:
    """The result of an op ``name`` of ``operands`` emitted for ``op`` (a step of its value)."""
    types = op_registry.lookup(name).infer(tuple(v.type for v in operands), attrs)
    step = ir.Op(name, operands, types, attrs, loc=op.loc)
    em.emit_op(step)
    return step.results[0]


def _as_float(op: ir.Op, em: Emitter, x: ir.Value) -> ir.Value:
    """``x`` as NumPy's norm takes it: integers and booleans as float64."""
    if x.type.dtype.kind in "fc":
        return x
    return _sub(op, em, "cast", (x,), dtype=np.dtype(np.float64))


def _dot_norm(op: ir.Op, em: Emitter) -> None:
    """``sqrt(dot(x.ravel("K"), x.ravel("K")))``, as NumPy computes the norm of all elements
    (through the BLAS dot NumPy's own calls: ``blas.dot``): the elements in the order they lie
    in memory, which is a sum in another order than C's for a transpose."""
    x, result = _as_float(op, em, op.operands[0]), op.results[0]
    flat, norm = em.fresh("flat"), em.fresh("norm")
    em.line(f"{flat} = {_keep_order_ravel(em, em.name(x), x.type.ndim)}")
    if blas.AVAILABLE and x.type.dtype in (np.float32, np.float64):
        em.module_line("cpu_blas", hashed_import(blas, "cpu_blas"))
        # (typed as any layout, as products' operands: one dot per dtype, not two)
        em.line(f"{norm} = np.sqrt(cpu_blas.dot(cpu_blas.any_layout({flat}), "
                f"cpu_blas.any_layout({flat}), np.bool_(True)))")
    else:
        em.line(f"{norm} = np.sqrt(np.dot({flat}, {flat}))")
    if result.type.ndim:  # keepdims
        em.line(f"{em.name(result)} = {s.full(em, ['1'] * result.type.ndim, norm)}")
    else:
        em.line(f"{em.name(result)} = {norm}")
