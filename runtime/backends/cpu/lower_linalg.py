"""CPU lowerings of the products: matmul, dot and einsum.

Float and complex products of 1-d/2-d operands call BLAS on operands of the result dtype (real
products NumPy's own library, ``blas``; complex ones ``np.dot``, through SciPy's), unless
both shapes are static and tiny (not a product of two real vectors: always NumPy's BLAS dot,
whose summation order is NumPy's value): then, as for integer, bool, batched, N-d ``dot`` and
every ``einsum``, they are one loop nest (a contraction: result axes outside, summed axes inside),
which for a 2x2 product costs ~20 ns instead of a ~160 ns BLAS call (shared/TOOLCHAIN.md);
static extents let LLVM unroll it. A matmul of static sizes with at most ``TINY`` multiply-adds
is that loop nest inline in the function, not a helper: no call, and its result may live in a
reused buffer (passes/loop_buffers.py: ``x = x @ a`` in a loop takes turns between two buffers
instead of allocating each time). Operands are cast to the result dtype before multiplying, as
NumPy does. Loop sums are in index order, so float results can differ from NumPy's (BLAS,
einsum) in the last bits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cpu import blas, run_errors, skinny_products
from autostage.runtime.backends.cpu import lower_support as s
from autostage.runtime.backends.cpu.codegen import Emitter, hashed_import, lowering
from autostage.runtime.ops.linalg import parse_subscripts
from autostage.runtime.types import TensorType

TINY = 64  # n*k*m at most this (all static): loops instead of a BLAS call
_BLAS_IMPORT = hashed_import(blas, "cpu_blas")


@dataclass
class Operand:
    """An operand of a contraction: its variable and the index expression of each axis."""

    name: str
    indices: list[str]
    dtype: np.dtype  # (no cast where it is already the result's float dtype)


def contraction(em: Emitter, result: ir.Value, out_loops: list[tuple[str, str]],
                sum_loops: list[tuple[str, str]], operands: list[Operand],
                op: ir.Op | None = None, into: bool = False) -> None:
    """``result[out] = sum over sum_loops of prod(operands)`` in the result dtype; inline in
    the function (``op`` given) the result's buffer may be a reused one (``s.allocate``);
    ``into``: the buffer exists (a helper's ``out`` parameter)."""
    dtype = result.type.dtype
    out = em.name(result)
    acc = em.fresh("acc")
    factors = [_as_float(s.index_expr(o.name, o.indices), o.dtype, dtype) for o in operands]
    if result.type.ndim and not into:
        sizes = [e for _, e in out_loops]
        if op is None:
            em.line(f"{out} = {s.empty(em, sizes, dtype)}")
        else:
            s.allocate(em, op, out, sizes, dtype)
    with s.loops(em, [i for i, _ in out_loops], [e for _, e in out_loops]):
        em.line(f"{acc} = {s.zero(dtype)}")
        with s.loops(em, [i for i, _ in sum_loops], [e for _, e in sum_loops]):
            if dtype == np.bool_:
                terms = " and ".join(factors)  # each a truth test (s.cast)
                em.line(f"{acc} = {acc} or ({terms})")
            else:
                em.line(s.accumulate(acc, "+", " * ".join(factors), dtype))
        em.line(f"{s.index_expr(out, [i for i, _ in out_loops]) if result.type.ndim else out}"
                f" = {acc}")


def _as_float(element: str, have: np.dtype, dtype: np.dtype) -> str:
    """``element`` as a factor of a product in ``dtype``: cast, unless both are the same float
    type (Numba's product of two float32 or float64 values is one already)."""
    if np.dtype(have) == dtype and dtype in (np.float32, np.float64):
        return element
    return s.cast(element, dtype)


def _check_equal(em: Emitter, a: str, b: str, message: str) -> None:
    if a != b:
        em.line(f"if {a} != {b}:")
        with em.block():
            em.line(f"raise ValueError({message!r})")


def _vector_dot(a: ir.Value, b: ir.Value, result: ir.Value) -> bool:
    """A real float product of two vectors, which always calls NumPy's own BLAS dot (its
    kernel's summation order is NumPy's value, for any length; a loop in index order differed
    in the last bit from 16 elements on)."""
    return (a.type.ndim == b.type.ndim == 1 and blas.AVAILABLE
            and result.type.dtype in (np.float32, np.float64))


def _use_blas(a: ir.Value, b: ir.Value, result: ir.Value) -> bool:
    """BLAS for float/complex 1-d/2-d products, except static tiny ones (unknown sizes choose
    at run time) other than products of two vectors."""
    if result.type.dtype.kind not in "fc" or result.type.dtype == np.float16:
        return False
    if a.type.ndim not in (1, 2) or b.type.ndim not in (1, 2):
        return False
    if _vector_dot(a, b, result):
        return True
    shapes = a.type.shape + b.type.shape
    # n*k * k*m / k: the multiply-adds of the product
    return None in shapes or math.prod(shapes) // max(a.type.shape[-1], 1) > TINY


def _inline(a: ir.Value, b: ir.Value, result: ir.Value) -> bool:
    """Whether the product is written inline, without a helper: every size static and at most
    ``TINY`` multiply-adds (the sizes of a 2x2 or 3x3 chain: a helper call and its array cost
    more than the arithmetic, and inline the result may take a reused buffer)."""
    shapes = a.type.shape + b.type.shape + result.type.shape
    if None in shapes or a.type.ndim == 0 or b.type.ndim == 0 or _vector_dot(a, b, result):
        return False
    return math.prod(result.type.shape) * a.type.shape[-1] <= TINY


def _blas(em: Emitter, a: ir.Value, b: ir.Value, result: ir.Value,
          numpy_dot: bool = False) -> None:
    """The product by BLAS: real float products through NumPy's own library (``blas``: threaded
    as NumPy's, operands read in place), the rest (complex) by ``np.dot``. ``numpy_dot``:
    vectors BLAS cannot read in place are copied for it (``np.dot``; matmul sums them in a
    loop)."""
    dtype = result.type.dtype
    names = []
    for v in (a, b):
        name = s.cast_array(em, em.name(v), v.type.dtype, dtype)
        if name != em.name(v):
            cast = em.fresh("x")
            em.line(f"{cast} = {name}")
            name = cast
        names.append(name)
    out = em.name(result)
    if blas.AVAILABLE and dtype in (np.float32, np.float64):
        em.module_line("cpu_blas", _BLAS_IMPORT)
        # (operands typed as any layout and the flag as np.bool_, not a literal: Numba would
        # compile gemm and gemv for each pair of layouts and each flag)
        names = [f"cpu_blas.any_layout({name})" for name in names]
        if a.type.ndim == b.type.ndim == 1:
            em.line(f"{out} = cpu_blas.dot({names[0]}, {names[1]}, np.bool_({numpy_dot}))")
        elif a.type.ndim == b.type.ndim:
            em.line(f"{out} = cpu_blas.gemm({names[0]}, {names[1]})")
        elif a.type.ndim == 2:
            em.line(f"{out} = cpu_blas.gemv({names[0]}, {names[1]}, np.bool_(False))")
        else:
            em.line(f"{out} = cpu_blas.gemv({names[1]}, {names[0]}, np.bool_(True))")
        return
    _numpy_dot(em, a, b, names, out)


def _numpy_dot(em: Emitter, a: ir.Value, b: ir.Value, names: list[str], out: str) -> None:
    """``np.dot`` on operands Numba types as contiguous. A 2-d operand that is Fortran-ordered
    at run time (a transpose, ``x.T @ y``) goes to BLAS as such (``np.asfortranarray`` is then
    no copy, and BLAS reads it transposed) instead of being copied to C order."""
    fortran = [f"({n}.flags.f_contiguous and not {n}.flags.c_contiguous)" if v.type.ndim == 2
               else None for n, v in zip(names, (a, b), strict=True)]

    def call(orders: tuple[str, str]) -> None:
        # (C through new_arrays, written in line: Numba's np.ascontiguousarray is compiled
        # again in each process)
        args = [f"np.asfortranarray({n})" if o == "F" else s.contiguous(em, n)
                for n, o in zip(names, orders, strict=True)]
        em.line(f"{out} = np.dot({args[0]}, {args[1]})")

    def second(first: str) -> None:
        if fortran[1] is None:
            call((first, "C"))
            return
        em.line(f"if {fortran[1]}:")
        with em.block():
            call((first, "F"))
        em.line("else:")
        with em.block():
            call((first, "C"))

    if fortran[0] is None:
        second("C")
        return
    em.line(f"if {fortran[0]}:")
    with em.block():
        second("F")
    em.line("else:")
    with em.block():
        second("C")


def _matmul_loops(em: Emitter, a: ir.Value, b: ir.Value, result: ir.Value,
                  op: ir.Op | None = None, into: bool = False) -> None:
    """matmul as a contraction with NumPy's 1-d promotion and batch broadcasting (inline when
    ``op`` is given, see ``contraction``: its sizes were tested already, ``_check_core``)."""
    ad, bd = s.dims(em, a), s.dims(em, b)
    ash, bsh = list(a.type.shape), list(b.type.shape)
    k = em.fresh("k")
    if op is None:
        _check_equal(em, ad[-1], bd[0] if b.type.ndim == 1 else bd[-2],
                     "matmul: Input operand 1 has a mismatch in its core dimension 0")
    a_idx = [k]
    b_idx = [k]
    out_loops: list[tuple[str, str]] = []
    rows = cols = None
    if a.type.ndim >= 2:
        rows = (em.fresh("i"), ad[-2])
        a_idx = [rows[0], k]
    if b.type.ndim >= 2:
        cols = (em.fresh("j"), bd[-1])
        b_idx = [k, cols[0]]
    batch = max(a.type.ndim, b.type.ndim) - 2
    a_batch, b_batch = [], []
    for d in range(batch):
        i = em.fresh("bi")
        da, db = d - (batch - (a.type.ndim - 2)), d - (batch - (b.type.ndim - 2))
        extent = (f"({ad[da]} if {ad[da]} != 1 else {bd[db]})" if da >= 0 and db >= 0
                  else ad[da] if da >= 0 else bd[db])
        out_loops.append((i, extent))
        if da >= 0:
            a_batch.append(s.broadcast_index(i, ash[da], ad[da]))
        if db >= 0:
            b_batch.append(s.broadcast_index(i, bsh[db], bd[db]))
    out_loops += [x for x in (rows, cols) if x is not None]
    k_extent = ad[-1]
    contraction(em, result, out_loops, [(k, k_extent)],
                [Operand(em.name(a), a_batch + a_idx, a.type.dtype),
                 Operand(em.name(b), b_batch + b_idx, b.type.dtype)],
                op, into)


@lowering("matmul")
def lower_matmul(op: ir.Op, em: Emitter) -> None:
    a, b = op.operands
    result = op.results[0]
    _check_core(em, op, a, b)

    # (np.dot of vectors BLAS cannot read in place is not matmul's: see ``_blas``)
    numpy_dot = op.name == "dot" and a.type.ndim == b.type.ndim == 1

    def general() -> None:
        shared = _sizes_erased(em, op.name, op.operands, op.results, op)
        x, y = shared.operands
        out = shared.results[0]
        s.call_helper(em, shared, f"{'dot' if numpy_dot else 'matmul'}_"
                      f"{s.type_key(x, y, out)}", lambda w: _matmul_body(w, x, y, out, numpy_dot),
                      argument=_any_layout(em))

    if _inline(a, b, result):
        _tiny_product(op, em, a, b, result)
        return
    m = skinny_products.columns(a, b, result)
    if m is None or not _use_blas(a, b, result) or blas.threads() > 1:
        general()
    else:
        skinny_products.emit(em, a, b, result, m, general)


def _sizes_erased(em: Emitter, name: str, operands: tuple, results: tuple, op: ir.Op) -> ir.Op:
    """A stand-in op ``name`` of ``operands`` and ``results`` (``op``'s attributes and place)
    whose values have every size unknown, living in the same variables: the helper of a product
    too large for loops is typed by dtypes and ranks only, so that every program shares it (and
    ``autostage --precompile`` compiled it), where one per combination of static sizes cost a
    compile of ~0.1 s in each program with new sizes. Its run-time choice of loops or BLAS is
    the one static sizes would make."""
    args = ir.Region([_erased(v.type) for v in operands]).args  # (detached)
    stand_in = ir.Op(name, args, [_erased(v.type) for v in results], op.attrs, loc=op.loc)
    for value, original in zip(stand_in.operands + stand_in.results, operands + results,
                               strict=True):
        em.bind(value, em.name(original))
    return stand_in


def _erased(t: TensorType) -> TensorType:
    return TensorType(t.dtype, (None,) * t.ndim)


def _tiny_product(op: ir.Op, em: Emitter, a: ir.Value, b: ir.Value, result: ir.Value) -> None:
    """A product of static sizes small enough to run as loops (``_inline``): its result made
    here, a buffer a loop may reuse (``s.allocate``), and filled by a helper shared by every
    product of these types: written at each site, the loops cost Numba ~40 ms to compile per
    2x2 product (a tracking filter's step has nine); LLVM inlines the call. A scalar result
    (a dot product of vectors) stays in line."""
    if not result.type.ndim:
        _matmul_loops(em, a, b, result, op)
        return
    s.allocate(em, op, em.name(result), [str(d) for d in result.type.shape], result.type.dtype)
    s.call_helper(em, op, f"matmul_into_{s.type_key(a, b, result)}",
                  lambda w: _matmul_loops(w, a, b, result, into=True), into=True)


def batched_row(op: ir.Op, em: Emitter) -> bool:
    """Lowers the ``cond`` a loop's batched product leaves at the step's product
    (passes/batched_products.py: the step's row of the big product while it has one, else
    the step's own product) as one call of a helper shared by every program, with the
    product's check at the site, tested only where the row is not taken. The branch, check
    and product call written out at each site cost Numba ~25 ms of compile each (a GRU step
    has three). False (nothing emitted) for another ``cond``."""
    taken, own = op.regions
    if not (len(taken.ops) == len(own.ops) == 1 and taken.ops[0].name == "getitem"
            and own.ops[0].name == "matmul" and len(op.results) == 1):
        return False
    big, index = taken.ops[0].operands
    product = own.ops[0]
    x, w = product.operands
    _check_core(em, product, x, w, unless=em.name(op.operands[0]))
    shared = _sizes_erased(em, "batched_row", (big, index, x, w), op.results, product)
    b, i, a, m = shared.operands
    out = shared.results[0]

    def body(writer) -> None:
        writer.line(f"if {writer.name(i)} < {writer.name(b)}.shape[0]:")
        with writer.block():
            writer.line(f"out = {writer.name(b)}[np.uint64({writer.name(i)})]")
        writer.line("else:")  # (a step past the big product's rows: rare)
        with writer.block():
            if _use_blas(a, m, out):  # BLAS whatever the size: no tiny product's loops here
                _blas(writer, a, m, out)
            else:
                _matmul_body(writer, a, m, out)

    # (the big product keeps its C layout: its row is the result, which the step's element-wise
    # loops read as contiguous)
    s.call_helper(em, shared, f"batched_row_{s.type_key(b, a, m, out)}", body,
                  argument=_any_layout(em, keep=b))
    return True


def _any_layout(em: Emitter, keep: ir.Value | None = None):
    """Passes a product helper's array operands (but ``keep``) typed as any layout
    (``blas.any_layout``), so that Numba compiles the helper once per dtype and rank: ``x.T @
    y`` compiled it again for its Fortran-ordered operand (~0.2 s in the program that met the
    pair of layouts first). Its result stays C-contiguous (a new array). (Without NumPy's BLAS,
    products take ``np.dot``, which needs the layouts.)"""
    if not blas.AVAILABLE:
        return None
    em.module_line("cpu_blas", _BLAS_IMPORT)
    return lambda value, name: (f"cpu_blas.any_layout({name})" if value.type.ndim
                                and value is not keep else name)


def _check_core(em: Emitter, op: ir.Op, a: ir.Value, b: ir.Value,
                unless: str | None = None) -> None:
    """NumPy's error (with the sizes) when the contracted axes differ, checked at the call site
    so that the error names this op (the helper is shared by every product of these types);
    none where the sizes are one (static, or proven by ``shape_facts``: ``x.T @ x``) or for a
    product a pass made ``checked`` (its sizes tested before it runs). ``unless``: a boolean
    variable that, true, skips the product (and the test)."""
    k_axis = 0 if b.type.ndim == 1 else b.type.ndim - 2
    if op.attrs.get("checked") or a.type.ndim == 0 or b.type.ndim == 0 or s.same_size(
            em, a, a.type.ndim - 1, b, k_axis):
        return
    ad, bd = s.dims(em, a), s.dims(em, b)
    if op.name == "dot":
        a_text, n = run_errors.shape_text(ad, 0)
        b_text, _ = run_errors.shape_text(bd, n)
        a_k, b_k = f"{{{n - 1}}}", f"{{{n + k_axis}}}"
        template = (f"shapes {a_text} and {b_text} not aligned: {a_k} (dim {a.type.ndim - 1}) "
                    f"!= {b_k} (dim {k_axis})")
        run_errors.check(em, op, f"{ad[-1]} != {bd[k_axis]}", ValueError, template, ad + bd)
    elif op.name == "matmul":
        test = f"{ad[-1]} != {bd[k_axis]}"
        run_errors.check(em, op, test if unless is None else f"(not {unless}) & ({test})",
                         ValueError,
                         "matmul: Input operand 1 has a mismatch in its core dimension 0, with "
                         "gufunc signature (n?,k),(k,m?)->(n?,m?) (size {1} is different from "
                         "{0})", [ad[-1], bd[k_axis]])


def _matmul_body(em, a: ir.Value, b: ir.Value, result: ir.Value, numpy_dot: bool = False) -> None:
    """Loops, BLAS, or (sizes unknown) a run-time choice between them (``numpy_dot``: see
    ``_blas``)."""
    if not _use_blas(a, b, result):
        _matmul_loops(em, a, b, result)
        return
    ad, bd = s.dims(em, a), s.dims(em, b)
    if None not in a.type.shape + b.type.shape or _vector_dot(a, b, result):
        _check_equal(em, ad[-1], bd[0 if b.type.ndim == 1 else -2],
                     "matmul: Input operand 1 has a mismatch in its core dimension 0")
        _blas(em, a, b, result, numpy_dot)
        return
    # Shape-generic code: tiny products (the common 2x2, 3x3 chains) take the loops at run
    # time, the rest BLAS.
    work = " * ".join([*ad, bd[-1]] if b.type.ndim == 2 else ad)
    em.line(f"if {work} <= {TINY}:")
    with em.block():
        _matmul_loops(em, a, b, result)
    em.line("else:")
    with em.block():
        _blas(em, a, b, result, numpy_dot)


@lowering("dot")
def lower_dot(op: ir.Op, em: Emitter) -> None:
    a, b = op.operands
    result = op.results[0]
    dtype = result.type.dtype
    if a.type.ndim == 0 or b.type.ndim == 0:
        factors = [s.cast(em.name(v), dtype) if v.type.ndim == 0
                   else s.cast_array(em, em.name(v), v.type.dtype, dtype) for v in (a, b)]
        em.line(f"{em.name(result)} = {factors[0]} * {factors[1]}")
    elif a.type.ndim <= 2 and b.type.ndim <= 2:
        lower_matmul(op, em)  # np.dot is matmul on 1-d and 2-d operands (but see _blas)
    else:
        _dot_loops(em, a, b, result)


def _dot_loops(em: Emitter, a: ir.Value, b: ir.Value, result: ir.Value) -> None:
    """N-d dot: sum over a's last axis and b's second-to-last (its only one if 1-d)."""
    ad, bd = s.dims(em, a), s.dims(em, b)
    k_axis = 0 if b.type.ndim == 1 else b.type.ndim - 2
    _check_core(em, em.op, a, b)
    k = em.fresh("k")
    a_out = [(em.fresh("i"), e) for e in ad[:-1]]
    b_out = [(em.fresh("j"), e) for i, e in enumerate(bd) if i != k_axis]
    b_idx = [i for i, _ in b_out]
    b_idx.insert(k_axis, k)
    contraction(em, result, a_out + b_out, [(k, ad[-1])],
                [Operand(em.name(a), [i for i, _ in a_out] + [k], a.type.dtype),
                 Operand(em.name(b), b_idx, b.type.dtype)])


@lowering("einsum")
def lower_einsum(op: ir.Op, em: Emitter) -> None:
    labels, output = parse_subscripts(op.attrs["subscripts"],
                                      tuple(v.type.ndim for v in op.operands))
    extents: dict[str, str] = {}
    for v, label in zip(op.operands, labels, strict=True):
        for c, e in zip(label, s.dims(em, v), strict=True):
            if c in extents:
                _check_equal(em, extents[c], e, f"einsum: operands disagree on the size of "
                                                 f"label '{c}'")
            else:
                extents[c] = e
    index = {c: em.fresh(f"i{c}") for c in extents}
    summed = [c for c in extents if c not in output]
    operands = [Operand(em.name(v), [index[c] for c in label], v.type.dtype)
                for v, label in zip(op.operands, labels, strict=True)]
    contraction(em, op.results[0], [(index[c], extents[c]) for c in output],
                [(index[c], extents[c]) for c in summed], operands)


@lowering("batched_product")
def lower_batched_product(op: ir.Op, em: Emitter) -> None:
    """One call of a helper shared by every program (by dtype and rank): the guard
    (``ops.linalg.batched_fits``), then the product of all rows at once and its reshape, or an
    array of no rows."""
    rows, w = op.operands
    limit = op.attrs["limit"]
    key = f"batched_product_{limit}_{rows.type.dtype}_{rows.type.ndim}"
    s.call_helper(em, op, key, lambda h: _batched_body(h, rows, w, op.results[0], limit),
                  argument=_any_layout(em))


def _batched_body(em, rows: ir.Value, w: ir.Value, big: ir.Value, limit: int) -> None:
    r, m = em.name(rows), em.name(w)
    outer = [f"{r}.shape[{axis}]" for axis in range(rows.type.ndim - 1)]
    k, columns = f"{r}.shape[{rows.type.ndim - 1}]", f"{m}.shape[1]"
    elements = " * ".join(f"np.float64({size})" for size in (columns, *outer))
    em.line(f"if {k} != {m}.shape[0] or {elements} > {float(limit)!r}:")
    with em.block():
        em.line(f"out = {s.empty(em, ['0', *outer[1:], columns], big.type.dtype)}")
    em.line("else:")
    with em.block():
        # (a copy of the rows, if they are not C-contiguous, costs a fraction of the product)
        em.line(f"flat = {s.reshaped(em, r, [' * '.join(outer), k], rare=True)}")
        if blas.AVAILABLE:
            em.module_line("cpu_blas", _BLAS_IMPORT)
            product = f"cpu_blas.gemm(cpu_blas.any_layout(flat), cpu_blas.any_layout({m}))"
        else:
            product = f"np.dot(flat, np.ascontiguousarray({m}))"
        em.line(f"out = {s.reshaped(em, product, [*outer, columns])}")
